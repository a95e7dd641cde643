import { isKvError, kvError } from '../contract/errors';
import { Limits } from '../contract/limits';
import { Deferred } from '../client/deferred';
import type { CommitOutcome, CommitRequest } from './commit-batch';
import type { LmdbStore, StoreWriter } from './lmdb-store';
import { lmdbCode, writeFailure } from './store-failure';

/**
 * When a commit resolves. LMDB commits without a flush in both modes (`MDB_NOSYNC`, see `LmdbStore`);
 * the modes differ in when the store flushes:
 * - `'sync'`: once its batch is flushed to disk (an fdatasync on a thread, after the LMDB commit), so
 *   it survives a crash of the process, of the OS, or a power loss (as far as the disk honours
 *   flushes). The next batch commits while one is flushed. Other transactions may read a commit a
 *   little before its flush completes.
 * - `'fast'`: once its LMDB transaction has committed and is visible to every process: it survives a
 *   crash of the process (the file's pages are in the OS page cache), but a crash of the OS or a power
 *   loss may lose the commits of about the last second (the store flushes about once a second while
 *   committing, and when it closes).
 *
 * Without a flush between them, LMDB's writes of a commit's pages and of its meta page reach the disk
 * in any order, so a crash of the OS or a power loss while commits are not yet flushed may also leave
 * the file damaged, in either mode (for `'sync'`, only by commits that had not resolved):
 * `checkLmdbStore` finds structural damage. See docs/reliability.md.
 *
 * Both modes run on the same store at once (the mode is each engine's).
 */
export type Durability = 'sync' | 'fast';

/** A batch takes at most this many transactions: batch order is 2 bytes, and one write stays short. */
const MAX_BATCH_TRANSACTIONS = 1024;
/** ... and, beyond its first transaction, at most this many bytes of them. */
const MAX_BATCH_BYTES = Limits.maxTransactionBytes;

interface PendingCommit {
  readonly request: CommitRequest;
  readonly outcome: Deferred<CommitOutcome>;
}

/** Thrown out of a write transaction by the batch itself: LMDB rolled it back, nothing was applied. */
class BatchFailed extends Error {
  constructor(cause: unknown) {
    super('the batch was rolled back', { cause });
  }
}

/**
 * Group commit: the commits one process makes concurrently share LMDB write transactions, so that their
 * throughput is not bounded by one flush per transaction.
 *
 * While one batch is being written and flushed, the commits that arrive queue up; then the next batch
 * (all of them) starts at once. Each commit resolves as its {@link Durability} says. A batch that fails
 * before committing applied nothing: its commits fail with internal_error (4100) for an error of ours,
 * or with the store's typed error when LMDB failed the write (the disk is full: file_not_writable, 1514; see
 * `writeFailure`); one whose flush fails may not be on disk: commit_unknown_result (1021).
 */
export class GroupCommit {
  private queue: PendingCommit[] = [];
  private draining: Promise<void> | undefined;
  /** Commits resolved when their flush completes, for close() to wait on. */
  private readonly settling = new Set<Promise<void>>();

  constructor(
    private readonly store: LmdbStore,
    private readonly durability: Durability,
    /** Resolves one batch inside the write transaction; see `commitBatch`. */
    private readonly resolve: (writer: StoreWriter, requests: readonly CommitRequest[]) => CommitOutcome[],
    /** Called when a write transaction failed after `resolve` ran, so that its caches can be dropped. */
    private readonly onWriteFailed: () => void,
    /** Called after each batch that committed something is visible. */
    private readonly onCommitted: () => void,
  ) {}

  /** Queues a commit; resolves with its outcome once it is as durable as the engine's mode requires. */
  submit(request: CommitRequest): Promise<CommitOutcome> {
    const outcome = new Deferred<CommitOutcome>();
    this.queue.push({ request, outcome });
    // Start on the next turn of the event loop, so the commits made in this one share the batch.
    this.draining ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.drain());
    return outcome.promise;
  }

  /**
   * The oldest read version of a queued commit that a batch will check (one with read conflicts), if
   * any: one pass over the queue, which holds the commits made while a batch was written.
   */
  oldestQueuedRead(): bigint | undefined {
    let oldest: bigint | undefined;
    for (const { request } of this.queue) {
      const version = request.readVersion;
      if (version !== undefined && request.readConflictCount > 0 && (oldest === undefined || version < oldest)) oldest = version;
    }
    return oldest;
  }

  /** Resolves once every queued commit has been written and settled. */
  async idle(): Promise<void> {
    while (this.draining || this.settling.size > 0) {
      await this.draining;
      await Promise.all([...this.settling]);
    }
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.takeBatch();
      const requests = batch.map((pending) => pending.request);
      let outcomes: CommitOutcome[];
      let attempted: CommitOutcome[] | undefined;
      try {
        outcomes = await this.store.write((writer) => {
          try {
            return (attempted = this.resolve(writer, requests));
          } catch (err) {
            throw new BatchFailed(err);
          }
        });
      } catch (err) {
        this.onWriteFailed();
        if (err instanceof BatchFailed) {
          // LMDB's own errors inside the transaction (it carries their codes) are the store's failures.
          const error =
            lmdbCode(err.cause) === undefined
              ? kvError('internal_error', `the batch was rolled back: ${String(err.cause)}`)
              : writeFailure(err.cause, this.store.path);
          for (const pending of batch) pending.outcome.reject(error);
        } else {
          this.failed(batch, attempted, err);
        }
        continue;
      }
      const anyCommitted = outcomes.some((outcome) => outcome.committed);
      if (anyCommitted) this.onCommitted();
      if (this.durability === 'fast' || !anyCommitted) {
        batch.forEach((pending, i) => pending.outcome.resolve(outcomes[i]));
        continue;
      }
      const settled = this.store.flushed().then(
        () => batch.forEach((pending, i) => pending.outcome.resolve(outcomes[i])),
        (err: unknown) => {
          const error = kvError('commit_unknown_result', `the LMDB flush failed: ${String(err)}`);
          batch.forEach((pending, i) => (outcomes[i].committed ? pending.outcome.reject(error) : pending.outcome.resolve(outcomes[i])));
        },
      );
      this.settling.add(settled);
      void settled.then(() => this.settling.delete(settled));
    }
    this.draining = undefined;
  }

  /**
   * Settles a batch whose LMDB transaction failed. Should LMDB report a failure after the transaction
   * became visible, the batch's record in the conflict log shows it committed: its commits fail with
   * commit_unknown_result (1021), and the transactions that did not commit keep their outcomes.
   * Otherwise nothing was applied, and each commit fails with the store's error (the disk is full:
   * file_not_writable, 1514; see `writeFailure`).
   */
  private failed(batch: readonly PendingCommit[], attempted: readonly CommitOutcome[] | undefined, err: unknown): void {
    const version = attempted?.find((outcome) => outcome.committed)?.version;
    if (version === undefined || !this.isInStore(version)) {
      const error = isKvError(err) ? err : kvError('commit_unknown_result', `the LMDB commit failed: ${String(err)}`);
      for (const pending of batch) pending.outcome.reject(error);
      return;
    }
    const error = kvError('commit_unknown_result', `committed, but LMDB reported a failure: ${String(err)}`);
    batch.forEach((pending, i) => (attempted![i].committed ? pending.outcome.reject(error) : pending.outcome.resolve(attempted![i])));
  }

  /** Whether the batch of commit version `version` is in the store; true when that cannot be read. */
  private isInStore(version: bigint): boolean {
    try {
      const snapshot = this.store.snapshot();
      try {
        return snapshot.conflictRecords(version - 1n, 1)[0]?.version === version;
      } finally {
        snapshot.release();
      }
    } catch {
      return true;
    }
  }

  private takeBatch(): PendingCommit[] {
    let count = 0;
    let bytes = 0;
    while (count < this.queue.length && count < MAX_BATCH_TRANSACTIONS) {
      const next = this.queue[count].request.bytes;
      if (count > 0 && bytes + next > MAX_BATCH_BYTES) break;
      bytes += next;
      count++;
    }
    return this.queue.splice(0, count);
  }
}
