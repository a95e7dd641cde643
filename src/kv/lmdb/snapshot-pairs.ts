import { compareBytes, keyAfter } from '../contract/bytes';
import type { KeyValue } from '../contract/types';
import type { StoredPairs } from '../client/read-your-writes';
import type { ReadSnapshot } from './read-snapshot';

/** Pairs read by a scan's first batch, when the caller expects no particular number. */
const DEFAULT_FIRST_BATCH = 256;
const MAX_BATCH = 4096;

/**
 * An LMDB read snapshot as a transaction's read-your-writes merge reads it: `get` is a point read,
 * `collect` one LMDB cursor of exactly the pairs wanted, and the iterators (for the parts of a range
 * that the transaction wrote into, where the number of stored pairs needed is unknown) read in
 * batches, each a short cursor closed before it is returned, so that abandoning one holds nothing
 * open.
 *
 * `expected` is how many pairs the read wants: an iterator's first batch reads that many and a few
 * more, then batches grow, so that a limited read usually costs one cursor.
 */
export class SnapshotPairs implements StoredPairs {
  private readonly firstBatch: number;

  constructor(
    private readonly snapshot: ReadSnapshot,
    expected = DEFAULT_FIRST_BATCH,
  ) {
    this.firstBatch = Number.isFinite(expected) ? Math.min(Math.max(expected + 2, 4), MAX_BATCH) : DEFAULT_FIRST_BATCH;
  }

  get(key: Buffer): Buffer | undefined {
    this.snapshot.assertReadable();
    return this.snapshot.store.get(key);
  }

  /**
   * Through the engine's range cache when it keeps one (see `RangeCache`): a range kept and unchanged
   * since is answered from it (a limited read takes its first or last pairs), and a full ascending
   * read is kept.
   */
  collect(begin: Buffer, end: Buffer, reverse: boolean, total: number, out: KeyValue[]): void {
    if (out.length >= total) return;
    const { snapshot } = this;
    snapshot.assertReadable();
    const cache = snapshot.cache;
    if (cache === undefined) {
      snapshot.store.collect(begin, end, reverse, total - out.length, out);
      return;
    }
    const kept = cache.lookup(snapshot.store, snapshot.version, begin, end);
    if (kept !== undefined) {
      const n = Math.min(kept.length, total - out.length);
      if (reverse) for (let i = kept.length - 1; i >= kept.length - n; i--) out.push(kept[i]);
      else for (let i = 0; i < n; i++) out.push(kept[i]);
      return;
    }
    const first = out.length;
    snapshot.store.collect(begin, end, reverse, total - first, out);
    if (!reverse && total === Infinity) cache.keep(snapshot.store, snapshot.version, begin, end, out.slice(first));
  }

  *ascending(begin: Buffer, end: Buffer): Generator<[Buffer, Buffer]> {
    let from = begin;
    let batch = this.firstBatch;
    while (compareBytes(from, end) < 0) {
      this.snapshot.assertReadable();
      const pairs = this.snapshot.store.scan(from, end, false, batch);
      yield* pairs;
      if (pairs.length < batch) return;
      from = keyAfter(pairs[pairs.length - 1][0]);
      batch = Math.min(batch * 4, MAX_BATCH);
    }
  }

  *descending(begin: Buffer, end: Buffer): Generator<[Buffer, Buffer]> {
    let to = end;
    let batch = this.firstBatch;
    while (compareBytes(begin, to) < 0) {
      this.snapshot.assertReadable();
      const pairs = this.snapshot.store.scan(begin, to, true, batch);
      yield* pairs;
      if (pairs.length < batch) return;
      to = pairs[pairs.length - 1][0];
      batch = Math.min(batch * 4, MAX_BATCH);
    }
  }
}
