import type { KvError } from '../contract/errors';
import * as shared from '../contract/key-arguments';
import { Limits } from '../contract/limits';
import type { Bytes } from '../contract/types';
import { LMDB_MAX_KEY_BYTES } from './lmdb-store';

/**
 * The contract's argument checks ({@link shared}), with the lmdb engine's key limit: keys that are
 * stored may have at most {@link LMDB_MAX_KEY_BYTES} bytes (LMDB's limit, below FoundationDB's 10,000).
 * Bounds of ranges are never stored, so they follow FoundationDB's rules exactly, 10,000-byte limit
 * included: a conflict range counts toward the transaction size as it would on a cluster.
 */

export { boundKey, checkedValue, legalRange, outsideLegalRange, rangeLimit, selectorKey } from '../contract/key-arguments';

/** The lmdb engine's limit on stored keys. */
export const LMDB_KEY_LIMIT: shared.EngineKeyLimit = {
  engine: 'lmdb',
  maxKeyBytes: LMDB_MAX_KEY_BYTES,
  reason: `LMDB's largest key, below FoundationDB's ${Limits.maxKeyBytes}`,
};

/** A copy of a key that may be written. @throws KvError key_outside_legal_range (2004), key_too_large (2102) */
export function writableKey(key: Bytes): Buffer {
  return shared.writableKey(key, LMDB_KEY_LIMIT);
}

/** key_too_large (2102), naming the lmdb engine's limit. */
export function keyTooLarge(key: Buffer): KvError {
  return shared.keyTooLarge(key, LMDB_KEY_LIMIT);
}
