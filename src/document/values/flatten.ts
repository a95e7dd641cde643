import { Buffer } from 'node:buffer';
import type { KeyValue } from '../../kv/contract/types';
import { encodeItem } from '../../tuple/codec';
import { Writer } from '../../tuple/writer';
import { corruptData, DocumentError } from '../errors';
import { splitBytes } from './chunks';
import {
  ARRAY_MARKER,
  ARRAY_VALUE,
  decodeScalar,
  encodeScalar,
  isLongString,
  joinLongString,
  LONG_STRING_MARKER,
  longStringHeader,
  OBJECT_MARKER,
  OBJECT_VALUE,
  readLongStringHeader,
} from './leaf';
import { CHUNK_CODE, decodeStringElement, elementEnd, isIntegerElement, STRING_CODE } from '../keys/layout';
import { formatPath } from './path';
import { assertJsonValue, hasLoneSurrogate, MAX_DEPTH } from './json-value';
import type { JsonValue, PathElement } from '../types';

/**
 * JSON values to the entries of their subtree and back (docs/documents.md, "Values").
 *
 * Objects come back with their keys in stored order, which is the order of the keys' UTF-8 bytes, not
 * the order they were written in (as in FoundationDB's document recipe); JavaScript itself then lists
 * integer-like keys (`"1"`, `"20"`) first, in numeric order, whatever the order of insertion.
 */

/** The entries of a subtree, in key order, with what writing them costs a transaction. */
export interface Entries {
  readonly keys: Buffer[];
  readonly values: Buffer[];
  /** Bytes writing them adds to a transaction: see {@link entryBytes}. */
  bytes: number;
}

/**
 * Most bytes a document's entries may take of one transaction (see {@link entryBytes}): FDB's limit
 * is 10,000,000 bytes, and the clear of the old value, the version key and the read conflict ranges
 * need some of it too.
 */
export const MAX_DOCUMENT_BYTES = 9_000_000;

/**
 * What writing one entry adds to a transaction's size as FDB counts it: the mutation (key and value)
 * and its write conflict range (the key and the key after it). Keys count three times, so a document
 * of many small leaves reaches the limit with far fewer than 9 MB of JSON.
 */
export function entryBytes(key: Uint8Array, value: Uint8Array): number {
  return 3 * key.length + 1 + value.length;
}

export function emptyEntries(): Entries {
  return { keys: [], values: [], bytes: 0 };
}

// Flattening is synchronous, so one writer holds the key being built for every call.
const writer = new Writer(1024);

/**
 * The entries of `value` stored at the data key `base`: a marker per container, a leaf per scalar,
 * a header and chunks per long string. Array elements get positions 0..n-1. The entries come in key
 * order (an object's fields sorted as their keys are), so that the engine applies them as one sorted
 * run without sorting them again.
 *
 * Checks everything before the caller writes anything:
 * @param maxKeyBytes - the engine's key limit (`Database.maxKeyBytes`), so that a key too long for
 *   the engine is this layer's typed error on every engine, not the engine's key_too_large.
 * @throws DocumentError KEY_TOO_LARGE when a key would exceed `maxKeyBytes` (the message gives the
 *   path below `base` where it happens).
 * @throws DocumentError DOCUMENT_TOO_LARGE when `into.bytes` would exceed `maxBytes`.
 */
export function flatten(
  value: JsonValue,
  base: Uint8Array,
  maxKeyBytes: number,
  into: Entries = emptyEntries(),
  maxBytes = MAX_DOCUMENT_BYTES,
): Entries {
  return flattenInto(value, base, maxKeyBytes, into, maxBytes, false);
}

/**
 * As {@link flatten}, for a value not yet known to be JSON (a whole document as a caller gave it),
 * checked in the same walk instead of a walk of its own before it. What it throws is what
 * `assertJsonValue(value, what)` followed by `flatten` would: when the walk meets anything it does not
 * take as it is, or any error, that check runs on the whole value and throws its error (so a value
 * that is not JSON fails as such, at the path that check names, even where a limit came first).
 *
 * @throws DocumentError INVALID_VALUE, VALUE_TOO_DEEP (see `assertJsonValue`), KEY_TOO_LARGE,
 *   DOCUMENT_TOO_LARGE (see {@link flatten}).
 */
export function flattenChecked(value: unknown, base: Uint8Array, maxKeyBytes: number, what: string): Entries {
  try {
    return flattenInto(value as JsonValue, base, maxKeyBytes, emptyEntries(), MAX_DOCUMENT_BYTES, true);
  } catch (err) {
    assertJsonValue(value, what);
    if (err !== NOT_TAKEN) throw err;
    // JSON after all (a non-enumerable symbol key, say): flattened as it is.
    return flatten(value, base, maxKeyBytes);
  }
}

/** What {@link flattenChecked}'s walk throws at a value it does not take as it is. */
const NOT_TAKEN = new Error('not a plain JSON value');

function flattenInto(value: JsonValue, base: Uint8Array, maxKeyBytes: number, into: Entries, maxBytes: number, check: boolean): Entries {
  writer.reset();
  writer.bytes(base);
  const state = { out: into, maxBytes, maxKeyBytes, path: [] as PathElement[], check };
  visit(value, state);
  return into;
}

interface State {
  readonly out: Entries;
  readonly maxBytes: number;
  readonly maxKeyBytes: number;
  /** The path below `base` of the node being visited, for messages. */
  readonly path: PathElement[];
  /** Whether each node is checked as `assertJsonValue` would (see {@link flattenChecked}). */
  readonly check: boolean;
}

/**
 * Whether `value`, at depth `level` (the root is 1), is what `assertJsonValue` accepts there, as far as
 * the node itself goes (an object's keys are checked by the caller). It may refuse what that check
 * accepts (an object with only non-enumerable symbol keys), never the reverse.
 */
function isTaken(value: unknown, level: number): boolean {
  if (level > MAX_DEPTH) return false;
  switch (typeof value) {
    case 'string':
      // A lone surrogate throws where the string is encoded (the tuple encoder refuses it), which
      // runs the whole check; only a long string, which UTF-8 encodes without that check, is looked at.
      return !isLongString(value) || !hasLoneSurrogate(value);
    case 'number':
      return Number.isFinite(value);
    case 'boolean':
    case 'bigint':
      return true;
    case 'object': {
      if (value === null || Array.isArray(value)) return true;
      const proto: unknown = Object.getPrototypeOf(value);
      return (proto === Object.prototype || proto === null) && Object.getOwnPropertySymbols(value).length === 0;
    }
    default:
      return false;
  }
}

function visit(value: JsonValue, state: State): void {
  const w = writer;
  if (state.check && !isTaken(value, state.path.length + 1)) throw NOT_TAKEN;
  if (w.pos > state.maxKeyBytes) {
    throw new DocumentError(
      'KEY_TOO_LARGE',
      `the key of ${where(state.path)} would be ${w.pos} bytes, over the engine's limit of ${state.maxKeyBytes}`,
      { path: formatPath(state.path) },
    );
  }
  const key = w.result(0);
  if (typeof value !== 'object' || value === null) {
    if (typeof value === 'string' && isLongString(value)) {
      pushLongString(key, value, state);
    } else {
      push(key, encodeScalar(value), state);
    }
    return;
  }
  if (Array.isArray(value)) {
    push(key, ARRAY_VALUE, state);
    for (let i = 0; i < value.length; i++) visitChild(i, value[i], state);
  } else {
    push(key, OBJECT_VALUE, state);
    const object = value;
    const names = namesInKeyOrder(Object.keys(object), state.path.length);
    const sorted = names.sorted;
    const encoded = names.encoded;
    if (encoded === undefined) {
      // A name with a lone surrogate throws where it is encoded (as a string leaf does, see isTaken).
      for (let i = 0; i < sorted.length; i++) visitChild(sorted[i], object[sorted[i]], state);
    } else {
      for (let i = 0; i < sorted.length; i++) visitEncodedChild(sorted[i], encoded[i], object[sorted[i]], state);
    }
  }
}

/** An object's names in key order, and their tuple elements once the same names come again. */
interface Names {
  /** The names as `Object.keys` gave them. */
  readonly given: readonly string[];
  readonly sorted: readonly string[];
  /** `sorted`'s encoded elements: made the second time an object of these names comes at one depth. */
  encoded: readonly Buffer[] | undefined;
}

/**
 * The names of the object last sorted at each depth, as given and in key order: the documents a
 * program writes, and the elements of an array of records, repeat one shape, whose names are then
 * compared (as the same interned strings) rather than sorted and encoded again.
 */
const SORTED_NAMES: Names[] = [];

/** An object's `names` (its `Object.keys`) in the order of their keys. */
function namesInKeyOrder(names: string[], depth: number): Names {
  const last = SORTED_NAMES[depth];
  if (last !== undefined && sameNames(last.given, names)) {
    last.encoded ??= last.sorted.map(encodedName);
    return last;
  }
  let ordered = true;
  for (let i = 1; i < names.length && ordered; i++) ordered = compareNames(names[i - 1], names[i]) < 0;
  const sorted = ordered ? names : [...names].sort(compareNames);
  const made: Names = { given: names, sorted, encoded: undefined };
  if (depth < MAX_CACHED_DEPTH) SORTED_NAMES[depth] = made;
  return made;
}

// Encoding a name is synchronous, so one writer serves every call.
const nameWriter = new Writer(64);

/** `name` as a path element. @throws TupleError for a lone surrogate (see isTaken). */
function encodedName(name: string): Buffer {
  nameWriter.reset();
  encodeItem(nameWriter, name);
  return nameWriter.result(0);
}

/** Depths whose last object's names are kept (a document has at most 32). */
const MAX_CACHED_DEPTH = 32;

function sameNames(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * The order of two object keys' data keys: the order of their UTF-8 bytes (a tuple string keeps it,
 * its escaped NULs included). That is the order of their UTF-16 code units except where a surrogate
 * (a character beyond U+FFFF: 4 UTF-8 bytes) meets a unit from U+E000 up (3 bytes, below it).
 */
function compareNames(a: string, b: string): number {
  const n = a.length < b.length ? a.length : b.length;
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return utf8Rank(x) - utf8Rank(y);
  }
  return a.length - b.length;
}

/** A UTF-16 code unit's place in UTF-8 byte order: surrogates after U+E000..U+FFFF. */
function utf8Rank(unit: number): number {
  return unit < 0xd800 ? unit : unit < 0xe000 ? unit + 0x2000 : unit - 0x800;
}

/** Visits the child at `element` of the node whose key the writer holds, and leaves that key there. */
function visitChild(element: PathElement, child: JsonValue, state: State): void {
  const w = writer;
  const mark = w.pos;
  encodeItem(w, element);
  state.path.push(element);
  visit(child, state);
  state.path.pop();
  w.pos = mark;
}

/** {@link visitChild} of an object's child whose name's element is `encoded`. */
function visitEncodedChild(name: string, encoded: Buffer, child: JsonValue, state: State): void {
  const w = writer;
  const mark = w.pos;
  const n = encoded.length;
  w.ensure(n);
  const buf = w.buf;
  for (let i = 0; i < n; i++) buf[mark + i] = encoded[i];
  w.pos = mark + n;
  state.path.push(name);
  visit(child, state);
  state.path.pop();
  w.pos = mark;
}

function push(key: Buffer, value: Buffer, state: State): void {
  const out = state.out;
  out.keys.push(key);
  out.values.push(value);
  out.bytes += entryBytes(key, value);
  if (out.bytes > state.maxBytes) {
    throw new DocumentError(
      'DOCUMENT_TOO_LARGE',
      `writing the document takes more than ${state.maxBytes} bytes of a transaction (at ${where(state.path)}): too large for one transaction`,
      { path: formatPath(state.path) },
    );
  }
}

/** A string too long for one value: a header at its key, then chunks at `key ++ tuple(null, i)`. */
function pushLongString(key: Buffer, s: string, state: State): void {
  const bytes = Buffer.from(s, 'utf8');
  const chunks = splitBytes(bytes);
  push(key, longStringHeader(bytes.length, chunks.length), state);
  const w = writer;
  const mark = w.pos;
  for (let i = 0; i < chunks.length; i++) {
    w.ensure(1);
    w.buf[w.pos++] = CHUNK_CODE;
    encodeItem(w, i);
    push(w.result(0), chunks[i], state);
    w.pos = mark;
  }
}

function where(path: readonly PathElement[]): string {
  return path.length === 0 ? 'the value itself' : JSON.stringify(formatPath(path));
}

/**
 * The object keys {@link unflatten} decoded last, by depth and ordinal: kept from one call to the next
 * (a page of documents of one shape decodes each name once). An entry is used only when its bytes are
 * those of the key at hand.
 */
const OBJECT_KEY_NAMES: CachedName[][] = [[]];

/**
 * The value of the subtree whose entries are `entries[start..end)`, in key order, the first being the
 * node itself (its key `baseLength` bytes long).
 *
 * Keys are decoded incrementally: consecutive keys share the path of their common ancestor, so each key
 * is compared with the previous one and only its last element is decoded; array positions are never
 * decoded at all (elements arrive in position order).
 *
 * @throws DocumentError CORRUPT_DATA for entries that no document could have written.
 */
export function unflatten(entries: readonly KeyValue[], start: number, end: number, baseLength: number): JsonValue {
  const first = entries[start];
  if (first.key.length !== baseLength) throw corruptData('document data: a subtree without an entry for its root');
  const rootValue = first.value;
  const rootCode = rootValue[0];
  if (rootCode !== OBJECT_MARKER && rootCode !== ARRAY_MARKER) {
    if (rootCode === LONG_STRING_MARKER) {
      const s = readLongString(entries, start, end, rootValue);
      if (start + 1 + s.chunks !== end) throw corruptData('document data: entries below a string');
      return s.value;
    }
    if (end !== start + 1) throw corruptData('document data: entries below a scalar');
    return decodeScalar(rootValue);
  }
  const root: JsonValue = rootCode === OBJECT_MARKER ? {} : [];
  // The open containers from the root down to the last one entered: their values, whether they are
  // arrays, and the length of their keys.
  const containers: (JsonValue[] | { [key: string]: JsonValue })[] = [root];
  const isArray: boolean[] = [rootCode === ARRAY_MARKER];
  const keyEnds: number[] = [baseLength];
  // Per depth, the keys of the previous object there by ordinal, and the ordinal of the next child.
  const names = OBJECT_KEY_NAMES;
  const ordinals: number[] = [0];
  let depth = 0;
  let previous = first.key;
  for (let i = start + 1; i < end; i++) {
    const { key, value } = entries[i];
    // The common prefix with the previous key: every container whose key lies within it is an
    // ancestor of this entry too, unless this key continues with 0xff: then its last element only
    // extends the container's (a string key with a NUL, escaped as 00 ff), and it is a sibling.
    const n = key.length < previous.length ? key.length : previous.length;
    let common = baseLength;
    while (common < n && key[common] === previous[common]) common++;
    while (keyEnds[depth] > common || (depth > 0 && key[keyEnds[depth]] === 0xff)) depth--;
    const at = keyEnds[depth];
    const stop = elementEnd(key, at);
    if (stop !== key.length) throw corruptData('document data: an entry whose parent has no entry');
    previous = key;
    let child: JsonValue;
    const code = value[0];
    if (code === OBJECT_MARKER) child = {};
    else if (code === ARRAY_MARKER) child = [];
    else if (code === LONG_STRING_MARKER) {
      const s = readLongString(entries, i, end, value);
      child = s.value;
      i += s.chunks;
    } else child = decodeScalar(value);
    const parent = containers[depth];
    if (isArray[depth]) {
      if (!isIntegerElement(key, at)) throw corruptData('document data: an array child that is not a position');
      (parent as JsonValue[]).push(child);
    } else {
      if (key[at] !== STRING_CODE) throw corruptData('document data: an object child that is not a key');
      const ordinal = ordinals[depth]++;
      const known = names[depth][ordinal];
      let name: string;
      if (known !== undefined && sameBytes(known.key, known.at, key, at, stop)) {
        name = known.name;
      } else {
        name = decodeStringElement(key, at, stop);
        names[depth][ordinal] = { key, at, name };
      }
      if (name === '__proto__') {
        Object.defineProperty(parent, name, { value: child, writable: true, enumerable: true, configurable: true });
      } else {
        (parent as { [key: string]: JsonValue })[name] = child;
      }
    }
    if (code === OBJECT_MARKER || code === ARRAY_MARKER) {
      depth++;
      containers[depth] = child as JsonValue[];
      isArray[depth] = code === ARRAY_MARKER;
      keyEnds[depth] = key.length;
      ordinals[depth] = 0;
      if (names.length === depth) names.push([]);
    }
  }
  return root;
}

/**
 * An object key decoded before, at `key[at..]`. Sibling objects of one shape (the elements of an array
 * of records), and the documents of one collection, repeat their keys in the same order: reusing the
 * string skips decoding it and lets the engine reuse the interned name.
 */
interface CachedName {
  readonly key: Buffer;
  readonly at: number;
  readonly name: string;
}

/** Whether the string element at `a[aAt..]` is the one spanning `b[bAt..bStop)`. */
function sameBytes(a: Buffer, aAt: number, b: Buffer, bAt: number, bStop: number): boolean {
  const n = bStop - bAt;
  if (aAt + n > a.length || a[aAt + n - 1] !== 0x00 || (aAt + n < a.length && a[aAt + n] === 0xff)) return false;
  for (let i = 0; i < n; i++) if (a[aAt + i] !== b[bAt + i]) return false;
  return true;
}

/** The long string whose header is `entries[at]`, from the chunks right after it. */
function readLongString(entries: readonly KeyValue[], at: number, end: number, header: Buffer): { value: string; chunks: number } {
  const { byteLength, chunkCount } = readLongStringHeader(header);
  if (at + chunkCount >= end) throw corruptData('document data: a long string with missing chunks');
  const headerKey = entries[at].key;
  const chunks: Buffer[] = [];
  for (let i = 1; i <= chunkCount; i++) {
    const { key, value } = entries[at + i];
    if (key.length <= headerKey.length || key[headerKey.length] !== CHUNK_CODE || !key.subarray(0, headerKey.length).equals(headerKey)) {
      throw corruptData('document data: a long string with missing chunks');
    }
    chunks.push(value);
  }
  return { value: joinLongString(chunks, byteLength), chunks: chunkCount };
}

/**
 * The number of children of the container whose subtree is `entries[start..end)` (its own entry
 * first): the entries exactly one element below it.
 */
export function countChildren(entries: readonly KeyValue[], start: number, end: number, baseLength: number): number {
  let count = 0;
  for (let i = start + 1; i < end; i++) {
    const key = entries[i].key;
    if (key[baseLength] !== CHUNK_CODE && elementEnd(key, baseLength) === key.length) count++;
  }
  return count;
}
