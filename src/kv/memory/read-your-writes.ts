import type BTree from 'sorted-btree';
import { compareBytes, keyAfter } from '../bytes';
import { kvError } from '../errors';
import type { KeyRange } from './range-set';
import { resolvePendingWrite, type WriteSet } from './write-set';

/** The first key of FDB's system keyspace: user keys are below it, and reads are clamped to it. */
export const MAX_USER_KEY: Buffer = Buffer.from([0xff]);
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

function nextOf<T>(iterator: Iterator<T>): T | undefined {
  const result = iterator.next();
  return result.done ? undefined : result.value;
}

function unreadable() {
  return kvError('accessed_unreadable', 'the range may hold a versionstamped key written by this transaction');
}
