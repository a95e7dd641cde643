import { keyAfter } from '../../kv/contract/bytes';
import type { Transaction } from '../../kv/contract/types';
import { pack, unpack } from '../../tuple';
import { corruptData, DocumentError } from '../errors';
import { META_LOCK, type DocumentKeys } from '../keys/layout';
import type { Cas, DocId } from '../types';
import { describeId } from './document-read';

/**
 * Document locks (Couchbase's getAndLock): a locked document refuses every writer that does not
 * present the CAS the lock returned, until that CAS writes or unlocks it, or the lock ends.
 *
 * ```
 * <docPrefix> 0x00 'y'     tuple(lockedUntil): when the lock ends (ms since the epoch)
 * ```
 *
 * `getAndLock` gives the document a new version (its CAS is the lock's) and writes this key. The key
 * is inside the document's range, so every whole-document write (upsert, replace, remove) drops it
 * with the rest; writes that keep the document (mutateIn, touch) clear it. Writers learn of a lock by
 * reading this one key: insert, replace and remove get it from the range read they already make of
 * the expiry key and the root entry (the names sort 'x', 'y', then the data section), upsert and
 * mutateIn with one more point read, which they skip in a collection that never had a document locked
 * (`lock-flags.ts`). The read conflicts only with writes of the lock key and of the
 * whole document, never with writers of other fields.
 *
 * While locked, reads report the CAS {@link LOCKED_CAS} (Couchbase's -1), so only the locker knows the
 * CAS that unlocks.
 */

/** The CAS reads report for a locked document: all ones, which no versionstamp is. */
export const LOCKED_CAS: Cas = 'ffffffffffffffffffff';

/** Couchbase's default lock time, used when none is given: 15 s. */
export const DEFAULT_LOCK_SECONDS = 15;
/** Couchbase's longest lock: 30 s. */
export const MAX_LOCK_SECONDS = 30;

export function lockKey(keys: DocumentKeys): Buffer {
  return keys.meta(META_LOCK);
}

export function encodeLock(lockedUntil: number): Buffer {
  return pack([lockedUntil]);
}

/** @throws DocumentError CORRUPT_DATA when the stored lock is not an integer. */
export function decodeLock(value: Uint8Array): number {
  const [until] = unpack(value);
  if (typeof until !== 'number') throw corruptData('document metadata: the lock is not an integer');
  return until;
}

/** True when a lock ending at `lockedUntil` still holds at `now`. */
export function isLocked(lockedUntil: number | undefined, now: number): boolean {
  return lockedUntil !== undefined && lockedUntil > now;
}

/** What a writer that skipped the lock key's read (see `lock-flags.ts`) knows of the lock: there is none. */
export const LOCK_NOT_READ: unique symbol = Symbol('doclayer lock not read');

/** When the document's lock ends, `undefined` for none. One point read. */
export async function readLock(tr: Transaction, keys: DocumentKeys): Promise<number | undefined> {
  const value = await tr.get(lockKey(keys));
  return value === undefined ? undefined : decodeLock(value);
}

/**
 * Clears the whole document for a writer that replaces it blind (upsert): when it read the lock key
 * and found none, around the lock key, so that the writer writes nothing its own lock read conflicts
 * with and two upserts of one document stay free of conflicts (last to commit wins, as before locks);
 * the whole range when an ended lock is there, to drop it, or when the writer did not read the lock
 * key ({@link LOCK_NOT_READ}: a collection that never had a document locked, which has no lock key to
 * keep and no writer reading one). 1 or 2 range clears.
 */
export function clearUnlockedDocument(tr: Transaction, keys: DocumentKeys, lockedUntil: number | undefined | typeof LOCK_NOT_READ): void {
  if (lockedUntil !== undefined) {
    tr.clearRange(keys.begin, keys.end);
    return;
  }
  const lock = lockKey(keys);
  tr.clearRange(keys.begin, lock);
  tr.clearRange(keyAfter(lock), keys.end);
}

/**
 * The lock time `getAndLock` takes, checked: seconds, more than 0 and at most {@link MAX_LOCK_SECONDS}.
 *
 * @throws DocumentError INVALID_ARGUMENT otherwise.
 */
export function lockSeconds(seconds: unknown): number {
  if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds <= 0 || seconds > MAX_LOCK_SECONDS) {
    throw new DocumentError('INVALID_ARGUMENT', `a lock time is a number of seconds over 0 and at most ${MAX_LOCK_SECONDS}, got ${String(seconds)}`);
  }
  return seconds;
}

export function lockedError(id: DocId): DocumentError {
  return new DocumentError('DOCUMENT_LOCKED', `the document ${describeId(id)} is locked`, { id });
}

export function notLockedError(id: DocId): DocumentError {
  return new DocumentError('DOCUMENT_NOT_LOCKED', `the document ${describeId(id)} is not locked`, { id });
}
