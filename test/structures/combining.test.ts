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

  it(`${CALLERS} concurrent blind adds to one counter: one merged add, the total exact`, async () => {
    const { docs, counter } = await ctx.open();
    const adds = docs.collection().counter('adds');
    await adds.set(5);
    const before = counter.counts().commits;
    await Promise.all(Array.from({ length: CALLERS }, (_, i) => adds.add(i % 2 === 0 ? 3 : -1)));
    expect(counter.counts().commits - before).toBe(2);
    expect(await adds.get()).toBe(5 + CALLERS);
  });

  it(`${CALLERS} concurrent map sets, with repeated keys: the last value of each key stays, the size counts each key once`, async () => {
    const { docs, counter } = await ctx.open();
    const map = docs.collection().map<number | { n: number }>('m');
    await map.set('k0', -1);
    const before = counter.counts().commits;
    await Promise.all(Array.from({ length: CALLERS }, (_, i) => map.set(`k${i % 10}`, i % 3 === 0 ? { n: i } : i)));
    expect(counter.counts().commits - before).toBe(2);
    expect(await map.size()).toBe(10);
    const expected = Array.from({ length: 10 }, (_, k): [string, number | { n: number }] => {
      const last = k + 10 * Math.floor((CALLERS - 1 - k) / 10);
      return [`k${k}`, last % 3 === 0 ? { n: last } : last];
    });
    expect(await map.entries()).toEqual(expected);
  });

  it('merged map sets of one key whose first set fails: the later sets count the key once, as new', async () => {
    const { docs } = await ctx.open();
    const map = docs.collection().map<unknown>('m');
    const tooLong = { ['k'.repeat(20_000)]: 1 };
    // The first call runs alone; the four behind it merge.
    const outcomes = await Promise.allSettled([
      map.set('first', 0),
      map.set('x', tooLong),
      map.set('x', { a: [1, 2] }),
      map.set('y', 1),
      map.set('x', 3),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled']);
    expect(await map.entries()).toEqual([
      ['first', 0],
      ['x', 3],
      ['y', 1],
    ]);
    expect(await map.size()).toBe(3);
  });

  it('a map set whose key cannot be stored fails alone; the sets around it land', async () => {
    const { docs } = await ctx.open();
    const map = docs.collection().map<unknown>('m');
    await map.set('first', 0);
    const tooLong = { ['k'.repeat(20_000)]: 1 }; // its key would exceed the key size limit
    const outcomes = await Promise.allSettled([map.set('a', 1), map.set('b', 2), map.set('c', tooLong), map.set('a', 3), map.set('d', 4)]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    const failed = outcomes[2];
    expect(failed.status === 'rejected' && isDocumentError(failed.reason, 'KEY_TOO_LARGE')).toBe(true);
    expect(await map.entries()).toEqual([
      ['a', 3],
      ['b', 2],
      ['d', 4],
      ['first', 0],
    ]);
    expect(await map.size()).toBe(4);
  });

  it(`${CALLERS} concurrent queue pushes commit in a few transactions, their items in call order`, async () => {
    const { docs, counter } = await ctx.open();
    const queue = docs.collection().queue<number>('q');
    await queue.push(-1);
    const before = counter.counts().commits;
    await Promise.all(Array.from({ length: CALLERS }, (_, i) => (i % 4 === 3 ? queue.pushMany([i, i + 0.5]) : queue.push(i))));
    expect(counter.counts().commits - before).toBe(2);
    const expected = [-1, ...Array.from({ length: CALLERS }, (_, i) => (i % 4 === 3 ? [i, i + 0.5] : [i])).flat()];
    expect(await queue.size()).toBe(expected.length);
    const popped = await Promise.all(expected.map(() => queue.pop()));
    expect(popped).toEqual(expected);
  });

  it('pops and pushes through a handle per call (default options) merge too', async () => {
    const { docs, counter } = await ctx.open();
    const c = docs.collection();
    await c.queue<number>('q').push(-1);
    // Merged, the pushes add to the size and pushed keys once per transaction, not once per call.
    let before = counter.counts().atomicOps;
    await Promise.all(Array.from({ length: 8 }, (_, i) => c.queue<number>('q').push(i)));
    expect(counter.counts().atomicOps - before).toBe(4);
    // And the pops (in one or two transactions) subtract from the size once per transaction.
    before = counter.counts().atomicOps;
    const popped = await Promise.all(Array.from({ length: 9 }, () => c.queue<number>('q').pop()));
    expect(popped).toEqual([-1, 0, 1, 2, 3, 4, 5, 6, 7]);
    expect(counter.counts().atomicOps - before).toBeLessThanOrEqual(2);
  });

  it('concurrent pops take one item each in call order, also with delayed items and waiting pops among them', async () => {
    const { docs, counter } = await ctx.open();
    const queue = docs.collection().queue<string>('q');
    await queue.pushMany(['a', 'b', 'c']);
    await queue.push('later', { delayMs: 60_000 });
    const before = counter.counts().commits;
    const popped = await Promise.all([queue.pop(), queue.pop(), queue.pop({ wait: 0 }), queue.pop(), queue.pop({ wait: 20 }), queue.pop()]);
    expect(popped).toEqual(['a', 'b', 'c', undefined, undefined, undefined]);
    // The first alone, the other five merged (the waiting pop that found nothing tries once more).
    expect(counter.counts().commits - before).toBeLessThanOrEqual(3);
    expect(await queue.size()).toBe(1);
  });

  it('a call that fails among merged pops fails alone: the pops still take one item each, in call order', async () => {
    const { docs } = await ctx.open();
    const queue = docs.collection().queue<number>('q');
    await queue.pushMany([1, 2, 3, 4, 5]);
    const outcomes = await Promise.allSettled([
      queue.pop(),
      queue.pop(),
      queue.pop(),
      queue.push(9, { dedupeId: 'd'.repeat(20_000) }), // its token key would exceed the key size limit
      queue.pop(),
      queue.pop(),
    ]);
    expect(outcomes.map((o) => (o.status === 'fulfilled' ? o.value : 'failed'))).toEqual([1, 2, 3, 'failed', 4, 5]);
    const failed = outcomes[3];
    expect(failed.status === 'rejected' && isDocumentError(failed.reason, 'KEY_TOO_LARGE')).toBe(true);
    expect(await queue.size()).toBe(0);
  });

  ctx.describeWithFaults('with commit faults', () => {
    it('merged queue pushes and pops under commit_unknown_result: every item pushed once and popped once, in order', async () => {
      const { docs, counter } = await ctx.openWithFaults({ seed: testSeed(1702), notCommitted: 0.2, unknownResult: 0.2, tooOld: 0.05 });
      const queue = docs.collection().queue<number>('q');
      for (let round = 0; round < 4; round++) await Promise.all(Array.from({ length: 16 }, (_, i) => queue.push(round * 16 + i)));
      expect(await queue.size()).toBe(64);
      const popped: (number | undefined)[] = [];
      for (let round = 0; round < 5; round++) popped.push(...(await Promise.all(Array.from({ length: 16 }, () => queue.pop()))));
      expect(popped).toEqual([...Array.from({ length: 64 }, (_, i) => i), ...new Array<undefined>(16).fill(undefined)]);
      expect(counter.counts().commitErrors.get(1021) ?? 0).toBeGreaterThan(0);
    });

    it('merged pops of large items under commit_unknown_result (receipts too large for one run receipt, so one per call): each item popped once', async () => {
      const { docs, counter } = await ctx.openWithFaults({ seed: testSeed(1704), notCommitted: 0.1, unknownResult: 0.5 });
      const queue = docs.collection().queue<string>('q');
      const items = Array.from({ length: 48 }, (_, i) => `${i}`.padEnd(20_000, '.'));
      for (let i = 0; i < items.length; i += 4) await queue.pushMany(items.slice(i, i + 4));
      const popped: (string | undefined)[] = [];
      // 8 callers: one pop alone, then 7 merged (140 kB of receipts).
      for (let round = 0; round < 7; round++) popped.push(...(await Promise.all(Array.from({ length: 8 }, () => queue.pop()))));
      expect(popped).toEqual([...items, ...new Array<undefined>(8).fill(undefined)]);
      expect(counter.counts().commitErrors.get(1021) ?? 0).toBeGreaterThan(0);
    });

    it('merged map sets and blind adds under commit faults: the values and totals stay exact', async () => {
      const { docs, counter } = await ctx.openWithFaults({ seed: testSeed(1703), notCommitted: 0.4, tooOld: 0.1 });
      const c = docs.collection();
      const map = c.map<number>('m');
      const adds = c.counter('adds');
      for (let round = 0; round < 4; round++) {
        await Promise.all(Array.from({ length: 16 }, (_, i) => map.set(`k${i % 8}`, round * 16 + i)));
        await Promise.all(Array.from({ length: 16 }, () => adds.add(2)));
      }
      expect(await map.entries()).toEqual(Array.from({ length: 8 }, (_, k) => [`k${k}`, 48 + 8 + k]));
      expect(await map.size()).toBe(8);
      expect(await adds.get()).toBe(128);
      expect(counter.counts().retries).toBeGreaterThan(0);
    });

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
