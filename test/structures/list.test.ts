/**
 * DocList: an array document below the structure's body, positions with a movable base. Behaviour,
 * the reference model, and the conflicts its TSDoc claims.
 */
import type { Collection, JsonValue } from '../../src';
import type { DocList } from '../../src/structures/list';
import type { Transaction } from '../../src/kv/contract/types';
import { Random, testSeed } from '../support/random';
import { documentSuite } from '../document/document-suite';
import { errorOf, firstAttemptsBarrier, retriesOf, writesOf } from './support';

function randomValue(random: Random): JsonValue {
  switch (random.int(5)) {
    case 0:
      return random.int(5);
    case 1:
      return random.pick(['a', 'b', '', '😀']);
    case 2:
      return { n: random.int(3), tags: [random.int(2)] };
    case 3:
      return [random.int(3), { x: null }];
    default:
      return random.pick([true, null, 2.5]);
  }
}

/** An operation at or near an end of a list, run in `tr`, and the same on a model array: both give its result. */
interface EndOp {
  readonly name: string;
  readonly run: (l: DocList, tr: Transaction) => Promise<unknown>;
  readonly model: (list: JsonValue[]) => unknown;
}

function randomEndOp(random: Random): EndOp {
  const index = random.between(-4, 4);
  const value = randomValue(random);
  const inRange = (list: JsonValue[]) => at(index, list.length) >= 0 && at(index, list.length) < list.length;
  switch (random.int(7)) {
    case 0:
      return {
        name: `get(${index})`,
        run: (l, tr) => l.get(index, { tr }),
        model: (list) => (inRange(list) ? list[at(index, list.length)] : 'OUT_OF_RANGE'),
      };
    case 1:
      return {
        name: `set(${index})`,
        run: (l, tr) => l.set(index, value, { tr }),
        model: (list) => {
          if (!inRange(list)) return 'OUT_OF_RANGE';
          list[at(index, list.length)] = value;
          return undefined;
        },
      };
    case 2:
      return { name: 'pop', run: (l, tr) => l.pop({ tr }), model: (list) => list.pop() };
    case 3:
      return { name: 'shift', run: (l, tr) => l.shift({ tr }), model: (list) => list.shift() };
    case 4: {
      const start = random.between(-6, 6);
      const end = random.chance(0.3) ? undefined : random.between(-6, 6);
      return { name: `slice(${start}, ${end})`, run: (l, tr) => l.slice(start, end, { tr }), model: (list) => list.slice(start, end) };
    }
    case 5:
      return { name: 'push', run: (l, tr) => l.push(value, { tr }), model: (list) => void list.push(value) };
    default:
      return { name: 'unshift', run: (l, tr) => l.unshift(value, { tr }), model: (list) => void list.unshift(value) };
  }
}

/** An insert or removeAt within 4 of an end (half the time), else an operation at or near an end. */
function randomMoveOp(random: Random): EndOp {
  if (random.chance(0.5)) return randomEndOp(random);
  const index = random.between(-4, 4);
  const value = randomValue(random);
  if (random.chance(0.5)) {
    return {
      name: `insert(${index})`,
      run: (l, tr) => l.insert(index, value, { tr }),
      model: (list) => {
        const i = at(index, list.length);
        if (i < 0 || i > list.length) return 'OUT_OF_RANGE';
        list.splice(i, 0, value);
        return undefined;
      },
    };
  }
  return {
    name: `removeAt(${index})`,
    run: (l, tr) => l.removeAt(index, { tr }),
    model: (list) => {
      const i = at(index, list.length);
      if (i < 0 || i >= list.length) return 'OUT_OF_RANGE';
      list.splice(i, 1);
      return undefined;
    },
  };
}

/** JS semantics of an index into a list of `length`: negative counts from the end. */
function at(index: number, length: number): number {
  return index < 0 ? length + index : index;
}

/** A list operation of the conflict tables, in a transaction the table's runner gives it. */
type Op = (l: DocList, tr: Transaction) => Promise<unknown>;

/**
 * The writes the conflict tables pair with the operation under test, and `thenElsewhere(op)`: `op`,
 * then a write to a counter of its own in the same transaction, so that the transaction commits a
 * write (a read alone commits nothing) and commits after the other one (see `retriesOf`).
 */
function listOps(c: Collection) {
  const set =
    (index: number): Op =>
    (l, tr) =>
      l.set(index, 'new', { tr });
  const pop: Op = (l, tr) => l.pop({ tr });
  const shift: Op = (l, tr) => l.shift({ tr });
  const push: Op = (l, tr) => l.push('pushed', { tr });
  const unshift: Op = (l, tr) => l.unshift('unshifted', { tr });
  const thenElsewhere =
    (op: Op): Op =>
    async (l, tr) => {
      await op(l, tr);
      await c.counter(`elsewhere-${l.id}`).add(1, { tr });
    };
  return { set, pop, shift, push, unshift, thenElsewhere };
}

documentSuite('DocList', (ctx) => {
  describe('reading and writing by index', () => {
    it('pushes, unshifts, inserts, reads with negative indexes, sets and removes', async () => {
      const { docs } = await ctx.open();
      const c = docs.collection();
      const l = c.list('l');
      await l.push('b');
      await l.append('c');
      await l.unshift('a');
      await l.prepend('_');
      await l.insert(2, { mid: [1] });
      expect(await l.toArray()).toEqual(['_', 'a', { mid: [1] }, 'b', 'c']);
      expect(await l.size()).toBe(5);
      expect(await l.get(0)).toBe('_');
      expect(await l.get(-1)).toBe('c');
      expect(await l.get(-5)).toBe('_');
      await l.set(-2, 'B');
      await l.removeAt(0);
      expect(await l.toArray()).toEqual(['a', { mid: [1] }, 'B', 'c']);
      expect((await c.get('l')).content).toEqual(['a', { mid: [1] }, 'B', 'c']);
      expect(await l.indexOf({ mid: [1] })).toBe(1);
      expect(await l.indexOf('c', -1)).toBe(3);
      expect(await l.indexOf('a', 1)).toBe(-1);
      expect(await l.includes('B')).toBe(true);
      expect(await l.includes('b')).toBe(false);
      expect(await l.slice(1, -1)).toEqual([{ mid: [1] }, 'B']);
      expect(await l.slice(-2)).toEqual(['B', 'c']);
      expect(await l.slice(3, 1)).toEqual([]);
      expect(await l.pop()).toBe('c');
      expect(await l.shift()).toBe('a');
      expect(await l.toArray()).toEqual([{ mid: [1] }, 'B']);
    });

    it('sets, pops and shifts elements of any shape: a short scalar with no range clear, anything else with one', async () => {
      const { docs, counter } = await ctx.open();
      const l = docs.collection().list<JsonValue>('l');
      const long = 'x'.repeat(250_000); // a header and chunks below the element's entry
      const shapes: JsonValue[] = [1, { o: [1, 2] }, long, [null], 'short', []];
      await l.push(0);
      for (const value of shapes) {
        await l.set(0, value);
        expect(await l.get(0)).toEqual(value);
      }
      const clears = async (action: () => Promise<unknown>) => {
        const { counts } = await counter.measure(action);
        return { clears: counts.clears, clearRanges: counts.clearRanges };
      };
      expect(await clears(() => l.set(0, 'a'))).toEqual({ clears: 0, clearRanges: 1 }); // over []
      expect(await clears(() => l.set(0, { b: 1 }))).toEqual({ clears: 0, clearRanges: 0 });
      expect(await clears(() => l.set(0, long))).toEqual({ clears: 0, clearRanges: 1 });
      for (const value of shapes) await l.push(value);
      for (const value of [...shapes].reverse()) {
        const { result, counts } = await counter.measure(() => l.pop());
        expect(result).toEqual(value);
        const single = value === 1 || value === 'short' || (Array.isArray(value) && value.length === 0);
        expect({ clears: counts.clears, clearRanges: counts.clearRanges }).toEqual(
          single ? { clears: 1, clearRanges: 0 } : { clears: 0, clearRanges: 1 },
        );
      }
      expect(await l.shift()).toBe(long);
      expect(await l.toArray()).toEqual([]);
    });

    it('inserts and removes at every index of short lists, whichever side moves, as Array.prototype.splice does', async () => {
      const { docs } = await ctx.open();
      const c = docs.collection();
      const shapes: Record<string, JsonValue[]> = {
        scalars: [0, 1, 2, 3, 4],
        mixed: [0, { o: [1] }, 2, [3, { x: 3 }], 4],
      };
      const actual: [string, unknown][] = [];
      const expected: [string, unknown][] = [];
      for (const [shape, values] of Object.entries(shapes)) {
        for (let length = 0; length <= values.length; length++) {
          const before = values.slice(0, length);
          for (let index = -length - 1; index <= length + 1; index++) {
            for (const op of ['insert', 'removeAt'] as const) {
              const name = `${op}(${index}) of ${shape} ${JSON.stringify(before)}`;
              const l = c.list(name);
              await docs.transact(async (tr) => {
                for (const value of before) await l.push(value, { tr });
              });
              const model = [...before];
              const i = at(index, length);
              if (op === 'insert') {
                const result = await l.insert(index, 'new').catch((err: unknown) => (err as { code?: string }).code);
                actual.push([name, [result, await l.toArray()]]);
                if (i >= 0 && i <= length) model.splice(i, 0, 'new');
                expected.push([name, [i < 0 || i > length ? 'OUT_OF_RANGE' : undefined, model]]);
              } else {
                const result = await l.removeAt(index).catch((err: unknown) => (err as { code?: string }).code);
                actual.push([name, [result, await l.toArray()]]);
                if (i >= 0 && i < length) model.splice(i, 1);
                expected.push([name, [i < 0 || i >= length ? 'OUT_OF_RANGE' : undefined, model]]);
              }
            }
          }
        }
      }
      expect(actual).toEqual(expected);
    });

    it('refuses out-of-range indexes with OUT_OF_RANGE, writing nothing', async () => {
      const { docs, counter } = await ctx.open();
      const c = docs.collection();
      const l = c.list('l');
      expect((await errorOf(l.get(0))).code).toBe('OUT_OF_RANGE');
      expect((await errorOf(l.set(0, 1))).code).toBe('OUT_OF_RANGE');
      expect((await errorOf(l.removeAt(-1))).code).toBe('OUT_OF_RANGE');
      expect((await errorOf(l.insert(1, 1))).code).toBe('OUT_OF_RANGE');
      expect(await c.exists('l')).toBe(false);
      await l.push(1);
      await l.push(2);
      counter.take();
      // Started together; each failure is caught at once (engines settle on later turns of the event loop).
      const errors = await Promise.all([l.get(2), l.get(-3), l.set(2, 0), l.set(-3, 0), l.removeAt(2), l.insert(3, 0), l.insert(-3, 0)].map(errorOf));
      for (const err of errors) expect(err.code).toBe('OUT_OF_RANGE');
      expect(writesOf(counter.take())).toBe(0);
      expect(await l.toArray()).toEqual([1, 2]);
      expect((await errorOf(l.get(1.5))).code).toBe('INVALID_ARGUMENT');
    });

    it('pop and shift of an empty or missing list give undefined', async () => {
      const { docs } = await ctx.open();
      const l = docs.collection().list('l');
      expect(await l.pop()).toBeUndefined();
      expect(await l.shift()).toBeUndefined();
      await l.push(1);
      expect(await l.pop()).toBe(1);
      expect(await l.pop()).toBeUndefined();
      expect(await l.toArray()).toEqual([]);
    });

    it('refuses invalid and too deep values', async () => {
      const { docs } = await ctx.open();
      const l = docs.collection().list('l');
      expect((await errorOf(l.push(undefined as never))).code).toBe('INVALID_VALUE');
      let deep: JsonValue = 1;
      for (let i = 0; i < 31; i++) deep = [deep];
      expect((await errorOf(l.push(deep))).code).toBe('VALUE_TOO_DEEP');
      await l.push((deep as JsonValue[])[0]);
      expect(await l.size()).toBe(1);
    });

    it("refuses a value whose keys would exceed the key limit, writing nothing even into a caller's transaction", async () => {
      const { docs } = await ctx.open();
      const c = docs.collection();
      const l = c.list('l');
      const wide = { ['k'.repeat(10_000)]: 1 };
      await docs.transact(async (tr) => {
        for (const op of [l.push(wide, { tr }), l.unshift(wide, { tr }), l.insert(0, wide, { tr })]) {
          expect((await errorOf(op)).code).toBe('KEY_TOO_LARGE');
        }
        expect(await c.exists('l', { tr })).toBe(false);
      });
    });
  });

  describe('iteration', () => {
    it('pages through elements, containers whole', async () => {
      const { docs } = await ctx.open();
      const l = docs.collection().list('l');
      const values: JsonValue[] = Array.from({ length: 13 }, (_, i) => (i % 3 === 0 ? { i, list: [i, i] } : i));
      for (const v of values) await l.push(v);
      const seen: JsonValue[] = [];
      for await (const v of l.iterate({ pageSize: 3 })) seen.push(v);
      expect(seen).toEqual(values);
      const all: JsonValue[] = [];
      for await (const v of l) all.push(v);
      expect(all).toEqual(values);
    });
  });

  it('follows the reference model through random operation sequences', async () => {
    const seed = testSeed(302);
    const random = new Random(seed);
    const { docs } = await ctx.open();
    const c = docs.collection();
    const l = c.list('model');
    let model: JsonValue[] = [];
    const ops = ['push', 'unshift', 'insert', 'removeAt', 'set', 'get', 'pop', 'shift', 'indexOf', 'slice', 'clear'] as const;
    for (let step = 0; step < 120; step++) {
      const op = random.pick(ops);
      const value = randomValue(random);
      const index = random.between(-model.length - 1, model.length + 1);
      const where = `seed ${seed}, step ${step}: ${op}`;
      const i = at(index, model.length);
      const outOfRange = (n: number) => i < 0 || i >= n;
      const check = async (actual: Promise<unknown>, expected: unknown) => {
        expect([where, await actual]).toEqual([where, expected]);
      };
      const checkError = async (actual: Promise<unknown>) => {
        expect([where, (await errorOf(actual)).code]).toEqual([where, 'OUT_OF_RANGE']);
      };
      switch (op) {
        case 'push':
          await l.push(value);
          model.push(value);
          break;
        case 'unshift':
          await l.unshift(value);
          model.unshift(value);
          break;
        case 'insert':
          if (i < 0 || i > model.length) await checkError(l.insert(index, value));
          else {
            await l.insert(index, value);
            model.splice(i, 0, value);
          }
          break;
        case 'removeAt':
          if (outOfRange(model.length)) await checkError(l.removeAt(index));
          else {
            await l.removeAt(index);
            model.splice(i, 1);
          }
          break;
        case 'set':
          if (outOfRange(model.length)) await checkError(l.set(index, value));
          else {
            await l.set(index, value);
            model[i] = value;
          }
          break;
        case 'get':
          if (outOfRange(model.length)) await checkError(l.get(index));
          else await check(l.get(index), model[i]);
          break;
        case 'pop':
          await check(l.pop(), model.pop());
          break;
        case 'shift':
          await check(l.shift(), model.shift());
          break;
        case 'indexOf': {
          const probe = random.chance(0.5) && model.length > 0 ? random.pick(model) : value;
          const from = random.between(-3, 3);
          const start = from < 0 ? Math.max(0, model.length + from) : from;
          const expected = model.findIndex((v, k) => k >= start && JSON.stringify(v) === JSON.stringify(probe));
          await check(l.indexOf(probe, from), expected);
          break;
        }
        case 'slice': {
          const end = random.between(-model.length - 1, model.length + 1);
          await check(l.slice(index, end), model.slice(index, end));
          break;
        }
        case 'clear':
          if (random.chance(0.3)) {
            await l.clear();
            model = [];
          }
          break;
      }
      expect([where, await l.size(), await l.toArray()]).toEqual([where, model.length, model]);
    }
    expect((await c.get('model')).content).toEqual(await l.toArray());
  });

  describe('conflicts', () => {
    it('a push and an unshift never conflict', async () => {
      const { docs } = await ctx.open();
      const l = docs.collection().list('l');
      await l.push('only');
      expect(await retriesOf(docs, [(tr) => l.push('last', { tr }), (tr) => l.unshift('first', { tr })])).toBe(0);
      expect(await l.toArray()).toEqual(['first', 'only', 'last']);
    });

    it('set and get of different elements in the middle never conflict', async () => {
      const { docs } = await ctx.open();
      const l = docs.collection().list('l');
      for (let i = 0; i < 10; i++) await l.push(i);
      const retries = await retriesOf(docs, [
        (tr) => l.set(3, 'three', { tr }),
        (tr) => l.set(5, 'five', { tr }),
        async (tr) => {
          await l.get(7, { tr });
          await l.set(8, 'eight', { tr });
        },
      ]);
      expect(retries).toBe(0);
      expect(await l.toArray()).toEqual([0, 1, 2, 'three', 4, 'five', 6, 7, 'eight', 9]);
    });

    it('concurrent pushes conflict (each retries) and all land, each once', async () => {
      const { docs } = await ctx.open();
      const l = docs.collection().list('l');
      await l.push(0);
      const retries = await retriesOf(
        docs,
        [1, 2, 3].map((v) => (tr) => l.push(v, { tr })),
      );
      expect(retries).toBeGreaterThan(0);
      expect([...((await l.toArray()) as number[])].sort()).toEqual([0, 1, 2, 3]);
    });

    it('get, set, pop and shift conflict with writes of their element and changes at the end they count from (its element included), slice with writes of its elements and changes at either end; none with writes of the elements read on the way', async () => {
      const { docs } = await ctx.open();
      const c = docs.collection();
      const { set, pop, shift, push, unshift, thenElsewhere } = listOps(c);
      // A read alone commits nothing, so nothing conflicts with it: the reading transaction writes elsewhere too.
      const get = (index: number): Op => thenElsewhere((l, tr) => l.get(index, { tr }));
      const slice = (start: number, end?: number): Op => thenElsewhere((l, tr) => l.slice(start, end, { tr }));
      const pairs: [string, Op, Op, boolean][] = [
        ['get(2), set(1)', get(2), set(1), false],
        ['get(2), set(3)', get(2), set(3), false],
        ['get(2), push', get(2), push, false],
        ['get(2), set(2)', get(2), set(2), true],
        ['get(2), set(0)', get(2), set(0), true],
        ['get(2), unshift', get(2), unshift, true],
        ['get(-3), set(-2)', get(-3), set(-2), false],
        ['get(-3), set(-3)', get(-3), set(-3), true],
        ['get(-3), push', get(-3), push, true],
        ['get(8), set(7)', get(8), set(7), false],
        ['get(8), set(8)', get(8), set(8), true],
        ['set(2), set(1)', set(2), set(1), false],
        ['set(-3), set(-2)', set(-3), set(-2), false],
        ['set(1), set(1)', set(1), set(1), true],
        ['pop, set(0)', pop, set(0), false],
        ['pop, shift', pop, shift, false],
        ['pop, unshift', pop, unshift, false],
        ['pop, set(-1)', pop, set(-1), true],
        ['pop, push', pop, push, true],
        ['shift, set(-1)', shift, set(-1), false],
        ['shift, push', shift, push, false],
        ['shift, set(0)', shift, set(0), true],
        ['slice(0, 5), set(4)', slice(0, 5), set(4), true],
        ['slice(0, 5), set(5)', slice(0, 5), set(5), false],
        ['slice(0, 5), unshift', slice(0, 5), unshift, true],
        ['slice(0, 5), shift', slice(0, 5), shift, true],
        // The other end's read, as before: these do not change the slice, but it conflicts with them.
        ['slice(0, 5), push', slice(0, 5), push, true],
        ['slice(0, 5), pop', slice(0, 5), pop, true],
        ['slice(0, 5), set(-1)', slice(0, 5), set(-1), true],
        ['slice(2, 6), set(1)', slice(2, 6), set(1), false],
        ['slice(2, 6), set(2)', slice(2, 6), set(2), true],
        ['slice(2, 6), set(5)', slice(2, 6), set(5), true],
        ['slice(2, 6), set(6)', slice(2, 6), set(6), false],
        ['slice(2, 6), set(0)', slice(2, 6), set(0), true],
        ['slice(2, 6), shift', slice(2, 6), shift, true],
        ['slice(-3), set(-4)', slice(-3), set(-4), false],
        ['slice(-3), set(-3)', slice(-3), set(-3), true],
        ['slice(-3), push', slice(-3), push, true],
        ['slice(-3), pop', slice(-3), pop, true],
        ['slice(-3), unshift', slice(-3), unshift, true],
        ['slice(-3), set(0)', slice(-3), set(0), true],
        ['slice(-5, -1), set(-1)', slice(-5, -1), set(-1), true],
        ['slice(-5, -1), set(-2)', slice(-5, -1), set(-2), true],
        ['slice(-5, -1), set(-6)', slice(-5, -1), set(-6), false],
        ['slice(-5, -3), set(-1)', slice(-5, -3), set(-1), true],
        ['slice(-5, -3), set(-2)', slice(-5, -3), set(-2), false],
        ['slice(-3, 9), set(-1)', slice(-3, 9), set(-1), true],
        ['slice(-3, 9), set(-2)', slice(-3, 9), set(-2), true],
        ['slice(1, 9), set(4)', slice(1, 9), set(4), true],
        ['slice(1, 9), set(-1)', slice(1, 9), set(-1), true],
        ['slice(1, -1), set(-2)', slice(1, -1), set(-2), true],
        ['slice(1, -1), set(-1)', slice(1, -1), set(-1), true],
      ];
      // Of a list shorter than the slice's bounds: the other end's read proves the length.
      const shortPairs: [string, Op, Op, boolean][] = [
        ['slice(0, 5), push', slice(0, 5), push, true],
        ['slice(0, 5), pop', slice(0, 5), pop, true],
        ['slice(0, 5), set(1)', slice(0, 5), set(1), true],
        ['slice(0, 1), set(1)', slice(0, 1), set(1), false],
        ['slice(-5), unshift', slice(-5), unshift, true],
        ['slice(-5), shift', slice(-5), shift, true],
        ['slice(-5), push', slice(-5), push, true],
        ['slice(-1), set(1)', slice(-1), set(1), false],
      ];
      for (const [elements, table] of [
        [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], pairs],
        [[{ a: [0] }, [1], 2, { d: 3 }, 4, 5, 6, 7, 8, [9, { x: 9 }]], pairs],
        [[0, 1, 2], shortPairs],
        [[{ a: [0] }, 1, [2, { x: 2 }]], shortPairs],
      ] as [JsonValue[], [string, Op, Op, boolean][]][]) {
        const outcomes: [string, boolean][] = [];
        for (const [name, a, b] of table) {
          const l = c.list(`${name} of ${JSON.stringify(elements)}`);
          for (const value of elements) await l.push(value);
          outcomes.push([name, (await retriesOf(docs, [(tr) => a(l, tr), (tr) => b(l, tr)])) > 0]);
        }
        expect([JSON.stringify(elements), outcomes]).toEqual([JSON.stringify(elements), table.map(([name, , , conflicts]) => [name, conflicts])]);
      }
    });

    it('insert and removeAt conflict with changes at either end and writes of the elements they move; not with writes of the element removed or of the elements read on the way', async () => {
      const { docs } = await ctx.open();
      const c = docs.collection();
      const { set, pop, shift, push, unshift, thenElsewhere } = listOps(c);
      // The transactions commit in the order they reach the barrier (retriesOf): the write after the
      // operation makes the insert's (removeAt's) come last, so a row says whether its reads conflict
      // with the other operation's writes.
      const insert = (index: number): Op => thenElsewhere((l, tr) => l.insert(index, 'inserted', { tr }));
      const removeAt = (index: number): Op => thenElsewhere((l, tr) => l.removeAt(index, { tr }));
      // Of 10 elements: the side toward the end the index counts from moves, the shorter one.
      const pairs: [string, Op, Op, boolean][] = [
        ['insert(1), set(0)', insert(1), set(0), true],
        ['insert(1), set(1)', insert(1), set(1), false],
        ['insert(1), set(-2)', insert(1), set(-2), false],
        ['insert(1), set(-1)', insert(1), set(-1), true],
        ['insert(1), unshift', insert(1), unshift, true],
        ['insert(1), shift', insert(1), shift, true],
        ['insert(1), push', insert(1), push, true],
        ['insert(1), pop', insert(1), pop, true],
        ['insert(3), set(2)', insert(3), set(2), true],
        ['insert(3), set(3)', insert(3), set(3), false],
        ['insert(-1), set(-1)', insert(-1), set(-1), true],
        ['insert(-1), set(-2)', insert(-1), set(-2), false],
        ['insert(-1), set(0)', insert(-1), set(0), true],
        ['insert(-1), push', insert(-1), push, true],
        ['insert(-1), unshift', insert(-1), unshift, true],
        ['insert(-3), set(-3)', insert(-3), set(-3), true],
        ['insert(-3), set(-4)', insert(-3), set(-4), false],
        ['removeAt(1), set(0)', removeAt(1), set(0), true],
        ['removeAt(1), set(1)', removeAt(1), set(1), false],
        ['removeAt(1), set(2)', removeAt(1), set(2), false],
        ['removeAt(1), set(-1)', removeAt(1), set(-1), true],
        ['removeAt(1), unshift', removeAt(1), unshift, true],
        ['removeAt(1), push', removeAt(1), push, true],
        ['removeAt(3), set(2)', removeAt(3), set(2), true],
        ['removeAt(3), set(3)', removeAt(3), set(3), false],
        ['removeAt(3), set(4)', removeAt(3), set(4), false],
        ['removeAt(-2), set(-1)', removeAt(-2), set(-1), true],
        ['removeAt(-2), set(-2)', removeAt(-2), set(-2), false],
        ['removeAt(-2), set(-3)', removeAt(-2), set(-3), false],
        ['removeAt(-2), set(0)', removeAt(-2), set(0), true],
        ['removeAt(-4), set(-3)', removeAt(-4), set(-3), true],
        ['removeAt(-4), set(-4)', removeAt(-4), set(-4), false],
        ['removeAt(-4), set(-5)', removeAt(-4), set(-5), false],
        ['removeAt(-4), pop', removeAt(-4), pop, true],
        ['removeAt(-4), shift', removeAt(-4), shift, true],
      ];
      // Of 5 scalars (4 for insert(-2)): both sides are as short, and the read from the end the index
      // counts from holds the side toward it, so that side moves, with that side's conflicts.
      const scalarTies: [string, Op, Op, boolean][] = [
        ['removeAt(2), set(1)', removeAt(2), set(1), true],
        ['removeAt(2), set(3)', removeAt(2), set(3), false],
        ['insert(-2), set(1)', insert(-2), set(1), false],
        ['insert(-2), set(2)', insert(-2), set(2), true],
      ];
      // Past nested values the read holds neither side: the shorter moves, read after the bounds.
      const nestedTies: [string, Op, Op, boolean][] = [
        ['removeAt(2), set(1)', removeAt(2), set(1), false],
        ['removeAt(2), set(3)', removeAt(2), set(3), true],
        ['insert(-2), set(1)', insert(-2), set(1), true],
        ['insert(-2), set(2)', insert(-2), set(2), false],
      ];
      for (const [elements, table] of [
        [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], pairs],
        [[{ a: [0] }, [1], 2, { d: 3 }, 4, 5, 6, 7, 8, [9, { x: 9 }]], pairs],
        [[0, 1, 2, 3, 4], scalarTies.slice(0, 2)],
        [[0, 1, 2, 3], scalarTies.slice(2)],
        [[{ a: [0] }, [1, [1]], 2, [3, { x: 3 }], { e: [4] }], nestedTies.slice(0, 2)],
        [[{ a: [0] }, [1, [1]], { c: [2] }, [3, { x: 3 }]], nestedTies.slice(2)],
      ] as [JsonValue[], [string, Op, Op, boolean][]][]) {
        const outcomes: [string, boolean][] = [];
        for (const [name, a, b] of table) {
          const l = c.list(`${name} of ${JSON.stringify(elements)}`);
          for (const value of elements) await l.push(value);
          outcomes.push([name, (await retriesOf(docs, [(tr) => a(l, tr), (tr) => b(l, tr)])) > 0]);
        }
        expect([JSON.stringify(elements), outcomes]).toEqual([JSON.stringify(elements), table.map(([name, , , conflicts]) => [name, conflicts])]);
      }
    });

    it('concurrent pops take different elements, each once', async () => {
      const { docs } = await ctx.open();
      const l = docs.collection().list('l');
      for (const value of [1, { two: [2] }, 3, [4]]) await l.push(value);
      const taken: unknown[] = []; // each pop's result in its last attempt, the one that committed
      const retries = await retriesOf(
        docs,
        [0, 1, 2].map((k) => async (tr) => {
          taken[k] = await l.pop({ tr });
        }),
      );
      expect(retries).toBeGreaterThan(0);
      expect(await l.toArray()).toEqual([1]);
      expect(taken).toEqual(expect.arrayContaining([[4], 3, { two: [2] }]));
    });

    /**
     * 60 rounds of 3 operations from `randomOp` on a list of up to 6 random values, run concurrently,
     * each in a transaction of its own that reads before any commits: their results and the list are
     * those of running them one at a time in commit order (their versionstamps' order).
     */
    async function checkCommitOrder(seed: number, randomOp: (random: Random) => EndOp): Promise<void> {
      const random = new Random(seed);
      const { docs } = await ctx.open();
      const c = docs.collection();
      for (let round = 0; round < 60; round++) {
        const l = c.list(`round ${round}`);
        const model = Array.from({ length: random.int(7) }, () => randomValue(random));
        for (const value of model) await l.push(value);
        const ops = Array.from({ length: 3 }, () => randomOp(random));
        const allRead = firstAttemptsBarrier(ops.length);
        const outcomes = await Promise.all(
          ops.map((op, k) =>
            docs.transact(async (tr) => {
              const stamp = tr.getVersionstamp();
              stamp.catch(() => undefined); // an attempt that fails to commit
              const result = await op.run(l, tr).catch((err: unknown) => (err as { code?: string }).code);
              // Something to commit when the operation writes nothing, with no conflict of its own.
              await c.counter(`round ${round} op ${k}`).add(1, { tr });
              await allRead();
              return { result, stamp };
            }),
          ),
        );
        const stamps = await Promise.all(outcomes.map((o) => o.stamp));
        const order = ops.map((_, k) => k).sort((x, y) => Buffer.compare(stamps[x], stamps[y]));
        const where = `seed ${seed}, round ${round}: ${order.map((k) => ops[k].name).join(', ')} on ${JSON.stringify(model)}`;
        const expected = order.map((k) => ops[k].model(model));
        expect([where, order.map((k) => outcomes[k].result), await l.toArray()]).toEqual([where, expected, model]);
      }
    }

    it('operations at the ends, run concurrently, give the results of running them one at a time in commit order (seeded)', async () => {
      await checkCommitOrder(testSeed(303), randomEndOp);
    });

    it('insert and removeAt near an end, run concurrently with each other and operations at the ends, give the results of running them one at a time in commit order (seeded)', async () => {
      await checkCommitOrder(testSeed(304), randomMoveOp);
    });
  });
});
