import { Buffer } from 'node:buffer';
import { compareBytes } from '../contract/bytes';
import { kvError } from '../contract/errors';
import { Limits } from '../contract/limits';
import type { AtomicOp } from '../contract/types';

/**
 * FoundationDB's atomic operations as pure functions of the existing value (`undefined` when the key is
 * absent) and the operand, with the semantics of API version >= 510 (`bitAnd` and `min` on an absent
 * key store the operand). The rules follow FDB's `Atomic.h`:
 *
 * - `add`, `bitAnd`, `bitOr`, `bitXor`, `max`, `min` work on little-endian byte strings of the operand's
 *   length: the existing value is zero-extended or truncated to it, and the result has that length.
 * - An empty existing value (or an absent one, except for `bitAnd`/`min`) yields the operand for
 *   `add`, `bitOr`, `bitXor`, `max` and `appendIfFits`.
 * - `byteMin`/`byteMax` compare lexicographically; absent yields the operand.
 * - `appendIfFits` leaves the value unchanged when the result would exceed the value limit.
 * - `compareAndClear` clears the key when the value equals the operand (or is absent).
 *
 * Returns the new value, or `undefined` when the key ends up cleared.
 */
export function applyAtomicOp(op: AtomicOp, existing: Buffer | undefined, operand: Buffer): Buffer | undefined {
  switch (op) {
    case 'add':
      return add(existing, operand);
    case 'bitAnd':
      return existing === undefined ? operand : bitwise(existing, operand, (a, b) => a & b, 0);
    case 'bitOr':
      return !existing?.length || operand.length === 0 ? operand : bitwise(existing, operand, (a, b) => a | b);
    case 'bitXor':
      return !existing?.length || operand.length === 0 ? operand : bitwise(existing, operand, (a, b) => a ^ b);
    case 'max':
      if (!existing?.length || operand.length === 0) return operand;
      return compareLittleEndian(operand, existing) >= 0 ? operand : resized(existing, operand.length);
    case 'min':
      if (existing === undefined || operand.length === 0) return operand;
      return compareLittleEndian(operand, existing) <= 0 ? operand : resized(existing, operand.length);
    case 'byteMax':
      return existing !== undefined && compareBytes(existing, operand) > 0 ? existing : operand;
    case 'byteMin':
      return existing !== undefined && compareBytes(existing, operand) < 0 ? existing : operand;
    case 'appendIfFits':
      if (!existing?.length) return operand;
      if (operand.length === 0 || existing.length + operand.length > Limits.maxValueBytes) return existing;
      return Buffer.concat([existing, operand]);
    case 'compareAndClear':
      return existing === undefined || existing.equals(operand) ? undefined : existing;
  }
}

/** The names accepted by {@link applyAtomicOp}, to validate untyped callers. */
const ATOMIC_OPS: ReadonlySet<string> = new Set<AtomicOp>([
  'add',
  'bitAnd',
  'bitOr',
  'bitXor',
  'max',
  'min',
  'byteMin',
  'byteMax',
  'appendIfFits',
  'compareAndClear',
]);

/** `op`, checked. @throws KvError client_invalid_operation (2000) for a name that is no atomic operation */
export function checkedAtomicOp(op: AtomicOp): AtomicOp {
  if (!ATOMIC_OPS.has(op)) throw kvError('client_invalid_operation', `unknown atomic operation '${String(op)}'`);
  return op;
}

/**
 * A new Buffer, never `operand` itself (but for an empty operand, which has no bytes to change): the
 * store keeps what this returns, so an operand handed over by a layer (`addHandedOver`, a queue's
 * shared `PLUS_ONE`) is never stored nor returned by a read.
 */
function add(existing: Buffer | undefined, operand: Buffer): Buffer {
  if (operand.length === 0) return operand;
  if (!existing?.length) return Buffer.from(operand);
  const out = Buffer.allocUnsafe(operand.length);
  let carry = 0;
  for (let i = 0; i < operand.length; i++) {
    const sum = (i < existing.length ? existing[i] : 0) + operand[i] + carry;
    out[i] = sum & 0xff;
    carry = sum >> 8;
  }
  return out;
}

/** Combines byte by byte over the operand's length; bytes past the existing value use `missing`. */
function bitwise(existing: Buffer, operand: Buffer, combine: (a: number, b: number) => number, missing?: number): Buffer {
  const out = Buffer.allocUnsafe(operand.length);
  for (let i = 0; i < operand.length; i++) {
    out[i] = i < existing.length ? combine(existing[i], operand[i]) : (missing ?? operand[i]);
  }
  return out;
}

/**
 * Compares `operand` with `existing` as unsigned little-endian integers of the operand's length (the
 * existing value zero-extended or truncated to it).
 */
function compareLittleEndian(operand: Buffer, existing: Buffer): number {
  for (let i = operand.length - 1; i >= existing.length; i--) {
    if (operand[i] !== 0) return 1;
  }
  for (let i = Math.min(operand.length, existing.length) - 1; i >= 0; i--) {
    if (operand[i] !== existing[i]) return operand[i] > existing[i] ? 1 : -1;
  }
  return 0;
}

/** `value` zero-extended or truncated to `length` bytes. */
function resized(value: Buffer, length: number): Buffer {
  const out = Buffer.alloc(length);
  value.copy(out, 0, 0, Math.min(length, value.length));
  return out;
}
