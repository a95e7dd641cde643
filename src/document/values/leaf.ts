import { Buffer } from 'node:buffer';
import { Double, Float32, pack, unpack, type TupleItem } from '../../tuple';
import { decodeItem, encodeItem, Reader, readString } from '../../tuple/codec';
import { Writer } from '../../tuple/writer';
import { corruptData } from '../errors';
import type { JsonValue } from '../types';
import { joinChunks, MAX_CHUNK_BYTES } from './chunks';

/**
 * The bytes at a data key (docs/documents.md, "Values"): a container marker, a long string's header,
 * or a scalar packed as a one-element tuple. Tuple type codes never start with the marker bytes, so the
 * first byte tells them apart.
 */

export const OBJECT_MARKER = 0x7b; // '{'
export const ARRAY_MARKER = 0x5b; // '['
export const LONG_STRING_MARKER = 0x7e; // '~'

export const OBJECT_VALUE: Buffer = Buffer.of(OBJECT_MARKER);
export const ARRAY_VALUE: Buffer = Buffer.of(ARRAY_MARKER);

/** A string whose packed leaf is longer than this is stored in chunks (FDB's value limit). */
export const MAX_LEAF_BYTES = MAX_CHUNK_BYTES;

/** What a node is, from its entry's value. */
export type NodeKind = 'object' | 'array' | 'scalar';

export function kindOf(value: Uint8Array): NodeKind {
  const b = value[0];
  return b === OBJECT_MARKER ? 'object' : b === ARRAY_MARKER ? 'array' : 'scalar';
}

/**
 * Whether the node whose entry holds `value` has keys below its entry: a container, or a long string
 * (its chunks). Any other scalar is its one key, so a set overwrites it and a point clear removes it
 * without a range clear (which on LMDB walks a cursor).
 */
export function hasEntriesBelow(value: Uint8Array): boolean {
  const b = value[0];
  return b === OBJECT_MARKER || b === ARRAY_MARKER || b === LONG_STRING_MARKER;
}

const STRING_CODE = 0x02;
const INT_ZERO = 0x14;
const NULL_VALUE = Buffer.of(0x00);
const FALSE_VALUE = Buffer.of(0x26);
const TRUE_VALUE = Buffer.of(0x27);

/**
 * Whether `value` is one of the encoded leaves every document shares (null, true, false, the object
 * and array markers): a write must store a copy of it, never the shared Buffer itself, so that no
 * stored entry is the same object as another document's (see `writeDocument`).
 */
export function isSharedLeaf(value: Buffer): boolean {
  return value === NULL_VALUE || value === TRUE_VALUE || value === FALSE_VALUE || value === OBJECT_VALUE || value === ARRAY_VALUE;
}

// Encoding a scalar is synchronous and calls no user code, so one writer serves every call.
const leafWriter = new Writer(256);

/**
 * The packed leaf of a scalar: a bigint or a safe integer number as a tuple integer, any other number
 * (-0, fractions, and integral numbers beyond ±(2^53−1)) as a double, strings, booleans and null as
 * themselves. Long strings are the caller's (see {@link isLongString}).
 *
 * An integral number beyond the safe range is a double, not an integer: read back, a tuple integer
 * there is a bigint (the caller may have written one), so only the double reads back as the number
 * that was written (docs/documents.md, "Numbers").
 */
export function encodeScalar(value: null | boolean | number | bigint | string): Buffer {
  if (value === null) return NULL_VALUE;
  if (value === true) return TRUE_VALUE;
  if (value === false) return FALSE_VALUE;
  if (typeof value === 'string') {
    const short = shortAsciiLeaf(value);
    if (short !== undefined) return short;
  } else if (typeof value === 'number' && Number.isInteger(value) && value !== 0 && value > -0x10000 && value < 0x10000) {
    return smallIntegerLeaf(value);
  }
  // What pack([value]) writes, without its tuple array and borrowed writer: a document write encodes
  // every leaf.
  const w = leafWriter;
  w.reset();
  encodeItem(w, typeof value === 'number' && Number.isInteger(value) && !Number.isSafeInteger(value) ? new Double(value) : value);
  return w.result(0);
}

/** Strings up to this many UTF-16 units are tried as ASCII by {@link shortAsciiLeaf}. */
const SHORT_STRING = 64;

/**
 * The tuple string of `s` written straight into its leaf, when `s` is short and all ASCII without a
 * NUL (names, e-mails, codes: most leaves): the bytes the tuple encoder writes (0x02, the characters,
 * 0x00), without its writer and the copy out of it. `undefined` for anything else, which the encoder
 * takes (it escapes NULs, encodes UTF-8 and refuses lone surrogates).
 */
function shortAsciiLeaf(s: string): Buffer | undefined {
  const n = s.length;
  if (n > SHORT_STRING) return undefined;
  const out = Buffer.allocUnsafe(n + 2);
  out[0] = STRING_CODE;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c === 0 || c >= 0x80) return undefined;
    out[i + 1] = c;
  }
  out[n + 1] = 0x00;
  return out;
}

/**
 * The tuple integer of a non-zero integer within ±0xffff, as the tuple encoder writes it: the type
 * code 0x14 ± its byte count, then its bytes big-endian (a negative one's in one's complement).
 */
function smallIntegerLeaf(v: number): Buffer {
  const a = v < 0 ? -v : v;
  const n = a < 0x100 ? 1 : 2;
  const x = v < 0 ? ~a : a;
  const out = Buffer.allocUnsafe(n + 1);
  out[0] = v < 0 ? INT_ZERO - n : INT_ZERO + n;
  if (n === 2) out[1] = x >>> 8;
  out[n] = x;
  return out;
}

/** True when `s` packs to more than {@link MAX_LEAF_BYTES} and so is stored in chunks. */
export function isLongString(s: string): boolean {
  // Each UTF-16 unit is at most 3 UTF-8 bytes (a NUL is 2 once escaped), plus type code and terminator.
  if (3 * s.length + 2 <= MAX_LEAF_BYTES) return false;
  return Buffer.byteLength(s, 'utf8') + countNuls(s) + 2 > MAX_LEAF_BYTES;
}

function countNuls(s: string): number {
  let n = 0;
  for (let i = s.indexOf('\0'); i !== -1; i = s.indexOf('\0', i + 1)) n++;
  return n;
}

/** The header of a long string: the marker, then `pack([byteLength, chunkCount])`. */
export function longStringHeader(byteLength: number, chunkCount: number): Buffer {
  const tail = pack([byteLength, chunkCount]);
  const out = Buffer.allocUnsafe(tail.length + 1);
  out[0] = LONG_STRING_MARKER;
  tail.copy(out, 1);
  return out;
}

/**
 * What a long string's header holds.
 *
 * @throws DocumentError CORRUPT_DATA for a header that does not hold two integers.
 */
export function readLongStringHeader(value: Buffer): { byteLength: number; chunkCount: number } {
  let items: TupleItem[];
  try {
    items = unpack(value.subarray(1));
  } catch (err) {
    throw corruptData('document data: a long string header', err);
  }
  const [byteLength, chunkCount] = items;
  if (typeof byteLength !== 'number' || typeof chunkCount !== 'number') throw corruptData('document data: a long string header');
  return { byteLength, chunkCount };
}

/**
 * The scalar a packed leaf holds. Doubles come back as plain numbers, also those the tuple layer
 * returns as `Double` (integral values: numbers beyond the safe range, and doubles other clients
 * wrote); integers outside the safe range as bigints.
 *
 * @throws TupleError TUPLE_DECODE when the bytes are not a tuple element; DocumentError CORRUPT_DATA
 *   for an element of a type JSON has no form for.
 */
export function decodeScalar(value: Buffer): JsonValue {
  const code = value[0];
  // Most leaves are strings: their decoder is called directly, not through the codec's table.
  if (code === STRING_CODE) return shortAsciiOf(value) ?? readString(new Reader(value, 1));
  // Small integers (what encodeScalar writes for them) are read in place, without a reader.
  const n = value.length;
  if (code === INT_ZERO + 1 && n === 2) return value[1];
  if (code === INT_ZERO - 1 && n === 2) return value[1] - 0xff;
  if (code === INT_ZERO + 2 && n === 3) return (value[1] << 8) | value[2];
  return fromTuple(decodeItem(new Reader(value, 0)));
}

/**
 * The string of a leaf that is exactly one tuple string of at most {@link SHORT_STRING} ASCII
 * characters without a NUL (what {@link shortAsciiLeaf} writes), read in place; `undefined` for any
 * other leaf, which the codec reads (escapes, UTF-8, and a malformed leaf's error).
 */
function shortAsciiOf(value: Buffer): string | undefined {
  const end = value.length - 1;
  if (end > SHORT_STRING + 1 || value[end] !== 0x00) return undefined;
  for (let i = 1; i < end; i++) {
    const c = value[i];
    if (c === 0 || c >= 0x80) return undefined;
  }
  // As the codec reads short ASCII: a few characters build faster in JS than through a native call.
  if (end - 1 > 12) return value.toString('latin1', 1, end);
  let out = '';
  for (let i = 1; i < end; i++) out += String.fromCharCode(value[i]);
  return out;
}

/**
 * A tuple element as a JSON scalar.
 *
 * @throws DocumentError CORRUPT_DATA for an element of a type JSON has no form for.
 */
export function fromTuple(item: TupleItem): JsonValue {
  if (item === null || typeof item === 'string' || typeof item === 'number' || typeof item === 'bigint') return item;
  if (typeof item === 'boolean') return item;
  if (item instanceof Double || item instanceof Float32) return item.value;
  throw corruptData('document data: a leaf of a type JSON has no form for');
}

/** True when a packed leaf holds an integer (not a double, even an integral one). */
function isIntegerLeaf(value: Uint8Array): boolean {
  return value[0] >= 0x0b && value[0] <= 0x1d;
}

const DOUBLE_CODE = 0x21;

/**
 * The integer a counter finds in a packed leaf, or `undefined` when it holds none: a tuple integer, or
 * a double that is an integral number beyond ±(2^53−1), which is how {@link encodeScalar} stores such
 * a number (before it did, it stored them as integers, and counters counted them). Other doubles, even
 * integral ones written by other clients, are not integers.
 *
 * @throws TupleError TUPLE_DECODE when the bytes are not a tuple element.
 */
export function counterValue(value: Buffer): bigint | undefined {
  if (isIntegerLeaf(value)) return BigInt(decodeScalar(value) as number | bigint);
  if (value[0] !== DOUBLE_CODE) return undefined;
  const n = decodeScalar(value) as number;
  return Number.isInteger(n) && !Number.isSafeInteger(n) ? BigInt(n) : undefined;
}

const utf8 = new TextDecoder('utf-8');

/**
 * The long string whose header says `byteLength`, from its chunks.
 *
 * @throws DocumentError CORRUPT_DATA when the chunks do not add up to `byteLength`.
 */
export function joinLongString(chunks: readonly Buffer[], byteLength: number): string {
  const all = joinChunks(chunks);
  if (all.length !== byteLength) throw corruptData('document data: a long string whose chunks do not add up');
  return utf8.decode(all);
}
