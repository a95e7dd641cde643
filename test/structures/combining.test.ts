/**
 * Concurrent calls on one structure without a caller's transaction are combined into shared
 * transactions (src/structures/combiner.ts): each caller still gets exactly its own result, in a
 * serial order, a failing call fails alone, and a call with `{ tr }` stays in the caller's transaction.
 */
import { isDocumentError } from '../../src';
import { testSeed } from '../support/random';
import { documentSuite } from '../document/document-suite';

const CALLERS = 32;

documentSuite('hot structures: concurrent calls combined', (ctx) => {
  it(`${CALLERS} concurrent incr on one counter return 1..${CALLERS} and commit in a few transactions`, async () => {
    const { docs, counter } = await ctx.open();
    const hits = docs.collection().counter('hits');
    await hits.set(0); // creates the collection (its own transaction) and the counter
    const before = counter.counts();
    const values = await Promise.all(Array.from({ length: CALLERS }, () => hits.incr()));
    expect([...values].sort((a, b) => a - b)).toEqual(Array.from({ length: CALLERS }, (_, i) => i + 1));
    // The first call alone, the 31 that queued behind it together.
    const after = counter.counts();
    expect({ commits: after.commits - before.commits, retries: after.retries - before.retries }).toEqual({ commits: 2, retries: 0 });
    expect(await hits.get()).toBe(CALLERS);
  });

  it('queued calls run in the order they were made: incr by 1, 10, 100 ... return the running sums', async () => {
    const { docs } = await ctx.open();
    const hits = docs.collection().counter('hits');
    const deltas = [1, 10, 100, 1000, 10000];
    const values = await Promise.all(deltas.map((d) => hits.incr(d)));
    expect(values).toEqual([1, 11, 111, 1111, 11111]);
  });

  it(`${CALLERS} concurrent list pushes and queue pops: every value once, in push order`, async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    const list = c.list<number>('l');
    await Promise.all(Array.from({ length: CALLERS }, (_, i) => list.push(i)));
    expect(await list.toArray()).toEqual(Array.from({ length: CALLERS }, (_, i) => i));

    const queue = c.queue<number>('q');
    await queue.pushMany(Array.from({ length: CALLERS }, (_, i) => i));
    const popped = await Promise.all(Array.from({ length: CALLERS + 4 }, () => queue.pop()));
    expect(popped).toEqual([...Array.from({ length: CALLERS }, (_, i) => i), undefined, undefined, undefined, undefined]);
    expect(await queue.size()).toBe(0);
  });

  it(`${CALLERS} concurrent adds to one set, with repeats: each member reported new exactly once, size exact`, async () => {
    const { docs } = await ctx.open();
    const set = docs.collection().set<string>('s');
    await set.add('m0');
    const members = Array.from({ length: CALLERS }, (_, i) => `m${i % 10}`);
    const added = await Promise.all(members.map((m) => set.add(m)));
    // In call order: m0 was there; m1..m9 are new the first time they are added, not after.
    expect(added).toEqual(members.map((m, i) => m !== 'm0' && i < 10));
    expect(await set.size()).toBe(10);
  });

  it('a call that fails fails alone: incr past the safe range fails for the callers it would overflow', async () => {
    const { docs } = await ctx.open();
    const hits = docs.collection().counter('hits');
    await hits.set(Number.MAX_SAFE_INTEGER - 3);
    const outcomes = await Promise.allSettled(Array.from({ length: 8 }, () => hits.incr()));
    const values = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
    const errors = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason as unknown] : []));
    expect(values.sort((a, b) => a - b)).toEqual([1, 2, 3].map((i) => Number.MAX_SAFE_INTEGER - 3 + i));
    expect(errors).toHaveLength(5);
    for (const err of errors) expect(isDocumentError(err, 'NUMBER_TOO_BIG')).toBe(true);
    expect(await hits.get()).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('a push whose value cannot be stored fails alone; the pushes around it land in call order', async () => {
    const { docs } = await ctx.open();
    const list = docs.collection().list<unknown>('l');
    await list.push('first');
    const tooLong = { ['k'.repeat(20_000)]: 1 }; // its key would exceed the key size limit
    const values: unknown[] = ['a', 'b', tooLong, 'c', 'd'];
    const outcomes = await Promise.allSettled(values.map((v) => list.push(v)));
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    const failed = outcomes[2];
    expect(failed.status === 'rejected' && isDocumentError(failed.reason, 'KEY_TOO_LARGE')).toBe(true);
    expect(await list.toArray()).toEqual(['first', 'a', 'b', 'c', 'd']);
  });

  it('a call with { tr } is never combined: it commits with its own transaction, or not at all', async () => {
    const { docs } = await ctx.open();
    const hits = docs.collection().counter('hits');
    const failing = docs.transact(async (tr) => {
      await hits.incr(1000, { tr });
      throw new Error('the caller gives up');
    });
    const others = Array.from({ length: 8 }, () => hits.incr());
    await expect(failing).rejects.toThrow('the caller gives up');
    expect((await Promise.all(others)).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(await hits.get()).toBe(8);
  });

  ctx.describeWithFaults('with commit faults', () => {
    it('a combined transaction that fails to commit is retried whole: the totals stay exact', async () => {
      const { docs, counter } = await ctx.openWithFaults({ seed: testSeed(1701), notCommitted: 0.4, tooOld: 0.1 });
      const c = docs.collection();
      const hits = c.counter('hits');
      const list = c.list<number>('l');
      const values: number[] = [];
      for (let round = 0; round < 4; round++) {
        values.push(...(await Promise.all(Array.from({ length: 16 }, () => hits.incr()))));
        await Promise.all(Array.from({ length: 16 }, (_, i) => list.push(round * 16 + i)));
      }
      expect(values.sort((a, b) => a - b)).toEqual(Array.from({ length: 64 }, (_, i) => i + 1));
      expect(await list.toArray()).toEqual(Array.from({ length: 64 }, (_, i) => i));
      expect(counter.counts().retries).toBeGreaterThan(0);
    });
  });
});
