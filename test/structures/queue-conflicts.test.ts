/**
 * The conflict claims of Queue's TSDoc, proved by counting retries: transactions run concurrently and
 * wait at a barrier after their operation, so that every first attempt has read before any commits;
 * a conflict then shows as a retry.
 */
import { open, type Collection, type DocLayer } from '../../src';
import { openMemoryDatabase } from '../../src/kv/memory/memory-engine';
import type { Transaction } from '../../src/kv/contract/types';
import type { Queue } from '../../src/structures/queue/queue';
import { Barrier } from '../support/barrier';

interface Raced<R> {
  results: R[];
  /** Retries per transaction. */
  retries: number[];
  total: number;
}

/**
 * Runs each function in its own transaction; first attempts all finish their reads before any commits.
 * The first attempts of the transactions in `commitLast` commit only once all the others are done.
 */
async function race<R>(docs: DocLayer, fns: ((tr: Transaction) => Promise<R>)[], commitLast: number[] = []): Promise<Raced<R>> {
  const barrier = new Barrier(fns.length);
  let arrivals = 0;
  let othersDone!: () => void;
  const others = new Promise<void>((resolve) => (othersDone = resolve));
  const attempts = fns.map(() => 0);
  const runs = fns.map((fn, i) =>
    docs.transact(async (tr) => {
      attempts[i]++;
      const result = await fn(tr);
      if (arrivals++ < fns.length) {
        await barrier.arrive();
        if (commitLast.includes(i)) await others;
      }
      return result;
    }),
  );
  void Promise.allSettled(runs.filter((_, i) => !commitLast.includes(i))).then(() => othersDone());
  const results = await Promise.all(runs);
  const retries = attempts.map((a) => a - 1);
  return { results, retries, total: retries.reduce((a, b) => a + b, 0) };
}

async function setUp(): Promise<{ docs: DocLayer; c: Collection; q: Queue<number> }> {
  const docs = await open({ database: openMemoryDatabase() });
  const c = docs.collection();
  const q = c.queue<number>('q');
  return { docs, c, q };
}

/** A write elsewhere, so that a transaction that only reads the queue is checked for conflicts at commit. */
function touch(tr: Transaction, i: number): void {
  tr.set(`unrelated-${i}`, 'x');
}

describe('Queue.push', () => {
  it('does not conflict with concurrent pushes', async () => {
    const { docs, q } = await setUp();
    await q.push(0);
    const raced = await race(
      docs,
      Array.from({ length: 8 }, (_, i) => (tr: Transaction) => q.push(i + 1, { tr })),
    );
    expect(raced.total).toBe(0);
    expect(await q.size()).toBe(9);
  });

  it('does not conflict with concurrent delayed pushes', async () => {
    const { docs, q } = await setUp();
    await q.push(0);
    const raced = await race(
      docs,
      Array.from({ length: 6 }, (_, i) => (tr: Transaction) => q.push(i, { tr, delayMs: 1000 })),
    );
    expect(raced.total).toBe(0);
  });

  it('does not conflict with a concurrent strict pop, and the pop takes the head', async () => {
    const { docs, q } = await setUp();
    await q.pushMany([1, 2]);
    const raced = await race<number | void | undefined>(docs, [(tr) => q.pop({ tr }), (tr) => q.push(3, { tr }), (tr) => q.push(4, { tr })]);
    expect(raced.total).toBe(0);
    expect(raced.results[0]).toBe(1);
  });

  it('conflicts with a concurrent push of the same dedupeId, which then does nothing', async () => {
    const { docs, q } = await setUp();
    await q.push(0);
    const raced = await race(docs, [(tr) => q.push(1, { tr, dedupeId: 'job-1' }), (tr) => q.push(1, { tr, dedupeId: 'job-1' })]);
    expect(raced.total).toBe(1);
    expect(await q.size()).toBe(2);
  });

  it('of the first item conflicts once when two transactions create the queue', async () => {
    const { docs, q } = await setUp();
    const raced = await race(docs, [(tr) => q.push(1, { tr }), (tr) => q.push(2, { tr })]);
    expect(raced.total).toBe(1);
    expect(await q.size()).toBe(2);
  });
});

describe('Queue.pop', () => {
  it('strict pops of one queue conflict: all but one retry, and each item is taken once', async () => {
    const { docs, q } = await setUp();
    await q.pushMany([1, 2, 3, 4, 5]);
    const raced = await race(
      docs,
      Array.from({ length: 4 }, () => (tr: Transaction) => q.pop({ tr })),
    );
    expect(raced.total).toBeGreaterThanOrEqual(3);
    expect([...raced.results].sort()).toEqual([1, 2, 3, 4]);
    expect(await q.pop()).toBe(5);
  });

  it('spreading pops that pick different items do not conflict', async () => {
    const { docs, c, q } = await setUp();
    await q.pushMany([1, 2, 3, 4]);
    // Handle i always picks the i-th of the first 4 items.
    const handles = [0, 1, 2, 3].map((i) => c.queue<number>('q', { random: () => (i + 0.5) / 4 }));
    const raced = await race(
      docs,
      handles.map((h) => (tr: Transaction) => h.pop({ tr, spread: 4 })),
    );
    expect(raced.total).toBe(0);
    expect(raced.results).toEqual([1, 2, 3, 4]);
  });

  it('spreading pops that pick the same item conflict, and the retry picks another', async () => {
    const { docs, c, q } = await setUp();
    await q.pushMany([1, 2, 3, 4]);
    const same = () => c.queue<number>('q', { random: () => 0.3 });
    const raced = await race(
      docs,
      [same(), same()].map((h) => (tr: Transaction) => h.pop({ tr, spread: 4 })),
    );
    expect(raced.total).toBe(1);
    // The loser's retry sees [1, 3, 4] and picks the first of them.
    expect([...raced.results].sort()).toEqual([1, 2]);
  });

  it('on an empty queue does not conflict with a concurrent push', async () => {
    const { docs, q } = await setUp();
    await q.push(0);
    await q.pop();
    const raced = await race<number | void | undefined>(docs, [
      async (tr) => {
        touch(tr, 0);
        return q.pop({ tr });
      },
      (tr) => q.push(1, { tr }),
    ]);
    expect(raced.total).toBe(0);
    expect(raced.results[0]).toBeUndefined();
  });

  it('a strict pop that found nothing conflicts with a nack that makes an item visible, and its retry takes it', async () => {
    const { docs, c } = await setUp();
    const q = c.queue<number>('q', { now: () => 5_000 });
    await q.push(1);
    const [lease] = await q.lease(1, { visibilityMs: 1_000 });
    const raced = await race<unknown>(
      docs,
      [
        async (tr) => {
          touch(tr, 0);
          return q.pop({ tr });
        },
        (tr) => q.nack(lease, { tr }),
      ],
      [0],
    );
    expect(raced.total).toBe(1);
    expect(raced.results[0]).toBe(1);
  });

  it('strict pop conflicts with a strict lease of the same head', async () => {
    const { docs, q } = await setUp();
    await q.pushMany([1, 2]);
    const raced = await race<unknown>(docs, [(tr) => q.pop({ tr }), (tr) => q.lease(1, { tr })]);
    expect(raced.total).toBe(1);
  });
});

describe('Queue.peek and Queue.size', () => {
  it('peek in a writing transaction conflicts with a pop of the head', async () => {
    const { docs, q } = await setUp();
    await q.pushMany([1, 2]);
    const raced = await race<unknown>(
      docs,
      [
        async (tr) => {
          touch(tr, 0);
          return q.peek({ tr });
        },
        (tr) => q.pop({ tr }),
      ],
      [0],
    );
    expect(raced.total).toBe(1);
  });

  it('size in a writing transaction conflicts with a push (it reads the size key)', async () => {
    const { docs, q } = await setUp();
    await q.push(1);
    const raced = await race<unknown>(
      docs,
      [
        async (tr) => {
          touch(tr, 0);
          return q.size({ tr });
        },
        (tr) => q.push(2, { tr }),
      ],
      [0],
    );
    expect(raced.total).toBe(1);
  });

  it('size in a read-only transaction never conflicts', async () => {
    const { docs, q } = await setUp();
    await q.push(1);
    const raced = await race<unknown>(docs, [(tr) => q.size({ tr }), (tr) => q.push(2, { tr }), (tr) => q.pop({ tr })]);
    expect(raced.total).toBe(0);
  });
});

describe('Queue leases', () => {
  it('acks of different leases do not conflict with each other, with pushes or with pops', async () => {
    const { docs, q } = await setUp();
    await q.pushMany([1, 2, 3, 4, 5, 6]);
    const leases = await q.lease(4, { visibilityMs: 60_000 });
    const raced = await race<unknown>(docs, [
      ...leases.map((l) => (tr: Transaction) => q.ack(l, { tr })),
      (tr) => q.push(7, { tr }),
      (tr) => q.pop({ tr }),
    ]);
    expect(raced.total).toBe(0);
    expect(await q.size()).toBe(2);
  });

  it('an ack conflicts with a take of the same item after its deadline, and exactly one wins', async () => {
    const clock = { now: 1_000 };
    const { docs, c } = await setUp();
    const q = c.queue<number>('q', { now: () => clock.now });
    await q.push(1);
    const [lease] = await q.lease(1, { visibilityMs: 100 });
    // The holder's clock says the lease holds; the other consumer's says it expired.
    const late = c.queue<number>('q', { now: () => clock.now + 100 });
    const raced = await race<string>(docs, [
      async (tr) => {
        try {
          await q.ack(lease, { tr });
          return 'acked';
        } catch (err) {
          return (err as { code?: string }).code ?? String(err);
        }
      },
      async (tr) => ((await late.pop({ tr })) === undefined ? 'empty' : 'popped'),
    ]);
    // Whichever committed first won; the other conflicted, and its retry found the item gone.
    expect(raced.total).toBe(1);
    expect([
      ['acked', 'empty'],
      ['LEASE_EXPIRED', 'popped'],
    ]).toContainEqual(raced.results);
    expect(await q.size()).toBe(0);
  });

  it('extends of different leases do not conflict', async () => {
    const { docs, q } = await setUp();
    await q.pushMany([1, 2, 3]);
    const leases = await q.lease(3, { visibilityMs: 60_000 });
    const raced = await race<unknown>(
      docs,
      leases.map((l) => (tr: Transaction) => q.extend(l, 120_000, { tr })),
    );
    expect(raced.total).toBe(0);
  });
});

describe('Queue priorities', () => {
  it("a strict pop conflicts with no push: not at its item's priority, a higher one, a lower one or a new one", async () => {
    const { docs, q } = await setUp();
    await q.push(1, { priority: 5 });
    await q.push(2);
    const raced = await race<number | void | undefined>(docs, [
      (tr) => q.pop({ tr }),
      (tr) => q.push(3, { tr, priority: 5 }),
      (tr) => q.push(4, { tr, priority: 9 }),
      (tr) => q.push(5, { tr, priority: 7 }),
      (tr) => q.push(6, { tr }),
    ]);
    expect(raced.total).toBe(0);
    expect(raced.results[0]).toBe(1);
    expect(await q.pop()).toBe(4);
  });

  it('a strict take that went past a whole priority conflicts with no push to it', async () => {
    const { docs, q } = await setUp();
    await q.push(1, { priority: 5 });
    await q.push(2);
    await q.push(3);
    // The lease takes all of priority 5 and the first of priority 0: its read conflict covers
    // priority 5 up to the read version's bound, which no later push reaches.
    const raced = await race<unknown>(docs, [
      (tr) => q.lease(2, { tr }),
      (tr) => q.push(4, { tr, priority: 5 }),
      (tr) => q.push(5, { tr, priority: 3 }),
    ]);
    expect(raced.total).toBe(0);
    expect(await q.pop()).toBe(4);
  });

  it('a strict pop that found the queue empty conflicts with no push at any priority', async () => {
    const { docs, q } = await setUp();
    await q.push(0);
    await q.pop();
    const raced = await race<number | void | undefined>(docs, [
      async (tr) => {
        const got = await q.pop({ tr });
        touch(tr, 0);
        return got;
      },
      (tr) => q.push(1, { tr, priority: 2 }),
      (tr) => q.push(2, { tr }),
    ]);
    expect(raced.total).toBe(0);
    expect(raced.results[0]).toBeUndefined();
  });

  it('strict pops of the same high-priority head conflict, and the retry takes the next item', async () => {
    const { docs, q } = await setUp();
    await q.push(0);
    await q.pushMany([1, 2], { priority: 4 });
    const raced = await race<number | undefined>(docs, [(tr) => q.pop({ tr }), (tr) => q.pop({ tr })]);
    expect(raced.total).toBe(1);
    expect([...raced.results].sort()).toEqual([1, 2]);
    expect(await q.pop()).toBe(0);
  });

  it('spreading pops across priorities conflict only when they pick the same item', async () => {
    const { docs, c, q } = await setUp();
    await q.push(1, { priority: 3 });
    await q.push(2);
    // Handle i always picks the i-th of the first 2 items: one of priority 3, one of priority 0.
    const handles = [0, 1].map((i) => c.queue<number>('q', { random: () => (i + 0.5) / 2 }));
    const raced = await race(
      docs,
      handles.map((h) => (tr: Transaction) => h.pop({ tr, spread: 2 })),
    );
    expect(raced.total).toBe(0);
    expect(raced.results).toEqual([1, 2]);
  });
});
