import { Buffer } from 'node:buffer';
import { compareBytes, keyAfter } from '../contract/bytes';
import { kvError } from '../contract/errors';
import { selectorBoundary } from '../contract/key-arguments';
import type { KeyValue } from '../contract/types';
import { MAX_USER_KEY, type KeyRange } from '../contract/key-range';
import { resolvePendingWrite, type PendingWrite, type WriteSet } from './write-set';

const EMPTY_KEY: Buffer = Buffer.alloc(0);

/**
 * The store as of a transaction's read version, as the merge reads it: the memory engine's frozen
 * sorted map, or an LMDB read snapshot. Keys and values are the snapshot's own Buffers, never modified.
 */
export interface StoredPairs {
  get(key: Buffer): Buffer | undefined;
  /**
   * Appends the stored pairs of `[begin, end)`, ascending (descending when `reverse`), to `out` until
   * `out` holds `total` pairs: the read of a part of a range that this transaction has not written.
   */
  collect(begin: Buffer, end: Buffer, reverse: boolean, total: number, out: KeyValue[]): void;
  /** The stored pairs of `[begin, end)`, ascending; a pair may be reused by the next step. */
  ascending(begin: Buffer, end: Buffer): Iterator<[Buffer, Buffer]>;
  /** The stored pairs of `[begin, end)`, descending; a pair may be reused by the next step. */
  descending(begin: Buffer, end: Buffer): Iterator<[Buffer, Buffer]>;
}

/** A key selector resolved over the merged view, with the keys the resolution looked at. */
export interface ResolvedSelector {
  readonly key: Buffer;
  /** Keys whose presence or absence decided the result: the read conflict range of `getKey`. */
  readonly examined: KeyRange;
}

/**
 * A transaction's view of the database: its snapshot of the store with its own pending writes laid on
 * top. Everything is synchronous and lazy, so a range read with a small limit touches only the keys it
 * returns; stored keys hidden by a range clear are skipped with one seek per cleared range.
 *
 * The view reads a frozen snapshot and the live write set; callers must not write between creating a
 * scan and finishing it.
 */
export class ReadYourWritesView {
  constructor(
    private readonly store: StoredPairs,
    private readonly writes: WriteSet,
  ) {}

  /**
   * Whether the value the last {@link get} returned depends on the stored value, i.e. a (non-snapshot)
   * read of it must add a read conflict: keys the transaction set, cleared or range-cleared do not.
   * Told by `get` itself, so that a point read looks its key up in the write set once.
   */
  lastGetReadStore = true;

  /** The merged value at `key`; sets {@link lastGetReadStore}. @throws KvError accessed_unreadable (1036) */
  get(key: Buffer): Buffer | undefined {
    const writes = this.writes;
    if (writes.isEmpty) {
      this.lastGetReadStore = true;
      return this.store.get(key);
    }
    const pending = writes.keys.get(key);
    if (pending) {
      const atomic = pending.kind === 'atomic';
      this.lastGetReadStore = atomic;
      return resolvePendingWrite(pending, atomic ? this.store.get(key) : undefined);
    }
    if (writes.cleared.rangeContaining(key)) {
      this.lastGetReadStore = false;
      return undefined;
    }
    if (writes.unreadable.rangeContaining(key)) throw unreadable();
    this.lastGetReadStore = true;
    return this.store.get(key);
  }

  /**
   * The value a watch compares against: the merged value, except that a value unknown until commit
   * (a versionstamped value) is taken as the stored one, so that the commit will report the change.
   */
  valueForWatch(key: Buffer): Buffer | undefined {
    const pending = this.writes.keys.get(key);
    if (pending?.kind === 'unreadable') return this.store.get(key);
    if (pending === undefined && this.writes.unreadable.rangeContaining(key)) return this.store.get(key);
    return this.get(key);
  }

  /** @throws KvError accessed_unreadable (1036) when `range` may hold a versionstamped key of this transaction. */
  assertReadable(range: KeyRange): void {
    if (this.writes.unreadable.overlaps(range.begin, range.end)) throw unreadable();
  }

  /**
   * Appends the merged pairs of `[begin, end)` to `out`, ascending or descending, until `out` holds
   * `limit` pairs (`Infinity`: all of them), without a generator step per pair: stored pairs are
   * collected a segment at a time (the parts of the range between this transaction's range clears)
   * with the pending writes of the segment merged in as they come. Every read of the view (ranges and
   * key selectors) goes through here.
   *
   * Keys and values are not copied: they are the store's and the write set's own Buffers, which the
   * engine never modifies, so callers must not modify them either.
   *
   * @throws KvError accessed_unreadable (1036) on reaching a key holding a versionstamped value.
   */
  collect(begin: Buffer, end: Buffer, limit: number, reverse: boolean, out: KeyValue[]): void {
    if (limit <= 0 || compareBytes(begin, end) >= 0) return;
    const writes = this.writes;
    const total = out.length + limit;
    if (writes.keys.size === 0 && writes.cleared.isEmpty) {
      this.store.collect(begin, end, reverse, total, out);
    } else if (reverse) {
      this.collectBackward(begin, end, total, out);
    } else {
      this.collectForward(begin, end, total, out);
    }
  }

  /** {@link collect} ascending, with pending writes; stops when `out` holds `total` pairs. */
  private collectForward(begin: Buffer, end: Buffer, total: number, out: KeyValue[]): void {
    const { store, writes } = this;
    const pending = writes.keys.entries(begin);
    // The next pending write in the range not yet merged: always at or after `cursor`.
    let p = pendingBelow(pending, end);
    let cursor = begin;
    for (;;) {
      const hidden = writes.cleared.rangeFrom(cursor);
      if (hidden && compareBytes(hidden.begin, cursor) <= 0) {
        // Cleared by this transaction: only writes made after the clear are visible here.
        const stop = compareBytes(hidden.end, end) < 0 ? hidden.end : end;
        while (p && compareBytes(p[0], stop) < 0) {
          pushPending(out, p, undefined);
          p = pendingBelow(pending, end);
          if (out.length >= total) return;
        }
        if (stop === end) return;
        cursor = stop;
        continue;
      }
      const segmentEnd = hidden && compareBytes(hidden.begin, end) < 0 ? hidden.begin : end;
      if (!p || compareBytes(p[0], segmentEnd) >= 0) {
        store.collect(cursor, segmentEnd, false, total, out);
      } else {
        const stored = store.ascending(cursor, segmentEnd);
        while (out.length < total) {
          const s = stored.next();
          if (s.done) break;
          const key = s.value[0];
          const value = s.value[1];
          let replaced = false;
          while (p) {
            const order = compareBytes(p[0], key);
            if (order > 0) break;
            pushPending(out, p, order === 0 ? value : undefined);
            p = pendingBelow(pending, end);
            if (order === 0) replaced = true;
            if (replaced || out.length >= total) break;
          }
          if (!replaced && out.length < total) out.push({ key, value });
        }
        while (out.length < total && p && compareBytes(p[0], segmentEnd) < 0) {
          pushPending(out, p, undefined);
          p = pendingBelow(pending, end);
        }
      }
      if (segmentEnd === end || out.length >= total) return;
      cursor = segmentEnd;
    }
  }

  /** {@link collect} descending, with pending writes; stops when `out` holds `total` pairs. */
  private collectBackward(begin: Buffer, end: Buffer, total: number, out: KeyValue[]): void {
    const { store, writes } = this;
    const pending = writes.keys.entriesReversed(end, undefined, true);
    // The next pending write in the range not yet merged: always below `cursor`.
    let p = pendingAtOrAbove(pending, begin);
    // Exclusive: the keys still to read are `[begin, cursor)`.
    let cursor = end;
    for (;;) {
      const hidden = writes.cleared.rangeBefore(cursor);
      if (hidden && compareBytes(hidden.end, cursor) >= 0) {
        const stop = compareBytes(hidden.begin, begin) > 0 ? hidden.begin : begin;
        while (p && compareBytes(p[0], stop) >= 0) {
          pushPending(out, p, undefined);
          p = pendingAtOrAbove(pending, begin);
          if (out.length >= total) return;
        }
        if (stop === begin) return;
        cursor = stop;
        continue;
      }
      const segmentBegin = hidden && compareBytes(hidden.end, begin) > 0 ? hidden.end : begin;
      if (!p || compareBytes(p[0], segmentBegin) < 0) {
        store.collect(segmentBegin, cursor, true, total, out);
      } else {
        const stored = store.descending(segmentBegin, cursor);
        while (out.length < total) {
          const s = stored.next();
          if (s.done) break;
          const key = s.value[0];
          const value = s.value[1];
          let replaced = false;
          while (p) {
            const order = compareBytes(p[0], key);
            if (order < 0) break;
            pushPending(out, p, order === 0 ? value : undefined);
            p = pendingAtOrAbove(pending, begin);
            if (order === 0) replaced = true;
            if (replaced || out.length >= total) break;
          }
          if (!replaced && out.length < total) out.push({ key, value });
        }
        while (out.length < total && p && compareBytes(p[0], segmentBegin) >= 0) {
          pushPending(out, p, undefined);
          p = pendingAtOrAbove(pending, begin);
        }
      }
      if (segmentBegin === begin || out.length >= total) return;
      cursor = segmentBegin;
    }
  }

  /**
   * Resolves FDB's key selector: the `offset`-th key after the last key `< key` (`<= key` with
   * `orEqual`), counting that key as offset 0. Off the start resolves to `''`, off the end to `'\xff'`.
   */
  resolveSelector(key: Buffer, orEqual: boolean, offset: number): ResolvedSelector {
    const boundary = selectorBoundary(key, orEqual);
    const found: KeyValue[] = [];
    if (offset >= 1) {
      this.collect(boundary, MAX_USER_KEY, offset, false, found);
      if (found.length < offset) return { key: MAX_USER_KEY, examined: { begin: boundary, end: MAX_USER_KEY } };
      const last = found[offset - 1].key;
      return { key: last, examined: { begin: boundary, end: keyAfter(last) } };
    }
    this.collect(EMPTY_KEY, boundary, 1 - offset, true, found);
    if (found.length < 1 - offset) return { key: EMPTY_KEY, examined: { begin: EMPTY_KEY, end: boundary } };
    const last = found[found.length - 1].key;
    return { key: last, examined: { begin: last, end: boundary } };
  }
}

/** Appends the merged value of a pending write over `stored`, unless it clears the key. */
function pushPending(out: KeyValue[], pending: [Buffer, PendingWrite], stored: Buffer | undefined): void {
  const value = resolvePendingWrite(pending[1], stored);
  if (value !== undefined) out.push({ key: pending[0], value });
}

/** The next pending write from an ascending iterator, if its key is below `end`. */
function pendingBelow(iterator: Iterator<[Buffer, PendingWrite]>, end: Buffer): [Buffer, PendingWrite] | undefined {
  const next = nextOf(iterator);
  return next && compareBytes(next[0], end) < 0 ? next : undefined;
}

/** The next pending write from a descending iterator, if its key is at or above `begin`. */
function pendingAtOrAbove(iterator: Iterator<[Buffer, PendingWrite]>, begin: Buffer): [Buffer, PendingWrite] | undefined {
  const next = nextOf(iterator);
  return next && compareBytes(next[0], begin) >= 0 ? next : undefined;
}

function nextOf<T>(iterator: Iterator<T>): T | undefined {
  const result = iterator.next();
  return result.done ? undefined : result.value;
}

function unreadable() {
  return kvError('accessed_unreadable', 'the range may hold a versionstamped key written by this transaction');
}
