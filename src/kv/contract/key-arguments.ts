import { compareBytes, copyOf, keyAfter, toBuffer } from './bytes';
import { type KvError, kvError } from './errors';
import { isKeySelector } from './key-selector';
import { Limits } from './limits';
import { MAX_USER_KEY, type KeyRange } from './key-range';
import type { Bytes, KeySelector } from './types';

/**
 * The contract's argument checks, shared by the engines. Every function returns copies, so that a
 * caller modifying its buffers afterwards changes nothing. Only keys that are stored can have an
 * engine's own, tighter limit ({@link EngineKeyLimit}); bounds of ranges are never stored, so they
 * follow FoundationDB's rules exactly, 10,000-byte limit included.
 */

/** An engine's limit on stored keys, below FoundationDB's {@link Limits.maxKeyBytes}, named in its errors. */
export interface EngineKeyLimit {
  readonly engine: string;
  readonly maxKeyBytes: number;
  /** Why the limit is what it is, shown in parentheses in key_too_large's message. */
  readonly reason: string;
}

/** A copy of a key that may be written. @throws KvError key_outside_legal_range (2004), key_too_large (2102) */
export function writableKey(key: Bytes, limit?: EngineKeyLimit): Buffer {
  return copyOf(legalWritableKey(toBuffer(key), limit));
}

/** `key` itself, checked as {@link writableKey} checks it. @throws KvError 2004, 2102 */
export function legalWritableKey(key: Buffer, limit?: EngineKeyLimit): Buffer {
  if (key.length > 0 && key[0] === 0xff) throw outsideLegalRange(key);
  if (key.length > (limit?.maxKeyBytes ?? Limits.maxKeyBytes)) throw keyTooLarge(key, limit);
  return key;
}

/**
 * A copy of a key to clear, or `undefined` when it is longer than a stored key can be: such a key
 * cannot exist, so clearing it does nothing (as in FDB).
 *
 * @throws KvError key_outside_legal_range (2004)
 */
export function clearableKey(key: Bytes, limit?: EngineKeyLimit): Buffer | undefined {
  const k = legalClearableKey(toBuffer(key), limit);
  return k && copyOf(k);
}

/** `key` itself, or `undefined`, as {@link clearableKey} decides. @throws KvError 2004 */
export function legalClearableKey(key: Buffer, limit?: EngineKeyLimit): Buffer | undefined {
  if (key.length > 0 && key[0] === 0xff) throw outsideLegalRange(key);
  return key.length > (limit?.maxKeyBytes ?? Limits.maxKeyBytes) ? undefined : key;
}

/**
 * The key of a point read (not copied), or `undefined` when it is longer than a stored key can be:
 * such a key cannot exist, so the read finds nothing.
 *
 * @throws KvError key_outside_legal_range (2004) at or past `'\xff'`
 */
export function readableKey(key: Bytes, limit?: EngineKeyLimit): Buffer | undefined {
  const k = toBuffer(key);
  // `k >= MAX_USER_KEY` (the one byte 0xff) without a comparison loop: every point read checks it.
  if (k.length > 0 && k[0] === 0xff) throw outsideLegalRange(k);
  return k.length > (limit?.maxKeyBytes ?? Limits.maxKeyBytes) ? undefined : k;
}

/** A copy of a value that may be written. @throws KvError value_too_large (2103) */
export function checkedValue(value: Bytes): Buffer {
  return copyOf(legalValue(toBuffer(value)));
}

/** `value` itself, checked as {@link checkedValue} checks it. @throws KvError value_too_large (2103) */
export function legalValue(value: Buffer): Buffer {
  if (value.length > Limits.maxValueBytes) {
    throw kvError('value_too_large', `${value.length} bytes, the limit is ${Limits.maxValueBytes}`);
  }
  return value;
}

/**
 * A copy of `[begin, end)` for clears and conflict ranges, or `undefined` when empty. Ends longer than
 * FDB's key limit are shortened to one byte over it: no key can tell the difference (FDB does the same).
 *
 * @throws KvError inverted_range (2005), key_outside_legal_range (2004)
 */
export function legalRange(begin: Bytes, end: Bytes): KeyRange | undefined {
  let b = toBuffer(begin);
  let e = toBuffer(end);
  if (compareBytes(b, e) > 0) throw kvError('inverted_range', `begin ${b.toString('hex')} > end ${e.toString('hex')}`);
  if (compareBytes(b, MAX_USER_KEY) > 0) throw outsideLegalRange(b);
  if (compareBytes(e, MAX_USER_KEY) > 0) throw outsideLegalRange(e);
  if (b.length > Limits.maxKeyBytes) b = b.subarray(0, Limits.maxKeyBytes + 1);
  if (e.length > Limits.maxKeyBytes) e = e.subarray(0, Limits.maxKeyBytes + 1);
  if (compareBytes(b, e) >= 0) return undefined;
  return { begin: copyOf(b), end: copyOf(e) };
}

/** The key of a range bound, copied. @throws KvError key_outside_legal_range (2004) past `'\xff'` */
export function boundKey(bound: Bytes | KeySelector): Buffer {
  return isKeySelector(bound) ? selectorKey(bound) : legalReadBound(toBuffer(bound));
}

/**
 * Where a selector's search starts: the keys before it are the ones `< key` (`<= key` with
 * `orEqual`), so the selector resolves to the `offset`-th key from here, the first key at or after
 * it counting as offset 1. A bound of a range at `firstGreaterOrEqual` or `firstGreaterThan` (offset 1)
 * is therefore this key, without a lookup. Clipped to the user keyspace.
 */
export function selectorBoundary(key: Buffer, orEqual: boolean): Buffer {
  if (!orEqual) return key;
  const after = keyAfter(key);
  return compareBytes(after, MAX_USER_KEY) > 0 ? MAX_USER_KEY : after;
}

export function selectorKey(selector: KeySelector): Buffer {
  return legalReadBound(toBuffer(selector.key));
}

/** @throws KvError key_outside_legal_range (2004) past `'\xff'` */
export function legalReadBound(key: Buffer): Buffer {
  if (compareBytes(key, MAX_USER_KEY) > 0) throw outsideLegalRange(key);
  return copyOf(key);
}

/** `Infinity` for no limit. @throws KvError client_invalid_operation for a negative or fractional limit */
export function rangeLimit(limit: number | undefined): number {
  if (limit === undefined || limit === 0) return Infinity;
  if (!Number.isInteger(limit) || limit < 0) throw kvError('client_invalid_operation', `invalid range limit ${limit}`);
  return limit;
}

export function outsideLegalRange(key: Buffer): KvError {
  return kvError('key_outside_legal_range', `key ${key.subarray(0, 32).toString('hex')} is in the system keyspace`);
}

/** key_too_large (2102), naming FoundationDB's limit or, when given, the engine's own. */
export function keyTooLarge(key: Buffer, limit?: EngineKeyLimit): KvError {
  if (!limit) return kvError('key_too_large', `${key.length} bytes, the limit is ${Limits.maxKeyBytes}`);
  return kvError('key_too_large', `${key.length} bytes; the ${limit.engine} engine's limit is ${limit.maxKeyBytes} bytes (${limit.reason})`);
}
