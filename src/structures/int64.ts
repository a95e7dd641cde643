import { Buffer } from 'node:buffer';
import { DocumentError, type DocumentErrorCode } from '../document/errors';

/**
 * Signed 64-bit integers as FoundationDB's atomic `add` takes them: 8 bytes, little-endian, two's
 * complement. A missing key reads as 0, and `add` wraps around on overflow.
 */

export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;
/** The safe-integer range as bigints, made once: every counter incr checks its result against it. */
export const SAFE_MIN = BigInt(Number.MIN_SAFE_INTEGER);
export const SAFE_MAX = BigInt(Number.MAX_SAFE_INTEGER);

/** The encodings of +1 and -1, the amounts of most increments (shared: writers never modify a value). */
const PLUS_ONE = Buffer.from([1, 0, 0, 0, 0, 0, 0, 0]);
const MINUS_ONE = Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);

export function encodeInt64(n: bigint): Buffer {
  if (n === 1n) return PLUS_ONE;
  if (n === -1n) return MINUS_ONE;
  const out = Buffer.allocUnsafe(8);
  out.writeBigInt64LE(BigInt.asIntN(64, n));
  return out;
}

/** The value of an int64 key; `undefined` (a missing key) is 0. Shorter values are zero-extended, as FDB does. */
export function decodeInt64(value: Uint8Array | undefined): bigint {
  if (value === undefined || value.length === 0) return 0n;
  if (value.length === 8 && value instanceof Buffer) return value.readBigInt64LE(0);
  const bytes = value.length >= 8 ? value : Buffer.concat([value, Buffer.alloc(8 - value.length)]);
  return Buffer.from(bytes.buffer, bytes.byteOffset, 8).readBigInt64LE(0);
}

/** An int64 as a JSON number when it is a safe integer, else as a bigint (as document reads do). */
export function int64Json(n: bigint): number | bigint {
  return n >= SAFE_MIN && n <= SAFE_MAX ? Number(n) : n;
}

/**
 * An amount or value given as a number or bigint, checked to be an integer within int64 (a number a
 * safe integer), else a DocumentError with `code`.
 */
export function toInt64(value: unknown, code: DocumentErrorCode, what: string): bigint {
  if (typeof value === 'number') {
    if (Number.isSafeInteger(value)) return BigInt(value);
  } else if (typeof value === 'bigint') {
    if (value >= INT64_MIN && value <= INT64_MAX) return value;
  }
  throw new DocumentError(code, `${what} must be a safe integer or a bigint within int64, got ${describe(value)}`);
}

function describe(value: unknown): string {
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'number' || typeof value === 'boolean' || value === null || value === undefined) return String(value);
  if (typeof value === 'string') return JSON.stringify(value);
  return typeof value;
}
