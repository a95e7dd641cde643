import { DocumentError } from '../errors';
import type { Path, PathElement } from '../types';

/**
 * Most components a path may have. Couchbase's parser holds 32 components counting the implicit root,
 * so 31 are the user's; a 31-component path works there and a 32-component one is PATH_TOO_BIG.
 */
export const MAX_PATH_COMPONENTS = 31;

const DOT = 0x2e; // .
const OPEN = 0x5b; // [
const CLOSE = 0x5d; // ]
const TICK = 0x60; // `
const MINUS = 0x2d; // -
const ZERO = 0x30;
const NINE = 0x39;

/** Digits in the largest index we accept, Number.MAX_SAFE_INTEGER (9007199254740991). */
const MAX_INDEX_DIGITS = 16;

/**
 * Parses a path into its elements: strings are object keys, numbers are array indices (`>= 0`, or
 * `-1` for the last element). The result is a new array the caller may keep or change.
 *
 * String form, Couchbase's syntax but stricter:
 * - components are separated by `.`; an index `[n]` follows a component or another `]` directly
 *   (`a[0][1]`, `[1][2]` at the start, `a[0].b`), or a `.` after a `]` (`a[0].[1]`, as Couchbase's
 *   subjson accepts); after `]` come only `.`, `[` or the end.
 * - `n` is decimal digits without leading zeros (`0`, `12`, not `01`), at most 2^53 - 1, or exactly
 *   `-1`.
 * - backticks quote all or part of a key, so it may contain `.`, `[` and `]`; inside them a backtick
 *   is written twice. ` `` ` alone is the empty key `""`.
 * - keys are matched as the decoded strings: no JSON escaping (a `"` is written as itself), and any
 *   character is allowed except a lone UTF-16 surrogate (it cannot be stored as UTF-8).
 * - `''` is the whole document, `[]`. A trailing `.` is rejected (Couchbase ignores it).
 *
 * Array form: each element is a string (any, including `""` and keys containing dots), a safe integer
 * `>= 0`, or `-1`. `-0` is taken as `0`.
 *
 * @throws DocumentError INVALID_PATH with `position`: the 0-based index of the offending character of
 *   a string (the string's length when it ends too early), or of the offending element of an array;
 *   also for more than {@link MAX_PATH_COMPONENTS} components.
 */
export function parsePath(path: Path): PathElement[] {
  if (typeof path === 'string') return parsePathString(path);
  if (Array.isArray(path)) return parsePathArray(path);
  throw new DocumentError('INVALID_PATH', `a path is a string or an array, got ${describe(path)}`, { position: 0 });
}

/**
 * The canonical string form of a path: keys joined by `.`, indices as `[n]`, and keys that are empty
 * or contain `.`, `[`, `]` or a backtick in backticks. `parsePath(formatPath(p))` deep-equals `p` for
 * every `p` that `parsePath` accepts. Longer paths are formatted too (error messages need them).
 *
 * @throws DocumentError INVALID_PATH for an element `parsePath` would reject (`position` is its index).
 */
export function formatPath(path: readonly PathElement[]): string {
  let out = '';
  for (let i = 0; i < path.length; i++) {
    const element = path[i];
    if (typeof element === 'string') {
      const key = needsQuotes(element) ? '`' + element.replace(/`/g, '``') + '`' : element;
      out += i === 0 ? key : '.' + key;
    } else {
      out += '[' + String(checkedIndex(element, i)) + ']';
    }
  }
  return out;
}

function needsQuotes(key: string): boolean {
  if (key.length === 0) return true;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    if (c === DOT || c === OPEN || c === CLOSE || c === TICK) return true;
  }
  return false;
}

function parsePathArray(path: readonly unknown[]): PathElement[] {
  if (path.length > MAX_PATH_COMPONENTS) throw tooManyComponents(MAX_PATH_COMPONENTS, path.length);
  const out: PathElement[] = new Array<PathElement>(path.length);
  for (let i = 0; i < path.length; i++) {
    const element = path[i];
    if (typeof element === 'string') {
      const bad = loneSurrogateIndex(element);
      if (bad >= 0) {
        throw new DocumentError('INVALID_PATH', `key at element ${i} has a lone surrogate at character ${bad}`, {
          position: i,
        });
      }
      out[i] = element;
    } else {
      out[i] = checkedIndex(element, i);
    }
  }
  return out;
}

/** An array index as given in an array path. @throws DocumentError INVALID_PATH */
function checkedIndex(element: unknown, position: number): number {
  if (typeof element === 'number' && Number.isSafeInteger(element) && element >= -1) {
    // -0 + 0 is +0: an index has no sign.
    return element + 0;
  }
  throw new DocumentError('INVALID_PATH', `element ${position} is ${describe(element)}: an element is a string key, an index >= 0, or -1`, {
    position,
  });
}

/**
 * The string grammar in one pass over char codes, building each key from slices between backticks
 * rather than character by character.
 */
function parsePathString(path: string): PathElement[] {
  const out: PathElement[] = [];
  const n = path.length;
  if (n === 0) return out;
  let i = 0;
  let afterIndex = false;
  // i is at the start of a component: a key, or an index at the very start or right after `].`
  // (Couchbase's subjson accepts `[-1].[-1]`, so we do too).
  for (;;) {
    if (path.charCodeAt(i) === OPEN && (i === 0 || afterIndex)) {
      i = parseIndexes(path, i, out);
      afterIndex = true;
    } else {
      i = parseKey(path, i, out);
      afterIndex = i < n && path.charCodeAt(i) === OPEN;
      if (afterIndex) i = parseIndexes(path, i, out);
    }
    if (i === n) return out;
    // parseKey stops only at '.', '[' or the end, and parseIndexes only at '.' or the end.
    i++;
    if (i === n) throw invalid(path, i - 1, "a path cannot end with '.'");
  }
}

/**
 * Reads the key starting at `start`, decoding backtick-quoted runs; returns the position after it (at
 * `.`, `[` or the end).
 */
function parseKey(path: string, start: number, out: PathElement[]): number {
  const n = path.length;
  // Built only once a backtick is seen; an unquoted key is one slice of the path.
  let decoded: string | undefined;
  let sliceFrom = start;
  let i = start;
  while (i < n) {
    const c = path.charCodeAt(i);
    if (c === DOT || c === OPEN) break;
    if (c === CLOSE) throw invalid(path, i, "unexpected ']' outside backticks");
    if (c >= 0xd800 && c <= 0xdfff) {
      i = checkSurrogate(path, i) + 1;
      continue;
    }
    if (c !== TICK) {
      i++;
      continue;
    }
    decoded = (decoded ?? '') + path.slice(sliceFrom, i);
    const open = i;
    sliceFrom = ++i;
    for (;;) {
      if (i === n) throw invalid(path, open, 'unbalanced backtick: no closing backtick');
      const q = path.charCodeAt(i);
      if (q === TICK) {
        if (path.charCodeAt(i + 1) !== TICK) break;
        // A doubled backtick is one literal backtick: keep the first, skip the second.
        decoded += path.slice(sliceFrom, i + 1);
        i += 2;
        sliceFrom = i;
      } else if (q >= 0xd800 && q <= 0xdfff) {
        i = checkSurrogate(path, i) + 1;
      } else {
        i++;
      }
    }
    decoded += path.slice(sliceFrom, i);
    sliceFrom = ++i;
  }
  if (decoded === undefined) {
    // Never at the end of the path: the caller rejects a trailing '.' first.
    if (i === start) throw invalid(path, i, `empty component: expected a key, found '${path[i]}'`);
    push(path, start, out, path.slice(start, i));
  } else {
    push(path, start, out, decoded + path.slice(sliceFrom, i));
  }
  return i;
}

/** Reads one or more `[n]` starting at the `[` at `start`; returns the position after the last `]`. */
function parseIndexes(path: string, start: number, out: PathElement[]): number {
  const n = path.length;
  let i = start;
  for (;;) {
    i = parseIndex(path, i, out);
    if (i === n) return i;
    const c = path.charCodeAt(i);
    if (c === DOT) return i;
    if (c !== OPEN) throw invalid(path, i, `unexpected '${path[i]}' after ']': expected '.', '[' or the end`);
  }
}

/** Reads one `[n]` starting at the `[` at `open`; returns the position after its `]`. */
function parseIndex(path: string, open: number, out: PathElement[]): number {
  const n = path.length;
  let i = open + 1;
  if (i < n && path.charCodeAt(i) === MINUS) {
    if (path.charCodeAt(i + 1) !== 0x31 || (i + 2 < n && path.charCodeAt(i + 2) !== CLOSE)) {
      throw invalid(path, i, 'the only negative index is [-1]');
    }
    if (i + 2 === n) throw invalid(path, n, "unterminated index: expected ']'");
    push(path, open, out, -1);
    return i + 3;
  }
  const digitsFrom = i;
  let value = 0;
  while (i < n) {
    const c = path.charCodeAt(i);
    if (c < ZERO || c > NINE) break;
    if (i > digitsFrom && path.charCodeAt(digitsFrom) === ZERO) throw invalid(path, digitsFrom, 'an index has no leading zeros');
    if (i - digitsFrom === MAX_INDEX_DIGITS) throw invalid(path, i, 'index too large');
    value = value * 10 + (c - ZERO);
    i++;
  }
  if (i === n) throw invalid(path, i, "unterminated index: expected ']'");
  if (path.charCodeAt(i) !== CLOSE) {
    const what = i === digitsFrom ? 'an index is decimal digits or -1' : "expected ']'";
    throw invalid(path, i, `unexpected '${path[i]}' in index: ${what}`);
  }
  if (i === digitsFrom) throw invalid(path, i, 'empty index: an index is decimal digits or -1');
  if (value > Number.MAX_SAFE_INTEGER) throw invalid(path, digitsFrom, 'index too large');
  push(path, open, out, value);
  return i + 1;
}

function push(path: string, position: number, out: PathElement[], element: PathElement): void {
  if (out.length === MAX_PATH_COMPONENTS) {
    throw new DocumentError(
      'INVALID_PATH',
      `more than ${MAX_PATH_COMPONENTS} components, the limit: component ${MAX_PATH_COMPONENTS + 1} at position ${position} in ${quote(path)}`,
      { position },
    );
  }
  out.push(element);
}

/**
 * Checks the surrogate at `i` is the high half of a pair; returns the position of the pair's low half.
 * @throws DocumentError INVALID_PATH for a lone surrogate
 */
function checkSurrogate(path: string, i: number): number {
  const c = path.charCodeAt(i);
  if (c <= 0xdbff) {
    const next = path.charCodeAt(i + 1);
    if (next >= 0xdc00 && next <= 0xdfff) return i + 1;
  }
  throw invalid(path, i, 'lone UTF-16 surrogate');
}

/**
 * The index of the first lone UTF-16 surrogate in `s` (one that is not half of a pair), or -1. Keys and
 * string values with one are rejected: UTF-8 has no form for it, and encoding would silently
 * substitute U+FFFD.
 */
export function loneSurrogateIndex(s: string): number {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0xd800 || c > 0xdfff) continue;
    const next = s.charCodeAt(i + 1);
    if (c > 0xdbff || !(next >= 0xdc00 && next <= 0xdfff)) return i;
    i++;
  }
  return -1;
}

function tooManyComponents(limit: number, count: number): DocumentError {
  return new DocumentError('INVALID_PATH', `${count} components, more than the limit of ${limit}`, {
    position: limit,
  });
}

function invalid(path: string, position: number, what: string): DocumentError {
  return new DocumentError('INVALID_PATH', `${what} at position ${position} in ${quote(path)}`, { position });
}

/** A path for a message: JSON-quoted so invisible characters show, and cut short when very long. */
function quote(path: string): string {
  const MAX = 200;
  return path.length <= MAX ? JSON.stringify(path) : `${JSON.stringify(path.slice(0, MAX))}...`;
}

function describe(value: unknown): string {
  if (typeof value === 'number' || typeof value === 'bigint') return `${typeof value} ${String(value)}`;
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}
