import { Backoff } from '../backoff';
import { compareBytes, keyAfter, toBuffer } from '../bytes';
import { KvError, kvError } from '../errors';
import { isKeySelector } from '../key-selector';
import { Limits } from '../limits';
import { ATOMIC_OPS } from '../memory/atomic-ops';
import { Deferred } from '../memory/deferred';
import { coalesceRanges, type KeyRange } from '../memory/range-set';
import { MAX_USER_KEY, ReadYourWritesView } from '../memory/read-your-writes';
import { fillMaxVersionstamp, fillVersionstamp, parseVersionstampTemplate, versionstampOf } from '../memory/versionstamp-template';
import { KeyWatch, sameValue } from '../memory/watch-registry';
import { WriteSet } from '../memory/write-set';
import { TransactionShorthands } from '../transaction-shorthands';
import type { AtomicOp, Bytes, KeySelector, KeyValue, RangeOptions, ReadTransaction, Transaction, Watch } from '../types';
import {
  boundKey,
  checkedValue,
  keyTooLarge,
  legalRange,
  outsideLegalRange,
  rangeLimit,
  selectorKey,
  writableKey,
} from './arguments';
import type { LmdbCluster } from './lmdb-cluster';
import { LMDB_MAX_KEY_BYTES } from './lmdb-store';
import type { ReadSnapshot } from './read-snapshot';
import { SnapshotWindow, type OrderedSnapshot } from './snapshot-window';

/**
 * `active`: usable. `committing`/`committed`/`failed`: a commit was started, and everything but
 * `reset`/`onError` fails with used_during_commit (2017), as in FDB. `cancelled`: everything fails with
 * transaction_cancelled (1025) until `reset`.
 */
type TransactionState = 'active' | 'committing' | 'committed' | 'failed' | 'cancelled';

/** First batch of a streaming range read; batches double up to {@link MAX_BATCH}, like FDB's iterator mode. */
const FIRST_BATCH = 64;
const MAX_BATCH = 4096;
const EMPTY_KEY = Buffer.alloc(0);

/** The read version of an attempt: when it was taken, and its snapshot until the reads are over. */
interface ReadState {
  readonly version: bigint;
  /** On the engine's clock (ms): the 5-second limit counts from here. */
  readonly takenAt: number;
  snapshot: ReadSnapshot | undefined;
}

/**
 * A transaction of the lmdb engine: the client side of FDB's protocol, as the memory engine's
 * transaction (whose read-your-writes merge, write set, atomic operations and versionstamp templates it
 * uses as they are), over LMDB:
 *
 * - The first read takes the read version: the store's last commit version, with an LMDB read
 *   snapshot at it that every later read of the transaction uses (held until the commit, a reset, a
 *   cancel, or 5 s, after which reads fail with transaction_too_old, 1007).
 * - Reads record read conflict ranges unless made through {@link snapshot}: a point read its key, a
 *   range read what its result proves, a selector the keys it examined.
 * - Writes are validated and buffered; `commit` sends them with the conflict ranges to the engine's
 *   group commit, which checks them against the conflicts of every commit after the read version, in
 *   any process, and applies them durably.
 *
 * Keys that are written may have at most {@link LMDB_MAX_KEY_BYTES} bytes (key_too_large, 2102); reads
 * and clears of longer keys (legal in FDB) find nothing. Errors of writes' arguments (2004, 2005, 2102,
 * 2103, 2000 for a malformed versionstamp template) are thrown synchronously and leave the transaction
 * unchanged; reads reject their promise; transaction_too_large (2101) is reported by `commit`.
 */
export class LmdbTransaction extends TransactionShorthands implements Transaction {
  private state: TransactionState = 'active';
  /** Incremented by each reset, so that work started before a reset notices it. */
  private generation = 0;
  private read: ReadState | undefined;
  private writes = new WriteSet();
  private pointView: ReadYourWritesView | undefined;
  private readConflicts: KeyRange[] = [];
  private readConflictBytes = 0;
  /** Watches created by this transaction, activated by its commit. */
  private pendingWatches: KeyWatch[] = [];
  private versionstamp: Deferred<Buffer> | undefined;
  private committedVersion = -1n;
  /** Grows across `onError` retries; only `reset` (a fresh transaction) starts it over. */
  private readonly backoff = new Backoff();
  private snapshotReads: ReadTransaction | undefined;

  constructor(private readonly cluster: LmdbCluster) {
    super();
  }

  snapshot(): ReadTransaction {
    this.snapshotReads ??= {
      get: (key) => this.readValue(key, true),
      getKey: (selector) => this.readKey(selector, true),
      getRange: (begin, end, options) => this.rangeIterable(begin, end, options, true),
      getRangeAll: (begin, end, options) => this.readRangeAll(begin, end, options, true),
      getReadVersion: () => this.getReadVersion(),
    };
    return this.snapshotReads;
  }

  // ---- reads

  get(key: Bytes): Promise<Buffer | undefined> {
    return this.readValue(key, false);
  }

  getKey(selector: KeySelector): Promise<Buffer> {
    return this.readKey(selector, false);
  }

  getRange(begin: Bytes | KeySelector, end: Bytes | KeySelector, options?: RangeOptions): AsyncIterable<KeyValue> {
    return this.rangeIterable(begin, end, options, false);
  }

  getRangeAll(begin: Bytes | KeySelector, end: Bytes | KeySelector, options?: RangeOptions): Promise<KeyValue[]> {
    return this.readRangeAll(begin, end, options, false);
  }

  /** Allowed after commit too, as in FDB; only a cancelled transaction rejects (1025). */
  async getReadVersion(): Promise<bigint> {
    this.assertNotCancelled();
    if (this.read) return this.read.version;
    const snapshot = this.cluster.readSnapshot();
    if (this.state !== 'active') {
      // Nothing will read through it: keep only the version.
      snapshot.drop();
      this.read = { version: snapshot.version, takenAt: this.cluster.now(), snapshot: undefined };
    } else {
      this.read = { version: snapshot.version, takenAt: this.cluster.now(), snapshot };
    }
    return this.read.version;
  }

  // ---- writes

  set(key: Bytes, value: Bytes): void {
    this.assertUsable();
    const k = writableKey(key);
    const v = checkedValue(value);
    this.writes.set(k, v);
    this.triggerOwnWatches(k);
  }

  /** Clears `key`. A key over the size limit cannot exist, so clearing one does nothing (as in FDB). */
  clear(key: Bytes): void {
    this.assertUsable();
    const k = toBuffer(key);
    if (k.length > 0 && k[0] === 0xff) throw outsideLegalRange(k);
    if (k.length > LMDB_MAX_KEY_BYTES) return;
    const own = Buffer.from(k);
    this.writes.clear(own);
    this.triggerOwnWatches(own);
  }

  clearRange(begin: Bytes, end: Bytes): void {
    this.assertUsable();
    const range = legalRange(begin, end);
    if (!range) return;
    this.writes.clearRange(range.begin, range.end);
    this.triggerOwnWatches(range.begin, range.end);
  }

  atomicOp(op: AtomicOp, key: Bytes, param: Bytes): void {
    this.assertUsable();
    if (!ATOMIC_OPS.has(op)) throw kvError('client_invalid_operation', `unknown atomic operation '${String(op)}'`);
    const k = writableKey(key);
    const operand = checkedValue(param);
    this.writes.atomic(op, k, operand);
    this.triggerOwnWatches(k);
  }

  /**
   * Until commit the final key is unknown: reads of the keys it may become (from the read version's
   * stamp, or from zero before any read, up to the all-0xff stamp) fail with accessed_unreadable (1036),
   * as in FDB. Limits apply to the arguments as given, offset suffix included, as FDB checks them.
   */
  setVersionstampedKey(keyWithOffset: Bytes, value: Bytes): void {
    this.assertUsable();
    const raw = writableKey(keyWithOffset);
    const v = checkedValue(value);
    const template = parseVersionstampTemplate(raw);
    const lowestVersion = this.read ? this.read.version + 1n : 0n;
    const lowest = fillVersionstamp(template, versionstampOf(lowestVersion));
    const afterHighest = keyAfter(fillMaxVersionstamp(template));
    const end = compareBytes(afterHighest, MAX_USER_KEY) > 0 ? MAX_USER_KEY : afterHighest;
    this.writes.setVersionstampedKey(template, v, compareBytes(lowest, end) < 0 ? { begin: lowest, end } : undefined);
  }

  /** Until commit the value is unknown: reading the key fails with accessed_unreadable (1036), as in FDB. */
  setVersionstampedValue(key: Bytes, valueWithOffset: Bytes): void {
    this.assertUsable();
    const k = writableKey(key);
    const template = parseVersionstampTemplate(checkedValue(valueWithOffset));
    this.writes.setVersionstampedValue(k, template);
    this.triggerOwnWatches(k, undefined, true);
  }

  getVersionstamp(): Promise<Buffer> {
    try {
      this.assertUsable();
    } catch (err) {
      return Promise.reject(err);
    }
    this.versionstamp ??= new Deferred<Buffer>();
    return this.versionstamp.promise;
  }

  /**
   * The watch compares against the key's value as this transaction sees it now (its read version plus
   * its own writes). A later write of this transaction that changes the value fires it at once; other
   * transactions' changes, in any process, count from this transaction's commit. Errors (2004, 2102,
   * 1025, 2017, 1007) reject the watch's promise instead of being thrown, as FDB reports them through
   * the watch's future; too_many_watches (1032) is reported the same way when the commit activates it.
   */
  watch(key: Bytes): Watch {
    const k = Buffer.from(toBuffer(key));
    try {
      this.assertUsable();
      if (compareBytes(k, MAX_USER_KEY) >= 0) throw outsideLegalRange(k);
      if (k.length > LMDB_MAX_KEY_BYTES) throw keyTooLarge(k);
      const watch = new KeyWatch(k, this.readView().valueForWatch(k));
      this.pendingWatches.push(watch);
      return watch;
    } catch (err) {
      const failed = new KeyWatch(k, undefined);
      failed.fail(err);
      return failed;
    }
  }

  // ---- conflict ranges

  addReadConflictRange(begin: Bytes, end: Bytes): void {
    this.assertUsable();
    const range = legalRange(begin, end);
    if (range) this.addReadConflict(range.begin, range.end);
  }

  addWriteConflictRange(begin: Bytes, end: Bytes): void {
    this.assertUsable();
    const range = legalRange(begin, end);
    if (range) this.writes.addConflictRange(range.begin, range.end);
  }

  /** Bytes of mutations plus read and write conflict ranges (FDB's estimate, without its struct overheads). */
  async getApproximateSize(): Promise<number> {
    return this.approximateSize();
  }

  // ---- lifecycle

  /**
   * A transaction without writes commits at once, without a version. Otherwise the commit joins the
   * next group commit; it resolves once applied and as durable as the engine's mode requires.
   *
   * @throws KvError transaction_too_large (2101), transaction_too_old (1007), not_committed (1020),
   *   commit_unknown_result (1021), transaction_cancelled (1025) if reset or cancelled meanwhile.
   */
  async commit(): Promise<void> {
    this.assertUsable();
    this.state = 'committing';
    const generation = this.generation;
    // A commit is a round trip: other tasks run meanwhile, and see this transaction as committing.
    await Promise.resolve();
    if (this.generation !== generation || this.state !== 'committing') {
      throw kvError('transaction_cancelled', 'the transaction was reset or cancelled during commit');
    }
    try {
      const size = this.approximateSize();
      if (size > Limits.maxTransactionBytes) {
        throw kvError('transaction_too_large', `${size} bytes, the limit is ${Limits.maxTransactionBytes}`);
      }
      this.releaseSnapshot();
      const writeConflicts = this.writes.writeConflicts();
      const mutations = this.writes.mutations;
      let version = -1n;
      let versionstamp: Buffer | undefined;
      if (mutations.length > 0 || writeConflicts.length > 0) {
        const outcome = await this.cluster.commit({
          readVersion: this.read?.version,
          readTakenAt: this.read?.takenAt,
          readConflicts: coalesceRanges(this.readConflicts),
          writeConflicts,
          mutations,
          bytes: size,
        });
        if (this.generation !== generation || this.state !== 'committing') {
          throw kvError('transaction_cancelled', 'the transaction was reset or cancelled while its commit was in flight; it may have been applied');
        }
        if (!outcome.committed) throw outcome.error;
        if (outcome.reportUnknownResult) throw kvError('commit_unknown_result', 'injected fault; the commit was applied');
        version = outcome.version;
        versionstamp = outcome.versionstamp;
      } else {
        this.cluster.assertOpen();
      }
      this.state = 'committed';
      this.committedVersion = version;
      if (versionstamp) this.versionstamp?.resolve(versionstamp);
      else this.versionstamp?.reject(kvError('no_commit_version', 'the transaction committed without writes'));
      const watches = this.pendingWatches;
      this.pendingWatches = [];
      this.cluster.activateWatches(watches);
    } catch (err) {
      if (this.generation === generation && this.state === 'committing') {
        this.state = 'failed';
        this.failPending(err);
      }
      throw err;
    }
  }

  getCommittedVersion(): bigint {
    return this.committedVersion;
  }

  /**
   * Retryable KvError: waits this transaction's backoff, then resets it (keeping the backoff). Anything
   * else, or a cancelled transaction: rejects (with `err`, or transaction_cancelled).
   */
  async onError(err: unknown): Promise<void> {
    this.assertNotCancelled();
    if (!(err instanceof KvError) || !err.retryable) {
      this.discard(err);
      throw err;
    }
    this.releaseSnapshot();
    await this.backoff.wait();
    // The transaction may have been cancelled while waiting.
    this.assertNotCancelled();
    this.discard(err);
  }

  reset(): void {
    this.discard(kvError('transaction_cancelled', 'the transaction was reset'));
    this.backoff.reset();
  }

  cancel(): void {
    if (this.state === 'cancelled') return;
    this.failPending(kvError('transaction_cancelled'));
    this.releaseSnapshot();
    this.state = 'cancelled';
  }

  // ---- internals

  private assertNotCancelled(): void {
    if (this.state === 'cancelled') throw kvError('transaction_cancelled');
  }

  private assertUsable(): void {
    if (this.state === 'active') return;
    if (this.state === 'cancelled') throw kvError('transaction_cancelled');
    throw kvError('used_during_commit', 'the transaction was committed; reset it to use it again');
  }

  /** The snapshot to read from, taking the read version on first use. @throws KvError 1007 past 5 s */
  private readableSnapshot(): ReadSnapshot {
    if (!this.read) {
      const snapshot = this.cluster.readSnapshot();
      this.read = { version: snapshot.version, takenAt: this.cluster.now(), snapshot };
      return snapshot;
    }
    const { snapshot, takenAt } = this.read;
    if (!snapshot) throw kvError('transaction_too_old', 'the read snapshot was released');
    this.cluster.assertReadable(snapshot, takenAt);
    return snapshot;
  }

  /** The merged view for point reads. @throws KvError transaction_too_old (1007) past the MVCC window */
  private readView(): ReadYourWritesView {
    const snapshot = this.readableSnapshot();
    this.pointView ??= this.viewOver(new SnapshotWindow(snapshot, EMPTY_KEY, MAX_USER_KEY));
    return this.pointView;
  }

  /** A merged view for a scan of `[begin, end)` expected to return about `expected` pairs. */
  private scanView(begin: Buffer, end: Buffer, expected: number): ReadYourWritesView {
    return this.viewOver(new SnapshotWindow(this.readableSnapshot(), begin, end, expected));
  }

  private viewOver(window: OrderedSnapshot): ReadYourWritesView {
    // The memory engine's merge reads only these three methods of its sorted map; see OrderedSnapshot.
    return new ReadYourWritesView(window as ConstructorParameters<typeof ReadYourWritesView>[0], this.writes);
  }

  private async readValue(key: Bytes, snapshot: boolean): Promise<Buffer | undefined> {
    this.assertUsable();
    const k = toBuffer(key);
    if (compareBytes(k, MAX_USER_KEY) >= 0) throw outsideLegalRange(k);
    // No key over the limit can exist.
    if (k.length > LMDB_MAX_KEY_BYTES) return undefined;
    const view = this.readView();
    const value = view.get(k);
    if (!snapshot && view.dependsOnStore(k)) {
      const end = keyAfter(k);
      this.readConflicts.push({ begin: end.subarray(0, k.length), end });
      this.readConflictBytes += 2 * k.length + 1;
    }
    return value === undefined ? undefined : this.ownCopy(value);
  }

  private async readKey(selector: KeySelector, snapshot: boolean): Promise<Buffer> {
    this.assertUsable();
    const key = selectorKey(selector);
    return Buffer.from(this.resolveSelector(key, selector, snapshot));
  }

  /** Resolves a selector over the merged view, recording the keys it examined as a read conflict. */
  private resolveSelector(key: Buffer, selector: KeySelector, snapshot: boolean): Buffer {
    if (!Number.isInteger(selector.offset)) {
      throw kvError('client_invalid_operation', `key selector offset ${selector.offset} is not an integer`);
    }
    const view = this.scanView(EMPTY_KEY, MAX_USER_KEY, Math.abs(selector.offset) + 1);
    const resolved = view.resolveSelector(key, selector.orEqual, selector.offset);
    view.assertReadable(resolved.examined);
    if (!snapshot) this.addReadConflict(resolved.examined.begin, resolved.examined.end);
    return resolved.key;
  }

  /** Both ends of a range read as keys, or `undefined` when the range is empty. */
  private resolveRange(begin: Bytes | KeySelector, end: Bytes | KeySelector, snapshot: boolean): KeyRange | undefined {
    const beginKey = boundKey(begin);
    const endKey = boundKey(end);
    const b = this.resolveBound(beginKey, begin, snapshot);
    const e = this.resolveBound(endKey, end, snapshot);
    return compareBytes(b, e) < 0 ? { begin: b, end: e } : undefined;
  }

  private resolveBound(key: Buffer, bound: Bytes | KeySelector, snapshot: boolean): Buffer {
    if (!isKeySelector(bound)) return key;
    // firstGreaterOrEqual and firstGreaterThan bound a range exactly as a key does: no lookup needed.
    if (bound.offset === 1) {
      if (!bound.orEqual) return key;
      const after = keyAfter(key);
      return compareBytes(after, MAX_USER_KEY) > 0 ? MAX_USER_KEY : after;
    }
    return this.resolveSelector(key, bound, snapshot);
  }

  private rangeIterable(
    begin: Bytes | KeySelector,
    end: Bytes | KeySelector,
    options: RangeOptions | undefined,
    snapshot: boolean,
  ): AsyncIterable<KeyValue> {
    return { [Symbol.asyncIterator]: () => this.iterateRange(begin, end, options ?? {}, snapshot) };
  }

  /**
   * Streams a range in growing batches. Each batch is read synchronously and records its own read
   * conflict, so a consumer that stops early conflicts only on what was fetched; writes made between
   * batches are seen by the following ones.
   */
  private async *iterateRange(
    begin: Bytes | KeySelector,
    end: Bytes | KeySelector,
    options: RangeOptions,
    snapshot: boolean,
  ): AsyncGenerator<KeyValue, void, undefined> {
    this.assertUsable();
    const generation = this.generation;
    const limit = rangeLimit(options.limit);
    const reverse = options.reverse === true;
    const fixedBatch = options.batchSize !== undefined && options.batchSize > 0 ? options.batchSize : undefined;
    let batchSize = fixedBatch ?? FIRST_BATCH;
    const range = this.resolveRange(begin, end, snapshot);
    if (!range) return;
    let { begin: from, end: to } = range;
    let remaining = limit;
    for (;;) {
      const batch = this.readRangeBatch(from, to, Math.min(remaining, batchSize), reverse, snapshot);
      yield* batch.items;
      remaining -= batch.items.length;
      if (!batch.lastKey || !batch.limited || remaining <= 0) return;
      if (reverse) to = batch.lastKey;
      else from = keyAfter(batch.lastKey);
      if (!fixedBatch) batchSize = Math.min(batchSize * 2, MAX_BATCH);
      if (this.generation !== generation) {
        throw kvError('transaction_cancelled', 'the transaction was reset during a range read');
      }
      this.assertUsable();
    }
  }

  private async readRangeAll(
    begin: Bytes | KeySelector,
    end: Bytes | KeySelector,
    options: RangeOptions | undefined,
    snapshot: boolean,
  ): Promise<KeyValue[]> {
    this.assertUsable();
    const limit = rangeLimit(options?.limit);
    const range = this.resolveRange(begin, end, snapshot);
    if (!range) return [];
    return this.readRangeBatch(range.begin, range.end, limit, options?.reverse === true, snapshot).items;
  }

  /**
   * Up to `limit` merged pairs of `[begin, end)`. The read conflict covers what the result proves: the
   * whole range, or with the limit reached, the range up to and including the last key returned.
   */
  private readRangeBatch(
    begin: Buffer,
    end: Buffer,
    limit: number,
    reverse: boolean,
    snapshot: boolean,
  ): { items: KeyValue[]; limited: boolean; lastKey: Buffer | undefined } {
    const view = this.scanView(begin, end, limit);
    const items: KeyValue[] = [];
    let lastKey: Buffer | undefined;
    for (const [key, value] of reverse ? view.backward(begin, end) : view.forward(begin, end)) {
      items.push({ key: this.ownCopy(key), value: this.ownCopy(value) });
      lastKey = key;
      if (items.length >= limit) break;
    }
    const limited = items.length >= limit;
    let covered: KeyRange = { begin, end };
    if (limited && lastKey) covered = reverse ? { begin: lastKey, end } : { begin, end: keyAfter(lastKey) };
    view.assertReadable(covered);
    if (!snapshot) this.addReadConflict(covered.begin, covered.end);
    return { items, limited, lastKey };
  }

  /** Records a read conflict, minus the parts this transaction cleared (they do not depend on the store). */
  private addReadConflict(begin: Buffer, end: Buffer): void {
    if (compareBytes(begin, end) >= 0) return;
    const parts = this.writes.cleared.isEmpty ? [{ begin, end }] : this.writes.cleared.subtractFrom(begin, end);
    for (const part of parts) {
      this.readConflicts.push(part);
      this.readConflictBytes += part.begin.length + part.end.length;
    }
  }

  /**
   * Fires this transaction's own watches on `begin` (or in `[begin, end)`) whose value its writes just
   * changed.
   */
  private triggerOwnWatches(begin: Buffer, end?: Buffer, valueUnknown = false): void {
    if (this.pendingWatches.length === 0) return;
    // Past the 5 s, the value cannot be read any more: fire (FDB's watches may fire spuriously too).
    let view: ReadYourWritesView | undefined;
    try {
      view = this.readView();
    } catch {
      valueUnknown = true;
    }
    for (const watch of this.pendingWatches) {
      if (watch.isSettled) continue;
      const inside = end
        ? compareBytes(watch.key, begin) >= 0 && compareBytes(watch.key, end) < 0
        : watch.key.equals(begin);
      if (!inside) continue;
      if (valueUnknown || !view || !sameValue(watch.value, view.valueForWatch(watch.key))) watch.trigger();
    }
  }

  /**
   * Bytes for the caller, who may modify them: the store's are already fresh copies, but bytes of this
   * transaction's writes must be copied so the caller cannot change what the transaction commits.
   */
  private ownCopy(bytes: Buffer): Buffer {
    return this.writes.mutations.length === 0 ? bytes : copyOf(bytes);
  }

  private approximateSize(): number {
    return this.writes.bytes + this.readConflictBytes;
  }

  /** Lets go of the read snapshot: the reads of this attempt are over (the version is kept). */
  private releaseSnapshot(): void {
    if (this.read?.snapshot) {
      this.read.snapshot.drop();
      this.read.snapshot = undefined;
    }
    this.pointView = undefined;
  }

  /** Rejects what waits on this attempt's commit: its watches and its versionstamp. */
  private failPending(reason: unknown): void {
    for (const watch of this.pendingWatches) watch.fail(reason);
    this.pendingWatches = [];
    this.versionstamp?.reject(reason);
  }

  /** Forgets everything of the current attempt, failing what waits on it with `reason`. */
  private discard(reason: unknown): void {
    this.failPending(reason);
    this.releaseSnapshot();
    this.generation++;
    this.state = 'active';
    this.read = undefined;
    this.writes = new WriteSet();
    this.readConflicts = [];
    this.readConflictBytes = 0;
    this.versionstamp = undefined;
    this.committedVersion = -1n;
  }
}

function copyOf(bytes: Buffer): Buffer {
  const out = Buffer.allocUnsafe(bytes.length);
  out.set(bytes);
  return out;
}
