import { firstEndingAfter } from '../client/range-set';
import { compareBytes, copyOf } from '../contract/bytes';
import type { KeyRange } from '../contract/key-range';
import type { KeyValue } from '../contract/types';
import { decodeConflictRecord } from './conflict-record';
import type { StoreReader } from './lmdb-store';

/**
 * The pairs of recently read ranges, kept in memory so that reading one again at a later version
 * costs no LMDB cursor (a whole-document get of a 7-leaf document: a cursor, 12 native steps and 24
 * copies, about half of the get's CPU on LMDB; docs/performance.md, "The thirteenth round").
 *
 * A range is kept with the version it was read at, `at`; it still holds the same pairs at a later
 * version `v` exactly when no commit with a version in `(at, v]` wrote into it. The cache knows the
 * write ranges of every commit in `(horizon, through]`, in version order: this process's commits
 * from the group commit, as they commit, and every process's from the store's conflict log, which
 * holds each commit's write conflict ranges (the same ranges the commit checks use). A lookup at a
 * version the cache does not know yet first reads the log up to it; a range read before `horizon`
 * can no longer be checked and is dropped. So a hit is what the store holds at the reader's version,
 * in every process, or there is no hit:
 *
 * - only full ascending reads are kept (every pair of `[begin, end)`), and a lookup answers only a
 *   read of the very same bounds (a limited read takes the first or last pairs of it);
 * - a range is kept only when read at a version the cache can check later, and it is checked against
 *   every commit between its version and the reader's, or dropped;
 * - when the log no longer holds a commit the cache has not seen (the process did not look for over
 *   5 s and the log was pruned), or more than {@link MAX_COMMITS} commits came since it looked, every
 *   range is dropped rather than checked.
 *
 * The pairs a hit returns are the ones first read, shared by every reader: the engine's results are
 * read-only (`contract/types.ts`), as the memory engine's range reads are.
 *
 * Costs: a lookup of bounds whose lengths some kept range has builds one string of the bounds (of
 * others, nothing) and checks the commits since the range was last checked (usually none or a few:
 * each check moves `at` up to the reader's version); keeping a range is one map entry; a commit of
 * this process adds its ranges' array to a list of the last {@link KEPT_COMMITS} commits. Bounded by
 * bytes (least recently used ranges go first); when most ranges it keeps are dropped before they are
 * read again, it rests a while (see {@link RangeCache.drop}).
 */
export class RangeCache {
  private readonly ranges = new Map<string, CachedRange>();
  /**
   * How many kept ranges have each pair of bound lengths ({@link lengthsOf}): a read whose bounds'
   * lengths no kept range has (a list's last item, a queue's head, beside kept documents) is told
   * so without building the string of its bounds.
   */
  private readonly lengths = new Map<number, number>();
  private bytes = 0;
  /** Ranges dropped (written into, or evicted) since the last count, and those of them never read again. */
  private dropped = 0;
  private wasted = 0;
  /** Reads left during which nothing is kept, after too many ranges were dropped without a hit. */
  private resting = 0;
  /** The write ranges of every commit in `(horizon, through]`, oldest first, from `head` on. */
  private commits: CommitWrites[] = [];
  private head = 0;
  private horizon = -1n;
  private through = -1n;

  /**
   * @param maxBytes - most bytes of keys and values kept (plus a small overhead per pair counted in);
   *   a range larger than a sixteenth of it is not kept.
   */
  constructor(private readonly maxBytes: number) {}

  /** How many ranges are kept (for tests and stats). */
  get size(): number {
    return this.ranges.size;
  }

  /**
   * The pairs of `[begin, end)` at version `version` of the store that `reader` reads (a snapshot at
   * that version), if kept and unchanged since; `undefined` otherwise.
   */
  lookup(reader: StoreReader, version: bigint, begin: Buffer, end: Buffer): readonly KeyValue[] | undefined {
    if (this.ranges.size === 0 || !this.lengths.has(lengthsOf(begin, end))) return undefined;
    const id = rangeId(begin, end);
    const range = this.ranges.get(id);
    // Kept at a later version than the reader's: it may have changed between the two.
    if (range === undefined || range.at > version) return undefined;
    if (version > this.through && !this.learn(reader, version)) return undefined;
    if (range.at < version) {
      if (range.at < this.horizon || this.writtenInto(range, version)) {
        this.drop(id, range);
        return undefined;
      }
      range.at = version;
    }
    // Most recently used last: the map's order is the eviction order.
    this.ranges.delete(id);
    this.ranges.set(id, range);
    range.hit = true;
    return range.pairs;
  }

  /** Keeps `pairs`, every pair of `[begin, end)` at `version` of the store `reader` reads. */
  keep(reader: StoreReader, version: bigint, begin: Buffer, end: Buffer, pairs: readonly KeyValue[]): void {
    if (!this.admits()) return;
    let bytes = RANGE_OVERHEAD;
    for (const { key, value } of pairs) bytes += key.length + value.length + PAIR_OVERHEAD;
    if (bytes * 16 > this.maxBytes) return;
    if (version > this.through && !this.learn(reader, version)) return;
    // A range read before the commits the cache knows cannot be checked against them later.
    if (version < this.horizon) return;
    const id = rangeId(begin, end);
    const old = this.ranges.get(id);
    if (old !== undefined) {
      if (old.at > version) return;
      this.drop(id, old);
      if (this.resting > 0) return;
    }
    // The bounds are checked against commits for as long as the range is kept: copies of their own,
    // whatever the caller does with its Buffers (a copy each, beside the LMDB read that came before).
    this.ranges.set(id, { begin: copyOf(begin), end: copyOf(end), pairs, bytes, at: version, hit: false });
    const lengths = lengthsOf(begin, end);
    this.lengths.set(lengths, (this.lengths.get(lengths) ?? 0) + 1);
    this.bytes += bytes;
    // Least recently used first (the map's order); the loop ends early if a drop empties the map.
    for (const [oldest, range] of this.ranges) {
      if (this.bytes <= this.maxBytes) break;
      this.drop(oldest, range);
    }
  }

  /**
   * A commit of this process at `version`, the store's first after `previous`, that wrote `ranges`
   * (coalesced): recorded without reading the log when the cache knew every commit up to `previous`.
   * Call it only once the commit is in the store.
   */
  committed(previous: bigint, version: bigint, ranges: readonly KeyRange[]): void {
    if (this.ranges.size === 0) {
      this.forgetCommits(version);
    } else if (this.through === previous) {
      this.record(version, ranges);
      this.through = version;
    }
    // Otherwise another process committed in between: the next lookup reads the log from `through`.
  }

  /** Whether a range read now may be kept: not while the cache rests (see {@link drop}). */
  private admits(): boolean {
    if (this.resting === 0) return true;
    this.resting--;
    return false;
  }

  /**
   * Learns the commits up to `version` from the conflict log `reader` reads (a snapshot at
   * `version`). Returns false, having dropped every range, when the log no longer holds them all or
   * they are too many to check.
   */
  private learn(reader: StoreReader, version: bigint): boolean {
    if (this.ranges.size === 0) {
      this.forgetCommits(version);
      return true;
    }
    if (reader.horizon() > this.through) return this.dropAll(version);
    const records = reader.conflictRecords(this.through, MAX_COMMITS + 1);
    if (records.length > MAX_COMMITS) return this.dropAll(version);
    for (const { version: at, record } of records) {
      if (at > version) break;
      this.record(at, decodeConflictRecord(record).ranges);
    }
    this.through = version;
    return true;
  }

  private dropAll(version: bigint): false {
    this.ranges.clear();
    this.lengths.clear();
    this.bytes = 0;
    this.forgetCommits(version);
    return false;
  }

  /** Knows no commit, and every commit up to `version` is too old to check a range against. */
  private forgetCommits(version: bigint): void {
    this.commits = [];
    this.head = 0;
    if (version > this.through) this.through = version;
    this.horizon = this.through;
  }

  private record(version: bigint, ranges: readonly KeyRange[]): void {
    if (ranges.length > 0) {
      this.commits.push({ version, low: ranges[0].begin, high: ranges[ranges.length - 1].end, ranges });
    }
    if (this.commits.length - this.head > KEPT_COMMITS) {
      this.horizon = this.commits[this.head].version;
      this.head++;
      if (this.head >= KEPT_COMMITS) {
        this.commits = this.commits.slice(this.head);
        this.head = 0;
      }
    }
  }

  /**
   * Whether a commit after `range.at`, up to `version`, wrote into the range (or more than
   * {@link MAX_CHECKED} commits came in between: the range is then given up as if one had).
   */
  private writtenInto(range: CachedRange, version: bigint): boolean {
    const commits = this.commits;
    let lo = this.head;
    let hi = commits.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (commits[mid].version <= range.at) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < commits.length; i++) {
      const commit = commits[i];
      if (commit.version > version) break;
      // Checking a range little read against many commits costs more than reading it again.
      if (i - lo >= MAX_CHECKED) return true;
      if (compareBytes(commit.high, range.begin) <= 0 || compareBytes(commit.low, range.end) >= 0) continue;
      if (overlaps(commit.ranges, range.begin, range.end)) return true;
    }
    return false;
  }

  /**
   * Drops a range written into, evicted or replaced, and counts it. Every {@link WINDOW} ranges
   * dropped, if more than {@link MAX_WASTED_SHARE} of them were never read again (ranges are written
   * between reads, or read once, or a scan is larger than the cache), the cache is emptied and keeps
   * nothing for the next {@link REST_READS} reads it could have kept: a workload it does not help then
   * pays neither for keeping ranges nor for the memory they hold. A working set that fits, read again
   * and again, drops nothing and is never counted.
   */
  private drop(id: string, range: CachedRange): void {
    this.ranges.delete(id);
    const lengths = lengthsOf(range.begin, range.end);
    const left = this.lengths.get(lengths)! - 1;
    if (left === 0) this.lengths.delete(lengths);
    else this.lengths.set(lengths, left);
    this.bytes -= range.bytes;
    this.dropped++;
    if (!range.hit) this.wasted++;
    if (this.dropped < WINDOW) return;
    if (this.wasted > WINDOW * MAX_WASTED_SHARE) {
      this.resting = REST_READS;
      this.dropAll(this.through);
    }
    this.dropped = 0;
    this.wasted = 0;
  }
}

/** Ranges dropped between two counts of those never read again (see `RangeCache.drop`). */
const WINDOW = 1024;
/** The share of dropped ranges never read again above which the cache rests. */
const MAX_WASTED_SHARE = 3 / 4;
/** Reads the cache keeps nothing for when it rests. */
const REST_READS = 16 * WINDOW;
/** Most commits the cache reads from the log at once; more since it looked drop every range. */
const MAX_COMMITS = 256;
/** Most commits a lookup checks a range against; a range not read for longer is dropped. */
const MAX_CHECKED = 32;
/**
 * Commits the cache remembers. A range last checked before the oldest of them has more than
 * {@link MAX_CHECKED} commits to be checked against, so a lookup drops it whether or not they are
 * remembered. Remembering 256 kept the write ranges of each 1-caller LMDB commit for about 20 ms,
 * long enough for young-generation scavenges to copy and promote them: about 500 kB a scavenge of
 * queue pushes, and 1.5-2 ms a scavenge where it is now 0.5-0.8 ms (docs/performance.md, "The
 * fourteenth round").
 */
const KEPT_COMMITS = MAX_CHECKED + 1;
/** Bytes counted per pair and per range besides keys and values (objects, array slots, map entry). */
const PAIR_OVERHEAD = 64;
const RANGE_OVERHEAD = 128;

interface CachedRange {
  readonly begin: Buffer;
  readonly end: Buffer;
  readonly pairs: readonly KeyValue[];
  readonly bytes: number;
  /** The range held `pairs` at this version, and at every version since that the cache has checked. */
  at: bigint;
  /** Whether a lookup has answered with it. */
  hit: boolean;
}

interface CommitWrites {
  readonly version: bigint;
  /** The first range's beginning and the last range's end. */
  readonly low: Buffer;
  readonly high: Buffer;
  /** Sorted and coalesced. */
  readonly ranges: readonly KeyRange[];
}

/** The lengths of a range's bounds as one number (keys are at most a few thousand bytes). */
function lengthsOf(begin: Buffer, end: Buffer): number {
  return begin.length * 0x10000 + end.length;
}

/** The bounds as one string (latin1 holds each byte as one character; U+0100 cannot occur in it). */
function rangeId(begin: Buffer, end: Buffer): string {
  return begin.toString('latin1') + '\u0100' + end.toString('latin1');
}

/** Whether one of `ranges` (sorted, coalesced) meets `[begin, end)`. */
function overlaps(ranges: readonly KeyRange[], begin: Buffer, end: Buffer): boolean {
  // The ranges before the first one ending after `begin` end at or before it; those after it begin later.
  const i = firstEndingAfter(ranges, begin);
  return i < ranges.length && compareBytes(ranges[i].begin, end) < 0;
}
