/**
 * The command line, taken apart: `doclayer [options] <command> [arguments] [options]`. Options may
 * come before or after the command, as `--name value` or `--name=value`; `--` ends the options (for an
 * argument that starts with `-`). An option that takes an optional value (`--fdb [clusterFile]`) takes
 * the next argument only when it is not an option and not a command name, so `doclayer --fdb get k`
 * uses the default cluster file.
 *
 * Hand-written because node's `util.parseArgs` and `commander` (13, the last for Node 18) both get
 * this grammar wrong, run on the cases of test/cli/args.test.ts: both take `get` as the cluster file
 * in `--fdb get k` (`util.parseArgs` has no optional values; `commander` takes any next word), both
 * refuse `-5` as an argument (`set k n -5`), and both accept a repeated option, the last one winning;
 * `util.parseArgs` also refuses `--limit -5`. Their messages would need mapping onto the CLI's besides.
 */

/** A mistake in the command line: the CLI prints it with a pointer to the usage, and exits with 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';

  constructor(
    message: string,
    /** The command whose usage to point to, if any. */
    readonly command?: string,
  ) {
    super(message);
  }
}

export interface OptionSpec {
  readonly name: string;
  /** Whether it takes a value: never (a flag), always, or optionally. */
  readonly value: 'none' | 'required' | 'optional';
  /** The value's name in the usage text. */
  readonly valueName?: string;
  readonly description: string;
  /** May be given more than once: the values are kept in order, joined by {@link REPEAT_SEPARATOR}. */
  readonly repeatable?: boolean;
}

/** Joins the values of a repeatable option (NUL: no command-line argument can hold one). */
export const REPEAT_SEPARATOR = '\0';

export interface ParsedArgs {
  /** The first argument that is not an option, if any. */
  readonly command: string | undefined;
  /** The arguments after the command. */
  readonly positionals: readonly string[];
  /** Options given, by name without dashes; a flag (or an optional value not given) is `true`. */
  readonly options: ReadonlyMap<string, string | true>;
}

/**
 * @param specs every option any command accepts, by name (whether a command accepts it is checked
 *   later, by {@link checkOptions})
 * @throws UsageError for an unknown option, a missing value, an option given twice
 */
export function parseArgs(argv: readonly string[], specs: ReadonlyMap<string, OptionSpec>, commands: ReadonlySet<string>): ParsedArgs {
  const words: string[] = [];
  const options = new Map<string, string | true>();
  let command: string | undefined;
  const set = (name: string, value: string | true) => {
    const before = options.get(name);
    if (before !== undefined && specs.get(name)?.repeatable === true && typeof before === 'string' && typeof value === 'string') {
      options.set(name, `${before}${REPEAT_SEPARATOR}${value}`);
      return;
    }
    if (before !== undefined) throw new UsageError(`--${name} is given more than once`);
    options.set(name, value);
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--') {
      words.push(...argv.slice(i + 1));
      break;
    }
    if (arg === '-h') {
      set('help', true);
      continue;
    }
    if (!arg.startsWith('--') || arg === '-') {
      if (arg.startsWith('-') && arg !== '-' && !/^-\d/.test(arg)) throw new UsageError(`unknown option ${arg}`);
      words.push(arg);
      command ??= arg;
      continue;
    }
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    const spec = specs.get(name);
    if (spec === undefined) throw new UsageError(`unknown option --${name}`, command);
    if (eq !== -1) {
      if (spec.value === 'none') throw new UsageError(`--${name} takes no value`, command);
      set(name, arg.slice(eq + 1));
      continue;
    }
    const next = argv[i + 1];
    const nextIsValue = next !== undefined && next !== '--' && (!next.startsWith('-') || next === '-' || /^-\d/.test(next));
    if (spec.value === 'required') {
      if (!nextIsValue) throw new UsageError(`--${name} needs a value (${spec.valueName ?? 'value'})`, command);
      set(name, next);
      i++;
    } else if (spec.value === 'optional' && nextIsValue && !(command === undefined && commands.has(next))) {
      set(name, next);
      i++;
    } else {
      set(name, true);
    }
  }
  return { command: words[0], positionals: words.slice(1), options };
}

/** @throws UsageError for an option given that is not in `allowed`. */
export function checkOptions(args: ParsedArgs, allowed: ReadonlySet<string>, command: string): void {
  for (const name of args.options.keys()) {
    if (!allowed.has(name)) throw new UsageError(`${command} does not take --${name}`, command);
  }
}

/** @throws UsageError unless there are between `min` and `max` positional arguments. */
export function checkArity(args: ParsedArgs, min: number, max: number, command: string): void {
  const n = args.positionals.length;
  if (n < min) throw new UsageError(`${command} needs ${min === max ? min : `at least ${min}`} argument${min === 1 ? '' : 's'}`, command);
  if (n > max) throw new UsageError(`${command} takes at most ${max} argument${max === 1 ? '' : 's'}, got ${n}`, command);
}

/** The value of an option that takes one, or undefined when absent. */
export function stringOption(args: ParsedArgs, name: string): string | undefined {
  const value = args.options.get(name);
  return value === true ? undefined : value;
}

/** An option's value as an integer of at least `min`. @throws UsageError */
export function integerOption(args: ParsedArgs, name: string, min: number, command: string): number | undefined {
  const value = stringOption(args, name);
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^-?\d+$/.test(value) || !Number.isSafeInteger(n) || n < min) {
    throw new UsageError(`--${name} is an integer of at least ${min}, got ${JSON.stringify(value)}`, command);
  }
  return n;
}
