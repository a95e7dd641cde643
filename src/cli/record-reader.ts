import { Buffer } from 'node:buffer';
import { StringDecoder } from 'string_decoder';
import type { Readable } from 'stream';
import type { TextPosition } from './text-position';

/**
 * Splits an input of JSON records into the text of each record, streaming, with where each starts.
 * Two formats: one JSON array, each element a record (`json`, a `.json` file); and newline-delimited
 * JSON, each non-blank line a record (`ndjson`, a `.ndjson` or `.jsonl` file). The caller says which
 * when it knows (by `--format` or the file's extension); otherwise the content tells, only where it
 * cannot mean the other: an input whose first character (after whitespace and a byte order mark) is
 * not `[` is ndjson (an array starts with `[`). One that starts with `[` is an array unless its first
 * line is a whole JSON value (a line of a pretty-printed array is not); then it is ndjson when more
 * lines follow (an array would have ended), and cannot be told at all when it is the only line (an
 * array of documents, or one document that is an array): {@link UnclearFormatError}.
 *
 * Records are not parsed here: a record that is not valid JSON is the importer's to report (and
 * perhaps skip). What this module throws, {@link InputStructureError}, is an input that cannot be cut
 * into records at all: an array whose elements are not separated by commas, brackets that do not
 * match, text after the array.
 *
 * Hand-written rather than `stream-json` or `split2`. `stream-json` parses: it stops at the first bad
 * record (where `--skip-bad` goes on), gives neither a record's text nor where it starts, and is
 * slower: 100,000 records in a 15 MB array took 7.8 s through its parser and `StreamArray`, against
 * 1.5 s to split and parse them here. `split2` splits lines as fast as this (373 ms against 377 ms
 * for 15 MB of NDJSON) but does only the NDJSON half, without positions or bytes read, and would need
 * the format known before the input is piped into it.
 */

/** The formats of an input: one JSON array of records, or one record per line. */
export type InputFormat = 'json' | 'ndjson';

export interface InputRecord {
  /** 1-based position in the input: the record's number. */
  readonly index: number;
  /** Where the record's text starts in the input. */
  readonly start: TextPosition;
  readonly text: string;
  /** Bytes of the input read so far (for progress: it runs ahead of the records by up to one chunk). */
  readonly bytesRead: number;
}

/** The input cannot be split into records at `position`; nothing after it is read. */
export class InputStructureError extends Error {
  override readonly name = 'InputStructureError';

  constructor(
    readonly reason: string,
    readonly position: TextPosition,
  ) {
    super(`${reason} at line ${position.line}, column ${position.column}`);
  }
}

/** The input starts with `[` and is one line holding a whole JSON value: its format cannot be told. */
export class UnclearFormatError extends Error {
  override readonly name = 'UnclearFormatError';

  constructor() {
    super('one line holding a JSON array is either an array of documents or one document that is an array');
  }
}

type Format = 'unknown' | 'lines' | 'array';

/** Where the array splitter is between elements. */
type ArrayState = 'open' | 'value-or-end' | 'comma-or-end' | 'closed';

const CLOSER: Record<string, string> = { '{': '}', '[': ']' };

/** Streaming splitter: feed it text with {@link push}, then {@link end}; each returns the records completed. */
export class RecordSplitter {
  private format: Format = 'unknown';
  // Before the format is known: the input so far, and how far the search for its first newline went.
  private held = '';
  private searchedTo = 0;
  private index = 0;
  private bytesRead = 0;
  // Position of the next character to be scanned.
  private line = 1;
  private column = 1;
  private started = false;
  private failure: InputStructureError | undefined;

  /** @param told the input's format, when the caller knows it; otherwise the content tells (see the top of this file). */
  constructor(private readonly told?: InputFormat) {}

  // ndjson: the current line so far.
  private partialLine = '';
  private partialStart: TextPosition = { line: 1, column: 1 };

  // array: the current element so far, its start, and the open brackets inside it.
  private state: ArrayState = 'open';
  private element: string[] = [];
  private elementStart: TextPosition = { line: 1, column: 1 };
  private inElement = false;
  private closers: string[] = [];
  private inString = false;
  private escaped = false;

  /**
   * Splits more of the input; `bytes` is the size of the chunk it came from. When the input cannot be
   * split, the records completed before the place it cannot are returned first, and the error is
   * thrown by the next call.
   */
  push(text: string, bytes = Buffer.byteLength(text)): InputRecord[] {
    this.throwFailure();
    const out: InputRecord[] = [];
    try {
      this.split(text, bytes, out);
    } catch (err) {
      if (!(err instanceof InputStructureError) || out.length === 0) throw err;
      this.failure = err;
    }
    return out;
  }

  private throwFailure(): void {
    if (this.failure !== undefined) throw this.failure;
  }

  private split(text: string, bytes: number, out: InputRecord[]): void {
    this.bytesRead += bytes;
    if (!this.started && text.length > 0) {
      this.started = true;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    if (this.format === 'unknown') {
      this.held += text;
      const format = this.formatOf(false);
      if (format === undefined) return;
      this.format = format;
      text = this.held;
      this.held = '';
    }
    if (this.format === 'lines') this.pushLines(text, out);
    else this.pushArray(text, out);
  }

  /**
   * The format of the input held so far (see the top of this file), or `undefined` while more of it
   * is needed to tell.
   *
   * @throws UnclearFormatError for one line holding a whole JSON value that starts with `[`
   */
  private formatOf(atEnd: boolean): Format | undefined {
    const held = this.held;
    const first = held.search(/\S/);
    if (first === -1) return atEnd ? 'lines' : undefined;
    if (this.told !== undefined) return this.told === 'json' ? 'array' : 'lines';
    if (held[first] !== '[') return 'lines';
    const newline = held.indexOf('\n', Math.max(first, this.searchedTo));
    if (newline === -1) {
      this.searchedTo = held.length;
      if (!atEnd) return undefined;
    }
    const firstLine = held.slice(first, newline === -1 ? undefined : newline);
    if (!isWholeJson(firstLine)) return 'array';
    if (newline !== -1 && /\S/.test(held.slice(newline))) return 'lines';
    if (!atEnd) return undefined;
    throw new UnclearFormatError();
  }

  /**
   * The records left at the end of the input; once it has returned them, it returns none. When the
   * input cannot be split, the records before the place it cannot are returned first and the error is
   * thrown by the next call, as by {@link push}.
   *
   * @throws InputStructureError for an unfinished array; UnclearFormatError
   */
  end(): InputRecord[] {
    this.throwFailure();
    if (this.format === 'unknown') {
      this.format = this.formatOf(true) as Format;
      const held = this.held;
      this.held = '';
      const out = this.push(held, 0);
      if (this.failure !== undefined) return out;
      return [...out, ...this.end()];
    }
    const out: InputRecord[] = [];
    if (this.format === 'lines') {
      this.emitLine(this.partialLine, this.partialStart, out);
      this.partialLine = '';
    } else if (this.format === 'array') {
      if (this.inElement && this.closers.length === 0 && !this.inString) this.finishElement(out);
      if (this.state !== 'closed') {
        throw new InputStructureError("the input ends inside the array (a ']' is missing)", { line: this.line, column: this.column });
      }
    }
    return out;
  }

  private record(text: string, start: TextPosition): InputRecord {
    return { index: ++this.index, start, text, bytesRead: this.bytesRead };
  }

  private pushLines(text: string, out: InputRecord[]): void {
    let from = 0;
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', from)) {
      this.emitLine(this.partialLine + text.slice(from, nl), this.partialStart, out);
      this.partialLine = '';
      this.line++;
      this.column = 1;
      this.partialStart = { line: this.line, column: 1 };
      from = nl + 1;
    }
    this.partialLine += text.slice(from);
    this.column += text.length - from;
  }

  private emitLine(line: string, start: TextPosition, out: InputRecord[]): void {
    const text = line.endsWith('\r') ? line.slice(0, -1) : line;
    if (/\S/.test(text)) out.push(this.record(text, start));
  }

  private pushArray(text: string, out: InputRecord[]): void {
    let elementFrom = this.inElement ? 0 : -1;
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      if (this.inElement) {
        if (this.inString) {
          if (this.escaped) this.escaped = false;
          else if (c === '\\') this.escaped = true;
          else if (c === '"') this.inString = false;
        } else if (c === '"') {
          this.inString = true;
        } else if (c === '{' || c === '[') {
          this.closers.push(CLOSER[c]);
        } else if (c === '}' || c === ']') {
          if (this.closers.length > 0) {
            if (this.closers.pop() !== c) this.fail(`'${c}' does not match the bracket it closes`);
            if (this.closers.length === 0) {
              this.element.push(text.slice(elementFrom, i + 1));
              elementFrom = -1;
              this.finishElement(out);
              this.step(c);
              continue;
            }
          } else {
            // The end of the array right after a scalar element.
            this.element.push(text.slice(elementFrom, i));
            elementFrom = -1;
            this.finishElement(out);
          }
        } else if (this.closers.length === 0 && (c === ',' || isSpace(c))) {
          this.element.push(text.slice(elementFrom, i));
          elementFrom = -1;
          this.finishElement(out);
        }
      }
      if (!this.inElement) {
        if (!isSpace(c)) {
          switch (this.state) {
            case 'open':
              if (c !== '[')
                this.fail(`a JSON array of documents starts with '[', not '${c}' (for one document per line, use --format ndjson or a .ndjson file)`);
              this.state = 'value-or-end';
              break;
            case 'value-or-end':
              if (c === ']') this.state = 'closed';
              else if (c === ',') this.fail("expected an array element before ','");
              else {
                this.inElement = true;
                elementFrom = i;
                this.elementStart = { line: this.line, column: this.column };
                this.closers = c === '{' || c === '[' ? [CLOSER[c]] : [];
                this.inString = c === '"';
                this.escaped = false;
              }
              break;
            case 'comma-or-end':
              if (c === ',') this.state = 'value-or-end';
              else if (c === ']') this.state = 'closed';
              else this.fail(`expected ',' or ']' after an array element, found '${c}'`);
              break;
            case 'closed':
              this.fail("unexpected text after the array's closing ']'");
          }
        }
      }
      this.step(c);
    }
    if (elementFrom !== -1) this.element.push(text.slice(elementFrom));
  }

  private finishElement(out: InputRecord[]): void {
    out.push(this.record(this.element.join(''), this.elementStart));
    this.element = [];
    this.inElement = false;
    this.state = 'comma-or-end';
  }

  private step(c: string): void {
    if (c === '\n') {
      this.line++;
      this.column = 1;
    } else {
      this.column++;
    }
  }

  private fail(reason: string): never {
    throw new InputStructureError(reason, { line: this.line, column: this.column });
  }
}

/** Whether `text` is one whole JSON value. */
function isWholeJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function isSpace(c: string): boolean {
  return c === ' ' || c === '\n' || c === '\r' || c === '\t';
}

/**
 * The records of a stream of JSON records (see the top of this file), as they arrive.
 *
 * @param format the input's format, when known; otherwise its content tells
 * @throws InputStructureError, UnclearFormatError
 */
export async function* readRecords(input: Readable, format?: InputFormat): AsyncIterable<InputRecord> {
  const splitter = new RecordSplitter(format);
  const decoder = new StringDecoder('utf8');
  for await (const chunk of input) {
    const bytes = chunk as Buffer;
    yield* splitter.push(decoder.write(bytes), bytes.length);
  }
  const rest = decoder.end();
  if (rest.length > 0) yield* splitter.push(rest, 0);
  yield* splitter.end();
  // Throws what the first call found after the records it returned, if anything.
  yield* splitter.end();
}
