/**
 * DocMap: an object document below the structure's body, size by atomic add. Behaviour, the reference
 * model, and the conflicts its TSDoc claims.
 */
import type { JsonValue } from '../../src';
import { Random, testSeed } from '../support/random';
import { documentSuite } from '../document/document-suite';
import { errorOf, retriesOf } from './support';

/** Keys in stored order: by UTF-8 bytes. */
function byUtf8(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

const KEYS = ['a', 'b', '1', '10', '', 'ä', '😀', 'a.b', 'a\0b', '__proto__'];

documentSuite('DocMap', (ctx) => {
  it('sets, gets, deletes and counts keys', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    const m = c.map('m');
    expect(await m.get('a')).toBeUndefined();
    await m.set('a', { deep: [1, { x: 'y' }] });
    await m.set('b', 2);
    await m.set('a', 'replaced');
    expect(await m.get('a')).toBe('replaced');
    expect(await m.size()).toBe(2);
    expect(await m.has('b')).toBe(true);
    expect(await m.delete('b')).toBe(true);
    expect(await m.delete('b')).toBe(false);
    expect(await m.has('b')).toBe(false);
    expect(await m.size()).toBe(1);
    expect((await c.get('m')).content).toEqual({ a: 'replaced' });
  });

  it('lists keys, values and entries in stored order, and pages through them', async () => {
    const { docs } = await ctx.open();
    const m = docs.collection().map('m');
    for (const [i, k] of KEYS.entries()) await m.set(k, i % 2 === 0 ? { i, list: [i] } : i);
    const expected = [...KEYS].sort(byUtf8);
    expect(await m.keys()).toEqual(expected);
    expect((await m.entries()).map(([k]) => k)).toEqual(expected);
    expect(await m.values()).toEqual(
      expected.map((k) => (KEYS.indexOf(k) % 2 === 0 ? { i: KEYS.indexOf(k), list: [KEYS.indexOf(k)] } : KEYS.indexOf(k))),
    );
    const seen: [string, JsonValue][] = [];
    for await (const entry of m.iterate({ pageSize: 3 })) seen.push(entry);
    expect(seen).toEqual(await m.entries());
    const all: string[] = [];
    for await (const [k] of m) all.push(k);
    expect(all).toEqual(expected);
  });

  it('increments integers atomically, creating missing keys', async () => {
    const { docs } = await ctx.open();
    const m = docs.collection().map('m');
    expect(await m.increment('hits')).toBe(1);
    expect(await m.increment('hits', 10)).toBe(11);
    expect(await m.increment('hits', -20n)).toBe(-9);
    expect(await m.size()).toBe(1);
    await m.set('name', 'x');
    await m.set('ratio', 2.5);
    expect((await errorOf(m.increment('name'))).code).toBe('PATH_MISMATCH');
    expect((await errorOf(m.increment('ratio'))).code).toBe('PATH_MISMATCH');
    expect((await errorOf(m.increment('hits', 1.5))).code).toBe('DELTA_INVALID');
    await m.set('big', Number.MAX_SAFE_INTEGER);
    expect((await errorOf(m.increment('big'))).code).toBe('NUMBER_TOO_BIG');
    expect(await m.get('big')).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('replaces a value of any shape with any other, alone and in merged concurrent sets', async () => {
    const { docs } = await ctx.open();
    const m = docs.collection().map('m');
    const long = 'x'.repeat(250_000); // stored as a header and chunks below the entry
    const shapes: JsonValue[] = [1, 'short', { o: { deep: [1, 2] } }, [null, true, 'e'], long, null];
    for (const before of shapes) {
      for (const after of shapes) {
        await m.set('k', before);
        await m.set('k', after);
        expect(await m.get('k')).toEqual(after);
      }
    }
    // Merged: every shape written over every other within one batch, then the last value stays.
    await Promise.all(shapes.flatMap((a) => shapes.map((b, i) => m.set(`k${i}`, i % 2 === 0 ? a : b))));
    expect(await m.entries()).toEqual([
      ['k', null],
      ...[...shapes.entries()].map(([i, b]): [string, JsonValue] => [`k${i}`, i % 2 === 0 ? shapes[shapes.length - 1] : b]),
    ]);
    await m.set('k', { o: 1 });
    await m.delete('k');
    await m.set('k', long);
    await m.delete('k');
    expect(await m.size()).toBe(shapes.length);
    expect(((await docs.collection().get('m')).content as Record<string, JsonValue>).k).toBeUndefined();
  });

  it('replaces or removes a short scalar without a range clear, and clears the subtree of anything else', async () => {
    const { docs, counter } = await ctx.open();
    const m = docs.collection().map('m');
    await m.set('k', 1);
    const clears = async (action: () => Promise<unknown>) => {
      const { counts } = await counter.measure(action);
      return { clears: counts.clears, clearRanges: counts.clearRanges };
    };
    expect(await clears(() => m.set('k', 2))).toEqual({ clears: 0, clearRanges: 0 });
    expect(await clears(() => m.set('k', { a: [1] }))).toEqual({ clears: 0, clearRanges: 0 });
    expect(await clears(() => m.set('k', 3))).toEqual({ clears: 0, clearRanges: 1 });
    expect(await clears(() => m.delete('k'))).toEqual({ clears: 1, clearRanges: 0 });
    await m.set('k', [1]);
    expect(await clears(() => m.delete('k'))).toEqual({ clears: 0, clearRanges: 1 });
    await m.set('k', 'x'.repeat(250_000));
    expect(await clears(() => m.set('k', 'y'))).toEqual({ clears: 0, clearRanges: 1 });
    expect(await m.get('k')).toBe('y');
  });

  it('reads and writes merged sets in key order, the kind key first, so that the commit sorts nothing', async () => {
    const { docs, counter } = await ctx.open();
    const m = docs.collection().map('m');
    await m.set('k', { o: 1 });
    const keys = ['k9', 'k', 'k7', 'k1', 'k7', 'k3', 'k0', 'k5'];
    const { attempts } = await counter.measure(() => Promise.all(keys.map((k, i) => m.set(k, i))));
    const inOrder = (list: readonly Buffer[]) => list.every((key, i) => i === 0 || Buffer.compare(list[i - 1], key) <= 0);
    const merged = attempts.filter((attempt) => attempt.gets.length > 3);
    expect(merged.length).toBeGreaterThan(0);
    for (const attempt of merged) {
      expect(inOrder(attempt.gets.map((get) => get.key))).toBe(true);
      expect(inOrder(attempt.sets.map((set) => set.key))).toBe(true);
    }
    expect(await m.entries()).toEqual([...new Set(keys)].sort().map((k) => [k, keys.lastIndexOf(k)]));
  });

  it('refuses bad keys and values, writing nothing', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    const m = c.map('m');
    expect((await errorOf(m.set(1 as never, 1))).code).toBe('INVALID_ARGUMENT');
    expect((await errorOf(m.set('\udc00', 1))).code).toBe('INVALID_ARGUMENT');
    expect((await errorOf(m.set('k', new Date() as never))).code).toBe('INVALID_VALUE');
    expect((await errorOf(m.set('x'.repeat(10_000), 1))).code).toBe('KEY_TOO_LARGE');
    expect(await c.exists('m')).toBe(false);
  });

  it('follows the reference model through random operation sequences', async () => {
    const seed = testSeed(303);
    const random = new Random(seed);
    const { docs } = await ctx.open();
    const c = docs.collection();
    const m = c.map('model');
    const model = new Map<string, JsonValue>();
    for (let step = 0; step < 120; step++) {
      const key = random.pick(KEYS);
      const op = random.pick(['set', 'set', 'delete', 'get', 'has', 'increment', 'clear'] as const);
      const where = `seed ${seed}, step ${step}: ${op}(${JSON.stringify(key)})`;
      const check = async (actual: Promise<unknown>, expected: unknown) => expect([where, await actual]).toEqual([where, expected]);
      if (op === 'set') {
        const value: JsonValue = random.pick([1, 'v', { o: [random.int(3)] }, [null, true], 7]);
        await m.set(key, value);
        model.set(key, value);
      } else if (op === 'delete') {
        await check(m.delete(key), model.delete(key));
      } else if (op === 'get') {
        await check(m.get(key), model.get(key));
      } else if (op === 'has') {
        await check(m.has(key), model.has(key));
      } else if (op === 'increment') {
        const old = model.get(key);
        if (old === undefined || Number.isInteger(old)) {
          const next = ((old as number | undefined) ?? 0) + 3;
          await check(m.increment(key, 3), next);
          model.set(key, next);
        } else {
          expect([where, (await errorOf(m.increment(key, 3))).code]).toEqual([where, 'PATH_MISMATCH']);
        }
      } else if (random.chance(0.2)) {
        await m.clear();
        model.clear();
      }
      const expected = [...model.entries()].sort(([a], [b]) => byUtf8(a, b));
      expect([where, await m.size(), await m.entries()]).toEqual([where, model.size, expected]);
    }
    expect((await c.get('model')).content).toEqual(Object.fromEntries(model));
  });

  describe('conflicts', () => {
    it('writers of different keys never conflict, even when all read before any commits', async () => {
      const { docs } = await ctx.open();
      const m = docs.collection().map('m');
      await m.set('gone', 0);
      await m.set('n', 0);
      const retries = await retriesOf(docs, [
        (tr) => m.set('a', { x: 1 }, { tr }),
        (tr) => m.set('b', 2, { tr }),
        (tr) => m.delete('gone', { tr }),
        (tr) => m.increment('n', 1, { tr }),
        (tr) => m.increment('c', 1, { tr }),
      ]);
      expect(retries).toBe(0);
      expect(await m.size()).toBe(4);
    });

    it('writers of the same key conflict', async () => {
      const { docs } = await ctx.open();
      const m = docs.collection().map('m');
      await m.set('n', 0);
      expect(
        await retriesOf(
          docs,
          [1, 2, 3].map(() => (tr) => m.increment('n', 1, { tr })),
        ),
      ).toBeGreaterThan(0);
      expect(await m.get('n')).toBe(3);
    });
  });
});
