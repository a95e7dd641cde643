import { toBuffer } from './contract/bytes';
import { isKvError } from './contract/errors';
import { TransactionShorthands } from './contract/transaction-shorthands';
import type { AtomicOp, Bytes, Engine, KeySelector, KeyValue, RangeOptions, ReadTransaction, Transaction, Watch } from './contract/types';

/**
 * An {@link Engine} that passes everything to another engine and records, per transaction attempt,
 * what it read and wrote, without knowing anything of the layers' key layouts. The CLI's demo prints
 * what each step cost from its {@link KvCounts}, in the units the README's cost tables use; cost tests
 * state how many keys an operation touches, and concurrency tests count retries.
 *
 * An attempt is one run of a transaction between its creation, `reset()` or `onError()` and the next
 * of those: `Database.transact` reuses one transaction across retries, and each retry is a new attempt.
 */

/** One range read: its bounds and options as given, and how many pairs it returned. */
export interface RangeRead {
  begin: Bytes | KeySelector;
  end: Bytes | KeySelector;
  limit: number | undefined;
  reverse: boolean;
  snapshot: boolean;
  /** Pairs returned (for an iterated range: pairs the caller consumed). */
  keys: number;
}

/** Everything one attempt did, in call order within each kind. */
export interface AttemptLog {
  /** Point reads (`get`), with whether each found a value. */
  gets: { key: Buffer; found: boolean; snapshot: boolean }[];
  /** Key selector resolutions (`getKey`). */
  getKeys: number;
  ranges: RangeRead[];
  sets: { key: Buffer; valueBytes: number }[];
  clears: Buffer[];
  clearRanges: { begin: Buffer; end: Buffer }[];
  atomicOps: { op: AtomicOp; key: Buffer }[];
  /** Keys written by `setVersionstampedValue` and `setVersionstampedKey` (the latter as templates). */
  versionstamped: Buffer[];
  /**
   * `getMetadataVersion` calls. Not among `gets`: on a cluster the value comes with the read version,
   * so it costs no round trip of its own.
   */
  metadataVersionReads: number;
  /** `bumpMetadataVersion` calls (not among `versionstamped` or `keysWritten`). */
  metadataVersionBumps: number;
  /** `getApproximateSize` calls: no round trip on a cluster, but each settles on a later turn. */
  sizeQueries: number;
  /** How the commit of this attempt ended: not at all, committed, or with a KV error code. */
  commit: 'none' | 'committed' | number;
}

/** Totals over some attempts. */
export interface KvCounts {
  attempts: number;
  /** `get` calls. */
  gets: number;
  /** `getRange`/`getRangeAll` calls. */
  rangeReads: number;
  getKeys: number;
  /** Keys returned to the layer: found point reads plus range pairs. */
  keysRead: number;
  sets: number;
  clears: number;
  clearRanges: number;
  atomicOps: number;
  versionstamped: number;
  /** `getMetadataVersion` calls (free with the read version on a cluster; not among `gets`). */
  metadataVersionReads: number;
  /** `bumpMetadataVersion` calls. */
  metadataVersionBumps: number;
  /** `getApproximateSize` calls. */
  sizeQueries: number;
  /** Every key written: sets, atomic operations and versionstamped writes. */
  keysWritten: number;
  /** Commits that failed with a retryable error and were retried (`onError` resolved). */
  retries: number;
  /** Transactions committed (read-only ones included). */
  commits: number;
  /** Commits that failed, by KV error code. */
  commitErrors: Map<number, number>;
}

function newAttempt(): AttemptLog {
  return {
    gets: [],
    getKeys: 0,
    ranges: [],
    sets: [],
    clears: [],
    clearRanges: [],
    atomicOps: [],
    versionstamped: [],
    metadataVersionReads: 0,
    metadataVersionBumps: 0,
    sizeQueries: 0,
    commit: 'none',
  };
}

/** Sums attempt logs; `retries` is the number of `onError` calls that let an attempt run again. */
export function countsOf(attempts: readonly AttemptLog[], retries = 0): KvCounts {
  const counts: KvCounts = {
    attempts: attempts.length,
    gets: 0,
    rangeReads: 0,
    getKeys: 0,
    keysRead: 0,
    sets: 0,
    clears: 0,
    clearRanges: 0,
    atomicOps: 0,
    versionstamped: 0,
    metadataVersionReads: 0,
    metadataVersionBumps: 0,
    sizeQueries: 0,
    keysWritten: 0,
    retries,
    commits: 0,
    commitErrors: new Map(),
  };
  for (const a of attempts) {
    counts.gets += a.gets.length;
    counts.rangeReads += a.ranges.length;
    counts.getKeys += a.getKeys;
    counts.keysRead += a.gets.filter((g) => g.found).length + a.ranges.reduce((n, r) => n + r.keys, 0);
    counts.sets += a.sets.length;
    counts.clears += a.clears.length;
    counts.clearRanges += a.clearRanges.length;
    counts.atomicOps += a.atomicOps.length;
    counts.versionstamped += a.versionstamped.length;
    counts.metadataVersionReads += a.metadataVersionReads;
    counts.metadataVersionBumps += a.metadataVersionBumps;
    counts.sizeQueries += a.sizeQueries;
    if (a.commit === 'committed') counts.commits++;
    else if (typeof a.commit === 'number') counts.commitErrors.set(a.commit, (counts.commitErrors.get(a.commit) ?? 0) + 1);
  }
  counts.keysWritten = counts.sets + counts.atomicOps + counts.versionstamped;
  return counts;
}

export class CountingEngine implements Engine {
  readonly name: string;
  /** Every attempt since the engine was created or last {@link take}n, in the order they started. */
  attempts: AttemptLog[] = [];
  private retries = 0;

  constructor(readonly inner: Engine) {
    this.name = `counting(${inner.name})`;
  }

  get maxKeyBytes(): number | undefined {
    return this.inner.maxKeyBytes;
  }

  createTransaction(): Transaction {
    return new CountingTransaction(this.inner.createTransaction(), this);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  /** Totals since creation or the last {@link take}, without clearing them. */
  counts(): KvCounts {
    return countsOf(this.attempts, this.retries);
  }

  /** Totals since creation or the last `take`, and starts counting afresh. */
  take(): KvCounts {
    const counts = this.counts();
    this.attempts = [];
    this.retries = 0;
    return counts;
  }

  /** Runs `action` and returns its result with what it did (counting starts afresh). */
  async measure<T>(action: () => Promise<T>): Promise<{ result: T; counts: KvCounts; attempts: AttemptLog[] }> {
    this.take();
    const result = await action();
    const attempts = this.attempts;
    return { result, counts: this.take(), attempts };
  }

  /** @internal a transaction starts an attempt */
  startAttempt(): AttemptLog {
    const attempt = newAttempt();
    this.attempts.push(attempt);
    return attempt;
  }

  /** @internal */
  countRetry(): void {
    this.retries++;
  }
}

class CountingTransaction extends TransactionShorthands implements Transaction {
  private log: AttemptLog;
  private directView: ReadTransaction | undefined;
  private snapshotView: ReadTransaction | undefined;

  constructor(
    private readonly inner: Transaction,
    private readonly engine: CountingEngine,
  ) {
    super();
    this.log = engine.startAttempt();
  }

  /** The inner transaction's: a counted transaction is the same attempt. */
  get attempt(): number {
    return this.inner.attempt;
  }

  private reads(target: ReadTransaction, snapshot: boolean): ReadTransaction {
    return {
      get: async (key) => {
        const value = await target.get(key);
        this.log.gets.push({ key: toBuffer(key), found: value !== undefined, snapshot });
        return value;
      },
      getKey: (selector) => {
        this.log.getKeys++;
        return target.getKey(selector);
      },
      getRange: (begin, end, options) => this.countedRange(target, begin, end, options, snapshot),
      getRangeAll: async (begin, end, options) => {
        const read = this.rangeRead(begin, end, options, snapshot);
        const pairs = await target.getRangeAll(begin, end, options);
        read.keys = pairs.length;
        return pairs;
      },
      getReadVersion: () => target.getReadVersion(),
      getMetadataVersion: () => {
        this.log.metadataVersionReads++;
        return target.getMetadataVersion();
      },
    };
  }

  private rangeRead(begin: Bytes | KeySelector, end: Bytes | KeySelector, options: RangeOptions | undefined, snapshot: boolean): RangeRead {
    const read: RangeRead = {
      begin,
      end,
      limit: options?.limit || undefined,
      reverse: options?.reverse ?? false,
      snapshot,
      keys: 0,
    };
    this.log.ranges.push(read);
    return read;
  }

  private countedRange(
    target: ReadTransaction,
    begin: Bytes | KeySelector,
    end: Bytes | KeySelector,
    options: RangeOptions | undefined,
    snapshot: boolean,
  ): AsyncIterable<KeyValue> {
    const read = this.rangeRead(begin, end, options, snapshot);
    const source = target.getRange(begin, end, options);
    return {
      async *[Symbol.asyncIterator]() {
        for await (const pair of source) {
          read.keys++;
          yield pair;
        }
      },
    };
  }

  private get direct(): ReadTransaction {
    this.directView ??= this.reads(this.inner, false);
    return this.directView;
  }

  get(key: Bytes): Promise<Buffer | undefined> {
    return this.direct.get(key);
  }
  getKey(selector: KeySelector): Promise<Buffer> {
    return this.direct.getKey(selector);
  }
  getRange(begin: Bytes | KeySelector, end: Bytes | KeySelector, options?: RangeOptions): AsyncIterable<KeyValue> {
    return this.direct.getRange(begin, end, options);
  }
  getRangeAll(begin: Bytes | KeySelector, end: Bytes | KeySelector, options?: RangeOptions): Promise<KeyValue[]> {
    return this.direct.getRangeAll(begin, end, options);
  }
  getReadVersion(): Promise<bigint> {
    return this.inner.getReadVersion();
  }
  getMetadataVersion(): Promise<Buffer | undefined> {
    return this.direct.getMetadataVersion();
  }
  setReadVersion(version: bigint): void {
    this.inner.setReadVersion(version);
  }
  disableReadYourWrites(): void {
    this.inner.disableReadYourWrites();
  }
  snapshot(): ReadTransaction {
    this.snapshotView ??= this.reads(this.inner.snapshot(), true);
    return this.snapshotView;
  }

  set(key: Bytes, value: Bytes): void {
    this.inner.set(key, value);
    this.log.sets.push({ key: toBuffer(key), valueBytes: toBuffer(value).length });
  }
  clear(key: Bytes): void {
    this.inner.clear(key);
    this.log.clears.push(toBuffer(key));
  }
  clearRange(begin: Bytes, end: Bytes): void {
    this.inner.clearRange(begin, end);
    this.log.clearRanges.push({ begin: toBuffer(begin), end: toBuffer(end) });
  }

  atomicOp(op: AtomicOp, key: Bytes, param: Bytes): void {
    this.inner.atomicOp(op, key, param);
    this.log.atomicOps.push({ op, key: toBuffer(key) });
  }

  setVersionstampedKey(keyWithOffset: Bytes, value: Bytes): void {
    this.inner.setVersionstampedKey(keyWithOffset, value);
    this.log.versionstamped.push(toBuffer(keyWithOffset));
  }
  setVersionstampedValue(key: Bytes, valueWithOffset: Bytes): void {
    this.inner.setVersionstampedValue(key, valueWithOffset);
    this.log.versionstamped.push(toBuffer(key));
  }
  bumpMetadataVersion(): void {
    this.inner.bumpMetadataVersion();
    this.log.metadataVersionBumps++;
  }
  getVersionstamp(): Promise<Buffer> {
    return this.inner.getVersionstamp();
  }
  watch(key: Bytes): Watch {
    return this.inner.watch(key);
  }

  addReadConflictRange(begin: Bytes, end: Bytes): void {
    this.inner.addReadConflictRange(begin, end);
  }
  addWriteConflictRange(begin: Bytes, end: Bytes): void {
    this.inner.addWriteConflictRange(begin, end);
  }
  getApproximateSize(): Promise<number> {
    this.log.sizeQueries++;
    return this.inner.getApproximateSize();
  }

  async commit(): Promise<void> {
    try {
      await this.inner.commit();
      this.log.commit = 'committed';
    } catch (err) {
      this.log.commit = isKvError(err) ? err.code : -1;
      throw err;
    }
  }
  getCommittedVersion(): bigint {
    return this.inner.getCommittedVersion();
  }
  async onError(err: unknown): Promise<void> {
    await this.inner.onError(err);
    this.engine.countRetry();
    this.log = this.engine.startAttempt();
  }
  reset(): void {
    this.inner.reset();
    this.log = this.engine.startAttempt();
  }
  cancel(): void {
    this.inner.cancel();
  }
}
