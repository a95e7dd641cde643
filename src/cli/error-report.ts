import { isDocumentError } from '../document/errors';
import { FdbUnavailableError } from '../kv/fdb/errors';
import { isKvError } from '../kv/contract/errors';
import { UsageError } from './args';

/**
 * How a failure is shown: one line on stderr saying what went wrong (`doclayer: ...`), at most a few
 * lines more when they point at it (a caret under the offending character of a path or of JSON), and
 * an exit status that is not 0. Stack traces are for bugs: they are shown for errors the CLI does not
 * know, and only with `DOCLAYER_DEBUG=1`.
 */

/** Exit statuses. */
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/** A failure the CLI explains itself: its message, and lines that show where. */
export class CliError extends Error {
  override readonly name = 'CliError';

  constructor(
    message: string,
    readonly details: readonly string[] = [],
    readonly exitCode = EXIT_FAILURE,
  ) {
    super(message);
  }
}

/** `text`, indented, and a caret under its character at `index` (0-based). */
export function caretLines(text: string, index: number): string[] {
  const shown = text.replace(/[\r\n\t]/g, ' ');
  return [`  ${shown}`, `  ${' '.repeat(Math.max(0, Math.min(index, shown.length)))}^`];
}

/**
 * Runs `fn`, which uses the path argument `path`; an INVALID_PATH error becomes a {@link CliError} that
 * shows the path with a caret under the offending position.
 */
export async function withPathShown<T>(path: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (isDocumentError(err, 'INVALID_PATH') && err.position !== undefined) {
      const reason = err.message.replace(/^INVALID_PATH: /, '').replace(/ at position \d+ in ".*"$/s, '');
      throw new CliError(`bad path at position ${err.position}: ${reason} (INVALID_PATH)`, caretLines(path, err.position));
    }
    throw err;
  }
}

export interface ErrorReport {
  readonly lines: readonly string[];
  readonly exitCode: number;
}

export function reportError(err: unknown, debug: boolean): ErrorReport {
  if (err instanceof UsageError) {
    const help = err.command === undefined ? 'doclayer help' : `doclayer help ${err.command}`;
    return { lines: [`doclayer: ${err.message}`, `Run \`${help}\` for usage.`], exitCode: EXIT_USAGE };
  }
  if (err instanceof CliError) return { lines: [`doclayer: ${err.message}`, ...err.details], exitCode: err.exitCode };
  if (err instanceof FdbUnavailableError) return { lines: [`doclayer: ${oneLine(err.message)}`], exitCode: EXIT_FAILURE };
  if (isDocumentError(err)) return { lines: [`doclayer: ${oneLine(err.message)}`], exitCode: EXIT_FAILURE };
  if (isKvError(err)) return { lines: [`doclayer: ${oneLine(err.message)}`], exitCode: EXIT_FAILURE };
  const message = err instanceof Error ? err.message : String(err);
  const lines = [`doclayer: ${oneLine(message)}`];
  if (debug && err instanceof Error && err.stack) lines.push(err.stack);
  else lines.push('(set DOCLAYER_DEBUG=1 to see where it happened)');
  return { lines, exitCode: EXIT_FAILURE };
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ');
}
