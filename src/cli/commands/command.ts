import type { Readable } from 'stream';
import type { ParsedArgs } from '../args';
import type { Output } from '../output';
import type { EngineSelection, Session } from '../session';

/** One `doclayer` command: its usage, the options it accepts, and what it does. */
export interface Command {
  readonly name: string;
  /** Its forms: each a usage line without the leading `doclayer ` (`get <id> [path]`) and what it does. */
  readonly forms: readonly { readonly usage: string; readonly summary: string }[];
  /** More about the arguments, shown by `doclayer help <command>`. */
  readonly details?: readonly string[];
  /** Options of its own (the global ones are always accepted). */
  readonly options: readonly string[];
  /**
   * Whether it may create documents, and so the database: a missing database folder is created only
   * for these; the others fail on it (a mistyped --db would otherwise leave an empty folder behind).
   */
  readonly createsDatabase: boolean;
  /** Runs it; resolves to the exit status (0 when nothing is returned). */
  run(context: CommandContext): Promise<number | void>;
}

export interface CommandContext {
  readonly args: ParsedArgs;
  readonly output: Output;
  readonly stdin: Readable;
  readonly cwd: string;
  readonly engine: EngineSelection;
  /** `--collection`, or undefined for the default collection `_default._default`. */
  readonly collectionName: string | undefined;
  /** Opens the database (once per run; the runner closes it). */
  session(options?: { count?: boolean }): Promise<Session>;
}

/** The collection a command names, as shown to people. */
export function collectionLabel(context: CommandContext): string {
  return context.collectionName ?? '_default._default';
}
