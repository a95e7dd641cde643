import { compareBytes } from '../contract/bytes';
import { coalesceRanges, findOverlap } from '../client/range-set';
import type { KeyRange } from '../contract/key-range';

interface CommittedWrites {
  readonly version: bigint;
  /** When the commit happened, on the engine's clock (ms). */
  readonly time: number;
  /** Coalesced write conflict ranges. */
  readonly ranges: readonly KeyRange[];
  /** Bounds of `ranges`, to skip most commits with two comparisons. */
  readonly low: Buffer;
  readonly high: Buffer;
}

/** A read conflict found by {@link ConflictLog.findConflict}. */
export interface Conflict {
  readonly range: KeyRange;
  readonly version: bigint;
}

/**
 * The write conflict ranges of recent commits, in version order: FDB's resolver. A transaction may
 * commit only if none of its read conflict ranges intersects the writes of a commit after its read
 * version. Entries older than the MVCC window are pruned; a read version from before the oldest pruned
 * commit can no longer be checked, and such a transaction is too old.
 */
export class ConflictLog {
  private entries: CommittedWrites[] = [];
  private head = 0;
  /** Every commit after this version is still in the log. */
  private horizon: bigint;

  constructor(initialVersion: bigint) {
    this.horizon = initialVersion;
  }

  /** True when commits after `readVersion` have been pruned, so a conflict check is impossible. */
  isTooOld(readVersion: bigint): boolean {
    return readVersion < this.horizon;
  }

  /**
   * The first read conflict range (coalesced, see `coalesceRanges`) written by a commit after
   * `readVersion`, or `undefined` when the transaction may commit.
   */
  findConflict(readVersion: bigint, reads: readonly KeyRange[]): Conflict | undefined {
    if (reads.length === 0) return undefined;
    const low = reads[0].begin;
    const high = reads[reads.length - 1].end;
    for (let i = this.firstAfter(readVersion); i < this.entries.length; i++) {
      const entry = this.entries[i];
      if (compareBytes(entry.low, high) >= 0 || compareBytes(entry.high, low) <= 0) continue;
      const range = findOverlap(reads, entry.ranges);
      if (range) return { range, version: entry.version };
    }
    return undefined;
  }

  /** Records a commit's write conflict ranges. Versions must increase. */
  record(version: bigint, time: number, writes: readonly KeyRange[]): void {
    const ranges = coalesceRanges(writes);
    if (ranges.length === 0) return;
    this.entries.push({ version, time, ranges, low: ranges[0].begin, high: ranges[ranges.length - 1].end });
  }

  /** Drops commits made before `minTime` or at versions below `minVersion`. */
  prune(minTime: number, minVersion: bigint): void {
    while (this.head < this.entries.length) {
      const entry = this.entries[this.head];
      if (entry.time >= minTime && entry.version >= minVersion) break;
      this.horizon = entry.version;
      this.head++;
    }
    if (this.head > 1024 && this.head * 2 > this.entries.length) {
      this.entries = this.entries.slice(this.head);
      this.head = 0;
    }
  }

  /** Index of the first entry with a version after `version`. */
  private firstAfter(version: bigint): number {
    let lo = this.head;
    let hi = this.entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.entries[mid].version <= version) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
