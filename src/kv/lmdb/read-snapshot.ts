import { kvError } from '../contract/errors';
import { Limits } from '../contract/limits';
import { conflictRecordTime } from './conflict-record';
import type { LmdbStore, StoreSnapshot } from './lmdb-store';
import type { RangeCache } from './range-cache';

/**
 * How long past the 5-second limit a snapshot may be kept for a transaction that neither commits nor
 * is reset, before it is released anyway (its later reads fail with transaction_too_old).
 */
const RELEASE_GRACE_MS = 250;
/** How often held snapshots are checked for expiry (so one expires 5.25 to 5.75 s after it was taken). */
const SWEEP_MS = 500;

/**
 * A read version and the LMDB read transaction that holds the data at it, shared by every transaction
 * of the engine that asked for a read version while it was the latest (they would all get the same
 * data). It is released when its last holder lets go, and at the latest a little over 5 s after its
 * last holder took it, so that an abandoned transaction does not keep LMDB from reusing pages.
 */
export class ReadSnapshot {
  private holders = 0;
  /** When the last holder took it (real time, ms). */
  lastTaken = 0;

  constructor(
    readonly version: bigint,
    readonly store: StoreSnapshot,
    private readonly onRelease: (snapshot: ReadSnapshot) => void,
    /** The engine's cache of recently read ranges, if it keeps one. */
    readonly cache: RangeCache | undefined,
  ) {}

  get isReleased(): boolean {
    return this.store.isReleased;
  }

  /** Takes a hold on the snapshot, for up to 5 s. */
  take(): void {
    this.holders++;
    this.lastTaken = Date.now();
  }

  /** Gives one hold back; the last one releases the snapshot. */
  drop(): void {
    if (this.isReleased) return;
    if (--this.holders <= 0) this.release();
  }

  /** @throws KvError transaction_too_old (1007) once the snapshot has been released. */
  assertReadable(): void {
    if (this.isReleased) throw kvError('transaction_too_old', 'the read snapshot was released after 5 seconds');
  }

  /** Releases at once, whatever the holders (expired, or the engine is closing). */
  release(): void {
    if (this.isReleased) return;
    this.store.release();
    this.onRelease(this);
  }
}

/**
 * Hands out {@link ReadSnapshot}s: each request takes a fresh LMDB read transaction, which sees every
 * commit completed before it in any process; if no commit happened since the latest snapshot, that one
 * is shared instead, which saves LMDB reader slots (one per open read transaction, for all processes).
 * While snapshots are held, a timer releases those held for over 5 s; it stops at the first sweep that
 * finds none held, not when the last one is released: a transaction at a time (one caller) would
 * otherwise start and stop an interval timer per transaction.
 */
export class ReadSnapshots {
  private latest: ReadSnapshot | undefined;
  private readonly held = new Set<ReadSnapshot>();
  private sweeper: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: LmdbStore,
    private readonly cache: RangeCache | undefined,
  ) {}

  /** The latest committed version with its data, held once for the caller (give it back with `drop`). */
  take(): ReadSnapshot {
    const fresh = this.freshSnapshot();
    let version: bigint;
    try {
      version = fresh.lastVersion();
    } catch (err) {
      fresh.release();
      throw err;
    }
    const latest = this.latest;
    if (latest && !latest.isReleased && latest.version === version) {
      fresh.release();
      latest.take();
      return latest;
    }
    const snapshot = new ReadSnapshot(
      version,
      fresh,
      (released) => {
        this.held.delete(released);
        if (this.latest === released) this.latest = undefined;
      },
      this.cache,
    );
    this.held.add(snapshot);
    this.latest = snapshot;
    snapshot.take();
    if (!this.sweeper) {
      this.sweeper = setInterval(() => this.sweep(), SWEEP_MS);
      this.sweeper.unref();
    }
    return snapshot;
  }

  /**
   * The data as of `version`, held once for the caller, and when `version` stopped being the latest
   * (`undefined`: it still is): the latest snapshot, or a snapshot still held for another transaction
   * at a version no commit has superseded by `version`.
   *
   * @throws KvError future_version (1009) past the last commit; transaction_too_old (1007) for a
   *   version no snapshot holds.
   */
  takeAt(version: bigint): { snapshot: ReadSnapshot; supersededAt: number | undefined } {
    const latest = this.take();
    if (latest.version === version) return { snapshot: latest, supersededAt: undefined };
    try {
      if (version > latest.version) {
        throw kvError('future_version', `version ${version} is newer than the last commit, ${latest.version}`);
      }
      let held: ReadSnapshot | undefined;
      for (const snapshot of this.held) {
        if (snapshot.version <= version && !snapshot.isReleased && (!held || snapshot.version > held.version)) held = snapshot;
      }
      // The commit that superseded the held version, from the log of the last 5 s of commits.
      const next = held && latest.store.conflictRecords(held.version, 1)[0];
      if (!held || !next || next.version <= version) {
        throw kvError('transaction_too_old', `the lmdb engine holds no snapshot at version ${version}`);
      }
      held.take();
      return { snapshot: held, supersededAt: conflictRecordTime(next.record) };
    } finally {
      latest.drop();
    }
  }

  /**
   * The version of the oldest snapshot some transaction holds, if any. Snapshots are made at the
   * latest version, which only increases, and `held` keeps insertion order: its first is the oldest.
   */
  oldestHeldVersion(): bigint | undefined {
    for (const snapshot of this.held) return snapshot.version;
    return undefined;
  }

  /** Releases every snapshot (the engine is closing); later reads through them fail with 1007. */
  releaseAll(): void {
    for (const snapshot of [...this.held]) snapshot.release();
    this.stopSweeper();
  }

  private sweep(): void {
    const expired = Date.now() - Limits.maxTransactionAgeMs - RELEASE_GRACE_MS;
    for (const snapshot of [...this.held]) if (snapshot.lastTaken < expired) snapshot.release();
    if (this.held.size === 0) this.stopSweeper();
  }

  private stopSweeper(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  /** @throws KvError process_behind (1037, retryable) when every LMDB reader slot is in use. */
  private freshSnapshot(): StoreSnapshot {
    try {
      return this.store.snapshot();
    } catch (err) {
      if (err instanceof Error && err.message.includes('MDB_READERS_FULL')) {
        throw kvError('process_behind', 'every LMDB reader slot is in use; retry when some transactions have finished');
      }
      throw err;
    }
  }
}
