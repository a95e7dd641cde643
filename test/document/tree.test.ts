import { flatten } from '../../src/document/values/flatten';
import { childKey, decodePosition, DocumentKeys, elementEnd, subtreeEnd, descendantsBegin } from '../../src/document/keys/layout';
import {
  appendToArray,
  arrayBounds,
  diagnose,
  insertIntoArray,
  prependToArray,
  readSubtree,
  removeFromArray,
  resolvePath,
  writeEntries,
  type Bounds,
} from '../../src/document/values/tree';
import type { JsonValue, PathElement } from '../../src/document/types';
import { Database } from '../../src/kv/contract/database';
import { Limits } from '../../src/kv/contract/limits';
import { openMemoryDatabase } from '../../src/kv/memory/memory-engine';
import type { Transaction } from '../../src/kv/contract/types';
import { CountingEngine } from '../../src/kv/counting-engine';
import { Random, testSeed } from '../support/random';

const keys = new DocumentKeys(Buffer.from('test/'), 'doc');

function setUp(): { kv: Database; counter: CountingEngine } {
  const counter = new CountingEngine(openMemoryDatabase().engine);
  return { kv: new Database(counter), counter };
}

async function store(kv: Database, doc: JsonValue): Promise<void> {
  await kv.transact(async (tr) => {
    tr.clearRange(keys.begin, keys.end);
    writeEntries(tr, flatten(doc, keys.root, Limits.maxKeyBytes));
  });
}

const read = (kv: Database, path: (string | number)[] = []) => kv.transact((tr) => readSubtree(tr, keys.dataKey(path)));

/** The positions of the array's elements, from its keys. */
async function positions(kv: Database, arrayKey: Buffer): Promise<number[]> {
  const pairs = await kv.transact((tr) => tr.getRangeAll(descendantsBegin(arrayKey), subtreeEnd(arrayKey)));
  const out: number[] = [];
  for (const { key } of pairs) {
    if (elementEnd(key, arrayKey.length) === key.length) out.push(decodePosition(key, arrayKey.length));
  }
  return out;
}

async function boundsOf(tr: Transaction, key: Buffer): Promise<Bounds | undefined> {
  const bounds = await arrayBounds(tr, key);
  return typeof bounds === 'object' ? bounds : undefined;
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('arrays: positions', () => {
  it('append writes after the last position and prepend before the first, which may be negative', async () => {
    const { kv } = setUp();
    await store(kv, { list: ['b'] });
    const list = keys.dataKey(['list']);
    await kv.transact((tr) => prependToArray(tr, list, ['a'], Limits.maxKeyBytes));
    await kv.transact((tr) => prependToArray(tr, list, ['y', 'z'], Limits.maxKeyBytes));
    await kv.transact((tr) => appendToArray(tr, list, ['c', 'd'], Limits.maxKeyBytes));
    expect(await positions(kv, list)).toEqual(range(-3, 2));
    expect(await read(kv, ['list'])).toEqual(['y', 'z', 'a', 'b', 'c', 'd']);
  });

  it('append and prepend on an empty array start at position 0', async () => {
    const { kv } = setUp();
    await store(kv, { a: [], b: [] });
    await kv.transact((tr) => appendToArray(tr, keys.dataKey(['a']), [1, 2], Limits.maxKeyBytes));
    await kv.transact((tr) => prependToArray(tr, keys.dataKey(['b']), [1, 2], Limits.maxKeyBytes));
    expect(await positions(kv, keys.dataKey(['a']))).toEqual([0, 1]);
    expect(await positions(kv, keys.dataKey(['b']))).toEqual([-2, -1]);
    expect(await read(kv)).toEqual({ a: [1, 2], b: [1, 2] });
  });

  it('append and prepend write only the new elements and read one limit-1 range', async () => {
    const { kv, counter } = setUp();
    await store(kv, { list: range(0, 99).map((i) => ({ i })) });
    const list = keys.dataKey(['list']);
    for (const op of [appendToArray, prependToArray]) {
      const { counts } = await counter.measure(() => kv.transact((tr) => op(tr, list, [{ new: true }], Limits.maxKeyBytes)));
      expect(counts.rangeReads).toBe(1);
      expect(counts.keysRead).toBe(1);
      expect(counts.sets).toBe(2);
      expect(counts.clearRanges).toBe(0);
    }
  });

  it('arrayBounds reads the first and last positions, and tells an object from an empty node', async () => {
    const { kv } = setUp();
    await store(kv, { list: [{ deep: [1, 2] }, 'x', [3]], obj: { k: 1 }, empty: [], s: 'x'.repeat(200_000) });
    await kv.transact(async (tr) => {
      expect(await arrayBounds(tr, keys.dataKey(['list']))).toEqual({ first: 0, last: 2 });
      expect(await arrayBounds(tr, keys.dataKey(['obj']))).toBe('other');
      expect(await arrayBounds(tr, keys.dataKey(['s']))).toBe('other');
      expect(await arrayBounds(tr, keys.dataKey(['empty']))).toBe('empty');
      expect(await arrayBounds(tr, keys.dataKey(['missing']))).toBe('empty');
    });
  });
});

describe('arrays: insert and remove in the middle move the shorter side', () => {
  const ten = range(0, 9).map((i) => `e${i}`);

  async function insertCounting(doc: JsonValue[], index: number, values: JsonValue[]) {
    const { kv, counter } = setUp();
    await store(kv, { list: doc });
    const list = keys.dataKey(['list']);
    const { counts } = await counter.measure(() =>
      kv.transact(async (tr) => insertIntoArray(tr, list, await boundsOf(tr, list), index, values, Limits.maxKeyBytes)),
    );
    const expected = [...doc];
    expected.splice(index, 0, ...values);
    expect(await read(kv, ['list'])).toEqual(expected);
    return { counts, positions: await positions(kv, list) };
  }

  async function removeCounting(doc: JsonValue[], index: number) {
    const { kv, counter } = setUp();
    await store(kv, { list: doc });
    const list = keys.dataKey(['list']);
    const { counts } = await counter.measure(() =>
      kv.transact(async (tr) => removeFromArray(tr, list, (await boundsOf(tr, list)) as Bounds, index, Limits.maxKeyBytes)),
    );
    const expected = [...doc];
    expected.splice(index, 1);
    expect(await read(kv, ['list'])).toEqual(expected);
    return { counts, positions: await positions(kv, list) };
  }

  it('an insert near the front moves the elements before it down', async () => {
    const { counts, positions: after } = await insertCounting(ten, 2, ['new']);
    expect(counts.sets).toBe(2 + 1);
    expect(after).toEqual(range(-1, 9));
  });

  it('an insert near the back moves the elements from it on up', async () => {
    const { counts, positions: after } = await insertCounting(ten, 7, ['new']);
    expect(counts.sets).toBe(3 + 1);
    expect(after).toEqual(range(0, 10));
  });

  it('an insert at either end moves nothing', async () => {
    expect((await insertCounting(ten, 0, ['new'])).counts.sets).toBe(1);
    expect((await insertCounting(ten, 10, ['new'])).counts.sets).toBe(1);
  });

  it('inserting several values moves the shorter side by their number', async () => {
    const { counts, positions: after } = await insertCounting(ten, 8, ['x', 'y', 'z']);
    expect(counts.sets).toBe(2 + 3);
    expect(after).toEqual(range(0, 12));
    const front = await insertCounting(ten, 1, ['x', 'y', 'z']);
    expect(front.counts.sets).toBe(1 + 3);
    expect(front.positions).toEqual(range(-3, 9));
  });

  it('moves every key of the moved elements: their whole subtrees', async () => {
    const nested = range(0, 9).map((i) => ({ i, tags: ['a', 'b'] }));
    // Each element is 5 keys: its marker, i, tags, tags[0], tags[1].
    const { counts } = await insertCounting(nested, 8, [0]);
    expect(counts.sets).toBe(2 * 5 + 1);
    expect(counts.rangeReads).toBe(2 + 1);
    expect(counts.clearRanges).toBe(1);
  });

  it('removing near the front moves the elements before it up; near the back, those after it down', async () => {
    const front = await removeCounting(ten, 1);
    expect(front.counts.sets).toBe(1);
    expect(front.positions).toEqual(range(1, 9));
    const back = await removeCounting(ten, 7);
    expect(back.counts.sets).toBe(2);
    expect(back.positions).toEqual(range(0, 8));
  });

  it('removing either end moves nothing', async () => {
    const first = await removeCounting(ten, 0);
    expect(first.counts.sets).toBe(0);
    expect(first.positions).toEqual(range(1, 9));
    const last = await removeCounting(ten, 9);
    expect(last.counts.sets).toBe(0);
    expect(last.positions).toEqual(range(0, 8));
  });

  it('keeps positions contiguous and contents right through random edits', async () => {
    const random = new Random(testSeed(301));
    const { kv } = setUp();
    const model: JsonValue[] = [];
    await store(kv, { list: [] });
    const list = keys.dataKey(['list']);
    for (let step = 0; step < 150; step++) {
      const value: JsonValue = random.chance(0.3) ? { step, nested: [step] } : step;
      const choice = model.length === 0 ? random.int(3) : random.int(4);
      const index = choice === 3 ? random.int(model.length) : random.int(model.length + 1);
      await kv.transact(async (tr) => {
        const bounds = await boundsOf(tr, list);
        if (choice === 0) return appendToArray(tr, list, [value], Limits.maxKeyBytes);
        if (choice === 1) return prependToArray(tr, list, [value], Limits.maxKeyBytes);
        if (choice === 2) return insertIntoArray(tr, list, bounds, index, [value], Limits.maxKeyBytes);
        return removeFromArray(tr, list, bounds as Bounds, index, Limits.maxKeyBytes);
      });
      if (choice === 0) model.push(value);
      else if (choice === 1) model.unshift(value);
      else if (choice === 2) model.splice(index, 0, value);
      else model.splice(index, 1);
      expect(await read(kv, ['list'])).toEqual(model);
      const found = await positions(kv, list);
      expect(found).toHaveLength(model.length);
      if (found.length > 0) expect(found).toEqual(range(found[0], found[0] + found.length - 1));
    }
  });
});

describe('arrays: edits agree with Array.prototype.splice', () => {
  it('for every index of a small array', async () => {
    for (let length = 0; length <= 6; length++) {
      const doc = range(0, length - 1);
      for (let index = 0; index <= length; index++) {
        const { kv } = setUp();
        await store(kv, doc);
        await kv.transact(async (tr) => insertIntoArray(tr, keys.root, await boundsOf(tr, keys.root), index, ['x'], Limits.maxKeyBytes));
        const expected: JsonValue[] = [...doc];
        expected.splice(index, 0, 'x');
        expect(await read(kv)).toEqual(expected);
        if (index < length) {
          const removed: JsonValue[] = [...doc];
          removed.splice(index, 1);
          await store(kv, doc);
          await kv.transact(async (tr) => removeFromArray(tr, keys.root, (await boundsOf(tr, keys.root)) as Bounds, index, Limits.maxKeyBytes));
          expect(await read(kv)).toEqual(removed);
        }
      }
    }
  });
});

describe('paths', () => {
  const doc = { a: { list: [{ x: 1 }, { x: 2 }, { x: 3 }] }, s: 'text', o: {} };

  it('resolvePath finds index i at position first + i and -1 at the last position', async () => {
    const { kv } = setUp();
    await store(kv, doc);
    await kv.transact((tr) => prependToArray(tr, keys.dataKey(['a', 'list']), [{ x: 0 }], Limits.maxKeyBytes));
    await kv.transact(async (tr) => {
      const path = await resolvePath(tr, keys.root, ['a', 'list', 1, 'x']);
      expect(path).toHaveLength(5);
      expect(path[4]).toEqual(keys.dataKey(['a', 'list', 0, 'x']));
      expect(await readSubtree(tr, path[4])).toBe(1);
      const last = await resolvePath(tr, keys.root, ['a', 'list', -1]);
      expect(last[3]).toEqual(keys.dataKey(['a', 'list', 2]));
      expect(await readSubtree(tr, childKey(keys.dataKey(['a', 'list']), -1))).toEqual({ x: 0 });
    });
  });

  it('resolvePath stops at an index whose node has no array elements', async () => {
    const { kv } = setUp();
    await store(kv, doc);
    await kv.transact(async (tr) => {
      expect(await resolvePath(tr, keys.root, ['o', 0, 'x'])).toHaveLength(2);
      expect(await resolvePath(tr, keys.root, ['a', 0])).toHaveLength(2);
    });
  });

  it('diagnose tells a missing document, a missing path and a path through the wrong kind apart', async () => {
    const { kv } = setUp();
    await store(kv, doc);
    const cases: [PathElement[], string, number][] = [
      [['a', 'nope'], 'PATH_NOT_FOUND', 2],
      [['a', 'nope', 'deeper'], 'PATH_NOT_FOUND', 2],
      [['a', 'list', 7], 'PATH_NOT_FOUND', 3],
      [['a', 'list', 'key'], 'PATH_MISMATCH', 2],
      [['a', 0], 'PATH_MISMATCH', 1],
      [['s', 'x'], 'PATH_MISMATCH', 1],
      [['s', 0], 'PATH_MISMATCH', 1],
      [['o', 0], 'PATH_MISMATCH', 1],
      [[0], 'PATH_MISMATCH', 0],
    ];
    await kv.transact(async (tr) => {
      for (const [elements, code, node] of cases) {
        const path = await resolvePath(tr, keys.root, elements);
        expect([elements, await diagnose(tr, elements, path)]).toEqual([elements, { code, node }]);
      }
      const found = await resolvePath(tr, keys.root, ['a', 'list', 0]);
      expect(await diagnose(tr, ['a', 'list', 0], found)).toBeUndefined();
    });
    const { kv: empty } = setUp();
    await empty.transact(async (tr) => {
      expect(await diagnose(tr, ['a'], await resolvePath(tr, keys.root, ['a']))).toEqual({ code: 'DOCUMENT_NOT_FOUND', node: 0 });
    });
  });
});

describe('arrays: the base position', () => {
  it('two arrays with different bases read back the same', async () => {
    const { kv } = setUp();
    await store(kv, { a: [1, 2, 3], b: [] });
    await kv.transact((tr) => prependToArray(tr, keys.dataKey(['b']), [1, 2, 3], Limits.maxKeyBytes));
    expect(await positions(kv, keys.dataKey(['b']))).toEqual([-3, -2, -1]);
    expect(await read(kv)).toEqual({ a: [1, 2, 3], b: [1, 2, 3] });
  });
});
