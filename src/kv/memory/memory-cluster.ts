import { compareBytes } from '../contract/bytes';
import { kvError } from '../contract/errors';
import { Limits } from '../contract/limits';
import { ConflictLog } from '../engine-parts/conflict-log';
import type { FaultInjector } from '../engine-parts/fault-injector';
import type { Mutation } from '../client/mutation';
import { coalesceRanges } from '../client/range-set';
import type { KeyRange } from '../contract/key-range';
import { VersionedStore, type AppliedCommit } from './versioned-store';
import { versionstampOf } from '../client/versionstamp-template';
import { WatchRegistry } from '../engine-parts/watch-registry';
import { VersionHistory, type HeldVersion } from './version-history';

/** FDB advances versions about 1,000,000 per second; with the clock in ms that is 1,000 per ms. */
const VERSIONS_PER_MS = 1000;

/** The MVCC window in versions, matching {@link Limits.maxTransactionAgeMs} at FDB's version rate. */
const WINDOW_VERSIONS = BigInt(Limits.maxTransactionAgeMs * VERSIONS_PER_MS);

/** A transaction's read version, and the data as of that version (`held.data`). */
export interface ReadSnapshot {
  readonly version: bigint;
  /**
   * When the read version was taken, on the cluster's clock (ms); for a version chosen with
   * `setReadVersion`, when it stopped being the latest. The 5-second limit counts from here.
   */
  readonly takenAt: number;
  /** The version as the history holds it: the transaction reading at it releases it when done. */
  readonly held: HeldVersion;
}

/** What a transaction sends to commit. */
export interface CommitRequest {
  /** The transaction's read version, if it read anything or chose one. */
  readonly snapshot: ReadSnapshot | undefined;
  /** How many read conflicts the transaction recorded. */
  readonly readConflictCount: number;
  /**
   * The read conflict ranges, made only for a conflict check: one a commit made since the read
   * version could fail (a transaction that ran alone, every 1-caller call, never needs them).
   */
  readonly readConflicts: () => readonly KeyRange[];
  /**
   * The write conflict ranges besides the keys the mutations write (range clears and explicit
   * ranges), sorted and coalesced, as `WriteSet.rangeConflicts()` returns them: the commit adds the
   * keys it applies.
   */
  readonly writeConflicts: readonly KeyRange[];
  readonly mutations: readonly Mutation[];
}

export interface CommitResult {
  /** The commit version, `-1n` for a read-only transaction; its versionstamp is `versionstampOf(version)`. */
  readonly version: bigint;
}

/**
 * The server side of the memory engine, in one process: hands out read versions with their snapshots
 * (FDB's sequencer and storage), checks conflicts and orders commits (its resolver and proxies), keeps
 * the watches, and injects faults. A commit runs synchronously from conflict check to applied data, so
 * commits are serialized and atomic with respect to every other asynchronous operation.
 */
export class MemoryCluster {
  readonly watches = new WatchRegistry(Limits.maxWatches);
  private readonly store: VersionedStore;
  private readonly history = new VersionHistory();
  private readonly conflicts: ConflictLog;
  private closed = false;

  constructor(
    /** The clock in ms. */
    readonly now: () => number,
    private readonly faults: FaultInjector | undefined,
  ) {
    const initialVersion = this.versionAt(now());
    this.store = new VersionedStore(initialVersion);
    this.conflicts = new ConflictLog(initialVersion);
  }

  /**
   * Takes a read version: the latest commit, and an O(1) snapshot of the data at it. The caller reads
   * at it until it calls {@link release}.
   */
  readSnapshot(): ReadSnapshot {
    this.assertOpen();
    const version = this.store.version;
    const held = this.history.readLatest(version, this.store.snapshot(), this.store.recentLeaves);
    return { version, takenAt: this.now(), held };
  }

  /** The transaction that took `snapshot` reads no more at it. */
  release(snapshot: ReadSnapshot): void {
    this.history.release(snapshot.held);
  }

  /**
   * The data as of `version`, for a transaction that chose its read version: the latest, or one that
   * an open transaction reads at and that a commit superseded less than 5 s ago (see
   * {@link VersionHistory}). The caller reads at it until it calls {@link release}.
   *
   * @throws KvError future_version (1009) past the last commit; transaction_too_old (1007) for a
   *   version not held (any more).
   */
  snapshotAt(version: bigint): ReadSnapshot {
    this.assertOpen();
    if (version > this.store.version) {
      throw kvError('future_version', `version ${version} is newer than the last commit, ${this.store.version}`);
    }
    if (version === this.store.version) return this.readSnapshot();
    const held = this.history.dataAt(version);
    if (!held || this.now() - held.supersededAt > Limits.maxTransactionAgeMs) {
      throw kvError('transaction_too_old', `the memory engine no longer holds version ${version}`);
    }
    return { version, takenAt: held.supersededAt, held: this.history.readAt(held) };
  }

  /** @throws KvError transaction_too_old (1007) once the read version is older than the MVCC window. */
  assertReadable(snapshot: ReadSnapshot): void {
    this.assertOpen();
    const age = this.now() - snapshot.takenAt;
    if (age > Limits.maxTransactionAgeMs) {
      throw kvError('transaction_too_old', `the read version is ${Math.round(age)} ms old`);
    }
  }

  /** The latest committed value at `key`. */
  currentValue(key: Buffer): Buffer | undefined {
    return this.store.get(key);
  }

  /**
   * Commits, synchronously. A transaction without mutations or write conflict ranges is read-only: it
   * commits without a version, a conflict check or an injected fault. Otherwise, in order: an injected
   * `tooOld`, a read version too old to check (only with read conflicts, as FDB's resolver), the conflict
   * check, an injected `notCommitted`; then the mutations are applied at a new version, watches fire,
   * and an injected `unknownResult` is thrown after the fact.
   *
   * @throws KvError transaction_too_old (1007), not_committed (1020), commit_unknown_result (1021).
   */
  commit(request: CommitRequest): CommitResult {
    this.assertOpen();
    if (request.mutations.length === 0 && request.writeConflicts.length === 0) {
      return { version: -1n };
    }
    const fault = this.faults?.next();
    const now = this.now();
    if (fault === 'tooOld') throw kvError('transaction_too_old', 'injected fault');
    const { snapshot } = request;
    if (snapshot && request.readConflictCount > 0) {
      const age = now - snapshot.takenAt;
      if (age > Limits.maxTransactionAgeMs || this.conflicts.isTooOld(snapshot.version)) {
        throw kvError('transaction_too_old', `the read version is ${Math.round(age)} ms old`);
      }
      // Coalesced only when a commit since the read version could conflict: a transaction that ran
      // alone (every 1-caller call) has nothing to check them against.
      const conflict = this.conflicts.hasCommitsAfter(snapshot.version)
        ? this.conflicts.findConflict(snapshot.version, coalesceRanges(request.readConflicts()))
        : undefined;
      if (conflict) {
        throw kvError(
          'not_committed',
          `[${conflict.range.begin.toString('hex')}, ${conflict.range.end.toString('hex')}) was written at ` +
            `version ${conflict.version}, after read version ${snapshot.version}`,
        );
      }
    }
    if (fault === 'notCommitted') throw kvError('not_committed', 'injected fault');

    const version = this.nextVersion(now);
    // Made only for commits that fill placeholders with it.
    let stamp: Buffer | undefined;
    const versionstamp = () => (stamp ??= versionstampOf(version));
    const applied = this.store.apply(request.mutations, version, versionstamp, this.history.latestIsRead);
    this.history.committed(version, now);
    this.history.forgetSupersededBefore(now - Limits.maxTransactionAgeMs);
    // Only transactions reading at a version before this commit can conflict with it, and each such
    // version is held while they read (see VersionHistory): the log keeps the commits after the
    // oldest of them, not every commit of the last 5 s (each kept commit keeps its keys).
    const oldestRead = this.history.oldestRead();
    if (oldestRead === undefined) {
      this.conflicts.forgetThrough(version);
    } else {
      // The keys applied (versionstamped keys with their final key) conflict as single keys.
      this.conflicts.record(version, now, request.writeConflicts, true, appliedKeys(applied));
      const windowStart = version - WINDOW_VERSIONS;
      this.conflicts.prune(now - Limits.maxTransactionAgeMs, oldestRead >= windowStart ? oldestRead + 1n : windowStart);
    }
    this.watches.notify(applied.keys, applied.ranges, (key) => this.store.get(key));
    if (fault === 'unknownResult') throw kvError('commit_unknown_result', 'injected fault; the commit was applied');
    return { version };
  }

  /** Stops the cluster: watches resolve `false`, later reads and commits fail. */
  close(): void {
    this.closed = true;
    this.watches.cancelAll();
  }

  /** @throws KvError client_invalid_operation (2000) once closed. */
  assertOpen(): void {
    if (this.closed) throw kvError('client_invalid_operation', 'the database is closed');
  }

  /** Strictly increasing, and otherwise following the clock at FDB's rate. */
  private nextVersion(now: number): bigint {
    const fromClock = this.versionAt(now);
    const next = this.store.version + 1n;
    return fromClock > next ? fromClock : next;
  }

  private versionAt(ms: number): bigint {
    return BigInt(Math.max(0, Math.floor(ms * VERSIONS_PER_MS)));
  }
}

/** The keys a commit applied, sorted, without duplicates: its merged runs are sorted already. */
function appliedKeys(applied: AppliedCommit): Buffer[] {
  const { keys, runs } = applied;
  if (runs.length === 0) return sortedUnique(keys);
  if (runs.length > 1) return sortedUnique([...keys, ...runs.flat()]);
  const run = runs[0];
  if (keys.length === 0) return run;
  // A run and a few single keys (a document insert and its metadata): each key found by bisection.
  const out = run.slice();
  for (const key of sortedUnique(keys)) {
    let lo = 0;
    let hi = out.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareBytes(out[mid], key) < 0) lo = mid + 1;
      else hi = mid;
    }
    if (lo === out.length || compareBytes(out[lo], key) !== 0) out.splice(lo, 0, key);
  }
  return out;
}

function sortedUnique(keys: Buffer[]): Buffer[] {
  if (keys.length < 2) return keys;
  const sorted = keys.slice().sort(compareBytes);
  let n = 1;
  for (let i = 1; i < sorted.length; i++) if (compareBytes(sorted[i], sorted[n - 1]) !== 0) sorted[n++] = sorted[i];
  sorted.length = n;
  return sorted;
}
