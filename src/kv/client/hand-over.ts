import type { Database } from '../contract/database';
import type { KeyValue, RangeOptions, ReadTransaction, Transaction } from '../contract/types';
import { ClientTransaction } from './client-transaction';
import { StagedTransaction } from './staged-transaction';
import type { PreparedVersionstampTemplate } from './versionstamp-template';

/**
 * `tr.set(key, value)` for a layer that hands the Buffers over: it made them for this write and never
 * modifies them afterwards (a document's freshly encoded entries), so the memory and LMDB engines'
 * transactions keep them instead of copies. Any other transaction (FoundationDB's, a wrapper) gets a
 * plain `set`. Same checks and errors as `set`.
 */
export function setHandedOver(tr: Transaction, key: Buffer, value: Buffer): void {
  if (tr instanceof ClientTransaction) tr.setHandedOver(key, value);
  else tr.set(key, value);
}

/**
 * `tr.setVersionstampedKey(keyWithOffset, value)` for a layer that hands the Buffers over, as
 * {@link setHandedOver} does (a queue's freshly encoded item and its key template). Same checks and
 * errors as `setVersionstampedKey`.
 */
export function setVersionstampedKeyHandedOver(tr: Transaction, keyWithOffset: Buffer, value: Buffer): void {
  if (tr instanceof ClientTransaction) tr.setVersionstampedKeyHandedOver(keyWithOffset, value);
  else tr.setVersionstampedKey(keyWithOffset, value);
}

/**
 * `tr.setVersionstampedValue(key, prepared.withOffset)` for a layer that hands the key over, as
 * {@link setHandedOver} does, with a template it prepared once (a document's version value): the
 * memory and LMDB engines' transactions neither copy nor parse anything. Same checks and errors.
 */
export function setVersionstampedValueHandedOver(tr: Transaction, key: Buffer, prepared: PreparedVersionstampTemplate): void {
  if (tr instanceof ClientTransaction) tr.setVersionstampedValueHandedOver(key, prepared.template);
  else tr.setVersionstampedValue(key, prepared.withOffset);
}

/**
 * `tr.getRangeAll(begin, end, options)` for a layer that hands the bounds over, as {@link setHandedOver}
 * does (a range's bounds made for the read, or a document's keys, never modified): the memory and LMDB
 * engines' transactions keep them in the read conflict instead of copies. Same checks, errors and result.
 */
export function getRangeAllHandedOver(tr: ReadTransaction, begin: Buffer, end: Buffer, options?: RangeOptions): Promise<KeyValue[]> {
  return tr instanceof ClientTransaction ? tr.getRangeAllHandedOver(begin, end, options) : tr.getRangeAll(begin, end, options);
}

/**
 * `tr.addReadConflictRange(begin, end)` for a layer that hands the Buffers over, as {@link setHandedOver}
 * does (a queue's area bounds, made once and never modified). Same checks, errors and conflict range.
 */
export function addReadConflictRangeHandedOver(tr: Transaction, begin: Buffer, end: Buffer): void {
  if (tr instanceof ClientTransaction) tr.addReadConflictRangeHandedOver(begin, end);
  else tr.addReadConflictRange(begin, end);
}

/**
 * `tr.clear(key)` for a layer that hands the key over, as {@link setHandedOver} does (a queue item's
 * key, as a read returned it). Same checks and errors as `clear`.
 */
export function clearHandedOver(tr: Transaction, key: Buffer): void {
  if (tr instanceof ClientTransaction) tr.clearHandedOver(key);
  else tr.clear(key);
}

/**
 * `tr.add(key, operand)` for a layer that hands the Buffers over, as {@link setHandedOver} does; the
 * operand may be a constant the layer shares between calls (a queue's size delta), since `add` never
 * stores its operand itself. Same checks and errors as `add`.
 */
export function addHandedOver(tr: Transaction, key: Buffer, operand: Buffer): void {
  if (tr instanceof ClientTransaction) tr.addHandedOver(key, operand);
  else tr.add(key, operand);
}

/**
 * What `tr.getApproximateSize()` would resolve to, now, for the memory and LMDB engines' transactions
 * and stages of them, which know it without asking anyone: a layer that checks a batch's size between
 * calls waits no turn of the event loop for it. `undefined` for any other transaction (FoundationDB's,
 * a wrapper): ask `getApproximateSize`.
 */
export function approximateSizeNow(tr: Transaction): number | undefined {
  let staged = 0;
  for (;;) {
    if (tr instanceof ClientTransaction) return tr.approximateSizeNow() + staged;
    if (!(tr instanceof StagedTransaction)) return undefined;
    staged += tr.stagedBytes;
    tr = tr.parent;
  }
}

/**
 * Makes `tr`'s reads settle at once rather than on a later turn, for a layer's own transaction whose
 * body is the layer's code alone: see `ClientTransaction.settleReadsNow`. The operation still settles on
 * a later turn, at its commit. Any other transaction (FoundationDB's, a wrapper) is left as it is.
 * Never call it on a caller's transaction, nor on one whose body runs a caller's function with it.
 */
export function settleReadsNow(tr: Transaction): void {
  if (tr instanceof ClientTransaction) tr.settleReadsNow();
}

/**
 * `db.transact(fn)` in a transaction whose reads settle at once ({@link settleReadsNow}): for a layer's
 * own operation, whose body `fn` is the layer's code alone.
 */
export function transactSettlingReadsNow<T>(db: Database, fn: (tr: Transaction) => Promise<T>): Promise<T> {
  return db.transact((tr) => {
    settleReadsNow(tr);
    return fn(tr);
  });
}
