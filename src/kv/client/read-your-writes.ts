import type BTree from 'sorted-btree';
import { compareBytes, keyAfter } from '../contract/bytes';
import { kvError } from '../contract/errors';
import type { KeyValue } from '../contract/types';
import { MAX_USER_KEY, type KeyRange } from '../contract/key-range';
import { resolvePendingWrite, type PendingWrite, type WriteSet } from './write-set';

const EMPTY_KEY: Buffer = Buffer.alloc(0);

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
    private readonly store: BTree<Buffer, Buffer>,
    private readonly writes: WriteSet,
  ) {}

  /** The merged value at `key`. @throws KvError accessed_unreadable (1036) */
  get(key: Buffer): Buffer | undefined {
    const pending = this.writes.keys.get(key);
    if (pending) return resolvePendingWrite(pending, pending.kind === 'atomic' ? this.store.get(key) : undefined);
    if (this.writes.cleared.rangeContaining(key)) return undefined;
    if (this.writes.unreadable.rangeContaining(key)) throw unreadable();
    return this.store.get(key);
  }

  /**
   * True when the merged value at `key` depends on the stored value, i.e. a (non-snapshot) read of it
   * must add a read conflict. Keys the transaction set, cleared or range-cleared do not.
   */
  dependsOnStore(key: Buffer): boolean {
    const pending = this.writes.keys.get(key);
    if (pending) return pending.kind === 'atomic';
    return !this.writes.cleared.rangeContaining(key);
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

  /** Merged pairs with keys in `[begin, end)`, ascending. @throws KvError accessed_unreadable (1036) */
  *forward(begin: Buffer, end: Buffer): Generator<[Buffer, Buffer]> {
    const { store, writes } = this;
    const cleared = writes.cleared;
    let stored = store.entries(begin);
    let s = nextOf(stored);
    const pending = writes.keys.entries(begin);
    let w = nextOf(pending);
    for (;;) {
      while (s && !cleared.isEmpty) {
        const hidden = cleared.rangeContaining(s[0]);
        if (!hidden) break;
        stored = store.entries(hidden.end);
        s = nextOf(stored);
      }
      if (s && compareBytes(s[0], end) >= 0) s = undefined;
      if (w && compareBytes(w[0], end) >= 0) w = undefined;
      if (w && (!s || compareBytes(w[0], s[0]) <= 0)) {
        let base: Buffer | undefined;
        if (s && compareBytes(w[0], s[0]) === 0) {
          base = s[1];
          s = nextOf(stored);
        }
        const key = w[0];
        const value = resolvePendingWrite(w[1], base);
        w = nextOf(pending);
        if (value !== undefined) yield [key, value];
      } else if (s) {
        yield s;
        s = nextOf(stored);
      } else {
        return;
      }
    }
  }

  /** Merged pairs with keys in `[begin, end)`, descending. @throws KvError accessed_unreadable (1036) */
  *backward(begin: Buffer, end: Buffer): Generator<[Buffer, Buffer]> {
    const { store, writes } = this;
    const cleared = writes.cleared;
    let stored = store.entriesReversed(end, undefined, true);
    let s = nextOf(stored);
    const pending = writes.keys.entriesReversed(end, undefined, true);
    let w = nextOf(pending);
    for (;;) {
      while (s && !cleared.isEmpty) {
        const hidden = cleared.rangeContaining(s[0]);
        if (!hidden) break;
        stored = store.entriesReversed(hidden.begin, undefined, true);
        s = nextOf(stored);
      }
      if (s && compareBytes(s[0], begin) < 0) s = undefined;
      if (w && compareBytes(w[0], begin) < 0) w = undefined;
      if (w && (!s || compareBytes(w[0], s[0]) >= 0)) {
        let base: Buffer | undefined;
        if (s && compareBytes(w[0], s[0]) === 0) {
          base = s[1];
          s = nextOf(stored);
        }
        const key = w[0];
        const value = resolvePendingWrite(w[1], base);
        w = nextOf(pending);
        if (value !== undefined) yield [key, value];
      } else if (s) {
        yield s;
        s = nextOf(stored);
      } else {
        return;
      }
    }
  }

  /**
   * Appends the merged pairs of `[begin, end)` to `out`, ascending or descending, until `out` holds
   * `limit` pairs (`Infinity`: all of them). The same pairs, in the same order, as {@link forward} and
   * {@link backward}, without a generator step per pair: stored pairs are collected a segment at a time
   * (the parts of the range between this transaction's range clears) with the pending writes of the
   * segment merged in as they come.
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
      if (reverse) scanBackward(this.store, begin, end, total, out);
      else scanForward(this.store, begin, end, total, out);
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
        scanForward(store, cursor, segmentEnd, total, out);
      } else {
        const highest = highestStoredKey(store, cursor, segmentEnd);
        const stored = store.entries(cursor, []);
        let last = highest === undefined;
        while (!last && out.length < total) {
          const s = stored.next();
          if (s.done) break;
          const key = s.value[0];
          const value = s.value[1];
          last = key === highest;
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
        scanBackward(store, segmentBegin, cursor, total, out);
      } else {
        const lowest = lowestStoredKey(store, segmentBegin, cursor);
        const stored = store.entriesReversed(cursor, [], true);
        let last = lowest === undefined;
        while (!last && out.length < total) {
          const s = stored.next();
          if (s.done) break;
          const key = s.value[0];
          const value = s.value[1];
          last = key === lowest;
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
    let boundary = orEqual ? keyAfter(key) : key;
    if (compareBytes(boundary, MAX_USER_KEY) > 0) boundary = MAX_USER_KEY;
    if (offset >= 1) {
      let remaining = offset;
      for (const [found] of this.forward(boundary, MAX_USER_KEY)) {
        if (--remaining === 0) return { key: found, examined: { begin: boundary, end: keyAfter(found) } };
      }
      return { key: MAX_USER_KEY, examined: { begin: boundary, end: MAX_USER_KEY } };
    }
    let remaining = 1 - offset;
    for (const [found] of this.backward(EMPTY_KEY, boundary)) {
      if (--remaining === 0) return { key: found, examined: { begin: found, end: boundary } };
    }
    return { key: EMPTY_KEY, examined: { begin: EMPTY_KEY, end: boundary } };
  }
}

/**
 * Appends the stored pairs of `[begin, end)`, ascending, until `out` holds `total` pairs. The scan
 * stops on reaching the range's highest stored key (the very object: the snapshot is frozen) rather
 * than comparing every key with `end`; comparing costs more than stepping the iterator.
 */
function scanForward(store: BTree<Buffer, Buffer>, begin: Buffer, end: Buffer, total: number, out: KeyValue[]): void {
  if (out.length >= total) return;
  const highest = highestStoredKey(store, begin, end);
  if (highest === undefined) return;
  const stored = store.entries(begin, []);
  for (let s = stored.next(); !s.done; s = stored.next()) {
    const key = s.value[0];
    out.push({ key, value: s.value[1] });
    if (key === highest || out.length >= total) return;
  }
}

/** The highest stored key in `[begin, end)`, if any. */
function highestStoredKey(store: BTree<Buffer, Buffer>, begin: Buffer, end: Buffer): Buffer | undefined {
  const last = store.nextLowerPair(end);
  return last && compareBytes(last[0], begin) >= 0 ? last[0] : undefined;
}

/**
 * Appends the stored pairs of `[begin, end)`, descending, until `out` holds `total` pairs; stops on the
 * range's lowest stored key, as {@link scanForward} does on its highest.
 */
function scanBackward(store: BTree<Buffer, Buffer>, begin: Buffer, end: Buffer, total: number, out: KeyValue[]): void {
  if (out.length >= total) return;
  const lowest = lowestStoredKey(store, begin, end);
  if (lowest === undefined) return;
  const stored = store.entriesReversed(end, [], true);
  for (let s = stored.next(); !s.done; s = stored.next()) {
    const key = s.value[0];
    out.push({ key, value: s.value[1] });
    if (key === lowest || out.length >= total) return;
  }
}

/** The lowest stored key in `[begin, end)`, if any: where a descending scan stops. */
function lowestStoredKey(store: BTree<Buffer, Buffer>, begin: Buffer, end: Buffer): Buffer | undefined {
  const first = store.getPairOrNextHigher(begin);
  return first && compareBytes(first[0], end) < 0 ? first[0] : undefined;
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
function pendingAtOrAbove(
  iterator: Iterator<[Buffer, PendingWrite]>,
  begin: Buffer,
): [Buffer, PendingWrite] | undefined {
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
