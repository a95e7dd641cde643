import type BTree from 'sorted-btree';
import { compareBytes, keyAfter } from '../contract/bytes';
import type { ReadSnapshot } from './read-snapshot';

/** Pairs read by a scan's first batch, when the caller expects no particular number. */
const DEFAULT_FIRST_BATCH = 256;
const MAX_BATCH = 4096;

/** The part of `sorted-btree` that the memory engine's `ReadYourWritesView` reads its store through. */
export type OrderedSnapshot = Pick<BTree<Buffer, Buffer>, 'get' | 'entries' | 'entriesReversed'>;

/**
 * A read snapshot seen through the interface of the memory engine's sorted map, so that the memory
 * engine's read-your-writes merge runs unchanged over LMDB: `get` is a point read, and the iterators
 * read the keys of `[begin, end)` in batches (each batch a short LMDB cursor that is closed before it
 * is returned, so abandoning an iterator holds nothing open).
 *
 * The window is what one read of a transaction may look at; `expected` is how many pairs the read
 * wants (the first batch reads that many and a few more, then batches grow), so that a limited range
 * read costs one cursor.
 */
export class SnapshotWindow implements OrderedSnapshot {
  private readonly firstBatch: number;

  constructor(
    private readonly snapshot: ReadSnapshot,
    private readonly begin: Buffer,
    private readonly end: Buffer,
    expected = DEFAULT_FIRST_BATCH,
  ) {
    this.firstBatch = Number.isFinite(expected) ? Math.min(Math.max(expected + 2, 4), MAX_BATCH) : DEFAULT_FIRST_BATCH;
  }

  get(key: Buffer): Buffer | undefined {
    this.snapshot.assertReadable();
    return this.snapshot.store.get(key);
  }

  /** Pairs with keys from `lowestKey` (inclusive) to the window's end, ascending. */
  *entries(lowestKey?: Buffer): IterableIterator<[Buffer, Buffer]> {
    let from = lowestKey === undefined || compareBytes(lowestKey, this.begin) < 0 ? this.begin : lowestKey;
    let batch = this.firstBatch;
    while (compareBytes(from, this.end) < 0) {
      this.snapshot.assertReadable();
      const pairs = this.snapshot.store.scan(from, this.end, false, batch);
      yield* pairs;
      if (pairs.length < batch) return;
      from = keyAfter(pairs[pairs.length - 1][0]);
      batch = Math.min(batch * 4, MAX_BATCH);
    }
  }

  /**
   * Pairs with keys from `highestKey` (excluded when `skipHighest`, as the memory engine asks) down to
   * the window's begin, descending.
   */
  *entriesReversed(highestKey?: Buffer, _reusedArray?: (Buffer | Buffer)[], skipHighest?: boolean): IterableIterator<[Buffer, Buffer]> {
    let to = this.end;
    if (highestKey !== undefined) {
      const bound = skipHighest ? highestKey : keyAfter(highestKey);
      if (compareBytes(bound, to) < 0) to = bound;
    }
    let batch = this.firstBatch;
    while (compareBytes(this.begin, to) < 0) {
      this.snapshot.assertReadable();
      const pairs = this.snapshot.store.scan(this.begin, to, true, batch);
      yield* pairs;
      if (pairs.length < batch) return;
      to = pairs[pairs.length - 1][0];
      batch = Math.min(batch * 4, MAX_BATCH);
    }
  }
}
