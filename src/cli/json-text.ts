import { stringify as losslessStringify } from 'lossless-json';
import type { JsonValue } from '../document/types';

/**
 * JSON text as the CLI reads and writes documents: integers beyond 2^53 as `bigint` (the document layer
 * stores them exactly, and `JSON.parse` would round them), and syntax errors with the exact offset of
 * the offending character (V8's messages give none for most errors).
 *
 * Both directions take the native path (`JSON.parse`, `JSON.stringify`) whenever it gives the same
 * result, so that importing and exporting large files costs what the native functions cost.
 *
 * Writing keeps every number what it is, so that the CLI's own output reads back as the same values
 * (an export imports exactly): a bigint is an integer literal; `-0` is `-0` (`JSON.stringify` writes
 * `0`, and the document layer stores `-0`); a JS number that is an integer beyond ±(2^53−1) but below
 * 1e21 gets a `.0` (`9007199254740992.0`), since the bare literal reads back as a bigint. A value holding
 * any of these is written by the `lossless-json` package's `stringify`, in the layout of
 * `JSON.stringify` (indents capped at 10 spaces, which the writer it replaced did not do). Looking for
 * them first, rather than catching the TypeError of `JSON.stringify`, matters: that throw costs
 * ~35 µs, so 20,000 order records each holding a bigint took 1,130 ms that way and take 373 ms now;
 * on records without one the look costs 0.8 µs each (139 -> 155 ms).
 *
 * Reading is the parser below, not the `parse` of `lossless-json`: that one is no faster on records
 * with bigints (478 ms against 516 ms; 3x slower than the native path on records without), and it is
 * less correct for the CLI: its messages are not the reasons the CLI prints (`expected a JSON value,
 * found "}"`), a duplicate key throws where `JSON.parse` keeps the last value, and deep nesting
 * overflows the stack (a RangeError) instead of failing as bad JSON. `json-bigint` is worse still: it
 * accepts `01`, throws a bare SyntaxError on `1234567890123456789.5`, refuses a `__proto__` key by
 * default, and reports positions one past the character at fault.
 */

/** A JSON syntax error at a 0-based offset into the text parsed. */
export class JsonSyntaxError extends Error {
  override readonly name = 'JsonSyntaxError';

  constructor(
    /** What is wrong, without the position: `expected ',' or '}'`. */
    readonly reason: string,
    /** The 0-based offset (in UTF-16 code units) of the character at fault, or the text's length at its end. */
    readonly offset: number,
  ) {
    super(`${reason} at offset ${offset}`);
  }
}

/** A run of 16 digits: the shortest an integer beyond 2^53 (9007199254740992, 16 digits) can be. */
const LONG_DIGIT_RUN = /\d{16}/;

/** Nesting deeper than this is refused; the document layer stores at most 32 levels anyway. */
const MAX_NESTING = 1000;

/**
 * Parses JSON text. Integers outside the safe range come back as `bigint`; everything else as
 * `JSON.parse` returns it (a `__proto__` key included, as an own property).
 *
 * @throws JsonSyntaxError with the offset of the first character that is not valid JSON.
 */
export function parseJson(text: string): JsonValue {
  if (!LONG_DIGIT_RUN.test(text)) {
    try {
      return JSON.parse(text) as JsonValue;
    } catch {
      // Fall through: the exact parser finds where.
    }
  }
  return new Parser(text).parseText();
}

/** Recursive descent over the JSON grammar (RFC 8259), for exact error offsets and bigint integers. */
class Parser {
  private at = 0;
  private depth = 0;

  constructor(private readonly text: string) {}

  parseText(): JsonValue {
    this.skipSpace();
    const value = this.parseValue();
    this.skipSpace();
    if (this.at < this.text.length) this.fail('unexpected text after the JSON value');
    return value;
  }

  private fail(reason: string, at = this.at): never {
    throw new JsonSyntaxError(reason, at);
  }

  private describeHere(): string {
    if (this.at >= this.text.length) return 'the end of the text';
    return JSON.stringify(this.text[this.at]);
  }

  private skipSpace(): void {
    const t = this.text;
    while (this.at < t.length) {
      const c = t.charCodeAt(this.at);
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return;
      this.at++;
    }
  }

  private parseValue(): JsonValue {
    const c = this.text[this.at];
    switch (c) {
      case '{':
        return this.parseObject();
      case '[':
        return this.parseArray();
      case '"':
        return this.parseString();
      case 't':
        return this.parseWord('true', true);
      case 'f':
        return this.parseWord('false', false);
      case 'n':
        return this.parseWord('null', null);
      default:
        if (c === '-' || (c >= '0' && c <= '9')) return this.parseNumber();
        return this.fail(`expected a JSON value, found ${this.describeHere()}`);
    }
  }

  /** Steps into a container at its opening bracket; true when it is empty (and so already left). */
  private enter(closer: '}' | ']'): boolean {
    if (++this.depth > MAX_NESTING) this.fail(`nesting deeper than ${MAX_NESTING} levels`);
    this.at++;
    this.skipSpace();
    return this.leaves(closer);
  }

  /** Steps out of the container when `closer` is next. */
  private leaves(closer: '}' | ']'): boolean {
    if (this.text[this.at] !== closer) return false;
    this.at++;
    this.depth--;
    return true;
  }

  /** After a member or element: true when its container ends there, false after a comma. */
  private endsAfterItem(closer: '}' | ']', what: string): boolean {
    this.skipSpace();
    if (this.leaves(closer)) return true;
    if (this.text[this.at] !== ',') this.fail(`expected ',' or '${closer}' after ${what}, found ${this.describeHere()}`);
    this.at++;
    this.skipSpace();
    return false;
  }

  private parseObject(): JsonValue {
    const object: { [key: string]: JsonValue } = {};
    if (this.enter('}')) return object;
    do {
      if (this.text[this.at] !== '"') this.fail(`expected a property name in double quotes, found ${this.describeHere()}`);
      const key = this.parseString();
      this.skipSpace();
      if (this.text[this.at] !== ':') this.fail(`expected ':' after a property name, found ${this.describeHere()}`);
      this.at++;
      this.skipSpace();
      const value = this.parseValue();
      // As JSON.parse: `__proto__` is an own property, not the prototype.
      if (key === '__proto__') Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
      else object[key] = value;
    } while (!this.endsAfterItem('}', 'a property value'));
    return object;
  }

  private parseArray(): JsonValue {
    const array: JsonValue[] = [];
    if (this.enter(']')) return array;
    do array.push(this.parseValue());
    while (!this.endsAfterItem(']', 'an array element'));
    return array;
  }

  private parseString(): string {
    const t = this.text;
    const start = this.at;
    this.at++;
    for (;;) {
      if (this.at >= t.length) this.fail('unterminated string', start);
      const c = t.charCodeAt(this.at);
      if (c === 0x22) break;
      if (c < 0x20) this.fail('control character in a string (escape it)');
      if (c === 0x5c) {
        const e = t[this.at + 1];
        if (e === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(t.slice(this.at + 2, this.at + 6))) this.fail('bad \\u escape: four hex digits expected');
          this.at += 6;
          continue;
        }
        if (e === undefined || !'"\\/bfnrt'.includes(e)) this.fail('bad escape in a string');
        this.at += 2;
        continue;
      }
      this.at++;
    }
    this.at++;
    // The slice is valid JSON by now: let the native parser decode its escapes.
    return JSON.parse(t.slice(start, this.at)) as string;
  }

  private parseWord<T extends JsonValue>(word: string, value: T): T {
    if (this.text.startsWith(word, this.at)) {
      this.at += word.length;
      return value;
    }
    return this.fail(`expected a JSON value, found ${this.describeHere()}`);
  }

  private parseNumber(): JsonValue {
    const t = this.text;
    const start = this.at;
    if (t[this.at] === '-') this.at++;
    if (t[this.at] === '0') {
      this.at++;
    } else if (t[this.at] >= '1' && t[this.at] <= '9') {
      while (t[this.at] >= '0' && t[this.at] <= '9') this.at++;
    } else {
      this.fail('expected a digit');
    }
    let integer = true;
    if (t[this.at] === '.') {
      integer = false;
      this.at++;
      if (!(t[this.at] >= '0' && t[this.at] <= '9')) this.fail('expected a digit after the decimal point');
      while (t[this.at] >= '0' && t[this.at] <= '9') this.at++;
    }
    if (t[this.at] === 'e' || t[this.at] === 'E') {
      integer = false;
      this.at++;
      if (t[this.at] === '+' || t[this.at] === '-') this.at++;
      if (!(t[this.at] >= '0' && t[this.at] <= '9')) this.fail('expected a digit in the exponent');
      while (t[this.at] >= '0' && t[this.at] <= '9') this.at++;
    }
    const literal = t.slice(start, this.at);
    const number = Number(literal);
    if (integer && !Number.isSafeInteger(number)) return BigInt(literal);
    return number;
  }
}

/**
 * JSON text of a document-layer value, as `JSON.stringify(value, null, indent)` writes it, except that
 * numbers are written so that {@link parseJson} reads them back as they are (see the top of this file).
 */
export function stringifyJson(value: JsonValue, indent = 0): string {
  if (!needsExactNumbers(value)) return JSON.stringify(value, null, indent);
  // undefined only for a value JSON cannot hold at all (a function, undefined), which a JsonValue is not.
  return losslessStringify(value, null, indent, EXACT_NUMBERS) as string;
}

/** Whether `JSON.stringify` would write a number of `value` as text that does not read back as it. */
function needsExactNumbers(value: JsonValue): boolean {
  if (typeof value === 'bigint') return true;
  if (typeof value === 'number') return isInexactNumber(value);
  if (value === null || typeof value !== 'object') return false;
  if (Array.isArray(value)) return value.some(needsExactNumbers);
  for (const key in value) if (needsExactNumbers(value[key])) return true;
  return false;
}

/** -0, or an integer that `JSON.stringify` writes as an integer literal beyond the safe range. */
function isInexactNumber(n: number): boolean {
  return Object.is(n, -0) || (Number.isInteger(n) && !Number.isSafeInteger(n) && Math.abs(n) < 1e21);
}

const EXACT_NUMBERS = [
  {
    test: (value: unknown) => typeof value === 'number' && isInexactNumber(value),
    stringify: (value: unknown) => (Object.is(value, -0) ? '-0' : `${String(value)}.0`),
  },
];
