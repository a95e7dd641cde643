import { compareBytes, int64LE } from '../../src/kv/contract/bytes';
import { applyAtomicOp } from '../../src/kv/client/atomic-ops';
import type { Mutation } from '../../src/kv/client/mutation';
import BTree from 'sorted-btree';
import { FrozenTree } from '../../src/kv/memory/frozen-tree';
import { rootOf, type TreeNode } from '../../src/kv/memory/tree-nodes';
import { VersionedStore } from '../../src/kv/memory/versioned-store';
import { Random, testSeed } from '../support/random';

const NO_STAMP = (): Buffer => {
  throw new Error('no versionstamp expected');
};

/** The store's pairs as `key=value` strings, in key order. */
function contents(store: VersionedStore): string[] {
  const out: string[] = [];
  store.snapshot().forEachPair((key, value) => {
    out.push(`${key.toString()}=${value.toString('hex')}`);
  });
  return out;
}

function modelContents(model: Map<string, Buffer>): string[] {
  return [...model.entries()]
    .sort(([a], [b]) => compareBytes(Buffer.from(a), Buffer.from(b)))
    .map(([key, value]) => `${key}=${value.toString('hex')}`);
}

/**
 * The memory engine's committed data: commits overwrite stored keys in place when no reader holds the
 * nodes on their path, and copy those nodes when a snapshot a transaction reads shares them.
 */
describe('VersionedStore.apply', () => {
  const seed = testSeed();

  it(`leaves every snapshot a reader holds as it was, while later commits overwrite, add to and clear its keys (seed ${seed})`, () => {
    const rnd = new Random(seed);
    const store = new VersionedStore(1n);
    const model = new Map<string, Buffer>();
    // Snapshots taken with a reader (commits then write to a clone), and what each held when taken.
    const held: { data: ReturnType<VersionedStore['snapshot']>; expected: string[] }[] = [];
    const key = () => `k${String(rnd.int(600)).padStart(4, '0')}`;
    let version = 1n;
    for (let commit = 0; commit < 400; commit++) {
      const read = rnd.chance(0.2);
      if (read) held.push({ data: store.snapshot(), expected: contents(store) });
      const mutations: Mutation[] = [];
      for (let n = 1 + rnd.int(12); n > 0; n--) {
        const k = key();
        const choice = rnd.int(10);
        if (choice < 6) {
          const value = Buffer.from([rnd.int(256), rnd.int(256)]);
          mutations.push({ type: 'set', key: Buffer.from(k), value });
          model.set(k, value);
        } else if (choice < 8) {
          const operand = int64LE(1 + rnd.int(5));
          mutations.push({ type: 'atomic', op: 'add', key: Buffer.from(k), operand });
          model.set(k, applyAtomicOp('add', model.get(k), operand)!);
        } else {
          mutations.push({ type: 'clear', key: Buffer.from(k) });
          model.delete(k);
        }
      }
      version++;
      store.apply(mutations, version, NO_STAMP, read);
      expect(contents(store)).toEqual(modelContents(model));
      // The tree's invariants: each internal node's keys and cached sizes, node sizes, key order.
      checkTree(store.snapshot());
    }
    for (const { data, expected } of held) {
      const now: string[] = [];
      data.forEachPair((k, v) => {
        now.push(`${k.toString()}=${v.toString('hex')}`);
      });
      expect(now).toEqual(expected);
    }
    expect(held.length).toBeGreaterThan(40);
  });

  it(`inserts and deletes keys as a queue and random writers do, splitting and merging leaves (seed ${seed})`, () => {
    const rnd = new Random(seed + 2);
    const store = new VersionedStore(1n);
    const model = new Map<string, Buffer>();
    let held: { data: ReturnType<VersionedStore['snapshot']>; expected: string[] }[] = [];
    let version = 1n;
    // A queue's items pushed at the end of its range and popped from its front, among other keys
    // inserted and cleared at random: leaves fill, split, empty and merge.
    let head = 0;
    let tail = 0;
    const item = (n: number) => `q/${String(n).padStart(6, '0')}`;
    const other = () => `${rnd.pick(['a', 'm', 'z'])}/${String(rnd.int(3000)).padStart(5, '0')}`;
    for (let commit = 0; commit < 3000; commit++) {
      const read = rnd.chance(0.03);
      if (read) held.push({ data: store.snapshot(), expected: contents(store) });
      const mutations: Mutation[] = [];
      for (let n = 1 + rnd.int(4); n > 0; n--) {
        const choice = rnd.int(10);
        const value = Buffer.from([rnd.int(256)]);
        if (choice < 3) {
          mutations.push({ type: 'set', key: Buffer.from(item(tail)), value });
          model.set(item(tail++), value);
        } else if (choice < 6 && head < tail) {
          mutations.push({ type: 'clear', key: Buffer.from(item(head)) });
          model.delete(item(head++));
        } else if (choice < 8) {
          const k = other();
          mutations.push({ type: 'set', key: Buffer.from(k), value });
          model.set(k, value);
        } else {
          const k = other();
          mutations.push({ type: 'clear', key: Buffer.from(k) });
          model.delete(k);
        }
      }
      store.apply(mutations, ++version, NO_STAMP, read);
      if (commit % 100 === 0) {
        expect(contents(store)).toEqual(modelContents(model));
        checkTree(store.snapshot());
      }
      if (held.length > 0 && rnd.chance(0.05)) {
        for (const { data, expected } of held) expect(pairsOf(data)).toEqual(expected);
        held = [];
      }
    }
    expect(contents(store)).toEqual(modelContents(model));
    checkTree(store.snapshot());
    for (const { data, expected } of held) expect(pairsOf(data)).toEqual(expected);
    expect(model.size).toBeGreaterThan(500);
  });

  it(`applies long commits of counters, sets and clears that merge and split leaves mid-commit as a model does (seed ${seed})`, () => {
    // Within one commit the in-place writes remember the leaf they last reached; a write through the
    // tree's own methods (a delete or range clear that merges leaves) must make them forget it, or a
    // later key of the commit goes to a leaf no longer in the tree.
    const rnd = new Random(seed + 3);
    const store = new VersionedStore(1n);
    const model = new Map<string, Buffer>();
    const name = (i: number) => `c${String(i).padStart(4, '0')}`;
    let version = 1n;
    for (let commit = 0; commit < 1000; commit++) {
      const mutations: Mutation[] = [];
      // Fill for 20 commits, then drain for 20: leaves split, then fall under half and merge.
      const filling = commit % 40 < 20;
      for (let n = 20 + rnd.int(40); n > 0; n--) {
        const k = name(rnd.int(100));
        const choice = rnd.int(10);
        if (choice < 4) {
          const operand = int64LE(1 + rnd.int(9));
          mutations.push({ type: 'atomic', op: 'add', key: Buffer.from(k), operand });
          model.set(k, applyAtomicOp('add', model.get(k), operand)!);
        } else if (choice < (filling ? 8 : 5)) {
          const value = Buffer.from([rnd.int(256)]);
          mutations.push({ type: 'set', key: Buffer.from(k), value });
          model.set(k, value);
        } else if (choice < 9) {
          mutations.push({ type: 'clear', key: Buffer.from(k) });
          model.delete(k);
        } else {
          // A range clear, sometimes with a set inside it (applied together as one replacement).
          const from = rnd.int(100);
          const to = from + 1 + rnd.int(6);
          mutations.push({ type: 'clearRange', begin: Buffer.from(name(from)), end: Buffer.from(name(to)) });
          for (const stored of [...model.keys()]) if (stored >= name(from) && stored < name(to)) model.delete(stored);
          if (rnd.chance(0.5)) {
            const inside = name(from + rnd.int(to - from));
            const value = Buffer.from([rnd.int(256)]);
            mutations.push({ type: 'set', key: Buffer.from(inside), value });
            model.set(inside, value);
          }
        }
      }
      const read = rnd.chance(0.05);
      const held = read ? { data: store.snapshot(), expected: contents(store) } : undefined;
      store.apply(mutations, ++version, NO_STAMP, read);
      expect(contents(store)).toEqual(modelContents(model));
      if (held !== undefined) expect(pairsOf(held.data)).toEqual(held.expected);
      if (commit % 50 === 0) checkTree(store.snapshot());
    }
  });

  it("removes a queue head in place, all but each leaf's last key, unless a snapshot shares the leaf", () => {
    const { store, item, pop } = queueOf2000();
    countingEditRanges((edits) => {
      // Pops from the front: in place, but for the last key of each leaf (which its parent keeps).
      for (let n = 0; n < 200; n++) pop(n);
      const throughTree = edits();
      expect(throughTree).toBeGreaterThan(0);
      expect(throughTree).toBeLessThan(200 / 8);
      // A key not stored: nothing to remove, and no edit.
      pop(5);
      expect(edits()).toBe(throughTree);
      // A reader holds the tree: the pop copies the path it changes, so the snapshot stays whole.
      const snapshot = store.snapshot();
      const expected = pairsOf(snapshot);
      pop(200, true);
      expect(edits()).toBe(throughTree + 1);
      expect(pairsOf(snapshot)).toEqual(expected);
    });
    const pairs = contents(store);
    expect(pairs).toHaveLength(2000 - 201);
    expect(pairs[0]).toBe(`${item(201).toString()}=${Buffer.from([1]).toString('hex')}`);
    checkTree(store.snapshot());
  });

  it('pops the head items of one leaf after the first without descending from the root again, until a snapshot or a tree write', () => {
    const { store, item, pop } = queueOf2000();
    // Counts the pops that read the root's keys (a descent).
    const rootReads = countingRootReads(store);
    const descents = (from: number, to: number, read = false): number => {
      let count = 0;
      for (let n = from; n < to; n++) {
        const before = rootReads();
        pop(n, read && n === from);
        if (rootReads() > before) count++;
      }
      return count;
    };
    const leafSize = rootOf(store.snapshot())!.children![0].keys.length;
    expect(leafSize).toBeGreaterThan(4);
    // One descent for a leaf's first pop, and the tree's own delete of its last key (which reads the root).
    expect(descents(0, 200)).toBeLessThanOrEqual(2 * Math.ceil(200 / leafSize) + 2);
    expect(contents(store)).toHaveLength(1800);
    checkTree(store.snapshot());
    // A reader holds the tree: the pop writes to a clone, whose path is found from its root.
    const snapshot = store.snapshot();
    const expected = pairsOf(snapshot);
    descents(200, 201, true);
    expect(pairsOf(snapshot)).toEqual(expected);
    expect(contents(store)[0]).toBe(`${item(201).toString()}=${Buffer.from([1]).toString('hex')}`);
    checkTree(store.snapshot());
  });

  it('reads a key of the leaf it last wrote in place without a descent, and a snapshot held across a later commit as it was', () => {
    const { store, key: k, apply } = storeOf2000('k');
    // Overwrites: the first copies the path the loads' unions share, the second is in place and its leaf remembered.
    apply([{ type: 'set', key: k(1500), value: Buffer.from('one') }]);
    apply([{ type: 'set', key: k(1500), value: Buffer.from('two') }]);
    const frozen = new FrozenTree(store.snapshot(), store.recentLeaves);
    const rootReads = countingRootReads(store);
    expect(frozen.get(k(1500))?.toString()).toBe('two');
    expect(frozen.get(k(1501))).toEqual(Buffer.from([1]));
    expect(rootReads()).toBe(0);
    // Elsewhere, or not stored: a descent.
    expect(frozen.get(k(10))).toEqual(Buffer.from([10]));
    expect(frozen.get(Buffer.from('k/001500x'))).toBeUndefined();
    expect(rootReads()).toBeGreaterThan(0);
    // A reader holds the tree: the commit writes to a clone, and the snapshot reads as it was.
    apply([{ type: 'set', key: k(1500), value: Buffer.from('three') }], true);
    expect(frozen.get(k(1500))?.toString()).toBe('two');
    expect(new FrozenTree(store.snapshot(), store.recentLeaves).get(k(1500))?.toString()).toBe('three');
    apply([{ type: 'set', key: k(1501), value: Buffer.from('four') }]);
    expect(frozen.get(k(1501))).toEqual(Buffer.from([1]));
    expect(new FrozenTree(store.snapshot(), store.recentLeaves).get(k(1501))?.toString()).toBe('four');
    checkTree(store.snapshot());
  });

  it('appends keys in place, at the end of the store and inside it, but where BTree.set splits a leaf', () => {
    const store = new VersionedStore(1n);
    let version = 1n;
    const apply = (mutations: Mutation[]) => store.apply(mutations, ++version, NO_STAMP, false);
    const key = (list: string, n: number) => Buffer.from(`${list}/${String(n).padStart(6, '0')}`);
    // Two lists, 'b' inside the store (keys of 'c' after it) and 'z' at its end, and their version keys.
    for (const list of ['a', 'b', 'c', 'z']) apply([{ type: 'set', key: Buffer.from(`${list}/v`), value: Buffer.from([0]) }]);
    const sets = jest.spyOn(BTree.prototype, 'set');
    try {
      for (let n = 0; n < 3000; n++) {
        for (const list of ['b', 'z']) {
          apply([
            { type: 'set', key: key(list, n), value: Buffer.from([n & 0xff]) },
            { type: 'set', key: Buffer.from(`${list}/v`), value: Buffer.from([n & 0xff]) },
          ]);
        }
        if (n % 500 === 0) apply([{ type: 'set', key: key('c', n), value: Buffer.from([1]) }]);
        if (n % 1000 === 999) checkTree(store.snapshot());
      }
      // A full leaf passes its first pair to the leaf before it while that has room (as BTree.set
      // does); only when both are full does BTree.set split it: about one append in 32.
      expect(sets.mock.calls.length).toBeGreaterThan(6000 / 64);
      expect(sets.mock.calls.length).toBeLessThan(6000 / 16);
    } finally {
      sets.mockRestore();
    }
    const pairs = contents(store);
    expect(pairs).toHaveLength(4 + 2 * 3000 + 6);
    expect(pairs.filter((p) => p.startsWith('b/0')).map((p) => p.slice(0, 8))).toEqual(
      Array.from({ length: 3000 }, (_, n) => key('b', n).toString()),
    );
    expect(pairs[pairs.length - 2]).toBe(`${key('z', 2999).toString()}=${Buffer.from([2999 & 0xff]).toString('hex')}`);
    expect(pairs[pairs.length - 1]).toBe(`z/v=${Buffer.from([2999 & 0xff]).toString('hex')}`);
    checkTree(store.snapshot());
  });

  it('applies the sets after a range clear that lie outside it, ascending or not, on their own', () => {
    const store = new VersionedStore(1n);
    let version = 1n;
    const apply = (mutations: Mutation[]) => store.apply(mutations, ++version, NO_STAMP, false);
    for (let doc = 0; doc < 100; doc++) apply(rewrite(doc, [1, 2, 3], (leaf) => Buffer.from([leaf])));
    // Document 5 rewritten, then keys of documents 6 and 4 set in the same commit: after the
    // replacement, ascending past its end (6) and not (4), neither cleared nor taken as part of it.
    const set = (doc: number, leaf: number, value: number): Mutation => ({ type: 'set', key: docKey(doc, leaf), value: Buffer.from([value]) });
    const first = apply([...rewrite(5, [1, 2, 3], () => Buffer.from([9])), set(6, 7, 7), set(6, 8, 8)]);
    const second = apply([...rewrite(5, [2, 3], () => Buffer.from([10])), set(4, 9, 9), set(5, 4, 10)]);
    // What watches are told: the replaced range, and each key set outside it.
    const told = (applied: ReturnType<typeof apply>) => [
      ...applied.ranges.map((r) => `${r.begin.toString()}..${r.end.toString()}`),
      ...applied.keys.map(String),
    ];
    expect(told(first)).toEqual(['d005/..d0050', docKey(6, 7).toString(), docKey(6, 8).toString()]);
    expect(told(second)).toEqual(['d005/..d0050', docKey(4, 9).toString(), docKey(5, 4).toString()]);
    const pairs = contents(store).filter((pair) => /^d00[456]\//.test(pair));
    expect(pairs).toEqual([
      `${docKey(4, 1).toString()}=01`,
      `${docKey(4, 2).toString()}=02`,
      `${docKey(4, 3).toString()}=03`,
      `${docKey(4, 9).toString()}=09`,
      `${docKey(5, 2).toString()}=0a`,
      `${docKey(5, 3).toString()}=0a`,
      `${docKey(5, 4).toString()}=0a`,
      `${docKey(6, 1).toString()}=01`,
      `${docKey(6, 2).toString()}=02`,
      `${docKey(6, 3).toString()}=03`,
      `${docKey(6, 7).toString()}=07`,
      `${docKey(6, 8).toString()}=08`,
    ]);
  });

  /** Counts `BTree.editRange` calls (the store's general range replacement) while `body` runs. */
  function countingEditRanges<T>(body: (count: () => number) => T): T {
    const spy = jest.spyOn(BTree.prototype, 'editRange');
    try {
      return body(() => spy.mock.calls.length);
    } finally {
      spy.mockRestore();
    }
  }

  const docKey = (doc: number, leaf: number): Buffer => Buffer.from(`d${String(doc).padStart(3, '0')}/${String(leaf).padStart(2, '0')}`);
  /** A document's range: a clear of it, then a set of each of its keys (as a document rewrite does). */
  function rewrite(doc: number, leaves: readonly number[], value: (leaf: number) => Buffer): Mutation[] {
    const begin = Buffer.from(`d${String(doc).padStart(3, '0')}/`);
    const end = Buffer.from(`d${String(doc).padStart(3, '0')}0`);
    return [{ type: 'clearRange', begin, end }, ...leaves.map((leaf): Mutation => ({ type: 'set', key: docKey(doc, leaf), value: value(leaf) }))];
  }

  it(`replaces ranges (a clear, then sets inside it) as a model does, in place or not, leaving held snapshots as they were (seed ${seed})`, () => {
    const rnd = new Random(seed + 1);
    const store = new VersionedStore(1n);
    const model = new Map<string, Buffer>();
    let held: { data: ReturnType<VersionedStore['snapshot']>; expected: string[] }[] = [];
    const shapes = new Map<number, number[]>();
    let version = 1n;
    const commits = 1500;
    const edits = countingEditRanges((count) => {
      // 300 documents of up to 12 keys each: thousands of keys, so ranges straddle leaves and levels.
      for (let commit = 0; commit < commits; commit++) {
        const read = rnd.chance(0.04);
        if (read) held.push({ data: store.snapshot(), expected: contents(store) });
        const doc = rnd.int(300);
        const stored = shapes.get(doc);
        // Mostly the same keys again (in-place candidates), else others (more, fewer or different).
        const shape =
          stored !== undefined && rnd.chance(0.7)
            ? stored
            : stored !== undefined && stored.length > 1 && rnd.chance(0.3)
              ? stored.slice(rnd.int(2), stored.length - 1 + rnd.int(2))
              : [...new Set(Array.from({ length: 1 + rnd.int(12) }, () => rnd.int(20)))].sort((a, b) => a - b);
        const prefix = `d${String(doc).padStart(3, '0')}/`;
        for (const k of [...model.keys()]) if (k.startsWith(prefix)) model.delete(k);
        // In either order: the store sorts them.
        const values = new Map(shape.map((leaf) => [leaf, Buffer.from([rnd.int(256), rnd.int(256)])]));
        const mutations = rewrite(doc, rnd.chance(0.5) ? shape : [...shape].reverse(), (leaf) => values.get(leaf)!);
        for (const [leaf, value] of values) model.set(docKey(doc, leaf).toString(), value);
        shapes.set(doc, shape);
        version++;
        store.apply(mutations, version, NO_STAMP, read);
        if (commit % 50 === 0) {
          expect(contents(store)).toEqual(modelContents(model));
          checkTree(store.snapshot());
        }
        // Readers come and go: now and then every held snapshot is checked and let go.
        if (held.length > 0 && rnd.chance(0.1)) {
          for (const { data, expected } of held) expect(pairsOf(data)).toEqual(expected);
          held = [];
        }
      }
      return count();
    });
    expect(contents(store)).toEqual(modelContents(model));
    for (const { data, expected } of held) expect(pairsOf(data)).toEqual(expected);
    // Some replacements went in place, others (new or other keys, nodes a snapshot shares) through editRange.
    expect(edits).toBeGreaterThan(150);
    expect(commits - edits).toBeGreaterThan(150);
  });

  it('rewrites the same keys in place unless a snapshot shares their nodes, or the keys differ', () => {
    const store = new VersionedStore(1n);
    const leaves = [1, 2, 3, 5, 8, 13];
    let version = 1n;
    const apply = (mutations: Mutation[], read = false) => store.apply(mutations, ++version, NO_STAMP, read);
    for (let doc = 0; doc < 400; doc++) apply(rewrite(doc, leaves, (leaf) => Buffer.from([leaf])));
    countingEditRanges((edits) => {
      for (let doc = 0; doc < 400; doc++) apply(rewrite(doc, leaves, (leaf) => Buffer.from([leaf, 1])));
      expect(edits()).toBe(0);
      // The keys of one more leaf, one fewer (first or last), one other: the general path, once each.
      apply(rewrite(7, [...leaves, 21], (leaf) => Buffer.from([leaf, 2])));
      apply(rewrite(8, leaves.slice(1), (leaf) => Buffer.from([leaf, 2])));
      apply(rewrite(9, [0, ...leaves.slice(1)], (leaf) => Buffer.from([leaf, 2])));
      apply(rewrite(10, leaves.slice(0, -1), (leaf) => Buffer.from([leaf, 2])));
      expect(edits()).toBe(4);
      // A reader holds the tree: the next commit copies the paths it changes, and the snapshot stays.
      const snapshot = store.snapshot();
      const expected = pairsOf(snapshot);
      apply(
        rewrite(100, leaves, (leaf) => Buffer.from([leaf, 3])),
        true,
      );
      expect(edits()).toBe(5);
      // The path copied for that commit is the store's own again; the rest is still shared.
      apply(rewrite(100, leaves, (leaf) => Buffer.from([leaf, 4])));
      expect(edits()).toBe(5);
      apply(rewrite(300, leaves, (leaf) => Buffer.from([leaf, 4])));
      expect(edits()).toBe(6);
      expect(pairsOf(snapshot)).toEqual(expected);
    });
    const pairs = contents(store);
    expect(pairs).toHaveLength(400 * 6 + 1 - 1 - 1);
    expect(pairs).not.toContain(`${docKey(10, 13).toString()}=0d01`);
    expect(pairs).toContain(`${docKey(100, 13).toString()}=0d04`);
    expect(pairs).toContain(`${docKey(7, 21).toString()}=1502`);
    expect(pairs).not.toContain(`${docKey(8, 1).toString()}=0101`);
    expect(pairs).toContain(`${docKey(9, 0).toString()}=0002`);
    expect(pairs).toContain(`${docKey(299, 8).toString()}=0801`);
  });

  it('keeps the stored Buffer of a value a rewrite in place sets again unchanged, and stores a changed one', () => {
    const store = new VersionedStore(1n);
    const leaves = [1, 2, 3];
    let version = 1n;
    const apply = (mutations: Mutation[]) => store.apply(mutations, ++version, NO_STAMP, false);
    apply(rewrite(0, leaves, (leaf) => Buffer.from([leaf])));
    const before = leaves.map((leaf) => store.snapshot().get(docKey(0, leaf)));
    // Leaf 2 changes (same length, other bytes), leaf 3 grows; leaf 1 is written again as it was.
    const written = new Map(leaves.map((leaf) => [leaf, leaf === 1 ? Buffer.from([1]) : leaf === 2 ? Buffer.from([9]) : Buffer.from([3, 0])]));
    countingEditRanges((edits) => {
      apply(rewrite(0, leaves, (leaf) => written.get(leaf)!));
      expect(edits()).toBe(0);
    });
    const after = leaves.map((leaf) => store.snapshot().get(docKey(0, leaf)));
    expect(after.map((value) => value?.toString('hex'))).toEqual(['01', '09', '0300']);
    expect([after[0] === before[0], after[1] === written.get(2), after[2] === written.get(3)]).toEqual([true, true, true]);
  });
});

/** A store holding 2,000 keys `key(n)` (written 100 a commit, each valued `[n % 100]`), and a commit of mutations. */
function storeOf2000(prefix: string): {
  store: VersionedStore;
  key: (n: number) => Buffer;
  apply: (mutations: Mutation[], read?: boolean) => void;
} {
  const store = new VersionedStore(1n);
  let version = 1n;
  const apply = (mutations: Mutation[], read = false) => {
    store.apply(mutations, ++version, NO_STAMP, read);
  };
  const key = (n: number) => Buffer.from(`${prefix}/${String(n).padStart(6, '0')}`);
  for (let n = 0; n < 2000; n += 100)
    apply(Array.from({ length: 100 }, (_, i): Mutation => ({ type: 'set', key: key(n + i), value: Buffer.from([i]) })));
  return { store, key, apply };
}

/** A store holding a queue's 2,000 items (`item(n)`), and a pop of item `n` as a commit. */
function queueOf2000(): { store: VersionedStore; item: (n: number) => Buffer; pop: (n: number, read?: boolean) => void } {
  const { store, key, apply } = storeOf2000('q');
  return { store, item: key, pop: (n, read = false) => apply([{ type: 'clear', key: key(n) }], read) };
}

/** Counts the reads of the keys of `store`'s root (each descent reads some), through a proxy of its key array. */
function countingRootReads(store: VersionedStore): () => number {
  const root = rootOf(store.snapshot())!;
  let reads = 0;
  (root as { keys: Buffer[] }).keys = new Proxy(root.keys, {
    get(target, property, receiver) {
      if (typeof property === 'string' && /^\d+$/.test(property)) reads++;
      return Reflect.get(target, property, receiver) as unknown;
    },
  });
  return () => reads;
}

function pairsOf(data: ReturnType<VersionedStore['snapshot']>): string[] {
  const out: string[] = [];
  data.forEachPair((k, v) => {
    out.push(`${k.toString()}=${v.toString('hex')}`);
  });
  return out;
}

/**
 * Checks what `sorted-btree` keeps of its tree (its own `checkValid` compares keys by identity, which
 * an overwrite of a Buffer key already breaks): every node within the size limit, no empty leaf below
 * the root, keys ascending within and across nodes, each internal node's key i equal to the largest
 * key under child i and its cached size the number of pairs under it.
 */
function checkTree(tree: ReturnType<VersionedStore['snapshot']>): void {
  const root = rootOf(tree);
  if (root === undefined) throw new Error('the tree is not laid out as tree-nodes.ts reads it');
  // Plain checks, not `expect` per key: this runs after hundreds of commits of thousands of keys.
  const fail = (what: string) => {
    throw new Error(`tree invariant broken: ${what}`);
  };
  let previous: Buffer | undefined;
  const visit = (node: TreeNode, depth: number): { size: number; max: Buffer | undefined } => {
    if (node.keys.length > tree.maxNodeSize) fail(`a node of ${node.keys.length} keys`);
    if (node.children === undefined) {
      // An empty root shares the tree's array of undefined values.
      if (node.keys.length > 0 && node.values.length !== node.keys.length) fail('a leaf with more or fewer values than keys');
      if (depth > 0 && node.keys.length === 0) fail('an empty leaf below the root');
      for (const key of node.keys) {
        if (previous !== undefined && compareBytes(previous, key) >= 0) fail(`${key.toString()} after ${previous.toString()}`);
        previous = key;
      }
      return { size: node.keys.length, max: node.keys[node.keys.length - 1] };
    }
    if (node.children.length !== node.keys.length) fail('an internal node with more or fewer children than keys');
    let size = 0;
    node.children.forEach((child, i) => {
      const sub = visit(child, depth + 1);
      if (sub.max === undefined || compareBytes(node.keys[i], sub.max) !== 0)
        fail(`internal key ${node.keys[i].toString()} is not its child's largest`);
      size += sub.size;
    });
    if ((node as TreeNode & { _size: number })._size !== size) fail(`an internal node's cached size is not the ${size} pairs under it`);
    return { size, max: node.keys[node.keys.length - 1] };
  };
  expect(visit(root, 0).size).toBe(tree.size);
}
