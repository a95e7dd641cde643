import type { Collection } from '../collection';
import { isDocumentError } from '../document/errors';
import type { DocId, JsonValue } from '../document/types';
import type { Database } from '../kv/contract/database';
import { isKvError } from '../kv/contract/errors';

/**
 * Writes many documents with as few transactions as FoundationDB's limits allow: documents are
 * upserted in batches, one transaction each, of about {@link TARGET_TRANSACTION_BYTES} (what FDB's
 * documentation recommends staying under; the hard limit is 10,000,000 bytes and 5 seconds).
 *
 * A batch's size in the transaction is not known before it is written (every leaf is a key that
 * repeats the document's prefix), so the writer learns the ratio of transaction bytes to JSON bytes
 * from each committed batch and sizes the next one by it. A batch that still fails with
 * `transaction_too_large` (2101) or `transaction_too_old` (1007) is split in two and each half
 * written in order; so is a batch in which the document layer rejects a document, until the
 * document is alone, and then {@link BatchWriterOptions.onRejected} decides whether to go on.
 */

/** FDB's recommended upper bound for a transaction's size. */
const TARGET_TRANSACTION_BYTES = 1_000_000;
/** A first guess of transaction bytes per JSON byte, before a batch has been measured. */
const INITIAL_RATIO = 8;
const MAX_DOCUMENTS_PER_BATCH = 5_000;
/** Retries of one batch (conflicts with other writers) before its error is the import's. */
const MAX_RETRIES = 8;

export interface BatchItem<T> {
  readonly id: DocId;
  readonly doc: JsonValue;
  /** The size of the document's JSON text: what batches are measured in. */
  readonly bytes: number;
  /** The caller's own data, handed back with a rejection (e.g. where the record was in the input). */
  readonly tag: T;
}

export interface BatchWriterOptions<T> {
  /** Called after each commit with the number of documents it wrote. */
  onCommitted?(documents: number): void;
  /**
   * Called when the document layer rejects a document (alone in its batch, after every document
   * before it has been written); returns whether to go on with the documents after it.
   */
  onRejected(item: BatchItem<T>, error: Error): boolean;
}

export class BatchWriter<T> {
  private pending: BatchItem<T>[] = [];
  private pendingBytes = 0;
  private ratio = INITIAL_RATIO;
  private stopped = false;
  /** Transactions committed. */
  transactions = 0;
  /** Documents written. */
  written = 0;

  constructor(
    private readonly collection: Collection,
    private readonly kv: Database,
    private readonly options: BatchWriterOptions<T>,
  ) {}

  /** Whether a rejection stopped the writer: it writes nothing more. */
  get isStopped(): boolean {
    return this.stopped;
  }

  /** Queues a document; writes the batch once it is full. */
  async add(item: BatchItem<T>): Promise<void> {
    if (this.stopped) return;
    this.pending.push(item);
    this.pendingBytes += item.bytes;
    if (this.pendingBytes * this.ratio >= TARGET_TRANSACTION_BYTES || this.pending.length >= MAX_DOCUMENTS_PER_BATCH) {
      await this.flush();
    }
  }

  /** Writes what is queued. */
  async flush(): Promise<void> {
    const batch = this.pending;
    this.pending = [];
    this.pendingBytes = 0;
    if (batch.length > 0 && !this.stopped) this.stopped = !(await this.write(batch));
  }

  /** Writes `batch` in order, splitting it as needed; false once a rejection says to stop. */
  private async write(batch: BatchItem<T>[]): Promise<boolean> {
    try {
      await this.commit(batch);
      return true;
    } catch (err) {
      const tooBig = isKvError(err, 'transaction_too_large') || isKvError(err, 'transaction_too_old');
      if (!tooBig && !isDocumentError(err)) throw err;
      if (batch.length === 1) return this.options.onRejected(batch[0], err);
      if (tooBig) this.ratio *= 2;
      const half = Math.ceil(batch.length / 2);
      return (await this.write(batch.slice(0, half))) && this.write(batch.slice(half));
    }
  }

  private async commit(batch: BatchItem<T>[]): Promise<void> {
    let size = 0;
    await this.kv.transact(
      async (tr) => {
        // The first write may create the collection; the others then find it.
        const [first, ...rest] = batch;
        await this.collection.upsert(first.id, first.doc, { tr });
        await Promise.all(rest.map((item) => this.collection.upsert(item.id, item.doc, { tr })));
        size = await tr.getApproximateSize();
      },
      { maxRetries: MAX_RETRIES },
    );
    const bytes = batch.reduce((sum, item) => sum + item.bytes, 0);
    if (bytes > 0 && size > 0) this.ratio = size / bytes;
    this.transactions++;
    this.written += batch.length;
    this.options.onCommitted?.(batch.length);
  }
}
