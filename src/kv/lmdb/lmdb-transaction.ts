import { ClientTransaction } from '../client/client-transaction';
import { Backoff } from '../contract/backoff';
import { copyOf } from '../contract/bytes';
import { kvError } from '../contract/errors';
import { ReadYourWritesView } from '../client/read-your-writes';
import type { KeyValue } from '../contract/types';
import { LMDB_KEY_LIMIT } from './arguments';
import type { LmdbCluster } from './lmdb-cluster';
import type { ReadSnapshot } from './read-snapshot';
import { SnapshotPairs } from './snapshot-pairs';
import { nextTurn } from '../client/next-turn';

/**
 * The first retry delay after a conflict (FDB's is 10 ms, doubling to 1 s, as here after it). A conflict
 * on LMDB is with a commit that took tens of microseconds, made by another process or an earlier batch:
 * waiting 10 ms for it, and 20, 40 ms when the next attempt meets another one, left processes that
 * share one hot key waiting most of the time (`npm run bench:lmdb-processes`, docs/performance.md).
 */
const FIRST_RETRY_DELAY_MS = 1;

/** The read version of an attempt: when it was taken, and its snapshot until the reads are over. */
interface ReadState {
  readonly version: bigint;
  /** On the engine's clock (ms): the 5-second limit counts from here. */
  readonly takenAt: number;
  snapshot: ReadSnapshot | undefined;
}

/**
 * A transaction of the lmdb engine: the client side of FDB's protocol ({@link ClientTransaction}, with
 * the client code's read-your-writes merge, write set, atomic operations and versionstamp templates,
 * as the memory engine's transaction), over LMDB:
 *
 * - The first read takes the read version: the store's last commit version, with an LMDB read
 *   snapshot at it that every later read of the transaction uses (held until the commit, a reset, a
 *   cancel, or 5 s, after which reads fail with transaction_too_old, 1007).
 * - Reads record read conflict ranges unless made through {@link snapshot}: a point read its key, a
 *   range read what its result proves, a selector the keys it examined.
 * - Writes are validated and buffered; `commit` sends them with the conflict ranges to the engine's
 *   group commit, which checks them against the conflicts of every commit after the read version, in
 *   any process, and applies them durably. Watches count other transactions' changes, in any process,
 *   from this transaction's commit.
 *
 * Keys that are written may have at most {@link LMDB_KEY_LIMIT} bytes (key_too_large, 2102); reads
 * and clears of longer keys (legal in FDB) find nothing. Errors of writes' arguments (2004, 2005, 2102,
 * 2103, 2000 for a malformed versionstamp template) are thrown synchronously and leave the transaction
 * unchanged; reads reject their promise; transaction_too_large (2101) is reported by `commit`.
 */
export class LmdbTransaction extends ClientTransaction {
  private read: ReadState | undefined;
  /** The version `setReadVersion` asked for, until the snapshot at it is taken. */
  private requestedVersion: bigint | undefined;
  private pointView: ReadYourWritesView | undefined;

  constructor(private readonly cluster: LmdbCluster) {
    super(LMDB_KEY_LIMIT, new Backoff(FIRST_RETRY_DELAY_MS));
  }

  protected takeReadVersion(): bigint {
    this.assertNotCancelled();
    if (this.read) return this.read.version;
    if (this.requestedVersion !== undefined) return this.requestedVersion;
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

  /**
   * A transaction without writes commits at once, without a version. Otherwise the commit joins the
   * next group commit; it resolves once applied and as durable as the engine's mode requires.
   *
   * @throws KvError transaction_too_large (2101), transaction_too_old (1007), not_committed (1020),
   *   commit_unknown_result (1021), transaction_cancelled (1025) if reset or cancelled meanwhile.
   */
  async commit(): Promise<void> {
    const generation = this.startCommit();
    // Read-only after a turn of this attempt: settled at once (see `turnedThisAttempt`).
    const settledAtOnce = this.writes.isReadOnly && this.turnedThisAttempt();
    // A commit is a round trip: other tasks run meanwhile, and see this transaction as committing.
    await Promise.resolve();
    this.assertStillCommitting(generation, 'the transaction was reset or cancelled during commit');
    try {
      const size = this.committableSize();
      // A version set without reads is checked now, and conflicts count from it.
      if (this.requestedVersion !== undefined) this.readableSnapshot();
      this.releaseReads();
      const writeConflicts = this.writes.writeConflicts();
      const mutations = this.writes.mutations;
      let version = -1n;
      let versionstamp: Buffer | undefined;
      if (mutations.length > 0 || writeConflicts.length > 0) {
        const outcome = await this.cluster.commit({
          readVersion: this.read?.version,
          readTakenAt: this.read?.takenAt,
          readConflictCount: this.readConflictCount,
          // This attempt's, even after a reset meanwhile; made only if the batch must check them.
          readConflicts: this.readConflictsWhenAsked(),
          writeConflicts,
          mutations,
          bytes: size,
        });
        this.assertStillCommitting(generation, 'the transaction was reset or cancelled while its commit was in flight; it may have been applied');
        if (!outcome.committed) throw outcome.error;
        if (outcome.reportUnknownResult) throw kvError('commit_unknown_result', 'injected fault; the commit was applied');
        version = outcome.version;
        versionstamp = outcome.versionstamp;
      } else {
        this.cluster.assertOpen();
        if (!settledAtOnce) {
          // Settled on a later turn, as a group commit's outcome is.
          await nextTurn();
          this.assertStillCommitting(generation, 'the transaction was reset or cancelled during commit');
        }
      }
      this.cluster.activateWatches(this.committed(version, versionstamp));
    } catch (err) {
      if (this.stillCommitting(generation)) this.commitFailed(err);
      throw err;
    }
  }

  // ---- the snapshot

  protected knownReadVersion(): bigint | undefined {
    return this.read?.version ?? this.requestedVersion;
  }

  protected useReadVersion(version: bigint): void {
    this.requestedVersion = version;
  }

  /**
   * The snapshot to read from, taking the read version (or the one set) on first use.
   * @throws KvError 1007 past 5 s or for a version set that is not held, 1009 for one set in the future
   */
  private readableSnapshot(): ReadSnapshot {
    if (!this.read && this.requestedVersion !== undefined) {
      const { snapshot, supersededAt } = this.cluster.readSnapshotAt(this.requestedVersion);
      this.read = { version: this.requestedVersion, takenAt: supersededAt ?? this.cluster.now(), snapshot };
      this.cluster.assertReadable(snapshot, this.read.takenAt);
      return snapshot;
    }
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
  protected readView(): ReadYourWritesView {
    const snapshot = this.readableSnapshot();
    this.pointView ??= new ReadYourWritesView(new SnapshotPairs(snapshot), this.visibleWrites);
    return this.pointView;
  }

  protected selectorView(offset: number): ReadYourWritesView {
    return this.scanView(Math.abs(offset) + 1);
  }

  protected collectRange(begin: Buffer, end: Buffer, limit: number, reverse: boolean, items: KeyValue[]): ReadYourWritesView {
    const view = this.scanView(limit);
    const first = items.length;
    view.collect(begin, end, limit, reverse, items);
    // The store's pairs are fresh copies already; only those of this transaction's writes need copying.
    if (this.writes.mutations.length === 0) return view;
    for (let i = first; i < items.length; i++) {
      items[i] = { key: this.ownCopy(items[i].key), value: this.ownCopy(items[i].value) };
    }
    return view;
  }

  /** Past the 5 s, the value cannot be read any more: `undefined`, so the watches fire. */
  protected watchView(): ReadYourWritesView | undefined {
    try {
      return this.readView();
    } catch {
      return undefined;
    }
  }

  /** A merged view for a read expected to return about `expected` pairs. */
  private scanView(expected: number): ReadYourWritesView {
    return new ReadYourWritesView(new SnapshotPairs(this.readableSnapshot(), expected), this.visibleWrites);
  }

  protected pointValue(value: Buffer): Buffer {
    return this.ownCopy(value);
  }

  /**
   * Bytes for the caller, who may modify them: the store's are already fresh copies, but bytes of this
   * transaction's writes must be copied so the caller cannot change what the transaction commits.
   */
  private ownCopy(bytes: Buffer): Buffer {
    return this.writes.mutations.length === 0 ? bytes : copyOf(bytes);
  }

  /** Lets go of the read snapshot: the reads of this attempt are over (the version is kept). */
  protected override releaseReads(): void {
    if (this.read?.snapshot) {
      this.read.snapshot.drop();
      this.read.snapshot = undefined;
    }
    this.pointView = undefined;
  }

  protected discardReads(): void {
    this.releaseReads();
    this.read = undefined;
    this.requestedVersion = undefined;
  }
}
