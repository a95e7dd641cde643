import { compareBytes } from '../contract/bytes';
import type { KeyRange } from '../contract/key-range';

/** Sorts ranges by their begin and merges the overlapping or touching ones; empty ranges are dropped. */
export function coalesceRanges(ranges: readonly KeyRange[]): KeyRange[] {
  // Most lists come in order already (a transaction's writes or reads in key order): one pass merges
  // them, and sorts only when it meets a range out of order.
  const out: KeyRange[] = [];
  let last: KeyRange | undefined;
  let previousBegin: Buffer | undefined;
  for (const range of ranges) {
    if (compareBytes(range.begin, range.end) >= 0) continue;
    // After the last merged range's end, `range` is in order (that end is after every begin so far).
    if (last === undefined || compareBytes(range.begin, last.end) > 0) {
      out.push((last = range));
    } else if (compareBytes(range.begin, previousBegin!) < 0) {
      return coalesceSorted(ranges.filter((r) => compareBytes(r.begin, r.end) < 0).sort(byBegin));
    } else if (compareBytes(range.end, last.end) > 0) {
      out[out.length - 1] = last = { begin: last.begin, end: range.end };
    }
    previousBegin = range.begin;
  }
  return out;
}

/** {@link coalesceRanges} of non-empty ranges sorted by their begin. */
function coalesceSorted(sorted: readonly KeyRange[]): KeyRange[] {
  const out: KeyRange[] = [];
  for (const range of sorted) {
    const last = out[out.length - 1];
    if (last && compareBytes(range.begin, last.end) <= 0) {
      if (compareBytes(range.end, last.end) > 0) out[out.length - 1] = { begin: last.begin, end: range.end };
    } else {
      out.push(range);
    }
  }
  return out;
}

function byBegin(a: KeyRange, b: KeyRange): number {
  return compareBytes(a.begin, b.begin);
}

/** In sorted, disjoint `ranges`: the index of the first range whose end is after `key`. */
function firstEndingAfter(ranges: readonly KeyRange[], key: Buffer): number {
  let lo = 0;
  let hi = ranges.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareBytes(ranges[mid].end, key) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The first overlap between two coalesced range lists (see {@link coalesceRanges}), or `undefined`.
 * Walks the shorter list and binary-searches the longer one: O(min · log max).
 */
export function findOverlap(a: readonly KeyRange[], b: readonly KeyRange[]): KeyRange | undefined {
  const [short, long] = a.length <= b.length ? [a, b] : [b, a];
  for (const range of short) {
    const i = firstEndingAfter(long, range.begin);
    if (i < long.length && compareBytes(long[i].begin, range.end) < 0) {
      const other = long[i];
      return {
        begin: compareBytes(range.begin, other.begin) >= 0 ? range.begin : other.begin,
        end: compareBytes(range.end, other.end) <= 0 ? range.end : other.end,
      };
    }
  }
  return undefined;
}

/** A mutable set of keys kept as sorted, disjoint, non-touching ranges. */
export class RangeSet {
  private ranges: KeyRange[] = [];

  get isEmpty(): boolean {
    return this.ranges.length === 0;
  }

  /** Adds `[begin, end)`, merging it with the ranges it overlaps or touches. */
  add(begin: Buffer, end: Buffer): void {
    if (compareBytes(begin, end) >= 0) return;
    const ranges = this.ranges;
    // The first range that ends at or after `begin` is the first one that can merge with the new range.
    let lo = 0;
    let hi = ranges.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareBytes(ranges[mid].end, begin) < 0) lo = mid + 1;
      else hi = mid;
    }
    let last = lo;
    let mergedBegin = begin;
    let mergedEnd = end;
    while (last < ranges.length && compareBytes(ranges[last].begin, end) <= 0) {
      if (compareBytes(ranges[last].begin, mergedBegin) < 0) mergedBegin = ranges[last].begin;
      if (compareBytes(ranges[last].end, mergedEnd) > 0) mergedEnd = ranges[last].end;
      last++;
    }
    ranges.splice(lo, last - lo, { begin: mergedBegin, end: mergedEnd });
  }

  /** The range that contains `key`, if any. */
  rangeContaining(key: Buffer): KeyRange | undefined {
    if (this.ranges.length === 0) return undefined;
    const i = firstEndingAfter(this.ranges, key);
    const range = this.ranges[i];
    return range && compareBytes(range.begin, key) <= 0 ? range : undefined;
  }

  /** The first range that ends after `key`: the one containing it, or else the next one above it. */
  rangeFrom(key: Buffer): KeyRange | undefined {
    if (this.ranges.length === 0) return undefined;
    return this.ranges[firstEndingAfter(this.ranges, key)];
  }

  /**
   * The last range that begins before `key`: the one containing the keys just below `key`, or else the
   * next one below them.
   */
  rangeBefore(key: Buffer): KeyRange | undefined {
    const ranges = this.ranges;
    let lo = 0;
    let hi = ranges.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareBytes(ranges[mid].begin, key) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo > 0 ? ranges[lo - 1] : undefined;
  }

  /** True when some key of `[begin, end)` is in the set. */
  overlaps(begin: Buffer, end: Buffer): boolean {
    if (this.ranges.length === 0 || compareBytes(begin, end) >= 0) return false;
    const i = firstEndingAfter(this.ranges, begin);
    return i < this.ranges.length && compareBytes(this.ranges[i].begin, end) < 0;
  }

  /** The parts of `[begin, end)` that are not in the set, in key order. */
  subtractFrom(begin: Buffer, end: Buffer): KeyRange[] {
    if (compareBytes(begin, end) >= 0) return [];
    if (this.ranges.length === 0) return [{ begin, end }];
    const out: KeyRange[] = [];
    let cursor = begin;
    for (let i = firstEndingAfter(this.ranges, begin); i < this.ranges.length; i++) {
      const range = this.ranges[i];
      if (compareBytes(range.begin, end) >= 0) break;
      if (compareBytes(cursor, range.begin) < 0) out.push({ begin: cursor, end: range.begin });
      cursor = range.end;
      if (compareBytes(cursor, end) >= 0) return out;
    }
    out.push({ begin: cursor, end });
    return out;
  }
}
