import { TransactionShorthands } from './contract/transaction-shorthands';
import type {
  AtomicOp,
  Bytes,
  Engine,
  KeySelector,
  KeyValue,
  RangeOptions,
  ReadTransaction,
  Transaction,
  Watch,
} from './contract/types';

/**
 * An {@link Engine} that passes everything to another one and counts what the layers above ask of
 * it: keys read and written, and transactions. The demo wraps its engine in one to print what each
 * step cost, in the units the README's cost tables use, without knowing the layers' key layouts.
 */

/** What was asked of the engine since the counts were last taken. */
export interface KvCounts {
  /** Keys returned to the layer: point reads that found a value plus pairs of range reads. */
  keysRead: number;
  /** Point reads (`get`), found or not. */
  pointReads: number;
  /** Range reads (`getRange`, `getRangeAll`). */
  rangeReads: number;
  /** Keys written: sets, atomic operations and versionstamped writes (range clears are not keys). */
  keysWritten: number;
  /** Single-key and range clears. */
  clears: number;
  /** Transactions committed (read-only ones included). */
  commits: number;
  /** Attempts that failed with a retryable error and ran again (`onError`). */
  retries: number;
}

function zero(): KvCounts {
  return { keysRead: 0, pointReads: 0, rangeReads: 0, keysWritten: 0, clears: 0, commits: 0, retries: 0 };
}

export class CountingEngine implements Engine {
  readonly name: string;
  private counts = zero();

  constructor(readonly inner: Engine) {
    this.name = inner.name;
  }

  createTransaction(): Transaction {
    return new CountingTransaction(this.inner.createTransaction(), this.counts);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  /** The counts since creation or the last `take`, and starts counting afresh. */
  take(): KvCounts {
    const taken = { ...this.counts };
    Object.assign(this.counts, zero());
    return taken;
  }
}

class CountingTransaction extends TransactionShorthands implements Transaction {
  private directView: ReadTransaction | undefined;
  private snapshotView: ReadTransaction | undefined;

  constructor(
    private readonly inner: Transaction,
    private readonly counts: KvCounts,
  ) {
    super();
  }

  get attempt(): number {
    return this.inner.attempt;
  }

  private counted(target: ReadTransaction): ReadTransaction {
    const counts = this.counts;
    return {
      async get(key) {
        counts.pointReads++;
        const value = await target.get(key);
        if (value !== undefined) counts.keysRead++;
        return value;
      },
      getKey: (selector) => target.getKey(selector),
      getRange(begin, end, options) {
        counts.rangeReads++;
        const source = target.getRange(begin, end, options);
        return {
          async *[Symbol.asyncIterator]() {
            for await (const pair of source) {
              counts.keysRead++;
              yield pair;
            }
          },
        };
      },
      async getRangeAll(begin, end, options) {
        counts.rangeReads++;
        const pairs = await target.getRangeAll(begin, end, options);
        counts.keysRead += pairs.length;
        return pairs;
      },
      getReadVersion: () => target.getReadVersion(),
    };
  }

  private get direct(): ReadTransaction {
    return (this.directView ??= this.counted(this.inner));
  }

  get(key: Bytes): Promise<Buffer | undefined> {
    return this.direct.get(key);
  }
  getKey(selector: KeySelector): Promise<Buffer> {
    return this.inner.getKey(selector);
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
  snapshot(): ReadTransaction {
    return (this.snapshotView ??= this.counted(this.inner.snapshot()));
  }

  set(key: Bytes, value: Bytes): void {
    this.inner.set(key, value);
    this.counts.keysWritten++;
  }
  clear(key: Bytes): void {
    this.inner.clear(key);
    this.counts.clears++;
  }
  clearRange(begin: Bytes, end: Bytes): void {
    this.inner.clearRange(begin, end);
    this.counts.clears++;
  }

  atomicOp(op: AtomicOp, key: Bytes, param: Bytes): void {
    this.inner.atomicOp(op, key, param);
    this.counts.keysWritten++;
  }
  setVersionstampedKey(keyWithOffset: Bytes, value: Bytes): void {
    this.inner.setVersionstampedKey(keyWithOffset, value);
    this.counts.keysWritten++;
  }
  setVersionstampedValue(key: Bytes, valueWithOffset: Bytes): void {
    this.inner.setVersionstampedValue(key, valueWithOffset);
    this.counts.keysWritten++;
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
    return this.inner.getApproximateSize();
  }

  async commit(): Promise<void> {
    await this.inner.commit();
    this.counts.commits++;
  }
  getCommittedVersion(): bigint {
    return this.inner.getCommittedVersion();
  }
  async onError(err: unknown): Promise<void> {
    await this.inner.onError(err);
    this.counts.retries++;
  }
  reset(): void {
    this.inner.reset();
  }
  cancel(): void {
    this.inner.cancel();
  }
}
