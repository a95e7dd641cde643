import type { JsonValue } from '../document/types';
import { stringifyJson } from './json-text';
import type { ProgressStream } from './progress';

/**
 * What a command prints. Results go to stdout: text for people, or with `--json` one JSON value per
 * line for programs. Progress and problems go to stderr, so that stdout stays the result alone (an
 * export piped to a file holds only the documents).
 *
 * Writes wait for a full pipe to drain, so that a large export neither buffers in memory nor is cut
 * short when the process exits.
 */

export interface OutputStream extends ProgressStream {
  write(text: string, callback?: (err?: Error | null) => void): boolean;
  once(event: 'drain', listener: () => void): unknown;
}

export class Output {
  constructor(
    readonly stdout: OutputStream,
    readonly stderr: OutputStream,
    /** `--json`: machine-readable results. */
    readonly json: boolean,
  ) {}

  /** Writes text to stdout, waiting for the pipe to drain when it is full. */
  async write(text: string): Promise<void> {
    if (!this.stdout.write(text)) await new Promise<void>((resolve) => this.stdout.once('drain', resolve));
  }

  /** A result: `text` for people, or `value` as one JSON line with `--json`. */
  async result(text: string | (() => string), value: JsonValue): Promise<void> {
    await this.write(`${this.json ? stringifyJson(value) : typeof text === 'string' ? text : text()}\n`);
  }

  /** Resolves once everything written to stdout has been handed to the OS. */
  flush(): Promise<void> {
    return new Promise((resolve) => this.stdout.write('', () => resolve()));
  }
}
