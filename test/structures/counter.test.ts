/**
 * DocCounter: an int64 at one key changed by FDB's atomic add. Behaviour, the reference model, and the
 * conflicts its TSDoc claims.
 */
import { Random, testSeed } from '../support/random';
import { documentSuite } from '../document/document-suite';
import { errorOf, retriesOf } from './support';

documentSuite('DocCounter', (ctx) => {
  it('starts at 0, adds, increments and decrements, returning the new value', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    const k = c.counter('k');
    expect(await k.get()).toBe(0);
    expect(await c.exists('k')).toBe(false);
    expect(await k.incr()).toBe(1);
    expect(await k.incr(5)).toBe(6);
    expect(await k.decr()).toBe(5);
    expect(await k.decr(10n)).toBe(-5);
    await k.add(7);
    expect(await k.get()).toBe(2);
    expect((await c.get('k')).content).toBe(2);
    await k.set(40);
    expect(await k.incr(2)).toBe(42);
    await k.reset();
    expect(await k.get()).toBe(0);
    expect(await c.exists('k')).toBe(true);
    await k.clear();
    expect(await c.exists('k')).toBe(false);
  });

  it('refuses amounts and values that are not integers, writing nothing', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    const k = c.counter('k');
    for (const bad of [1.5, NaN, '1', null, 2 ** 60, 2n ** 64n]) {
      expect((await errorOf(k.add(bad as never))).code).toBe('DELTA_INVALID');
      expect((await errorOf(k.incr(bad as never))).code).toBe('DELTA_INVALID');
      expect((await errorOf(k.set(bad as never))).code).toBe('INVALID_VALUE');
    }
    expect(await c.exists('k')).toBe(false);
  });

  it('keeps the whole int64 range: add wraps as FDB does, incr refuses to leave the safe range', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    const k = c.counter('k');
    await k.set(2n ** 63n - 1n);
    expect(await k.getBigInt()).toBe(2n ** 63n - 1n);
    expect((await c.get('k')).content).toBe(2n ** 63n - 1n);
    expect((await errorOf(k.get())).code).toBe('NUMBER_TOO_BIG');
    await k.add(1);
    expect(await k.getBigInt()).toBe(-(2n ** 63n));
    await k.set(Number.MAX_SAFE_INTEGER);
    expect((await errorOf(k.incr())).code).toBe('NUMBER_TOO_BIG');
    expect(await k.get()).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('follows the reference model through random operation sequences', async () => {
    const seed = testSeed(304);
    const random = new Random(seed);
    const { docs } = await ctx.open();
    const c = docs.collection();
    const k = c.counter('model');
    let model = 0;
    for (let step = 0; step < 100; step++) {
      const op = random.pick(['add', 'incr', 'decr', 'set', 'reset', 'get'] as const);
      const by = random.between(-1000, 1000);
      const where = `seed ${seed}, step ${step}: ${op}(${by})`;
      if (op === 'add') {
        await k.add(by);
        model += by;
      } else if (op === 'incr') {
        model += by;
        expect([where, await k.incr(by)]).toEqual([where, model]);
      } else if (op === 'decr') {
        model -= by;
        expect([where, await k.decr(by)]).toEqual([where, model]);
      } else if (op === 'set') {
        await k.set(by);
        model = by;
      } else if (op === 'reset') {
        await k.reset();
        model = 0;
      }
      expect([where, await k.get()]).toEqual([where, model]);
    }
    expect((await c.get('model')).content).toBe(model);
  });

  describe('conflicts', () => {
    it('concurrent adds never conflict, even when all read before any commits', async () => {
      const { docs, counter } = await ctx.open();
      const k = docs.collection().counter('k');
      await k.add(0);
      counter.take();
      expect(
        await retriesOf(
          docs,
          Array.from({ length: 10 }, (_, i) => (tr) => k.add(i + 1, { tr })),
        ),
      ).toBe(0);
      expect(counter.take().retries).toBe(0);
      expect(await k.get()).toBe(55);
    });

    it('add reads nothing but the kind key', async () => {
      const { docs, counter } = await ctx.open();
      const k = docs.collection().counter('k');
      await k.add(1);
      const [attempt] = (await counter.measure(() => k.add(1))).attempts;
      expect(attempt.gets.length).toBe(1);
      expect(attempt.ranges.length).toBe(0);
      expect(attempt.sets.length).toBe(0);
      expect(attempt.atomicOps.map((a) => a.op)).toEqual(['add']);
    });

    it('concurrent incr conflict (serializable: they read the value), retry, and all count', async () => {
      const { docs } = await ctx.open();
      const k = docs.collection().counter('k');
      await k.add(0);
      const retries = await retriesOf(
        docs,
        Array.from({ length: 4 }, () => (tr) => k.incr(1, { tr })),
      );
      expect(retries).toBeGreaterThan(0);
      expect(await k.get()).toBe(4);
    });
  });
});
