import { Buffer } from 'node:buffer';
import { compareBytes, copyOf, keyAfter, toBuffer } from '../contract/bytes';
import { type KvError, kvError } from '../contract/errors';
import {
  checkedValue,
  clearableKey,
  legalRange,
  legalReadBound,
  rangeLimit,
  readableKey,
  selectorBoundary,
  selectorKey,
  writableKey,
} from '../contract/key-arguments';
import { isKeySelector } from '../contract/key-selector';
import { checkedAtomicOp } from './atomic-ops';
import { provenRange, RangeBatches } from './range-batches';
import { MAX_USER_KEY, type KeyRange } from '../contract/key-range';
import { parseVersionstampTemplate } from './versionstamp-template';
import { resolvePendingWrite, WriteSet, type PendingWrite } from './write-set';
import { TransactionShorthands } from '../contract/transaction-shorthands';
import { nextTurn } from './next-turn';
import type { AtomicOp, Bytes, KeySelector, KeyValue, RangeOptions, ReadTransaction, Transaction, Watch } from '../contract/types';

/**
 * One staged call, replayed on the parent by `apply()` in the order it was made. Keys, values and
 * ranges are this stage's own validated copies (ranges already clipped as the parent would clip them).
 */
type StagedCall =
  | { readonly type: 'set'; readonly key: Buffer; readonly value: Buffer }
  | { readonly type: 'clear'; readonly key: Buffer }
  | { readonly type: 'clearRange'; readonly begin: Buffer; readonly end: Buffer }
  | { readonly type: 'atomic'; readonly op: AtomicOp; readonly key: Buffer; readonly operand: Buffer }
  | { readonly type: 'setVersionstampedKey'; readonly keyWithOffset: Buffer; readonly value: Buffer }
  | { readonly type: 'setVersionstampedValue'; readonly key: Buffer; readonly valueWithOffset: Buffer }
  | { readonly type: 'bumpMetadataVersion' }
  | { readonly type: 'readConflict'; readonly begin: Buffer; readonly end: Buffer }
  | { readonly type: 'writeConflict'; readonly begin: Buffer; readonly end: Buffer };

const EMPTY_KEY = Buffer.alloc(0);

/**
 * A savepoint over any {@link Transaction}: writes are staged here, and reach the parent only when
 * {@link apply} replays them, in order. Dropping the stage (or calling `cancel()`) leaves the parent as
 * it was, which is how a multi-step operation that fails half way leaves its caller's transaction
 * untouched.
 *
 * - Reads go to the parent (or to the view of it the stage was given, `reads`), so they see its
 *   state and add its read conflicts (or none, through `snapshot()`), with the staged writes merged
 *   on top: sets, clears, range clears and atomic operations, in point reads, range reads (both
 *   directions, with limits) and key selectors. As in FDB, a key whose staged value does not
 *   depend on the stored one (set, cleared, range-cleared) is not read from the parent. Reading a
 *   key given a staged versionstamped value, or a range a staged versionstamped key may land in,
 *   fails with accessed_unreadable (1036).
 * - Writes are validated when made, with the parent's rules (2004 for keys in the system keyspace,
 *   2005 for an inverted range, 2102/2103 for sizes, 2000 for a malformed versionstamp template or an
 *   unknown atomic operation), so that `apply()` cannot fail half way.
 * - Conflict ranges added here are staged too and replayed by `apply()`.
 * - `commit()` and `onError()` reject with client_invalid_operation (2000): a stage is applied to its
 *   parent, and the parent commits and retries. `reset()` discards the staged calls; `cancel()`
 *   discards them and fails later operations with transaction_cancelled (1025) until `reset()`.
 * - `getVersionstamp`, `watch`, `getReadVersion`, `setReadVersion`, `disableReadYourWrites` and
 *   `getCommittedVersion` are the parent's.
 *
 * Not merged: a range read that returns a key the parent itself gave a versionstamped value fails
 * with the parent's 1036 even when the stage has set that key, because the parent is asked for the
 * range as a whole (point reads of such a key do see the staged value).
 */
export class StagedTransaction extends TransactionShorthands implements Transaction {
  private writes = new WriteSet();
  private calls: StagedCall[] = [];
  private cancelled = false;
  /** A staged {@link bumpMetadataVersion}: reading the metadata version is accessed_unreadable (1036). */
  private bumped = false;
  private snapshotReads: ReadTransaction | undefined;

  /** The parent's: a staged transaction is part of the parent's attempt. */
  get attempt(): number {
    return this.parent.attempt;
  }

  constructor(
    readonly parent: Transaction,
    /**
     * Where reads of the parent go (through the transaction, not `snapshot()`): the parent, or a view
     * of it that answers as it does, such as reads issued ahead (`remembered-reads.ts`).
     */
    private readonly reads: ReadTransaction = parent,
  ) {
    super();
  }

  /**
   * Replays the staged calls on the parent in the order they were made, then starts an empty stage
   * (reads keep merging, now over a parent that holds the writes).
   *
   * @throws KvError transaction_cancelled (1025) when this stage is cancelled, and whatever the parent
   *   throws for its first call when it is unusable (1025, used_during_commit 2017); the stage is kept
   *   and nothing was applied.
   */
  apply(): void {
    this.assertUsable();
    const calls = this.calls;
    for (const call of calls) replay(this.parent, call);
    this.calls = [];
    this.writes = new WriteSet();
    this.bumped = false;
  }

  snapshot(): ReadTransaction {
    this.snapshotReads ??= this.readerOver(this.parent.snapshot());
    return this.snapshotReads;
  }

  // ---- reads

  get(key: Bytes): Promise<Buffer | undefined> {
    return this.readValue(this.reads, key);
  }

  getKey(selector: KeySelector): Promise<Buffer> {
    return this.readKey(this.reads, selector);
  }

  getRange(begin: Bytes | KeySelector, end: Bytes | KeySelector, options?: RangeOptions): AsyncIterable<KeyValue> {
    return this.rangeIterable(this.reads, begin, end, options);
  }

  getRangeAll(begin: Bytes | KeySelector, end: Bytes | KeySelector, options?: RangeOptions): Promise<KeyValue[]> {
    return this.readRangeAll(this.reads, begin, end, options);
  }

  getReadVersion(): Promise<bigint> {
    return this.parent.getReadVersion();
  }

  getMetadataVersion(): Promise<Buffer | undefined> {
    return this.readMetadataVersion(this.parent);
  }

  /** The parent's: a stage reads at its parent's version. */
  setReadVersion(version: bigint): void {
    this.parent.setReadVersion(version);
  }

  /** The parent's; the stage's own writes are still merged into its reads (it is a savepoint). */
  disableReadYourWrites(): void {
    this.parent.disableReadYourWrites();
  }

  // ---- writes

  set(key: Bytes, value: Bytes): void {
    this.assertUsable();
    const k = writableKey(key);
    const v = checkedValue(value);
    this.writes.set(k, v);
    this.calls.push({ type: 'set', key: k, value: v });
  }

  /** A key over the size limit cannot exist, so clearing one does nothing, as on the parent. */
  clear(key: Bytes): void {
    this.assertUsable();
    const k = clearableKey(key);
    if (!k) return;
    this.writes.clear(k);
    this.calls.push({ type: 'clear', key: k });
  }

  clearRange(begin: Bytes, end: Bytes): void {
    this.assertUsable();
    const range = legalRange(begin, end);
    if (!range) return;
    this.writes.clearRange(range.begin, range.end);
    this.calls.push({ type: 'clearRange', begin: range.begin, end: range.end });
  }

  atomicOp(op: AtomicOp, key: Bytes, param: Bytes): void {
    this.assertUsable();
    checkedAtomicOp(op);
    const k = writableKey(key);
    const operand = checkedValue(param);
    this.writes.atomic(op, k, operand);
    this.calls.push({ type: 'atomic', op, key: k, operand });
  }

  /**
   * The parent's read version is not known synchronously, so every key the template can become with
   * any versionstamp is unreadable here until the stage is applied: a superset of the parent's range.
   */
  setVersionstampedKey(keyWithOffset: Bytes, value: Bytes): void {
    this.assertUsable();
    const raw = writableKey(keyWithOffset);
    const v = checkedValue(value);
    const template = parseVersionstampTemplate(raw);
    this.writes.setVersionstampedKey(template, v, 0n);
    this.calls.push({ type: 'setVersionstampedKey', keyWithOffset: raw, value: v });
  }

  setVersionstampedValue(key: Bytes, valueWithOffset: Bytes): void {
    this.assertUsable();
    const k = writableKey(key);
    const raw = checkedValue(valueWithOffset);
    this.writes.setVersionstampedValue(k, parseVersionstampTemplate(raw));
    this.calls.push({ type: 'setVersionstampedValue', key: k, valueWithOffset: raw });
  }

  /** Staged like the other writes; reading the metadata version here fails with 1036 from now on. */
  bumpMetadataVersion(): void {
    this.assertUsable();
    this.bumped = true;
    this.calls.push({ type: 'bumpMetadataVersion' });
  }

  /** The parent's: it resolves once the parent commits. */
  getVersionstamp(): Promise<Buffer> {
    return this.parent.getVersionstamp();
  }

  /** A watch on the parent, against the parent's value: staged writes count once applied. */
  watch(key: Bytes): Watch {
    return this.parent.watch(key);
  }

  // ---- conflict ranges

  addReadConflictRange(begin: Bytes, end: Bytes): void {
    this.assertUsable();
    const range = legalRange(begin, end);
    if (range) this.calls.push({ type: 'readConflict', begin: range.begin, end: range.end });
  }

  addWriteConflictRange(begin: Bytes, end: Bytes): void {
    this.assertUsable();
    const range = legalRange(begin, end);
    if (!range) return;
    this.writes.addConflictRange(range.begin, range.end);
    this.calls.push({ type: 'writeConflict', begin: range.begin, end: range.end });
  }

  /** The parent's size plus the bytes the staged writes will add when applied. */
  async getApproximateSize(): Promise<number> {
    return (await this.parent.getApproximateSize()) + this.writes.bytes;
  }

  /** The bytes the staged writes will add to the parent's size when applied. */
  get stagedBytes(): number {
    return this.writes.bytes;
  }

  // ---- lifecycle

  /** @throws KvError client_invalid_operation (2000), always: apply the stage, and commit the parent. */
  async commit(): Promise<void> {
    throw kvError('client_invalid_operation', 'a staged transaction is applied to its parent, not committed');
  }

  getCommittedVersion(): bigint {
    return this.parent.getCommittedVersion();
  }

  /** @throws KvError client_invalid_operation (2000), always: retries are the parent's. */
  async onError(err: unknown): Promise<void> {
    throw kvError(
      'client_invalid_operation',
      `a staged transaction is not retried; retry its parent (error: ${err instanceof Error ? err.message : String(err)})`,
    );
  }

  /** Discards the staged calls; the parent is not touched. */
  reset(): void {
    this.cancelled = false;
    this.calls = [];
    this.writes = new WriteSet();
    this.bumped = false;
  }

  /** Discards the staged calls; later operations fail with transaction_cancelled (1025) until `reset()`. */
  cancel(): void {
    this.cancelled = true;
    this.calls = [];
    this.writes = new WriteSet();
    this.bumped = false;
  }

  // ---- merged reads

  private readerOver(source: ReadTransaction): ReadTransaction {
    return {
      get: (key) => this.readValue(source, key),
      getKey: (selector) => this.readKey(source, selector),
      getRange: (begin, end, options) => this.rangeIterable(source, begin, end, options),
      getRangeAll: (begin, end, options) => this.readRangeAll(source, begin, end, options),
      getReadVersion: () => source.getReadVersion(),
      getMetadataVersion: () => this.readMetadataVersion(source),
    };
  }

  private async readMetadataVersion(source: ReadTransaction): Promise<Buffer | undefined> {
    this.assertUsable();
    if (this.bumped) {
      await nextTurn();
      throw kvError('accessed_unreadable', 'the metadata version was bumped in this transaction');
    }
    return source.getMetadataVersion();
  }

  private async readValue(source: ReadTransaction, key: Bytes): Promise<Buffer | undefined> {
    this.assertUsable();
    const k = readableKey(key);
    if (!k) return undefined;
    const writes = this.writes;
    const pending = writes.keys.get(k);
    if (pending === undefined) {
      if (writes.cleared.rangeContaining(k)) {
        // Settled on a later turn, as the parent's reads are.
        await nextTurn();
        return undefined;
      }
      if (writes.unreadable.rangeContaining(k)) throw unreadableRange();
      return source.get(k);
    }
    if (pending.kind !== 'atomic') {
      const value = resolvePendingWrite(pending, undefined);
      await nextTurn();
      return value === undefined ? undefined : copyOf(value);
    }
    // Later staged calls must not change what this read returns: the steps are taken now.
    const steps = pending.steps.slice();
    const stored = await source.get(k);
    return resolvePendingWrite({ kind: 'atomic', steps }, stored);
  }

  private async readKey(source: ReadTransaction, selector: KeySelector): Promise<Buffer> {
    this.assertUsable();
    return this.resolveSelector(source, selectorKey(selector), selector);
  }

  /**
   * FDB's key selector over the merged view: the `offset`-th key after the last key `< key` (`<= key`
   * with `orEqual`), that key being offset 0; `''` off the start and `'\xff'` off the end. The parent
   * records the keys read to find it as read conflicts.
   */
  private async resolveSelector(source: ReadTransaction, key: Buffer, selector: KeySelector): Promise<Buffer> {
    const { orEqual, offset } = selector;
    if (!Number.isInteger(offset)) {
      throw kvError('client_invalid_operation', `key selector offset ${offset} is not an integer`);
    }
    const boundary = selectorBoundary(key, orEqual);
    if (offset >= 1) {
      const { items } = await this.readMerged(source, boundary, MAX_USER_KEY, offset, false);
      return items.length === offset ? items[offset - 1].key : Buffer.from(MAX_USER_KEY);
    }
    const { items } = await this.readMerged(source, EMPTY_KEY, boundary, 1 - offset, true);
    return items.length === 1 - offset ? items[items.length - 1].key : Buffer.alloc(0);
  }

  /** Both ends of a range read as keys, or `undefined` when the range is empty. */
  private async resolveRange(source: ReadTransaction, begin: Bytes | KeySelector, end: Bytes | KeySelector): Promise<KeyRange | undefined> {
    const b = await this.resolveBound(source, begin);
    const e = await this.resolveBound(source, end);
    return compareBytes(b, e) < 0 ? { begin: b, end: e } : undefined;
  }

  private async resolveBound(source: ReadTransaction, bound: Bytes | KeySelector): Promise<Buffer> {
    if (!isKeySelector(bound)) return legalReadBound(toBuffer(bound));
    const key = selectorKey(bound);
    if (bound.offset === 1) return selectorBoundary(key, bound.orEqual);
    return this.resolveSelector(source, key, bound);
  }

  private rangeIterable(
    source: ReadTransaction,
    begin: Bytes | KeySelector,
    end: Bytes | KeySelector,
    options: RangeOptions | undefined,
  ): AsyncIterable<KeyValue> {
    return { [Symbol.asyncIterator]: () => this.iterateRange(source, begin, end, options ?? {}) };
  }

  /** Streams a range in growing batches, so a consumer that stops early reads little of the parent. */
  private async *iterateRange(
    source: ReadTransaction,
    begin: Bytes | KeySelector,
    end: Bytes | KeySelector,
    options: RangeOptions,
  ): AsyncGenerator<KeyValue, void, undefined> {
    this.assertUsable();
    const limit = rangeLimit(options.limit);
    const range = await this.resolveRange(source, begin, end);
    if (!range) return;
    const batches = new RangeBatches(range, limit, options);
    for (;;) {
      const batch = await this.readMerged(source, batches.begin, batches.end, batches.batchLimit, batches.reverse);
      yield* batch.items;
      if (!batches.advance(batch.items, batch.limited)) return;
      this.assertUsable();
    }
  }

  private async readRangeAll(
    source: ReadTransaction,
    begin: Bytes | KeySelector,
    end: Bytes | KeySelector,
    options: RangeOptions | undefined,
  ): Promise<KeyValue[]> {
    this.assertUsable();
    const limit = rangeLimit(options?.limit);
    const range = await this.resolveRange(source, begin, end);
    if (!range) return [];
    return (await this.readMerged(source, range.begin, range.end, limit, options?.reverse === true)).items;
  }

  /**
   * Up to `limit` pairs of `[begin, end)` (ascending, or descending when `reverse`) of the parent's
   * view with the staged writes laid over it.
   *
   * The parent is read only where its keys can show: the parts of the range not range-cleared here, in
   * order, each in chunks. A chunk asks for the pairs still missing plus one per staged key that may
   * hide a parent key (a clear or an atomic operation), so one chunk usually suffices. Everything up to
   * the last parent key fetched (or the end of a part read to its end) is then known, and staged keys
   * are merged in only within what is known.
   *
   * @throws KvError accessed_unreadable (1036) when the part of the range the result covers may hold a
   *   staged versionstamped key, or the result reaches a key with a staged versionstamped value.
   */
  private async readMerged(
    source: ReadTransaction,
    begin: Buffer,
    end: Buffer,
    limit: number,
    reverse: boolean,
  ): Promise<{ items: KeyValue[]; limited: boolean }> {
    const writes = this.writes;
    const staged = stagedEntries(writes, begin, end, reverse);
    let hiding = 0;
    for (const [, write] of staged) if (write.kind !== 'value' || write.value === undefined) hiding++;
    const parts = writes.cleared.subtractFrom(begin, end);
    if (reverse) parts.reverse();

    const items: KeyValue[] = [];
    let askedParent = false;
    let fetched: KeyValue[] = [];
    let f = 0; // next of `fetched`
    let s = 0; // next of `staged`
    let part = 0;
    // The parent's view is known from the start of the range up to `known` (exclusive when forward,
    // inclusive when reverse); `cursor` is what is left to fetch of `parts[part]`.
    let known = reverse ? end : begin;
    let cursor: KeyRange | undefined = parts[0];
    if (cursor === undefined) known = reverse ? begin : end;
    const before = (a: Buffer, b: Buffer) => (reverse ? compareBytes(a, b) > 0 : compareBytes(a, b) < 0);
    const isKnown = (key: Buffer) => (reverse ? compareBytes(key, known) >= 0 : compareBytes(key, known) < 0);

    while (items.length < limit) {
      const p = f < fetched.length ? fetched[f] : undefined;
      const w = s < staged.length ? staged[s] : undefined;
      if (w && (!p || !before(p.key, w[0])) && isKnown(w[0])) {
        let stored: Buffer | undefined;
        if (p && p.key.equals(w[0])) {
          stored = p.value;
          f++;
        }
        s++;
        const value = resolvePendingWrite(w[1], stored);
        if (value !== undefined) items.push({ key: Buffer.from(w[0]), value: copyOf(value) });
      } else if (p) {
        items.push(p);
        f++;
      } else if (cursor) {
        const wanted = limit === Infinity ? 0 : limit - items.length + hiding;
        const range: KeyRange = cursor;
        fetched = await source.getRangeAll(range.begin, range.end, { limit: wanted, reverse });
        askedParent = true;
        f = 0;
        const last = fetched[fetched.length - 1];
        if (wanted !== 0 && fetched.length === wanted && last !== undefined) {
          known = reverse ? last.key : keyAfter(last.key);
          cursor = reverse ? { begin: range.begin, end: last.key } : { begin: keyAfter(last.key), end: range.end };
        } else {
          // The rest of this part is fetched, and up to the next part everything is range-cleared here.
          cursor = parts[++part];
          const next = cursor;
          known = next ? (reverse ? next.end : next.begin) : reverse ? begin : end;
        }
      } else {
        break;
      }
    }

    const proven = provenRange(begin, end, items, limit, reverse);
    if (writes.unreadable.overlaps(proven.begin, proven.end)) throw unreadableRange();
    // Settled on a later turn, as the parent's reads are.
    if (!askedParent) await nextTurn();
    return { items, limited: items.length >= limit };
  }

  private assertUsable(): void {
    if (this.cancelled) throw kvError('transaction_cancelled', 'the staged transaction was cancelled');
  }
}

/** A new stage over `parent`, reading it through `reads` (default: `parent`): see {@link StagedTransaction}. */
export function stage(parent: Transaction, reads?: ReadTransaction): StagedTransaction {
  return new StagedTransaction(parent, reads);
}

/**
 * The staged keys in `[begin, end)` in read order, with what is pending on each as it is now (atomic
 * steps copied, as later atomic calls append to them in place).
 */
function stagedEntries(writes: WriteSet, begin: Buffer, end: Buffer, reverse: boolean): [Buffer, PendingWrite][] {
  const out: [Buffer, PendingWrite][] = [];
  const take = (key: Buffer, write: PendingWrite) => {
    out.push([key, write.kind === 'atomic' ? { kind: 'atomic', steps: write.steps.slice() } : write]);
  };
  if (reverse) {
    for (const [key, write] of writes.keys.entriesReversed(end, undefined, true)) {
      if (compareBytes(key, begin) < 0) break;
      take(key, write);
    }
  } else {
    for (const [key, write] of writes.keys.entries(begin)) {
      if (compareBytes(key, end) >= 0) break;
      take(key, write);
    }
  }
  return out;
}

function replay(parent: Transaction, call: StagedCall): void {
  switch (call.type) {
    case 'set':
      return parent.set(call.key, call.value);
    case 'clear':
      return parent.clear(call.key);
    case 'clearRange':
      return parent.clearRange(call.begin, call.end);
    case 'atomic':
      return parent.atomicOp(call.op, call.key, call.operand);
    case 'setVersionstampedKey':
      return parent.setVersionstampedKey(call.keyWithOffset, call.value);
    case 'setVersionstampedValue':
      return parent.setVersionstampedValue(call.key, call.valueWithOffset);
    case 'bumpMetadataVersion':
      return parent.bumpMetadataVersion();
    case 'readConflict':
      return parent.addReadConflictRange(call.begin, call.end);
    case 'writeConflict':
      return parent.addWriteConflictRange(call.begin, call.end);
  }
}

function unreadableRange(): KvError {
  return kvError('accessed_unreadable', 'the range may hold a versionstamped key staged in this transaction');
}
