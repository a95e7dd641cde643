import { kvError } from '../contract/errors';
import type { KeyRange } from '../contract/key-range';
import { Limits } from '../contract/limits';
import type { FaultInjector } from '../engine-parts/fault-injector';
import type { KeyWatch } from '../client/key-watch';
import { commitBatch, type CommitOutcome, type CommitRequest } from './commit-batch';
import { GroupCommit, type Durability } from './group-commit';
import type { LmdbStore } from './lmdb-store';
import { RangeCache } from './range-cache';
import { ReadSnapshots, type ReadSnapshot } from './read-snapshot';
import { StoreWatches } from './store-watches';
import { StoredConflictLog } from './stored-conflict-log';

/**
 * The server side of the lmdb engine, for one engine in one process (other processes run their own
 * over the same store): it hands out read versions with their snapshots, commits through group commit
 * with conflict checks against the store's conflict log, keeps the watches, and injects faults.
 */
export class LmdbCluster {
  private readonly snapshots: ReadSnapshots;
  private readonly conflicts = new StoredConflictLog();
  private readonly commits: GroupCommit;
  private readonly watches: StoreWatches;
  private closed = false;
  /** The version and write ranges of the batch being committed, for the watches once it is. */
  private batchWrites: { version: bigint; previous: bigint; ranges: readonly KeyRange[] } | undefined;
  /** Recently read ranges (see `RangeCache`); none when the engine was opened without a cache. */
  private readonly cache: RangeCache | undefined;

  constructor(
    private readonly store: LmdbStore,
    durability: Durability,
    /** The clock in ms. */
    readonly now: () => number,
    faults: FaultInjector | undefined,
    /** Bytes the range cache may hold; 0 for none. */
    readCacheBytes: number,
  ) {
    this.cache = readCacheBytes > 0 ? new RangeCache(readCacheBytes) : undefined;
    this.snapshots = new ReadSnapshots(store, this.cache);
    this.watches = new StoreWatches(store);
    this.commits = new GroupCommit(
      store,
      durability,
      (writer, requests) => {
        this.batchWrites = undefined;
        return commitBatch(writer, requests, {
          now: this.now(),
          conflicts: this.conflicts,
          faults,
          recorded: (version, ranges, previous) => (this.batchWrites = { version, previous, ranges }),
          oldestRead: () => this.oldestRead(),
        });
      },
      () => this.conflicts.reset(),
      () => {
        const written = this.batchWrites;
        if (written === undefined) return;
        this.cache?.committed(written.previous, written.version, written.ranges);
        this.watches.committed(written.version, written.ranges);
      },
    );
  }

  /**
   * The oldest read version a transaction of this engine may still be checked at: one holding a read
   * snapshot (every transaction that has a read version holds one until its commit) or one whose
   * commit is queued (it gave its snapshot back when it committed). The batch being resolved is
   * checked before its conflict log is pruned.
   */
  private oldestRead(): bigint | undefined {
    const held = this.snapshots.oldestHeldVersion();
    const queued = this.commits.oldestQueuedRead();
    if (held === undefined) return queued;
    return queued === undefined || held < queued ? held : queued;
  }

  /** The latest committed version and its data, held for the caller until it calls `drop()` on it. */
  readSnapshot(): ReadSnapshot {
    this.assertOpen();
    return this.snapshots.take();
  }

  /** See `ReadSnapshots.takeAt`. @throws KvError 1009, 1007; client_invalid_operation (2000) once closed */
  readSnapshotAt(version: bigint): { snapshot: ReadSnapshot; supersededAt: number | undefined } {
    this.assertOpen();
    return this.snapshots.takeAt(version);
  }

  /**
   * @throws KvError transaction_too_old (1007) once the read version taken at `takenAt` is over 5 s old
   *   or its snapshot was released; client_invalid_operation (2000) once closed.
   */
  assertReadable(snapshot: ReadSnapshot, takenAt: number): void {
    this.assertOpen();
    const age = this.now() - takenAt;
    if (age > Limits.maxTransactionAgeMs) {
      throw kvError('transaction_too_old', `the read version is ${Math.round(age)} ms old`);
    }
    snapshot.assertReadable();
  }

  /** Commits a writing transaction; see `commitBatch` and `GroupCommit` for the outcomes. */
  commit(request: CommitRequest): Promise<CommitOutcome> {
    this.assertOpen();
    return this.commits.submit(request);
  }

  /** Starts the watches of a committed transaction; once closed, they resolve `false` as the others did. */
  activateWatches(watches: readonly KeyWatch[]): void {
    if (this.closed) watches.forEach((watch) => watch.cancel());
    else this.watches.activate(watches);
  }

  /**
   * Stops: new transactions, reads and commits fail with client_invalid_operation (2000); commits
   * already submitted complete; watches resolve `false`; snapshots are released; the store is closed.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.watches.close();
    await this.commits.idle();
    this.snapshots.releaseAll();
    await this.store.close();
  }

  /** @throws KvError client_invalid_operation (2000) once closed. */
  assertOpen(): void {
    if (this.closed) throw kvError('client_invalid_operation', 'the database is closed');
  }
}
