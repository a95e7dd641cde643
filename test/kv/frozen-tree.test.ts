import BTree from 'sorted-btree';
import { compareBytes } from '../../src/kv/contract/bytes';
import type { KeyValue } from '../../src/kv/contract/types';
import { seededRandom } from '../../src/kv/engine-parts/seeded-random';
import { FrozenTree } from '../../src/kv/memory/frozen-tree';
import { testSeed } from '../support/random';

/**
 * The memory engine's stored pairs as range reads take them: `collect` returns the pairs of
 * `[begin, end)` in either direction up to a total, whether the range is short or long, within a leaf
 * or across many (both directions walk the tree's nodes, leaf after leaf), and appends after what the
 * output already holds.
 */
describe('FrozenTree.collect', () => {
  const seed = testSeed();

  it(`returns the pairs of a range in order, short and long ranges alike, up to the total (seed ${seed})`, () => {
    const rnd = seededRandom(seed);
    const int = (n: number) => Math.floor(rnd() * n);
    // Keys of 1 to 4 letters from 8 (ranges of every length from none to all of a few thousand keys),
    // in some rounds of 1 to 9 letters from 2 (long shared prefixes, as a collection's keys have), or
    // after a common prefix of 130 bytes (past which key comparison changes method).
    let letters = 8;
    let longest = 4;
    let common = '';
    const key = () => Buffer.from(common + Array.from({ length: 1 + int(longest) }, () => String.fromCharCode(97 + int(letters))).join(''));
    const show = (pairs: readonly KeyValue[]) => pairs.map((p) => `${p.key.toString()}=${p.value[0]}`).join(',');
    for (let round = 0; round < 300; round++) {
      [letters, longest] = round % 3 === 1 ? [2, 9] : [8, 4];
      common = round % 7 === 3 ? 'p'.repeat(130) : '';
      const store = new BTree<Buffer, Buffer>(undefined, compareBytes);
      // Now and then a tree of several levels, some of its keys deleted again (nodes merged, emptied).
      for (let i = round % 10 === 0 ? 2000 + int(2000) : int(400); i > 0; i--) store.set(key(), Buffer.from([int(256)]));
      if (rnd() < 0.3) for (let i = int(store.size); i > 0; i--) store.delete(key());
      const frozen = store.clone();
      frozen.freeze();
      const tree = new FrozenTree(frozen);
      for (let q = 0; q < 10; q++) {
        let [a, b] = [rnd() < 0.1 ? Buffer.alloc(0) : key(), rnd() < 0.1 ? Buffer.from([0xff]) : key()];
        if (compareBytes(a, b) > 0) [a, b] = [b, a];
        const reverse = rnd() < 0.5;
        const have = rnd() < 0.2 ? 3 : 0;
        const total = rnd() < 0.5 ? Infinity : have + int(40);
        const inRange = [...frozen.entries()]
          .filter(([k]) => compareBytes(k, a) >= 0 && compareBytes(k, b) < 0)
          .map(([k, v]) => ({ key: k, value: v }));
        if (reverse) inRange.reverse();
        const expected = inRange.slice(0, Math.max(0, total - have));
        const out: KeyValue[] = Array.from({ length: have }, () => ({ key: Buffer.from('before'), value: Buffer.of(0) }));
        tree.collect(a, b, reverse, total, out);
        const where = `round ${round}, [${a.toString()}, ${b.toString()}) total ${total}${reverse ? ' reverse' : ''}`;
        expect(`${where}: ${show(out.slice(have))}`).toBe(`${where}: ${show(expected)}`);
        expect(out.slice(0, have).every((p) => p.key.toString() === 'before')).toBe(true);
      }
    }
  });
});

describe('FrozenTree.get', () => {
  const seed = testSeed();

  it(`finds every stored key, and none of the keys around them (seed ${seed})`, () => {
    const rnd = seededRandom(seed);
    const int = (n: number) => Math.floor(rnd() * n);
    for (let round = 0; round < 60; round++) {
      // Short keys from few letters (prefixes of each other), long shared prefixes now and then, and
      // trees of one leaf to several levels.
      const common = round % 5 === 2 ? 'p'.repeat(130) : '';
      const key = () => Buffer.from(common + Array.from({ length: int(6) }, () => String.fromCharCode(97 + int(3))).join(''));
      const store = new BTree<Buffer, Buffer>(undefined, compareBytes);
      for (let i = round % 4 === 0 ? 3000 : int(100); i > 0; i--) store.set(key(), Buffer.from([int(256)]));
      const frozen = store.clone();
      frozen.freeze();
      const tree = new FrozenTree(frozen);
      for (let q = 0; q < 200; q++) {
        const probe = key();
        // A fresh Buffer, never the stored object.
        expect(`${probe.toString()}: ${tree.get(Buffer.from(probe))?.[0]}`).toBe(`${probe.toString()}: ${frozen.get(probe)?.[0]}`);
      }
    }
  });
});
