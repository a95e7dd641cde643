import { compareBytes } from '../contract/bytes';
import type { KeyRange } from '../contract/key-range';

/** Sorts ranges by their begin and merges the overlapping or touching ones; empty ranges are dropped. */
export function coalesceRanges(ranges: readonly KeyRange[]): KeyRange[] {
  // Most lists come in order already (a transaction's writes or reads in key order), or in a few
  // ordered runs: a transaction's read of the metadata version, at the highest key, before its other
  // reads; a structure's reads of two places in the order its algorithm needs them; the write sets of
  // a batch of commits. One pass merges each run as it comes, and the runs are merged two by two
  // (a natural merge sort): a list in order costs that one pass, a few runs a few merges, not a sort.
  let runs: KeyRange[][] | undefined;
  let run: KeyRange[] = [];
  let last: KeyRange | undefined;
  let previousBegin: Buffer | undefined;
  for (const range of ranges) {
    if (compareBytes(range.begin, range.end) >= 0) continue;
    // After the last merged range's end, `range` is in order (that end is after every begin so far).
    if (last === undefined || compareBytes(range.begin, last.end) > 0) {
      run.push((last = range));
    } else if (compareBytes(range.begin, previousBegin!) < 0) {
      (runs ??= []).push(run);
      run = [(last = range)];
    } else if (compareBytes(range.end, last.end) > 0) {
      run[run.length - 1] = last = { begin: last.begin, end: range.end };
    }
    previousBegin = range.begin;
  }
  if (runs === undefined) return run;
  runs.push(run);
  while (runs.length > 1) {
    const merged: KeyRange[][] = [];
    for (let i = 0; i < runs.length; i += 2) merged.push(i + 1 < runs.length ? mergeCoalesced(runs[i], runs[i + 1]) : runs[i]);
    runs = merged;
  }
  return runs[0];
}

/** The union of two coalesced range lists, coalesced: one merge of the two. */
function mergeCoalesced(a: readonly KeyRange[], b: readonly KeyRange[]): KeyRange[] {
  const out: KeyRange[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    appendCoalesced(out, compareBytes(a[i].begin, b[j].begin) <= 0 ? a[i++] : b[j++]);
  }
  while (i < a.length) appendCoalesced(out, a[i++]);
  while (j < b.length) appendCoalesced(out, b[j++]);
  return out;
}

/** Appends `range`, beginning at or after every range of coalesced `out`, merging it with the last one. */
export function appendCoalesced(out: KeyRange[], range: KeyRange): void {
  const last = out[out.length - 1];
  if (last !== undefined && compareBytes(range.begin, last.end) <= 0) {
    if (compareBytes(range.end, last.end) > 0) out[out.length - 1] = { begin: last.begin, end: range.end };
  } else {
    out.push(range);
  }
}

/** In sorted, disjoint `ranges`: the index of the first range whose end is after `key`. */
export function firstEndingAfter(ranges: readonly KeyRange[], key: Buffer): number {
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
