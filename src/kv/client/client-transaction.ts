import { Buffer } from 'node:buffer';
import { Backoff } from '../contract/backoff';
import { compareBytes, int64LE, keyAfter, toBuffer } from '../contract/bytes';
import { KvError, kvError } from '../contract/errors';
import {
  boundKey,
  checkedValue,
  clearableKey,
  legalClearableKey,
  keyTooLarge,
  legalRange,
  outsideLegalRange,
  rangeLimit,
  readableKey,
  selectorBoundary,
  selectorKey,
  writableKey,
  legalWritableKey,
  legalValue,
  type EngineKeyLimit,
} from '../contract/key-arguments';
import { isKeySelector } from '../contract/key-selector';
import { Limits } from '../contract/limits';
import { checkedAtomicOp } from './atomic-ops';
import { Deferred } from './deferred';
import { provenRange, RangeBatches } from './range-batches';
import { RangeStream, type RangeBatch } from './range-stream';
import { MAX_USER_KEY, type KeyRange } from '../contract/key-range';
import type { ReadYourWritesView } from './read-your-writes';
import { parseOwnedVersionstampTemplate, parseVersionstampTemplate, type VersionstampTemplate } from './versionstamp-template';
import { KeyWatch, sameValue } from './key-watch';
import { nextTurn, rejectOnNextTurn, resolveOnNextTurn, settleOnNextTurn, turnsTaken } from './next-turn';
import { WriteSet } from './write-set';
import { TransactionShorthands } from '../contract/transaction-shorthands';
import { METADATA_VERSION_BUMP, METADATA_VERSION_KEY } from '../contract/metadata-version';
import type { AtomicOp, Bytes, KeySelector, KeyValue, RangeOptions, ReadTransaction, Transaction, Watch } from '../contract/types';

const NO_WATCHES: readonly KeyWatch[] = Object.freeze([]);

/**
 * Reads per attempt that settle at once in a transaction that asked for it (`settleReadsNow`): more
 * than a combined batch of structure calls makes in most attempts, few enough that the chain of
 * microtasks they make stays short (a layer's reads take microseconds each).
 */
export const READS_SETTLED_NOW = 64;

/** `boundKey(bound)` without the copy of a Buffer key: for bounds used only while the call runs. */
function transientBoundKey(bound: Bytes | KeySelector): Buffer {
  return Buffer.isBuffer(bound) && compareBytes(bound, MAX_USER_KEY) <= 0 ? bound : boundKey(bound);
}

/**
 * `active`: usable. `committing`/`committed`/`failed`: a commit was started, and everything but
 * `reset`/`onError` fails with used_during_commit (2017), as in FDB. `cancelled`: everything fails with
 * transaction_cancelled (1025) until `reset`.
 */
export type TransactionState = 'active' | 'committing' | 'committed' | 'failed' | 'cancelled';

/**
 * The client half of a transaction over a snapshot-and-commit backend, as FDB's client does it:
 * read-your-writes (reads merged with the transaction's own buffered writes through a
 * {@link ReadYourWritesView}), read and write conflict ranges, validation of writes' arguments, watches
 * fired by the transaction's own writes, and the lifecycle (commit states, cancel, reset, onError with
 * backoff). Engines supply the snapshots reads go to (and when they are released), and the commit.
 *
 * Every promise it returns settles on a later turn of the event loop (see `next-turn.ts`), as FDB's
 * futures do: a read takes effect when it is called, and its caller resumes in a new macrotask. The one
 * exception is a layer's own transaction that asked for its reads to settle at once
 * ({@link settleReadsNow}): its operation still settles on a later turn, at its commit.
 *
 * Errors: argument errors of writes (2004, 2005, 2102, 2103, 2000 for a malformed versionstamp
 * template) are thrown synchronously and leave the transaction unchanged; reads reject their promise;
 * transaction_too_large (2101) is reported by `commit`, as FDB does.
 */
export abstract class ClientTransaction extends TransactionShorthands implements Transaction {
  protected state: TransactionState = 'active';
  /** Incremented by each reset, so that work started before a reset notices it. */
  private generation = 0;
  /** {@link turnsTaken} when the current attempt began. */
  private attemptTurn = turnsTaken();
  protected writes = new WriteSet();
  /** Read conflict ranges, except those of the point reads in {@link pointReadEnds}. */
  private readRanges: KeyRange[] = [];
  /**
   * Point-read conflicts not yet in {@link readRanges}, each as the end of its range, `key + '\x00'`
   * (one copy of the key for both ends): made ranges only when a commit checks them
   * ({@link readConflictsWhenAsked}), which a read-only commit, or one that ran alone, never does.
   */
  private pointReadEnds: Buffer[] | undefined;
  private readConflictBytes = 0;
  /**
   * The keys (latin1) of point-read conflicts already recorded, once there are a few: a transaction
   * that reads the same keys again (combined structure calls do, see structures/combiner.ts) records
   * each once, so its commit sorts and sends no duplicates.
   */
  private pointConflicts: Set<string> | undefined;
  /** Watches created by this transaction, activated by its commit (none yet: `undefined`). */
  private pendingWatches: KeyWatch[] | undefined;
  private versionstamp: Deferred<Buffer> | undefined;
  private committedVersion = -1n;
  /**
   * Grows across `onError` retries; only `reset` starts it over, as for a new transaction. Made by the
   * first retry unless the engine gave its own: most transactions never retry.
   */
  private backoff: Backoff | undefined;
  private snapshotReads: ReadTransaction | undefined;
  /** The largest key that can exist: an engine's own limit, or FoundationDB's. */
  private readonly maxKeyBytes: number;
  /** See {@link Transaction.attempt}: bumped by every {@link discard} that makes the transaction runnable again. */
  attempt = 0;
  /** Whether this attempt has read or written anything (after which read-your-writes stays on). */
  private used = false;
  /** Set by {@link disableReadYourWrites}: reads merge this empty write set instead of {@link writes}. */
  private storeOnly: WriteSet | undefined;
  /** Set by {@link settleReadsNow}: how many reads each attempt settles at once. */
  private readsNowPerAttempt = 0;
  /** How many more reads of this attempt settle at once (see {@link settleReadsNow}). */
  private readsNowLeft = 0;

  /**
   * @param keyLimit the engine's limit on stored keys, when below FoundationDB's
   * @param backoff the retry delays of `onError`: FDB's by default; an engine whose commits take far
   *   less than a cluster's may start lower
   */
  constructor(
    private readonly keyLimit?: EngineKeyLimit,
    backoff?: Backoff,
  ) {
    super();
    this.maxKeyBytes = keyLimit?.maxKeyBytes ?? Limits.maxKeyBytes;
    this.backoff = backoff;
  }

  /** How many read conflicts (ranges and point reads) this attempt has recorded, without making them. */
  protected get readConflictCount(): number {
    return this.readRanges.length + (this.pointReadEnds?.length ?? 0);
  }

  /**
   * This attempt's read conflict ranges, made when first asked: for a commit that checks them only when
   * a commit since the read version could fail them (a transaction that ran alone never needs them),
   * and may do so later (a group commit). An attempt records no more once its commit has started, and
   * a reset starts new lists, so what it returns stays this attempt's.
   */
  protected readConflictsWhenAsked(): () => readonly KeyRange[] {
    const ranges = this.readRanges;
    const ends = this.pointReadEnds;
    if (ends === undefined) return () => ranges;
    let made: KeyRange[] | undefined;
    return () => (made ??= ranges.concat(ends.map((end) => ({ begin: end.subarray(0, end.length - 1), end }))));
  }

  // ---- what engines supply

  abstract commit(): Promise<void>;

  /** The attempt's read version, taken now if it has none. @throws KvError 1025 once cancelled */
  protected abstract takeReadVersion(): bigint;

  /** The read version if this attempt has taken or been given one. */
  protected abstract knownReadVersion(): bigint | undefined;

  /**
   * Makes this attempt read at `version` (checked by the caller: positive, no read version yet). The
   * engine checks that it holds the version when the attempt first reads or commits.
   */
  protected abstract useReadVersion(version: bigint): void;

  /** The merged view for point reads and watches. @throws KvError transaction_too_old (1007) */
  protected abstract readView(): ReadYourWritesView;

  /** The merged view to resolve a selector with offset `offset` over. @throws KvError 1007 */
  protected abstract selectorView(offset: number): ReadYourWritesView;

  /** Appends up to `limit` merged pairs of `[begin, end)` to `items`; returns the view read. */
  protected abstract collectRange(begin: Buffer, end: Buffer, limit: number, reverse: boolean, items: KeyValue[]): ReadYourWritesView;

  /** The view this transaction's own watches are compared against after a write, if it can be read. */
  protected abstract watchView(): ReadYourWritesView | undefined;

  /** The value a point read returns, given the merged view's. */
  protected abstract pointValue(value: Buffer): Buffer;

  /** The reads of this attempt are over (the read version is kept). */
  protected releaseReads(): void {}

  /** Forgets this attempt's read version and snapshot. */
  protected abstract discardReads(): void;

  /** The writes reads merge with: none once read-your-writes is disabled. */
  protected get visibleWrites(): WriteSet {
    return this.storeOnly ?? this.writes;
  }

  // ---- reads

  snapshot(): ReadTransaction {
    this.snapshotReads ??= {
      get: (key) => this.settle(() => this.readValue(key, true)),
      getKey: (selector) => this.settle(() => this.readKey(selector, true)),
      getRange: (begin, end, options) => this.rangeIterable(begin, end, options, true),
      getRangeAll: (begin, end, options) => this.settledRangeAll(begin, end, options, true),
      getReadVersion: () => this.getReadVersion(),
      getMetadataVersion: () => this.settle(() => this.readStoredKey(METADATA_VERSION_KEY, true)),
    };
    return this.snapshotReads;
  }

  get(key: Bytes): Promise<Buffer | undefined> {
    // settleOnNextTurn(() => this.readValue(key, false)) without a closure per read: point reads are
    // the commonest operation.
    let value: Buffer | undefined;
    try {
      value = this.readValue(key, false);
    } catch (err) {
      return this.rejected(err);
    }
    return this.resolved(value);
  }

  getKey(selector: KeySelector): Promise<Buffer> {
    return this.settle(() => this.readKey(selector, false));
  }

  getRange(begin: Bytes | KeySelector, end: Bytes | KeySelector, options?: RangeOptions): AsyncIterable<KeyValue> {
    return this.rangeIterable(begin, end, options, false);
  }

  getRangeAll(begin: Bytes | KeySelector, end: Bytes | KeySelector, options?: RangeOptions): Promise<KeyValue[]> {
    return this.settledRangeAll(begin, end, options, false);
  }

  /**
   * {@link getRangeAll} of bounds the caller hands over, as {@link setHandedOver} takes keys (made for
   * this read or kept unchanged for good, like a document's keys): the read conflict keeps them
   * instead of copies. Same checks, errors and result. Layers reach it through `getRangeAllHandedOver`.
   */
  getRangeAllHandedOver(begin: Buffer, end: Buffer, options?: RangeOptions): Promise<KeyValue[]> {
    return this.settledRangeAll(begin, end, options, false, true);
  }

  /** `settleOnNextTurn(() => this.readRangeAll(...))` without a closure per read, as {@link get} does. */
  private settledRangeAll(
    begin: Bytes | KeySelector,
    end: Bytes | KeySelector,
    options: RangeOptions | undefined,
    snapshot: boolean,
    handedOver = false,
  ): Promise<KeyValue[]> {
    let items: KeyValue[];
    try {
      items = this.readRangeAll(begin, end, options, snapshot, handedOver);
    } catch (err) {
      return this.rejected(err);
    }
    return this.resolved(items);
  }

  /** Allowed after commit too, as in FDB; only a cancelled transaction rejects (1025). */
  getReadVersion(): Promise<bigint> {
    return this.settle(() => this.takeReadVersion());
  }

  /**
   * The engines store the metadata version as an ordinary pair at `\xff/metadataVersion` (beyond every
   * user range, which ends at `\xff`), so it is read from the snapshot of the read version with no
   * extra work, and its conflicts are ordinary point conflicts.
   */
  getMetadataVersion(): Promise<Buffer | undefined> {
    return this.settle(() => this.readStoredKey(METADATA_VERSION_KEY, false));
  }

  /**
   * Makes the reads of this transaction (its point reads, range reads read whole, key selectors, read
   * and metadata versions) settle at once, in the caller's chain of microtasks, rather than on a later
   * turn of the event loop: for a layer's own transaction whose body is the layer's code alone (a
   * structure's or a document's operation), so that the operation takes one turn, its commit's, rather
   * than one per read and one for the commit. The operation still settles on a later turn: a writing
   * commit takes one, and a read-only one takes one when no read of its attempt did.
   *
   * At most {@link READS_SETTLED_NOW} reads of each attempt settle at once; the later ones settle on
   * later turns, as usual, so that a long loop of awaited reads still lets timers and I/O run. Range
   * reads by iterator (`getRange`) keep their turns. Layers reach it through `settleReadsNow`.
   */
  settleReadsNow(): void {
    this.readsNowPerAttempt = READS_SETTLED_NOW;
    this.readsNowLeft = READS_SETTLED_NOW;
  }

  /** A read's promise of `value`: settled at once while {@link settleReadsNow} allows, else on the next turn. */
  private resolved<T>(value: T): Promise<T> {
    if (this.readsNowLeft > 0) {
      this.readsNowLeft--;
      return Promise.resolve(value);
    }
    return resolveOnNextTurn(value);
  }

  /** A read's promise rejected with `error`, when {@link resolved} would have settled it. */
  private rejected<T>(error: unknown): Promise<T> {
    if (this.readsNowLeft > 0) {
      this.readsNowLeft--;
      return Promise.reject(error);
    }
    return rejectOnNextTurn(error);
  }

  /** {@link settleOnNextTurn}, or at once while {@link settleReadsNow} allows. */
  private settle<T>(operation: () => T): Promise<T> {
    if (this.readsNowLeft === 0) return settleOnNextTurn(operation);
    let value: T;
    try {
      value = operation();
    } catch (err) {
      return this.rejected(err);
    }
    return this.resolved(value);
  }

  setReadVersion(version: bigint): void {
    this.assertActive();
    if (version < 1n) throw kvError('version_invalid', `read version ${version}`);
    if (this.knownReadVersion() !== undefined) throw kvError('read_version_already_set');
    this.useReadVersion(version);
  }

  disableReadYourWrites(): void {
    this.assertActive();
    if (this.used) {
      throw kvError('client_invalid_operation', 'read-your-writes can only be disabled before the transaction reads or writes');
    }
    this.storeOnly ??= new WriteSet();
  }

  // ---- writes

  set(key: Bytes, value: Bytes): void {
    this.assertUsable();
    const k = writableKey(key, this.keyLimit);
    const v = checkedValue(value);
    this.writes.set(k, v);
    this.triggerOwnWatches(k);
  }

  /**
   * {@link set} of Buffers the caller hands over: it never modifies them afterwards, so the transaction
   * keeps them, and the engine may store them, instead of copies. Same checks and errors as `set`.
   * Layers reach it through `setHandedOver`.
   */
  setHandedOver(key: Buffer, value: Buffer): void {
    this.assertUsable();
    const k = legalWritableKey(key, this.keyLimit);
    this.writes.set(k, legalValue(value));
    this.triggerOwnWatches(k);
  }

  /** Clears `key`. A key over the size limit cannot exist, so clearing one does nothing (as in FDB). */
  clear(key: Bytes): void {
    this.assertUsable();
    const k = clearableKey(key, this.keyLimit);
    if (!k) return;
    this.writes.clear(k);
    this.triggerOwnWatches(k);
  }

  /**
   * {@link clear} of a key the caller hands over, as {@link setHandedOver} takes it (a key a read
   * returned, never modified): kept instead of copied. Same checks and errors. Layers reach it through
   * `clearHandedOver`.
   */
  clearHandedOver(key: Buffer): void {
    this.assertUsable();
    const k = legalClearableKey(key, this.keyLimit);
    if (!k) return;
    this.writes.clear(k);
    this.triggerOwnWatches(k);
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
    checkedAtomicOp(op);
    const k = writableKey(key, this.keyLimit);
    const operand = checkedValue(param);
    this.writes.atomic(op, k, operand);
    this.triggerOwnWatches(k);
  }

  /**
   * `add(key, delta)` of a number: the operand is made here, so it is kept, not copied again.
   */
  override add(key: Bytes, delta: number | bigint | Bytes): void {
    if (typeof delta !== 'number' && typeof delta !== 'bigint') return super.add(key, delta);
    const operand = int64LE(delta);
    this.assertUsable();
    const k = writableKey(key, this.keyLimit);
    this.writes.atomic('add', k, operand);
    this.triggerOwnWatches(k);
  }

  /**
   * `add(key, operand)` of Buffers the caller hands over, as {@link setHandedOver} takes them: kept
   * instead of copied. The operand may be one the caller shares between calls (a constant): `add`
   * never stores its operand itself (see `applyAtomicOp`). Same checks and errors as `add`. Layers
   * reach it through `addHandedOver`.
   */
  addHandedOver(key: Buffer, operand: Buffer): void {
    this.assertUsable();
    const k = legalWritableKey(key, this.keyLimit);
    this.writes.atomic('add', k, legalValue(operand));
    this.triggerOwnWatches(k);
  }

  /**
   * Until commit the final key is unknown: reads of the keys it may become (from the read version's
   * stamp, or from zero before any read, up to the all-0xff stamp) fail with accessed_unreadable (1036),
   * as in FDB. Limits apply to the arguments as given, offset suffix included, as FDB checks them.
   */
  setVersionstampedKey(keyWithOffset: Bytes, value: Bytes): void {
    this.assertUsable();
    this.writeVersionstampedKey(writableKey(keyWithOffset, this.keyLimit), checkedValue(value));
  }

  /**
   * {@link setVersionstampedKey} of Buffers the caller hands over, as {@link setHandedOver} takes them:
   * kept instead of copied. Same checks and errors. Layers reach it through `setVersionstampedKeyHandedOver`.
   */
  setVersionstampedKeyHandedOver(keyWithOffset: Buffer, value: Buffer): void {
    this.assertUsable();
    this.writeVersionstampedKey(legalWritableKey(keyWithOffset, this.keyLimit), legalValue(value));
  }

  private writeVersionstampedKey(keyWithOffset: Buffer, value: Buffer): void {
    const template = parseOwnedVersionstampTemplate(keyWithOffset);
    const readVersion = this.knownReadVersion();
    this.writes.setVersionstampedKey(template, value, readVersion !== undefined ? readVersion + 1n : 0n);
  }

  /** Until commit the value is unknown: reading the key fails with accessed_unreadable (1036), as in FDB. */
  setVersionstampedValue(key: Bytes, valueWithOffset: Bytes): void {
    this.assertUsable();
    const k = writableKey(key, this.keyLimit);
    const template = parseOwnedVersionstampTemplate(checkedValue(valueWithOffset));
    this.writes.setVersionstampedValue(k, template);
    this.triggerOwnWatches(k, undefined, true);
  }

  /**
   * {@link setVersionstampedValue} of a key the caller hands over, as {@link setHandedOver} takes it,
   * with a template checked once (`prepareVersionstampTemplate`): nothing is copied or parsed. Same
   * checks and errors for the key. Layers reach it through `setVersionstampedValueHandedOver`.
   */
  setVersionstampedValueHandedOver(key: Buffer, template: VersionstampTemplate): void {
    this.assertUsable();
    const k = legalWritableKey(key, this.keyLimit);
    this.writes.setVersionstampedValue(k, template);
    this.triggerOwnWatches(k, undefined, true);
  }

  /** A versionstamped value at the reserved key, past the checks that keep users out of `\xff`. */
  bumpMetadataVersion(): void {
    this.assertUsable();
    this.writes.setVersionstampedValue(METADATA_VERSION_KEY, parseVersionstampTemplate(METADATA_VERSION_BUMP));
  }

  getVersionstamp(): Promise<Buffer> {
    try {
      this.assertUsable();
    } catch (err) {
      return rejectOnNextTurn(err);
    }
    this.versionstamp ??= new Deferred<Buffer>();
    return this.versionstamp.promise;
  }

  /**
   * The watch compares against the key's value as this transaction sees it now (its read version plus
   * its own writes). A later write of this transaction that changes the value fires it at once; other
   * transactions' changes count from this transaction's commit. Errors (2004, 2102, 1025, 2017, 1007)
   * reject the watch's promise instead of being thrown, as FDB reports them through the watch's future;
   * too_many_watches (1032) is reported the same way when the commit activates the watch.
   */
  watch(key: Bytes): Watch {
    const k = Buffer.from(toBuffer(key));
    try {
      this.assertUsable();
      if (this.storeOnly) throw kvError('watches_disabled');
      if (compareBytes(k, MAX_USER_KEY) >= 0) throw outsideLegalRange(k);
      if (k.length > this.maxKeyBytes) throw keyTooLarge(k, this.keyLimit);
      const watch = new KeyWatch(k, this.readView().valueForWatch(k));
      (this.pendingWatches ??= []).push(watch);
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

  /**
   * {@link addReadConflictRange} of Buffers the caller hands over: it never modifies them afterwards (a
   * queue's cached area bounds), so the transaction keeps them instead of copies. Same checks, errors
   * and conflict range. Layers reach it through `addReadConflictRangeHandedOver`.
   */
  addReadConflictRangeHandedOver(begin: Buffer, end: Buffer): void {
    // A non-empty range of keys short enough to exist, ending at or before '\xff', is what
    // legalRange copies unchanged; anything else (errors, empty or shortened ranges) takes its path.
    if (
      end.length > Limits.maxKeyBytes ||
      begin.length > Limits.maxKeyBytes ||
      compareBytes(begin, end) >= 0 ||
      compareBytes(end, MAX_USER_KEY) > 0
    ) {
      return this.addReadConflictRange(begin, end);
    }
    this.assertUsable();
    this.addReadConflict(begin, end);
  }

  /**
   * `addReadConflictRange(key, key + '\x00')` with one copy of `key` for both ends, as a point read
   * records its conflict: structures add one per key they rely on (a queue pop, two).
   */
  override addReadConflictKey(key: Bytes): void {
    const k = toBuffer(key);
    // Keys at or past '\xff' (errors) and keys too long to exist (no conflict) take the general path.
    if (k.length > Limits.maxKeyBytes || compareBytes(k, MAX_USER_KEY) >= 0) return super.addReadConflictKey(key);
    this.assertUsable();
    if (this.visibleWrites.cleared.isEmpty) {
      (this.pointReadEnds ??= []).push(keyAfter(k));
      this.readConflictBytes += 2 * k.length + 1;
      return;
    }
    const end = keyAfter(k);
    this.addReadConflict(end.subarray(0, k.length), end);
  }

  addWriteConflictRange(begin: Bytes, end: Bytes): void {
    this.assertUsable();
    const range = legalRange(begin, end);
    if (range) this.writes.addConflictRange(range.begin, range.end);
  }

  /** Bytes of mutations plus read and write conflict ranges (FDB's estimate, without its struct overheads). */
  getApproximateSize(): Promise<number> {
    return settleOnNextTurn(() => this.approximateSize());
  }

  /**
   * What {@link getApproximateSize} resolves to, now: for a layer that checks a batch's size between
   * calls (through `approximateSizeNow` in `hand-over.ts`, not part of the contract).
   */
  approximateSizeNow(): number {
    return this.approximateSize();
  }

  // ---- lifecycle

  getCommittedVersion(): bigint {
    return this.committedVersion;
  }

  /**
   * Retryable KvError: waits this transaction's backoff, then resets it (keeping the backoff). Anything
   * else, or a cancelled transaction: rejects (with `err`, or transaction_cancelled), on a later turn.
   */
  onError(err: unknown): Promise<void> {
    return this.retryAfter(err).catch(async (final: unknown) => {
      await nextTurn();
      throw final;
    });
  }

  private async retryAfter(err: unknown): Promise<void> {
    this.assertNotCancelled();
    if (!(err instanceof KvError) || !err.retryable) {
      this.discard(err);
      throw err;
    }
    this.releaseReads();
    await (this.backoff ??= new Backoff()).wait();
    // The transaction may have been cancelled while waiting.
    this.assertNotCancelled();
    this.discard(err);
    this.attempt++;
  }

  reset(): void {
    this.attempt++;
    this.discard(kvError('transaction_cancelled', 'the transaction was reset'));
    this.backoff?.reset();
  }

  cancel(): void {
    if (this.state === 'cancelled') return;
    this.failPending(kvError('transaction_cancelled'));
    this.state = 'cancelled';
    this.releaseReads();
  }

  // ---- for the engines' commits

  /** Starts a commit: the transaction is committing from now on. Returns the attempt's generation. */
  protected startCommit(): number {
    this.assertUsable();
    this.state = 'committing';
    return this.generation;
  }

  /**
   * Whether the event loop has turned since this attempt began: an attempt that has awaited one of its
   * reads has. A read-only commit then settles without a turn of its own: it sends nothing (as on a
   * cluster), and the attempt has already yielded to timers and I/O, so a loop of transactions still
   * yields once per iteration.
   */
  protected turnedThisAttempt(): boolean {
    return turnsTaken() !== this.attemptTurn;
  }

  /** Whether the commit of attempt `generation` is still running (not reset or cancelled meanwhile). */
  protected stillCommitting(generation: number): boolean {
    return this.generation === generation && this.state === 'committing';
  }

  /** @throws KvError transaction_cancelled (1025) unless the commit of attempt `generation` is still running */
  protected assertStillCommitting(generation: number, message: string): void {
    if (!this.stillCommitting(generation)) throw kvError('transaction_cancelled', message);
  }

  /** The transaction's size, to commit. @throws KvError transaction_too_large (2101) */
  protected committableSize(): number {
    const size = this.approximateSize();
    if (size > Limits.maxTransactionBytes) {
      throw kvError('transaction_too_large', `${size} bytes, the limit is ${Limits.maxTransactionBytes}`);
    }
    return size;
  }

  /** Records a successful commit; returns the watches it activates. `versionstamp`: absent for a read-only commit. */
  protected committed(version: bigint, versionstamp: Buffer | (() => Buffer) | undefined): readonly KeyWatch[] {
    this.state = 'committed';
    this.committedVersion = version;
    // A function: the engine makes the versionstamp only if `getVersionstamp` was called.
    if (versionstamp) this.versionstamp?.resolve(typeof versionstamp === 'function' ? versionstamp() : versionstamp);
    else this.versionstamp?.reject(kvError('no_commit_version', 'the transaction committed without writes'));
    const watches = this.pendingWatches ?? NO_WATCHES;
    this.pendingWatches = undefined;
    return watches;
  }

  /** Records a failed commit. */
  protected commitFailed(err: unknown): void {
    this.state = 'failed';
    this.failPending(err);
  }

  // ---- internals

  protected assertNotCancelled(): void {
    if (this.state === 'cancelled') throw kvError('transaction_cancelled');
  }

  /** @throws KvError 1025, 2017 unless the transaction is active; from now on the attempt counts as used */
  protected assertUsable(): void {
    this.assertActive();
    this.used = true;
  }

  private assertActive(): void {
    if (this.state === 'active') return;
    if (this.state === 'cancelled') throw kvError('transaction_cancelled');
    throw kvError('used_during_commit', 'the transaction was committed; reset it to use it again');
  }

  private readValue(key: Bytes, snapshot: boolean): Buffer | undefined {
    this.assertUsable();
    const k = readableKey(key, this.keyLimit);
    if (!k) return undefined;
    return this.readStoredKey(k, snapshot);
  }

  /** A point read of a checked key (or the metadata version key), recording its conflict unless `snapshot`. */
  private readStoredKey(k: Buffer, snapshot: boolean): Buffer | undefined {
    this.assertUsable();
    const view = this.readView();
    const value = view.get(k);
    if (!snapshot && view.lastGetReadStore && this.isNewPointConflict(k)) {
      (this.pointReadEnds ??= []).push(keyAfter(k));
      this.readConflictBytes += 2 * k.length + 1;
    }
    return value === undefined ? undefined : this.pointValue(value);
  }

  /** False when `key`'s point conflict is known to be recorded already (checked past a few conflicts). */
  private isNewPointConflict(key: Buffer): boolean {
    if (this.readRanges.length + (this.pointReadEnds?.length ?? 0) < 4) return true;
    this.pointConflicts ??= new Set();
    const id = key.toString('latin1');
    if (this.pointConflicts.has(id)) return false;
    this.pointConflicts.add(id);
    return true;
  }

  private readKey(selector: KeySelector, snapshot: boolean): Buffer {
    this.assertUsable();
    const key = selectorKey(selector);
    return Buffer.from(this.resolveSelector(key, selector, snapshot));
  }

  /** Resolves a selector over the merged view, recording the keys it examined as a read conflict. */
  private resolveSelector(key: Buffer, selector: KeySelector, snapshot: boolean): Buffer {
    if (!Number.isInteger(selector.offset)) {
      throw kvError('client_invalid_operation', `key selector offset ${selector.offset} is not an integer`);
    }
    const view = this.selectorView(selector.offset);
    const resolved = view.resolveSelector(key, selector.orEqual, selector.offset);
    view.assertReadable(resolved.examined);
    if (!snapshot) this.addReadConflict(resolved.examined.begin, resolved.examined.end);
    return resolved.key;
  }

  /**
   * Both ends of a range read as keys, or `undefined` when the range is empty. `transient`: the range is
   * used only during this call (a snapshot read of all of it records no conflict), so Buffer bounds
   * are checked but not copied.
   */
  private resolveRange(begin: Bytes | KeySelector, end: Bytes | KeySelector, snapshot: boolean, transient = false): KeyRange | undefined {
    const beginKey = transient ? transientBoundKey(begin) : boundKey(begin);
    const endKey = transient ? transientBoundKey(end) : boundKey(end);
    const b = this.resolveBound(beginKey, begin, snapshot);
    const e = this.resolveBound(endKey, end, snapshot);
    return compareBytes(b, e) < 0 ? { begin: b, end: e } : undefined;
  }

  private resolveBound(key: Buffer, bound: Bytes | KeySelector, snapshot: boolean): Buffer {
    if (!isKeySelector(bound)) return key;
    if (bound.offset === 1) return selectorBoundary(key, bound.orEqual);
    return this.resolveSelector(key, bound, snapshot);
  }

  private rangeIterable(
    begin: Bytes | KeySelector,
    end: Bytes | KeySelector,
    options: RangeOptions | undefined,
    snapshot: boolean,
  ): AsyncIterable<KeyValue> {
    return {
      [Symbol.asyncIterator]: () => new RangeStream(() => this.startRange(begin, end, options ?? {}, snapshot)),
    };
  }

  /**
   * The first batch of a streamed range read, and the function reading each following one. Each batch
   * is read synchronously and records its own read conflict, so a consumer that stops early conflicts
   * only on what was fetched; writes made between batches are seen by the following ones.
   */
  private startRange(begin: Bytes | KeySelector, end: Bytes | KeySelector, options: RangeOptions, snapshot: boolean): RangeBatch {
    this.assertUsable();
    const generation = this.generation;
    const limit = rangeLimit(options.limit);
    const range = this.resolveRange(begin, end, snapshot);
    if (!range) return { items: [], next: undefined };
    const batches = new RangeBatches(range, limit, options);
    const read = (): RangeBatch => {
      const { begin: from, end: to, reverse } = batches;
      const batch = this.readRangeBatch(from, to, batches.batchLimit, reverse, snapshot);
      return { items: batch.items, next: batches.advance(batch.items, batch.limited) ? following : undefined };
    };
    const following = (): RangeBatch => {
      if (this.generation !== generation) {
        throw kvError('transaction_cancelled', 'the transaction was reset during a range read');
      }
      this.assertUsable();
      return read();
    };
    return read();
  }

  /**
   * `handedOver`: the caller never modifies Buffer bounds (see {@link getRangeAllHandedOver}); a
   * snapshot read keeps no bound, so it copies none either.
   */
  private readRangeAll(
    begin: Bytes | KeySelector,
    end: Bytes | KeySelector,
    options: RangeOptions | undefined,
    snapshot: boolean,
    handedOver: boolean,
  ): KeyValue[] {
    this.assertUsable();
    const limit = rangeLimit(options?.limit);
    const range = this.resolveRange(begin, end, snapshot, snapshot || handedOver);
    if (!range) return [];
    return this.readRangeBatch(range.begin, range.end, limit, options?.reverse === true, snapshot).items;
  }

  /**
   * Up to `limit` merged pairs of `[begin, end)`. The read conflict covers what the result proves: the
   * whole range, or with the limit reached, the range up to and including the last key returned.
   */
  private readRangeBatch(begin: Buffer, end: Buffer, limit: number, reverse: boolean, snapshot: boolean): { items: KeyValue[]; limited: boolean } {
    const items: KeyValue[] = [];
    const view = this.collectRange(begin, end, limit, reverse, items);
    const proven = provenRange(begin, end, items, limit, reverse);
    view.assertReadable(proven);
    if (!snapshot) this.addReadConflict(proven.begin, proven.end);
    return { items, limited: items.length >= limit };
  }

  /**
   * Records a read conflict, minus the parts this transaction cleared (they do not depend on the
   * store, unless read-your-writes is disabled).
   */
  private addReadConflict(begin: Buffer, end: Buffer): void {
    if (compareBytes(begin, end) >= 0) return;
    const cleared = this.visibleWrites.cleared;
    if (cleared.isEmpty) {
      this.readRanges.push({ begin, end });
      this.readConflictBytes += begin.length + end.length;
      return;
    }
    for (const part of cleared.subtractFrom(begin, end)) {
      this.readRanges.push(part);
      this.readConflictBytes += part.begin.length + part.end.length;
    }
  }

  /**
   * Fires this transaction's own watches on `begin` (or in `[begin, end)`) whose value its writes just
   * changed; all of them there if the value cannot be read (FDB's watches may fire spuriously too).
   */
  private triggerOwnWatches(begin: Buffer, end?: Buffer, valueUnknown = false): void {
    if (this.pendingWatches === undefined) return;
    const view = this.watchView();
    for (const watch of this.pendingWatches) {
      if (watch.isSettled) continue;
      const inside = end ? compareBytes(watch.key, begin) >= 0 && compareBytes(watch.key, end) < 0 : watch.key.equals(begin);
      if (!inside) continue;
      if (valueUnknown || !view || !sameValue(watch.value, view.valueForWatch(watch.key))) watch.trigger();
    }
  }

  private approximateSize(): number {
    return this.writes.bytes + this.readConflictBytes;
  }

  /** Rejects what waits on this attempt's commit: its watches and its versionstamp. */
  private failPending(reason: unknown): void {
    if (this.pendingWatches !== undefined) for (const watch of this.pendingWatches) watch.fail(reason);
    this.pendingWatches = undefined;
    this.versionstamp?.reject(reason);
  }

  /** Forgets everything of the current attempt, failing what waits on it with `reason`. */
  private discard(reason: unknown): void {
    this.failPending(reason);
    this.discardReads();
    this.generation++;
    this.attemptTurn = turnsTaken();
    this.readsNowLeft = this.readsNowPerAttempt;
    this.state = 'active';
    this.used = false;
    this.storeOnly = undefined;
    this.writes = new WriteSet();
    this.readRanges = [];
    this.pointReadEnds = undefined;
    this.readConflictBytes = 0;
    this.pointConflicts = undefined;
    this.versionstamp = undefined;
    this.committedVersion = -1n;
  }
}
