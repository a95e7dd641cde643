import { readFileSync } from 'fs';
import { join } from 'path';
import type { Readable } from 'stream';
import { checkOptions, parseArgs, UsageError, type ParsedArgs } from './args';
import { COMMANDS_BY_NAME, type Command, type CommandContext } from './commands';
import { reportError } from './error-report';
import { GLOBAL_OPTION_NAMES, OPTION_SPECS } from './options';
import { Output, type OutputStream } from './output';
import { engineSelection, Session } from './session';
import { commandUsage, usage } from './usage';

/** What the CLI reads and writes: the process's streams, or a test's. */
export interface CliIo {
  readonly stdin: Readable;
  readonly stdout: OutputStream;
  readonly stderr: OutputStream;
  readonly cwd: string;
  /** `DOCLAYER_DEBUG=1` adds stack traces to errors the CLI does not know. */
  readonly debug: boolean;
}

const COMMAND_NAMES: ReadonlySet<string> = new Set([...COMMANDS_BY_NAME.keys(), 'help']);

/** Runs one command line; resolves to the exit status. Never rejects: failures are printed. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const output = new Output(io.stdout, io.stderr, argv.includes('--json'));
  let session: Session | undefined;
  try {
    const args = parseArgs(argv, OPTION_SPECS, COMMAND_NAMES);
    const help = helpText(args);
    if (help !== undefined) {
      await output.write(`${help}\n`);
      return 0;
    }
    const command = commandOf(args);
    checkOptions(args, new Set([...GLOBAL_OPTION_NAMES, ...command.options]), command.name);
    const engine = engineSelection(args, io.cwd);
    const context: CommandContext = {
      args,
      output,
      stdin: io.stdin,
      cwd: io.cwd,
      engine,
      collectionName: collectionOption(args),
      session: async (options = {}) => (session ??= await Session.open(engine, { create: command.createsDatabase, ...options })),
    };
    const status = (await command.run(context)) ?? 0;
    await output.flush();
    return status;
  } catch (err) {
    const report = reportError(err, io.debug);
    io.stderr.write(`${report.lines.join('\n')}\n`);
    return report.exitCode;
  } finally {
    await session?.close();
  }
}

/** The usage text asked for, if any: `help [command]`, `--help`, `--version`, or no command at all. */
function helpText(args: ParsedArgs): string | undefined {
  if (args.options.has('version')) return version();
  const wantsHelp = args.command === 'help' || args.options.has('help');
  if (args.command === undefined) return usage();
  if (!wantsHelp) return undefined;
  const topic = args.command === 'help' ? args.positionals[0] : args.command;
  if (topic === undefined) return usage();
  const command = COMMANDS_BY_NAME.get(topic);
  if (command === undefined) throw new UsageError(`unknown command ${JSON.stringify(topic)}`);
  return commandUsage(command);
}

function commandOf(args: ParsedArgs): Command {
  const command = COMMANDS_BY_NAME.get(args.command as string);
  if (command === undefined) throw new UsageError(`unknown command ${JSON.stringify(args.command)}`);
  return command;
}

function collectionOption(args: ParsedArgs): string | undefined {
  const value = args.options.get('collection');
  if (value === true) throw new UsageError('--collection needs scope.collection');
  return value;
}

function version(): string {
  const pkg = JSON.parse(readFileSync(join(__dirname, '../../package.json'), 'utf8')) as { version: string };
  return `doclayer ${pkg.version}`;
}
