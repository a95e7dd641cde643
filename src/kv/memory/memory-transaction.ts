import { ClientTransaction } from '../client/client-transaction';
import { copyOf } from '../contract/bytes';
import type { KeyValue } from '../contract/types';
import type { MemoryCluster, ReadSnapshot } from './memory-cluster';
import { ReadYourWritesView } from '../client/read-your-writes';
import { versionstampOf } from '../client/versionstamp-template';
import { nextTurn } from '../client/next-turn';
import type { KeyWatch } from '../client/key-watch';

/**
 * A transaction of the memory engine: the client side of FDB's protocol ({@link ClientTransaction}).
 * Reads are served from an O(1) snapshot taken at the first read, merged with the transaction's own
 * writes; they record read conflict ranges unless made through {@link snapshot}. Writes are validated
 * and buffered; `commit` sends them with the conflict ranges to the {@link MemoryCluster}, which checks
 * and applies them atomically.
 *
 * Errors: argument errors of writes (2004, 2005, 2102, 2103, 2000 for a malformed versionstamp
 * template) are thrown synchronously and leave the transaction unchanged; reads reject their promise;
 * transaction_too_large (2101) is reported by `commit`, as FDB does.
 */
export class MemoryTransaction extends ClientTransaction {
  private readSnapshot: ReadSnapshot | undefined;
  /** Whether this attempt still reads at {@link readSnapshot}: released by the commit, a reset or a retry. */
  private reading = false;
  /** The version `setReadVersion` asked for, until the snapshot at it is taken. */
  private requestedVersion: bigint | undefined;
  private view: ReadYourWritesView | undefined;

  constructor(private readonly cluster: MemoryCluster) {
    super();
  }

  protected takeReadVersion(): bigint {
    this.assertNotCancelled();
    if (this.requestedVersion !== undefined) return this.requestedVersion;
    const { version } = this.acquireSnapshot();
    // Asked after the commit (`getReadVersion` is allowed then): nothing more is read at it.
    if (this.state === 'committed' || this.state === 'failed') this.stopReading();
    return version;
  }

  async commit(): Promise<void> {
    const generation = this.startCommit();
    if (!(this.writes.isReadOnly && this.turnedThisAttempt())) {
      // A commit is a round trip: other tasks run meanwhile, and see this transaction as committing.
      await nextTurn();
      this.assertStillCommitting(generation, 'the transaction was reset or cancelled during commit');
    }
    try {
      this.committableSize();
      if (this.writes.isReadOnly) {
        // What the cluster does for a read-only commit (no version, no conflict check, no fault), without
        // building a request; a version set without reads is still checked.
        this.cluster.assertOpen();
        if (this.requestedVersion !== undefined) this.acquireSnapshot();
        this.activate(this.committed(-1n, undefined));
        return;
      }
      // A version set without reads is checked now, and conflicts count from it.
      const snapshot = this.requestedVersion === undefined ? this.readSnapshot : this.acquireSnapshot();
      // Its reads are over: the cluster need not keep its read version's data, nor (once its conflict
      // check is done) the commits since, on its account.
      this.stopReading();
      const result = this.cluster.commit({
        snapshot,
        readConflictCount: this.readConflictCount,
        readConflicts: this.readConflictsWhenAsked(),
        writeConflicts: this.writes.rangeConflicts(),
        mutations: this.writes.mutations,
      });
      this.activate(this.committed(result.version, result.version < 0n ? undefined : () => versionstampOf(result.version)));
    } catch (err) {
      this.commitFailed(err);
      throw err;
    } finally {
      this.stopReading();
    }
  }

  /** Registers a committed transaction's watches against the keys' values now. */
  private activate(watches: readonly KeyWatch[]): void {
    for (const watch of watches) this.cluster.watches.add(watch, this.cluster.currentValue(watch.key));
  }

  // ---- the snapshot

  protected knownReadVersion(): bigint | undefined {
    return this.readSnapshot?.version ?? this.requestedVersion;
  }

  protected useReadVersion(version: bigint): void {
    this.requestedVersion = version;
  }

  /** @throws KvError transaction_too_old (1007), future_version (1009) for a version set that cannot be read */
  private acquireSnapshot(): ReadSnapshot {
    if (this.readSnapshot === undefined) {
      this.readSnapshot = this.requestedVersion === undefined ? this.cluster.readSnapshot() : this.cluster.snapshotAt(this.requestedVersion);
      this.reading = true;
    }
    return this.readSnapshot;
  }

  /** The merged view for a read. @throws KvError transaction_too_old (1007) past the MVCC window */
  protected readView(): ReadYourWritesView {
    // A snapshot this read takes is not old: only one taken before is checked (a clock read fewer).
    if (this.readSnapshot === undefined) this.acquireSnapshot();
    else this.cluster.assertReadable(this.readSnapshot);
    return this.currentView();
  }

  protected selectorView(): ReadYourWritesView {
    return this.readView();
  }

  protected collectRange(begin: Buffer, end: Buffer, limit: number, reverse: boolean, items: KeyValue[]): ReadYourWritesView {
    const view = this.readView();
    view.collect(begin, end, limit, reverse, items);
    return view;
  }

  protected watchView(): ReadYourWritesView {
    return this.currentView();
  }

  private currentView(): ReadYourWritesView {
    this.view ??= new ReadYourWritesView(this.acquireSnapshot().held.pairs, this.visibleWrites);
    return this.view;
  }

  /**
   * A fresh copy of a value for `get`: a point read costs one copy, and its result never aliases the
   * store, so a caller modifying it cannot change committed data (FDB's bindings also return fresh
   * buffers). Range reads do not copy (see {@link ReadYourWritesView.collect}): their results are
   * read-only, as `contract/types.ts` says of every result.
   */
  protected pointValue(value: Buffer): Buffer {
    return copyOf(value);
  }

  /**
   * Called by a cancel, and by `onError` before its backoff: an attempt still active then (failed by
   * an error of the caller's own, not by its commit) may still be read until the backoff ends.
   */
  protected override releaseReads(): void {
    if (this.state !== 'active') this.stopReading();
  }

  /**
   * This attempt reads no more: the cluster may forget its read version once nobody else reads at it
   * (see `VersionHistory`), and the next commit may write the data it read in place.
   */
  private stopReading(): void {
    if (!this.reading) return;
    this.reading = false;
    this.cluster.release(this.readSnapshot!);
  }

  protected discardReads(): void {
    this.stopReading();
    this.readSnapshot = undefined;
    this.requestedVersion = undefined;
    this.view = undefined;
  }
}
