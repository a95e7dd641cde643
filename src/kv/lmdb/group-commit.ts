import { kvError } from '../contract/errors';
import { Limits } from '../contract/limits';
import { Deferred } from '../client/deferred';
import type { CommitOutcome, CommitRequest } from './commit-batch';
import type { LmdbStore, StoreWriter } from './lmdb-store';

/**
 * When a commit resolves:
 * - `'sync'`: once its LMDB transaction is flushed to disk (fdatasync), so it survives a crash of the
 *   process, of the OS, or a power loss (as far as the disk honours flushes). Other transactions may
 *   read it a little earlier, between LMDB's commit and the flush: if the OS crashes in that window
 *   the commit is lost, and so is every later commit (they are flushed after it).
 * - `'fast'`: once its LMDB transaction has committed and is visible to every process, before the
 *   flush, which follows in the background. It survives a crash of the process, but a crash of the OS
 *   or a power loss may lose the last commits (whole ones: the store stays consistent).
 *
 * Both modes run on the same store at once (the mode is each engine's). On Windows, where the `lmdb`
 * package flushes inside the commit, `'fast'` waits for the flush too.
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
 * While one batch is being written, the commits that arrive queue up; when its LMDB transaction has
 * committed, the next batch (all of them) starts at once, and the flush of the first overlaps with it
 * (LMDB's overlapping sync). Each commit resolves as its {@link Durability} says. A batch that fails
 * before committing applied nothing: its commits fail with internal_error (4100); one whose commit or
 * flush fails may or may not be on disk: commit_unknown_result (1021).
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
      try {
        outcomes = await this.store.write((writer) => {
          try {
            return this.resolve(writer, requests);
          } catch (err) {
            throw new BatchFailed(err);
          }
        });
      } catch (err) {
        this.onWriteFailed();
        const error =
          err instanceof BatchFailed
            ? kvError('internal_error', `the batch was rolled back: ${String(err.cause)}`)
            : kvError('commit_unknown_result', `the LMDB commit failed: ${String(err)}`);
        for (const pending of batch) pending.outcome.reject(error);
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
