import BTree from 'sorted-btree';
import { compareBytes } from '../../src/kv/contract/bytes';
import { ReadYourWritesView } from '../../src/kv/client/read-your-writes';
import { RangeSet } from '../../src/kv/client/range-set';
import { resolvePendingWrite, WriteSet } from '../../src/kv/client/write-set';
import type { KeyValue } from '../../src/kv/contract/types';
import { seededRandom } from '../../src/kv/engine-parts/seeded-random';
import { FrozenTree } from '../../src/kv/memory/frozen-tree';
import { testSeed } from '../support/random';

/**
 * The merged pairs of `[begin, end)` worked out the obvious way: every key of the snapshot and of the
 * pending writes, in read order, each resolved on its own. A pending write inside a cleared range was
 * made after the clear, so it sees no stored value. Stops at `limit` pairs, as a read does, so that a
 * versionstamped value past the limit is not reached.
 */
function mergedModel(snapshot: BTree<Buffer, Buffer>, writes: WriteSet, begin: Buffer, end: Buffer, limit: number, reverse: boolean): KeyValue[] {
  const inRange = (key: Buffer) => compareBytes(key, begin) >= 0 && compareBytes(key, end) < 0;
  const keys = [...new Set([...snapshot.keys(), ...writes.keys.keys()].filter(inRange).map((k) => k.toString('latin1')))]
    .map((k) => Buffer.from(k, 'latin1'))
    .sort(compareBytes);
  if (reverse) keys.reverse();
  const pairs: KeyValue[] = [];
  for (const key of keys) {
    if (pairs.length >= limit) break;
    const cleared = writes.cleared.rangeContaining(key) !== undefined;
    const stored = cleared ? undefined : snapshot.get(key);
    const pending = writes.keys.get(key);
    const value = pending ? resolvePendingWrite(pending, stored) : stored;
    if (value !== undefined) pairs.push({ key, value });
  }
  return pairs;
}

/**
 * Every read of a transaction's merged view goes through `collect`; it must give the pairs of the
 * obvious model (or the same error) for any snapshot and any pending writes. This compares them on
 * seeded random cases.
 */
describe('ReadYourWritesView.collect', () => {
  const seed = testSeed();

  it(`returns the merged pairs, in both directions, with limits (seed ${seed})`, () => {
    const rnd = seededRandom(seed);
    const int = (n: number) => Math.floor(rnd() * n);
    const key = () => Buffer.from(String.fromCharCode(97 + int(6)) + (rnd() < 0.5 ? String.fromCharCode(97 + int(6)) : ''));
    const show = (result: KeyValue[] | string) =>
      typeof result === 'string' ? result : result.map((kv) => `${kv.key.toString()}=${kv.value.toString('hex')}`).join(',');

    for (let round = 0; round < 800; round++) {
      const store = new BTree<Buffer, Buffer>(undefined, compareBytes);
      for (let i = int(30); i > 0; i--) store.set(key(), Buffer.from([int(256)]));
      const snapshot = store.clone();
      snapshot.freeze();
      const writes = new WriteSet();
      for (let i = int(12); i > 0; i--) {
        const r = rnd();
        if (r < 0.35) writes.set(key(), Buffer.from([int(256)]));
        else if (r < 0.5) writes.clear(key());
        else if (r < 0.7) {
          let [a, b] = [key(), key()];
          if (compareBytes(a, b) > 0) [a, b] = [b, a];
          if (compareBytes(a, b) < 0) writes.clearRange(a, b);
        } else if (r < 0.9) writes.atomic(rnd() < 0.5 ? 'add' : 'compareAndClear', key(), Buffer.from([int(3)]));
        else if (r < 0.95) writes.setVersionstampedValue(key(), { bytes: Buffer.alloc(10), offset: 0 });
      }
      const view = new ReadYourWritesView(new FrozenTree(snapshot), writes);

      for (let q = 0; q < 10; q++) {
        let a = rnd() < 0.1 ? Buffer.alloc(0) : key();
        let b = rnd() < 0.1 ? Buffer.from([0xff]) : key();
        if (compareBytes(a, b) > 0) [a, b] = [b, a];
        const limit = rnd() < 0.4 ? Infinity : 1 + int(8);
        const reverse = rnd() < 0.5;

        let expected: KeyValue[] | string;
        try {
          expected = mergedModel(snapshot, writes, a, b, limit, reverse);
        } catch (err) {
          expected = `throws ${(err as Error).message}`;
        }

        let actual: KeyValue[] | string;
        try {
          // collect appends to what the array already holds.
          const out: KeyValue[] = rnd() < 0.2 ? [{ key: Buffer.from('before'), value: Buffer.alloc(0) }] : [];
          const before = out.length;
          view.collect(a, b, limit, reverse, out);
          actual = out.slice(before);
        } catch (err) {
          actual = `throws ${(err as Error).message}`;
        }

        const where = `round ${round}, [${a.toString()}, ${b.toString()}) limit ${limit}${reverse ? ' reverse' : ''}`;
        expect(`${where}: ${show(actual)}`).toBe(`${where}: ${show(expected)}`);
      }
    }
  });
});

describe('WriteSet range clears', () => {
  const key = (s: string) => Buffer.from(s);

  it('builds the set of cleared ranges only when a read asks for it, with every clear made before', () => {
    const add = jest.spyOn(RangeSet.prototype, 'add');
    try {
      const writes = new WriteSet();
      // A batch of document rewrites: a clear of each document, then its keys, and no read.
      for (const doc of ['a', 'b', 'c']) {
        writes.clearRange(key(`${doc}/`), key(`${doc}0`));
        writes.set(key(`${doc}/x`), key('1'));
      }
      expect(add).not.toHaveBeenCalled();
      expect(writes.writeConflicts().map((r) => [r.begin.toString(), r.end.toString()])).toEqual([
        ['a/', 'a0'],
        ['b/', 'b0'],
        ['c/', 'c0'],
      ]);
      expect(add).not.toHaveBeenCalled();
      // A read: every clear so far is in the set, and a clear after it joins on the next read.
      expect(writes.cleared.rangeContaining(key('b/y'))?.begin.toString()).toBe('b/');
      expect(add).toHaveBeenCalledTimes(3);
      writes.clearRange(key('d/'), key('d0'));
      expect(add).toHaveBeenCalledTimes(3);
      expect(writes.cleared.rangeContaining(key('d/y'))?.end.toString()).toBe('d0');
      expect(writes.cleared.rangeContaining(key('e/y'))).toBeUndefined();
      expect(add).toHaveBeenCalledTimes(4);
    } finally {
      add.mockRestore();
    }
  });
});
