import { Limits } from '../contract/limits';
import { ConflictLog, type Conflict } from '../engine-parts/conflict-log';
import type { KeyRange } from '../contract/key-range';
import { conflictRecordTime, decodeConflictRecord } from './conflict-record';
import type { StoreReader, StoreWriter } from './lmdb-store';
import { versionAt, WINDOW_VERSIONS } from './versions';

/** Records read from the store per call while catching up. */
const CHUNK = 1024;
/**
 * How long past due the oldest record the last prune left may be before the next prune reads the
 * log: records are removed in runs, about one run per this many ms, rather than one read per commit
 * (each read is a cursor, and a copy of each record read). The store keeps the conflicts of the last
 * 5 s of commits, and of up to this many ms more.
 */
const PRUNE_LAG_MS = 50;
/** {@link PRUNE_LAG_MS} in versions, for records due by version. */
const PRUNE_LAG_VERSIONS = versionAt(PRUNE_LAG_MS);
/** Most records read per call while pruning: the calls read 2, 4, 8, ... records up to this. */
const PRUNE_CHUNK = 256;
/** Most records one batch removes; a longer run goes on in the next batch. */
const PRUNE_MAX = 1024;

/**
 * FoundationDB's resolver for several processes: the write conflict ranges of every commit of the last
 * 5 seconds live in the store (its `log`, one record per commit version), so a commit in any process
 * is checked against commits made by all of them. Every method runs inside the exclusive LMDB write
 * transaction, which is what makes check-then-append atomic across processes.
 *
 * The records are mirrored in memory, in a {@link ConflictLog} (the memory engine's resolver too); each
 * commit reads only the records appended since the last one this process saw. The mirror checks this
 * process's transactions only, so it keeps only the commits after the oldest read version one of them
 * may still be checked at (see {@link prune}); the store keeps 5 s of them for every process. If a write
 * transaction fails after the mirror recorded its batch, call {@link reset}: the mirror is rebuilt from
 * the store on next use.
 */
export class StoredConflictLog {
  private mirror: ConflictLog | undefined;
  /** Every record up to this version is in the mirror. */
  private through = -1n;
  /**
   * The oldest record the last prune left in the store (time and version), or nothing known. Records
   * are appended newer and removed oldest first (by any process), so the store's oldest is this one or
   * a newer one: while this one is not due, nothing is.
   */
  private oldest: { time: number; version: bigint } | undefined;
  /**
   * The store's horizon as this process last read or wrote it, while that is still the store's: only
   * a batch that commits prunes (and sets the version), so it holds until another process commits.
   */
  private knownHorizon: bigint | undefined;

  /**
   * Brings the mirror up to date with the records any process appended.
   *
   * @returns the store's last commit version (read once here, for the batch to take the next one).
   */
  catchUp(reader: StoreReader): bigint {
    const last = reader.lastVersion();
    if (!this.mirror) {
      this.mirror = new ConflictLog(reader.horizon());
      this.through = -1n;
    } else if (last === this.through) {
      // No process has committed since this one's last record: nothing to read (one lookup).
      return last;
    }
    // Another process committed: it may have pruned.
    this.knownHorizon = undefined;
    for (;;) {
      const entries = reader.conflictRecords(this.through < 0n ? undefined : this.through, CHUNK);
      for (const entry of entries) {
        const record = decodeConflictRecord(entry.record);
        this.mirror.record(entry.version, record.time, record.ranges);
        this.through = entry.version;
      }
      if (entries.length < CHUNK) return last;
    }
  }

  /** How many commits the mirror keeps (for tests and stats). */
  get mirroredCommits(): number {
    return this.mirror?.size ?? 0;
  }

  /** Every commit after this version is still in the store's log (read once while no other process commits). */
  storeHorizon(reader: StoreReader): bigint {
    return (this.knownHorizon ??= reader.horizon());
  }

  /**
   * True when the mirror holds a commit after `readVersion` (of any process, or of the current batch):
   * only then can a read at it conflict. Call after {@link catchUp}, and after {@link isTooOld} is false.
   */
  hasCommitsAfter(readVersion: bigint): boolean {
    return this.requireMirror().hasCommitsAfter(readVersion);
  }

  /** True when commits after `readVersion` may have been pruned, so that no check is possible. */
  isTooOld(readVersion: bigint, storeHorizon: bigint): boolean {
    return readVersion < storeHorizon || this.requireMirror().isTooOld(readVersion);
  }

  /** The first of `reads` (coalesced) written by a commit after `readVersion`, if any. */
  findConflict(readVersion: bigint, reads: readonly KeyRange[]): Conflict | undefined {
    return this.requireMirror().findConflict(readVersion, reads);
  }

  /**
   * Records a commit of the current batch in the mirror, its write conflict ranges coalesced; the batch
   * appends it to the store itself.
   */
  record(version: bigint, time: number, ranges: readonly KeyRange[]): void {
    this.requireMirror().record(version, time, ranges, true);
    this.through = version;
  }

  /**
   * Drops from the mirror the records no transaction of this process can conflict with: those at or
   * before `oldestRead`, the oldest read version a transaction of this process may still be checked
   * at (every one, with `undefined`: none may), and those older than the 5-second window. Only a
   * transaction reading at an earlier version can conflict with a commit, so the check of each
   * transaction still to come is the same; a read version older than what the mirror keeps is too
   * old (1007), as one older than the store's log is. Each kept record holds its ranges' Buffers:
   * kept for 5 s, they were promoted by every scavenge (about 1.2 kB a commit of a queue push).
   *
   * Drops the records older than the 5-second window from the store too, once they
   * are due by {@link PRUNE_LAG_MS}, advancing the store's horizon past them. Reads nothing while the
   * oldest record the last prune saw is not due by that much; then removes every due record (at most
   * {@link PRUNE_MAX}), reading 2, 4, 8, ... up to {@link PRUNE_CHUNK} records per read, so that a
   * steady stream of commits costs a few reads per run, not per commit. Keeping a record longer only
   * keeps the horizon older: no conflict is missed, and transactions older than 5 s are refused by
   * their age, as before.
   */
  prune(writer: StoreWriter, now: number, version: bigint, oldestRead: bigint | undefined): void {
    const minTime = now - Limits.maxTransactionAgeMs;
    const minVersion = version - WINDOW_VERSIONS;
    if (oldestRead === undefined) this.mirror?.forgetThrough(version);
    else this.mirror?.prune(minTime, oldestRead >= minVersion ? oldestRead + 1n : minVersion);
    const known = this.oldest;
    if (known && known.time >= minTime - PRUNE_LAG_MS && known.version >= minVersion - PRUNE_LAG_VERSIONS) return;
    let horizon: bigint | undefined;
    this.oldest = undefined;
    let removed = 0;
    // The oldest record is due (or unknown): it and the next one first, each record read being a copy.
    let limit = 2;
    reading: while (removed < PRUNE_MAX) {
      const wanted = Math.min(limit, PRUNE_MAX - removed);
      const oldest = writer.conflictRecords(undefined, wanted);
      for (const entry of oldest) {
        const time = conflictRecordTime(entry.record);
        if (time >= minTime && entry.version >= minVersion) {
          this.oldest = { time, version: entry.version };
          break reading;
        }
        writer.removeConflictRecord(entry.version);
        horizon = entry.version;
        removed++;
      }
      if (oldest.length < wanted) break;
      limit = Math.min(limit * 2, PRUNE_CHUNK);
    }
    if (horizon !== undefined && horizon > this.storeHorizon(writer)) {
      writer.setHorizon(horizon);
      this.knownHorizon = horizon;
    }
  }

  /** Forgets the mirror, after a write transaction that recorded into it failed. */
  reset(): void {
    this.mirror = undefined;
    this.through = -1n;
    this.oldest = undefined;
    this.knownHorizon = undefined;
  }

  private requireMirror(): ConflictLog {
    if (!this.mirror) throw new Error('StoredConflictLog: catchUp must run first in each write transaction');
    return this.mirror;
  }
}
