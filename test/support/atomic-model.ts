import type { AtomicOp } from '../../src/kv/contract/types';

/**
 * FoundationDB's atomic operations written out plainly, as the oracle the conformance suite compares
 * engines against. Semantics are those of FDB's `fdbclient/Atomic.h` at API version >= 510 (where `min`
 * and `bitAnd` of a missing key set the parameter), as its documentation states them:
 *
 * - The numeric and bitwise operations (`add`, `bitAnd`, `bitOr`, `bitXor`, `max`, `min`) first resize
 *   the existing value to the parameter's length (truncate, or extend with zero bytes); the result always
 *   has the parameter's length. A missing key behaves as if it held the parameter.
 * - `max`/`min` compare as little-endian unsigned integers; `byteMax`/`byteMin` compare bytewise.
 * - `appendIfFits` appends unless the result would exceed the value limit, in which case it does nothing.
 * - `compareAndClear` clears the key if its value equals the parameter (a missing key stays missing).
 *
 * Returns the new value, or `undefined` when the key ends up cleared.
 */
export function applyAtomicOp(op: AtomicOp, existing: Buffer | undefined, param: Buffer, maxValueBytes = 100_000): Buffer | undefined {
  switch (op) {
    case 'compareAndClear':
      return existing === undefined || existing.equals(param) ? undefined : existing;
    case 'appendIfFits':
      if (existing === undefined) return param;
      return existing.length + param.length > maxValueBytes ? existing : Buffer.concat([existing, param]);
    case 'byteMin':
      return existing === undefined || Buffer.compare(param, existing) < 0 ? param : existing;
    case 'byteMax':
      return existing === undefined || Buffer.compare(param, existing) > 0 ? param : existing;
    default:
      break;
  }
  if (existing === undefined) return param;
  const current = resized(existing, param.length);
  switch (op) {
    case 'add':
      return littleEndianAdd(current, param);
    case 'bitAnd':
      return bytewise(current, param, (x, y) => x & y);
    case 'bitOr':
      return bytewise(current, param, (x, y) => x | y);
    case 'bitXor':
      return bytewise(current, param, (x, y) => x ^ y);
    case 'max':
      return compareLittleEndian(param, current) > 0 ? param : current;
    case 'min':
      return compareLittleEndian(param, current) < 0 ? param : current;
  }
}

/** `bytes` truncated or zero-extended to `length`. */
function resized(bytes: Buffer, length: number): Buffer {
  const out = Buffer.alloc(length);
  bytes.copy(out, 0, 0, Math.min(length, bytes.length));
  return out;
}

function bytewise(a: Buffer, b: Buffer, f: (x: number, y: number) => number): Buffer {
  const out = Buffer.alloc(a.length);
  for (let i = 0; i < a.length; i++) out[i] = f(a[i], b[i]);
  return out;
}

/** Sum of two equally long little-endian unsigned integers, wrapping at their length. */
function littleEndianAdd(a: Buffer, b: Buffer): Buffer {
  const out = Buffer.alloc(a.length);
  let carry = 0;
  for (let i = 0; i < a.length; i++) {
    const sum = a[i] + b[i] + carry;
    out[i] = sum & 0xff;
    carry = sum >> 8;
  }
  return out;
}

/** Compares two equally long little-endian unsigned integers. */
function compareLittleEndian(a: Buffer, b: Buffer): number {
  for (let i = a.length - 1; i >= 0; i--) {
    if (a[i] !== b[i]) return a[i] - b[i];
  }
  return 0;
}
