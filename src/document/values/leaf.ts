import { DocumentError } from '../errors';
import { Double, Float32, pack, unpack, type TupleItem } from '../../tuple';
import type { JsonValue } from '../types';

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
export const MAX_LEAF_BYTES = 100_000;
/** Bytes of a long string per chunk. */
export const CHUNK_BYTES = 100_000;

/** What a node is, from its entry's value. */
export type NodeKind = 'object' | 'array' | 'scalar';

export function kindOf(value: Uint8Array): NodeKind {
  const b = value[0];
  return b === OBJECT_MARKER ? 'object' : b === ARRAY_MARKER ? 'array' : 'scalar';
}

const NULL_VALUE = Buffer.of(0x00);
const FALSE_VALUE = Buffer.of(0x26);
const TRUE_VALUE = Buffer.of(0x27);

/**
 * The packed leaf of a scalar: an integral number (not -0) or a bigint as a tuple integer, any other
 * number as a double, strings, booleans and null as themselves. Long strings are the caller's (see
 * {@link isLongString}).
 */
export function encodeScalar(value: null | boolean | number | bigint | string): Buffer {
  if (value === null) return NULL_VALUE;
  if (value === true) return TRUE_VALUE;
  if (value === false) return FALSE_VALUE;
  return pack([value]);
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

export function readLongStringHeader(value: Buffer): { byteLength: number; chunkCount: number } {
  const [byteLength, chunkCount] = unpack(value.subarray(1));
  if (typeof byteLength !== 'number' || typeof chunkCount !== 'number') throw corrupt('a long string header');
  return { byteLength, chunkCount };
}

const utf8 = new TextDecoder('utf-8');
const f64 = new DataView(new ArrayBuffer(8));

/**
 * The scalar a packed leaf holds. Doubles come back as plain numbers, also those the tuple layer
 * returns as `Double` (integral values, written by other clients); integers outside the safe range
 * as bigints.
 */
export function decodeScalar(value: Buffer): JsonValue {
  const code = value[0];
  switch (code) {
    case 0x00:
      return null;
    case 0x26:
      return false;
    case 0x27:
      return true;
    case 0x14:
      return 0;
    case 0x15:
      return value[1];
    case 0x16:
      return (value[1] << 8) | value[2];
    case 0x13:
      return value[1] - 0xff;
    case 0x02:
      return decodeString(value);
    case 0x21:
      return decodeDouble(value);
  }
  return fromTuple(unpack(value)[0]);
}

function decodeString(value: Buffer): JsonValue {
  const end = value.length - 1;
  let plain = true;
  for (let i = 1; i < end; i++) {
    const c = value[i];
    if (c === 0 || c >= 0x80) {
      plain = false;
      break;
    }
  }
  if (!plain) return fromTuple(unpack(value)[0]);
  if (end - 1 > 16) return value.toString('latin1', 1, end);
  let s = '';
  for (let i = 1; i < end; i++) s += String.fromCharCode(value[i]);
  return s;
}

function decodeDouble(value: Buffer): number {
  let hi = value.readUInt32BE(1);
  let lo = value.readUInt32BE(5);
  if (hi & 0x80000000) {
    hi ^= 0x80000000;
  } else {
    hi = ~hi;
    lo = ~lo;
  }
  f64.setUint32(0, hi);
  f64.setUint32(4, lo);
  return f64.getFloat64(0);
}

/** A tuple element as a JSON scalar. */
export function fromTuple(item: TupleItem): JsonValue {
  if (item instanceof Double || item instanceof Float32) return item.value;
  if (item === null || typeof item === 'string' || typeof item === 'number' || typeof item === 'bigint') return item;
  if (typeof item === 'boolean') return item;
  throw corrupt('a leaf of a type JSON has no form for');
}

/** True when a packed leaf holds an integer (not a double, even an integral one). */
export function isIntegerLeaf(value: Uint8Array): boolean {
  return value[0] >= 0x0b && value[0] <= 0x1d;
}

/** The string of a long string's chunks, concatenated. */
export function joinChunks(chunks: readonly Uint8Array[], byteLength: number): string {
  const all = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
  if (all.length !== byteLength) throw corrupt('a long string whose chunks do not add up');
  return utf8.decode(all);
}

export function corrupt(what: string): Error {
  return new DocumentError('CORRUPT_DATA', `corrupt document data: ${what}`);
}
