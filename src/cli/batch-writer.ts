import { isDocumentError } from '../document/errors';
import type { Database } from '../kv/contract/database';
import { isKvError } from '../kv/contract/errors';
import type { RecordWrite } from './record-writes';

/**
 * Writes many records with as few transactions as FoundationDB's limits allow: the writes of records
 * (`record-writes.ts`: an upsert per plain document, slices of a structure's elements) are run in
 * batches, one transaction each, of about {@link TARGET_TRANSACTION_BYTES} (what FDB's documentation
 * recommends staying under; the hard limit is 10,000,000 bytes and 5 seconds).
 *
 * A batch's size in the transaction is not known before it is written (every leaf is a key that
 * repeats the document's prefix), so the writer learns the ratio of transaction bytes to JSON bytes
 * from each committed batch and sizes the next one by it. A batch that still fails with
 * `transaction_too_large` (2101) or `transaction_too_old` (1007) is split in two and each half
 * written in order; so is a batch in which the document layer rejects a write, until the write is
 * alone, and then {@link BatchWriterOptions.onRejected} decides whether to go on (without the rest of
 * that record's writes).
 *
 * The writes of one record run in order, in one transaction or across several; in one transaction,
 * the writes of different records run concurrently.
 */

/** FDB's recommended upper bound for a transaction's size. */
const TARGET_TRANSACTION_BYTES = 1_000_000;
/** A first guess of transaction bytes per JSON byte, before a batch has been measured. */
const INITIAL_RATIO = 8;
/** Documents and structure elements per transaction, at most. */
const MAX_ELEMENTS_PER_BATCH = 5_000;
/** Retries of one batch (conflicts with other writers) before its error is the import's. */
const MAX_RETRIES = 8;

export interface BatchItem<T> {
  readonly write: RecordWrite;
  /** The record the write belongs to: the caller's own data, handed back with a rejection. */
  readonly tag: T;
  /** The write's place among its record's writes (0: the first). */
  readonly part: number;
  /** Whether it is its record's last write: once it commits, the record is written. */
  readonly last: boolean;
}

export interface BatchWriterOptions<T> {
  /** Called after each commit with the number of records it completed. */
  onCommitted?(records: number): void;
  /**
   * Called when the document layer rejects a write (alone in its batch, after every write before it
   * has been written); resolves to whether to go on with the records after it.
   */
  onRejected(item: BatchItem<T>, error: Error): Promise<boolean> | boolean;
}

export class BatchWriter<T> {
  private pending: BatchItem<T>[] = [];
  private pendingBytes = 0;
  private pendingElements = 0;
  private ratio = INITIAL_RATIO;
  private stopped = false;
  /** Records a rejection ended: their later writes are dropped. */
  private readonly rejected = new Set<T>();
  /** Transactions committed. */
  transactions = 0;
  /** Records written. */
  written = 0;

  constructor(
    private readonly kv: Database,
    private readonly options: BatchWriterOptions<T>,
  ) {}

  /** Whether a rejection stopped the writer: it writes nothing more. */
  get isStopped(): boolean {
    return this.stopped;
  }

  /** Queues the writes of one record; writes batches as they fill. */
  async add(tag: T, writes: readonly RecordWrite[]): Promise<void> {
    for (let part = 0; part < writes.length && !this.stopped && !this.rejected.has(tag); part++) {
      const write = writes[part];
      if (write.afterCommit) await this.flush();
      this.pending.push({ write, tag, part, last: part === writes.length - 1 });
      this.pendingBytes += write.bytes;
      this.pendingElements += write.elements;
      if (this.pendingBytes * this.ratio >= TARGET_TRANSACTION_BYTES || this.pendingElements >= MAX_ELEMENTS_PER_BATCH) {
        await this.flush();
      }
    }
  }

  /** Writes what is queued. */
  async flush(): Promise<void> {
    const batch = this.pending;
    this.pending = [];
    this.pendingBytes = 0;
    this.pendingElements = 0;
    if (batch.length > 0 && !this.stopped) this.stopped = !(await this.write(batch));
  }

  /** Writes `batch` in order, splitting it as needed; false once a rejection says to stop. */
  private async write(batch: BatchItem<T>[]): Promise<boolean> {
    batch = batch.filter((item) => !this.rejected.has(item.tag));
    if (batch.length === 0) return true;
    try {
      await this.commit(batch);
      return true;
    } catch (err) {
      const tooBig = isKvError(err, 'transaction_too_large') || isKvError(err, 'transaction_too_old');
      if (!tooBig && !isDocumentError(err)) throw err;
      if (batch.length === 1) {
        this.rejected.add(batch[0].tag);
        return this.options.onRejected(batch[0], err);
      }
      if (tooBig) this.ratio *= 2;
      const half = Math.ceil(batch.length / 2);
      return (await this.write(batch.slice(0, half))) && this.write(batch.slice(half));
    }
  }

  private async commit(batch: BatchItem<T>[]): Promise<void> {
    let size = 0;
    const [first, ...rest] = batch;
    // The writes of each record in order; the records concurrently.
    const byRecord = new Map<T, RecordWrite[]>();
    for (const item of rest) {
      const writes = byRecord.get(item.tag);
      if (writes === undefined) byRecord.set(item.tag, [item.write]);
      else writes.push(item.write);
    }
    await this.kv.transact(
      async (tr) => {
        // The first write may create the collection; the others then find it.
        await first.write.run(tr);
        await Promise.all(
          [...byRecord.values()].map(async (writes) => {
            for (const write of writes) await write.run(tr);
          }),
        );
        size = await tr.getApproximateSize();
      },
      { maxRetries: MAX_RETRIES },
    );
    const bytes = batch.reduce((sum, item) => sum + item.write.bytes, 0);
    if (bytes > 0 && size > 0) this.ratio = size / bytes;
    const completed = batch.filter((item) => item.last).length;
    this.transactions++;
    this.written += completed;
    this.options.onCommitted?.(completed);
  }
}
