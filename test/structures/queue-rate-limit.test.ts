/**
 * Rate limits of a queue (docs/queue.md, "Rate limits"), on every engine: at most `max` items taken per
 * fixed window of `intervalMs`, by pops, merged pops, leases and consumers; the limit stored with the
 * queue; what a take reads and writes; a seeded reference model of windows with a manual clock (also
 * under injected not_committed and commit_unknown_result); and concurrent consumers that never exceed
 * the limit in any window without collapsing into conflicts.
 */
import { open, type DocLayer } from '../../src';
import { isDocumentError } from '../../src/document/errors';
import { Database } from '../../src/kv/contract/database';
import type { Transaction } from '../../src/kv/contract/types';
import type { Queue, RateLimit } from '../../src/structures/queue/queue';
import { pack } from '../../src/tuple';
import { documentSuite } from '../document/document-suite';
import { Random, testSeed } from '../support/random';

/** A clock the test moves by hand. */
function manualClock(start = 1_000_000) {
  const clock = { now: start, fn: () => clock.now };
  return clock;
}

async function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise;
    return undefined;
  } catch (err) {
    if (isDocumentError(err)) return err.code;
    throw err;
  }
}

async function drain(q: Queue<number>): Promise<number[]> {
  const out: number[] = [];
  for (let v = await q.pop(); v !== undefined; v = await q.pop()) out.push(v);
  return out;
}

const range = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + i);

/** The windows of a rate limit as a plain model: items taken per window, reset by an interval change. */
class WindowsModel {
  limit: RateLimit | undefined;
  private readonly used = new Map<number, number>();

  constructor(private readonly now: () => number) {}

  set(limit: RateLimit): void {
    if (this.limit?.max !== limit.max || this.limit.intervalMs !== limit.intervalMs) this.used.clear();
    this.limit = limit;
  }

  remove(): boolean {
    const had = this.limit !== undefined;
    this.limit = undefined;
    this.used.clear();
    return had;
  }

  /** Takes the limit cut short, in all and under a limit of 40 or more (whose slots a small take reads only in part). */
  readonly cut = { all: 0, large: 0 };

  /** How many of `wanted` items the limit lets a take deliver now; counts them. */
  take(wanted: number, available: number): number {
    const n = Math.min(wanted, available, this.free());
    if (n < Math.min(wanted, available)) {
      this.cut.all++;
      if ((this.limit?.max ?? 0) >= 40) this.cut.large++;
    }
    if (this.limit !== undefined && n > 0) {
      const w = Math.floor(this.now() / this.limit.intervalMs);
      this.used.set(w, (this.used.get(w) ?? 0) + n);
    }
    return n;
  }

  private free(): number {
    if (this.limit === undefined) return Infinity;
    const w = Math.floor(this.now() / this.limit.intervalMs);
    return Math.max(0, this.limit.max - (this.used.get(w) ?? 0));
  }
}

documentSuite('Queue rate limits', (ctx) => {
  async function setUp(clock = manualClock()) {
    const { docs, counter } = await ctx.open();
    const c = docs.collection();
    const q = c.queue<number>('q', { now: clock.fn });
    return { docs, c, q, clock, counter };
  }

  describe('Queue.setRateLimit', () => {
    it('stores the limit with the queue: every handle reads it, and removeRateLimit removes it', async () => {
      const { c, q } = await setUp();
      expect(await q.rateLimit()).toBeUndefined();
      await q.setRateLimit({ max: 3, intervalMs: 1000 });
      expect(await c.queue('q').rateLimit()).toEqual({ max: 3, intervalMs: 1000 });
      // A limit alone makes an empty queue.
      expect((await c.get('q')).content).toEqual([]);
      expect(await q.removeRateLimit()).toBe(true);
      expect(await q.removeRateLimit()).toBe(false);
      expect(await c.queue('q').rateLimit()).toBeUndefined();
    });

    it('rejects invalid limits before writing anything', async () => {
      const { c, q } = await setUp();
      for (const limit of [
        { max: 0, intervalMs: 10 },
        { max: 1.5, intervalMs: 10 },
        { max: 10_001, intervalMs: 10 },
        { max: 1, intervalMs: 0 },
        { max: 1, intervalMs: 86_400_001 },
      ]) {
        expect(await codeOf(q.setRateLimit(limit))).toBe('INVALID_ARGUMENT');
      }
      expect(await codeOf(q.setRateLimit(null as unknown as RateLimit))).toBe('INVALID_ARGUMENT');
      expect(await c.exists('q')).toBe(false);
    });

    it('is removed with the queue by clear()', async () => {
      const { q } = await setUp();
      await q.setRateLimit({ max: 1, intervalMs: 1000 });
      await q.pushMany([1, 2]);
      await q.clear();
      await q.pushMany([1, 2]);
      expect(await drain(q)).toEqual([1, 2]);
    });

    it('is WRONG_KIND on a plain document', async () => {
      const { c, q } = await setUp();
      await c.insert({ a: 1 }, { id: 'q' });
      expect(await codeOf(q.setRateLimit({ max: 1, intervalMs: 10 }))).toBe('WRONG_KIND');
      expect(await codeOf(q.rateLimit())).toBe('WRONG_KIND');
    });
  });

  describe('taking under a rate limit', () => {
    it('pops at most max items per window, then undefined until the next window', async () => {
      const { q, clock } = await setUp();
      await q.setRateLimit({ max: 2, intervalMs: 100 });
      await q.pushMany(range(0, 5));
      clock.now = 1_000_000; // the start of a window
      expect(await drain(q)).toEqual([0, 1]);
      clock.now += 99;
      expect(await q.pop()).toBeUndefined();
      clock.now += 1;
      expect(await drain(q)).toEqual([2, 3]);
      clock.now += 100;
      expect(await drain(q)).toEqual([4]);
      // peek and size ignore the limit.
      await q.pushMany([5, 6, 7]);
      expect(await drain(q)).toEqual([5]);
      expect(await q.peek()).toBe(6);
      expect(await q.size()).toBe(2);
    });

    it('a take that expected no limit (none known at the last version seen) obeys one set through another database object since', async () => {
      const { q, clock, counter } = await setUp();
      await q.pushMany(range(0, 6));
      // Pops, a lease and a consumer batch here learn "no limit"; each then takes without waiting on
      // the limiter, and checks its own metadata version once the head is read.
      expect(await q.pop()).toBe(0);
      const other = await open({ database: new Database(counter) });
      try {
        await other.collection().queue('q').setRateLimit({ max: 2, intervalMs: 60_000 });
        clock.now = 1_200_000; // the start of a window
        expect(await drain(q)).toEqual([1, 2]);
        expect(await q.lease(2)).toEqual([]);
        clock.now += 60_000;
        expect((await q.lease(5)).map((l) => l.value)).toEqual([3, 4]);
      } finally {
        await other.close();
      }
    });

    it('cuts leases and consumer batches to the free slots', async () => {
      const { q, clock } = await setUp();
      await q.setRateLimit({ max: 3, intervalMs: 100 });
      await q.pushMany(range(0, 10));
      expect((await q.lease(2)).map((l) => l.value)).toEqual([0, 1]);
      expect((await q.lease(5)).map((l) => l.value)).toEqual([2]);
      expect(await q.lease(5)).toEqual([]);
      clock.now += 100;
      const seen: number[] = [];
      const consumer = q.consume((n) => void seen.push(n), { batchSize: 5 });
      while (seen.length < 3) await new Promise((resolve) => setTimeout(resolve, 2));
      // The window is full: the worker sleeps until it ends (by the real clock), taking nothing more.
      await new Promise((resolve) => setTimeout(resolve, 30));
      const stats = await consumer.stop();
      expect(seen).toEqual([3, 4, 5]);
      expect(stats.batches).toBe(1);
    });

    it('limits concurrent pops merged into one transaction', async () => {
      const { q } = await setUp();
      await q.setRateLimit({ max: 3, intervalMs: 100 });
      await q.pushMany(range(0, 10));
      const got = await Promise.all(range(0, 6).map(() => q.pop()));
      expect(got.filter((v) => v !== undefined).sort()).toEqual([0, 1, 2]);
    });

    it('a waiting pop sleeps until the window ends rather than spinning', async () => {
      const { q, counter } = await setUp({ now: 0, fn: Date.now });
      const intervalMs = 200;
      await q.setRateLimit({ max: 1, intervalMs });
      await q.pushMany([1, 2]);
      // Start near a window's beginning (by the real clock) so that the second pop has to wait.
      await new Promise((resolve) => setTimeout(resolve, intervalMs - (Date.now() % intervalMs) + 2));
      const before = Date.now();
      expect(await q.pop()).toBe(1);
      const after = Date.now();
      const attempts = counter.counts().attempts;
      expect(await q.pop({ wait: 2000 })).toBe(2);
      // The first pop's window, when it surely was one window: the second pop came after its end.
      const window = Math.floor(before / intervalMs);
      if (Math.floor(after / intervalMs) === window) expect(Date.now()).toBeGreaterThanOrEqual((window + 1) * intervalMs);
      // One attempt that found the window full, one after it ended (a few more if a commit retried).
      expect(counter.counts().attempts - attempts).toBeLessThan(5);
    });

    it('claims no slot for exhausted items moved to the dead-letter queue', async () => {
      const { docs, clock } = await setUp();
      const dq = docs.collection().queue<number>('q', { now: clock.fn, maxAttempts: 1 });
      await dq.setRateLimit({ max: 2, intervalMs: 100 });
      await dq.pushMany([1, 2, 3]);
      await dq.lease(1, { visibilityMs: 10 });
      clock.now += 100; // the lease of 1 expired, exhausted; a new window
      expect(await drain(dq)).toEqual([2, 3]);
      expect(await drain(dq.deadLetters)).toEqual([1]);
    });

    it('keeps the window count when the same limit is set again, and starts again when it changes', async () => {
      const { q, clock } = await setUp();
      await q.setRateLimit({ max: 4, intervalMs: 100 });
      await q.pushMany(range(0, 20));
      expect(await drain(q)).toEqual([0, 1, 2, 3]);
      await q.setRateLimit({ max: 4, intervalMs: 100 });
      expect(await drain(q)).toEqual([]);
      await q.setRateLimit({ max: 5, intervalMs: 100 });
      expect(await drain(q)).toEqual([4, 5, 6, 7, 8]);
      await q.setRateLimit({ max: 2, intervalMs: 1000 });
      expect(await drain(q)).toEqual([9, 10]);
      clock.now += 1000;
      await q.removeRateLimit();
      expect(await drain(q)).toEqual(range(11, 9));
    });

    it('finds the free slots of a nearly full window beyond the run it reads first', async () => {
      const { q } = await setUp();
      await q.setRateLimit({ max: 500, intervalMs: 100 });
      await q.pushMany(range(0, 600));
      let taken = 0;
      while (taken < 500) {
        const got = await q.lease(7);
        expect(got.length).toBe(Math.min(7, 500 - taken));
        taken += got.length;
      }
      expect(await q.pop()).toBeUndefined();
    });

    it('clears old windows as it goes: at most the current and previous windows hold slots', async () => {
      const { docs, q, clock } = await setUp();
      await q.setRateLimit({ max: 2, intervalMs: 100 });
      await q.pushMany(range(0, 12));
      for (let i = 0; i < 6; i++) {
        expect((await drain(q)).length).toBe(2);
        clock.now += 100;
      }
      const slotKeys = await docs.transact(async (tr) => {
        const all = await tr.getRangeAll(Buffer.alloc(0), Buffer.of(0xff));
        return all.filter((p) => p.key.includes(Buffer.from([0x00, 0x77, 0x15]))).length;
      });
      expect(slotKeys).toBeLessThanOrEqual(4);
    });
  });

  describe('costs', () => {
    it('a pop without a limit reads nothing more, once the queue is known to have none', async () => {
      const { docs, c, q, counter } = await setUp();
      // Created through this database: known at once.
      await q.pushMany([1, 2, 3]);
      const created = await counter.measure(() => docs.transact((tr) => q.pop({ tr })));
      expect(created.counts).toMatchObject({ gets: 1, rangeReads: 2, sets: 0 });
      // Met through another database object (as by another process): the limit key and the event
      // settings key (events.ts) are read with the kind check and the head, once; then every handle
      // over that database knows.
      const elsewhere = new Database(counter);
      const other = await open({ database: elsewhere });
      try {
        // (The other layer's first read of the collection, which reads its manifest.)
        expect(await other.collection().queue('q').size()).toBe(2);
        const first = await counter.measure(() => other.transact((tr) => other.collection().queue('q').pop({ tr })));
        expect(first.counts).toMatchObject({ gets: 3, rangeReads: 2, sets: 0 });
        const again = await counter.measure(() => other.transact((tr) => other.collection().queue('q').pop({ tr })));
        expect(again.counts).toMatchObject({ gets: 1, rangeReads: 2, sets: 0 });
      } finally {
        await other.close();
      }
      expect(await c.queue('q').size()).toBe(0);
    });

    it('a pop under a limit also reads the window (snapshot) and sets one slot key, with a read conflict on it', async () => {
      const { docs, c, clock, counter } = await setUp();
      // A take reads the window's slots from a random one to the last, and the rest only when those are
      // all claimed: with Math.random both pops could start at the last slot (about 1 run in 100), and
      // the second would then read once more. A fixed draw makes the count the one asserted.
      const q = c.queue<number>('q', { now: clock.fn, random: () => 0.5 });
      await q.setRateLimit({ max: 10, intervalMs: 100 });
      await q.pushMany([1, 2, 3]);
      await q.pop();
      const conflicts: Buffer[] = [];
      const { counts, attempts } = await counter.measure(() =>
        docs.transact((tr) => {
          const add = tr.addReadConflictKey.bind(tr);
          tr.addReadConflictKey = (key) => {
            conflicts.push(Buffer.from(key));
            add(key);
          };
          return q.pop({ tr });
        }),
      );
      expect(counts).toMatchObject({ gets: 2, rangeReads: 3, sets: 1, clears: 1 });
      expect(attempts[0].ranges.filter((r) => r.snapshot)).toHaveLength(3);
      const [slot] = attempts[0].sets;
      expect(conflicts.filter((key) => key.equals(slot.key))).toHaveLength(1);
    });

    it('setRateLimit reads the kind and the limit; a change writes the limit and clears the slots, the same limit again neither', async () => {
      const { docs, q, counter } = await setUp();
      await q.push(1);
      const set = () => docs.transact((tr) => q.setRateLimit({ max: 1, intervalMs: 10 }, { tr }));
      expect((await counter.measure(set)).counts).toMatchObject({ gets: 2, rangeReads: 0, sets: 1, clearRanges: 1 });
      expect((await counter.measure(set)).counts).toMatchObject({ gets: 2, rangeReads: 0, sets: 0, clearRanges: 0 });
    });
  });

  describe('queues known to have no limit', () => {
    it('learn of a first limit set through another database object (as by another process)', async () => {
      const { c, q, clock, counter } = await setUp();
      await q.pushMany(range(0, 6));
      expect(await q.pop()).toBe(0);
      expect(await q.pop()).toBe(1);
      const elsewhere = new Database(counter);
      const other = await open({ database: elsewhere });
      try {
        await other.collection().queue<number>('q', { now: clock.fn }).setRateLimit({ max: 2, intervalMs: 100 });
        expect(await drain(q)).toEqual([2, 3]);
        expect(await c.queue<number>('q', { now: clock.fn }).pop()).toBeUndefined();
      } finally {
        await other.close();
      }
    });

    it('a pop that trusted "no limit" conflicts with a first limit committed meanwhile, and then obeys it', async () => {
      const { docs, c, q, clock } = await setUp();
      await q.pushMany(range(0, 6));
      expect(await q.pop()).toBe(0);
      let attempts = 0;
      let popped!: () => void;
      const firstPopRead = new Promise<void>((resolve) => (popped = resolve));
      let limited!: () => void;
      const limitCommitted = new Promise<void>((resolve) => (limited = resolve));
      const pop = docs.transact(async (tr) => {
        const value = await q.pop({ tr });
        if (++attempts === 1) {
          popped();
          await limitCommitted;
        }
        return value;
      });
      await firstPopRead;
      await c.queue<number>('q', { now: clock.fn }).setRateLimit({ max: 1, intervalMs: 100 });
      limited();
      expect(await pop).toBe(1);
      expect(attempts).toBe(2);
      expect(await q.pop()).toBeUndefined();
    });
  });

  describe('against a reference model of windows (manual clock)', () => {
    async function runModel(layer: { docs: DocLayer }, seed: number, steps: number): Promise<void> {
      const r = new Random(seed);
      const clock = manualClock();
      const q = layer.docs.collection().queue<number>('q', { now: clock.fn, random: new Random(seed ^ 0x7a7e).next });
      const windows = new WindowsModel(clock.fn);
      let items: number[] = [];
      let next = 0;
      // Whatever the seed: a large window filled by large takes, then a small take cut short.
      windows.set({ max: 40, intervalMs: 1000 });
      await q.setRateLimit({ max: 40, intervalMs: 1000 });
      next = 60;
      items = range(0, 60);
      await q.pushMany(items);
      for (const count of [25, 25, 1]) {
        const leases = await q.lease(count, { visibilityMs: 1e9 });
        expect(leases.map((l) => l.value)).toEqual(items.splice(0, windows.take(count, items.length)));
        for (const lease of leases) await q.ack(lease);
      }
      for (let i = 0; i < steps; i++) {
        const op = r.int(100);
        const step = `step ${i} (seed ${seed})`;
        if (op < 20) {
          const values = range(next, r.chance(0.6) ? r.between(1, 4) : r.between(10, 40));
          next += values.length;
          await q.pushMany(values);
          items.push(...values);
        } else if (op < 45) {
          const got = await q.pop();
          const n = windows.take(1, items.length);
          expect({ step, got }).toEqual({ step, got: n === 1 ? items.shift() : undefined });
        } else if (op < 55) {
          const calls = r.between(2, 4);
          const got = await Promise.all(range(0, calls).map(() => q.pop()));
          const n = windows.take(calls, items.length);
          expect({ step, got: got.filter((v) => v !== undefined).sort((a, b) => a - b) }).toEqual({ step, got: items.splice(0, n) });
        } else if (op < 65 || op >= 85) {
          // Small takes (which read a run of the window's slots first) and large ones.
          const count = op < 65 ? r.between(1, 4) : r.between(10, 25);
          const leases = await q.lease(count, { visibilityMs: 1e9 });
          const n = windows.take(count, items.length);
          expect({ step, got: leases.map((l) => l.value) }).toEqual({ step, got: items.splice(0, n) });
          for (const lease of leases) await q.ack(lease);
        } else if (op < 70) {
          const limit = { max: r.chance(0.6) ? r.between(1, 6) : r.pick([40, 60]), intervalMs: r.pick([100, 250, 1000]) };
          await q.setRateLimit(limit);
          windows.set(limit);
        } else if (op < 71) {
          await q.removeRateLimit();
          windows.remove();
        } else if (op < 72) {
          await q.clear();
          windows.remove();
          items = [];
        } else {
          clock.now += r.pick([1, 10, 30, 60, 120, 250]);
        }
        expect({ step, limit: await q.rateLimit() }).toEqual({ step, limit: windows.limit });
      }
      expect(await q.size()).toBe(items.length);
      // The random steps ran into the limit too.
      expect(windows.cut.all).toBeGreaterThan(2);
    }

    for (const salt of [1, 2]) {
      it(`matches the model step by step (seed salt ${salt})`, async () => {
        await runModel(await ctx.open(), testSeed(1800 + salt), 150);
      });
    }

    ctx.describeWithFaults('with injected faults', () => {
      it('matches the model under not_committed and commit_unknown_result: retries claim no extra slot', async () => {
        const seed = testSeed(1811);
        await runModel(await ctx.openWithFaults({ seed, notCommitted: 0.1, unknownResult: 0.15 }), seed, 150);
      });
    });
  });

  describe('concurrent consumers', () => {
    it('never take more than max in a window, and conflict little', async () => {
      const { docs, c } = await setUp();
      const limit = { max: 50, intervalMs: 50 };
      const total = 300;
      await c.queue<number>('jobs').setRateLimit(limit);
      await c.queue<number>('jobs').pushMany(range(0, total));
      // Each consumer on a handle of its own, so the window its take used is the last its clock said.
      const consumers = range(0, 4).map(() => {
        let last = 0;
        const q = c.queue<number>('jobs', {
          now: () => (last = Date.now()),
        });
        return q.consume(
          (n, tr: Transaction) => {
            tr.add(pack(['window', Math.floor(last / limit.intervalMs)]), 1);
            tr.add(pack(['item', n]), 1);
          },
          // No scheduler of repeatable jobs beside the worker: it would read the clock too.
          { batchSize: 5, spread: 16, schedules: false },
        );
      });
      const q = c.queue<number>('jobs');
      while ((await q.size()) > 0) await new Promise((resolve) => setTimeout(resolve, 5));
      const stats = await Promise.all(consumers.map((consumer) => consumer.stop()));
      const { perWindow, perItem } = await docs.transact(async (tr) => ({
        perWindow: await tr.getRangeAll(pack(['window']), Buffer.concat([pack(['window']), Buffer.of(0xff)])),
        perItem: await tr.getRangeAll(pack(['item']), Buffer.concat([pack(['item']), Buffer.of(0xff)])),
      }));
      expect(perItem).toHaveLength(total);
      for (const { value } of perItem) expect(value.readBigInt64LE(0)).toBe(1n);
      const counts = perWindow.map(({ value }) => Number(value.readBigInt64LE(0)));
      expect(Math.max(...counts)).toBeLessThanOrEqual(limit.max);
      expect(counts.reduce((a, b) => a + b, 0)).toBe(total);
      expect(counts.length).toBeGreaterThanOrEqual(total / limit.max);
      const batches = stats.reduce((n, s) => n + s.batches, 0);
      const retries = stats.reduce((n, s) => n + s.retries, 0);
      expect(stats.reduce((n, s) => n + s.consumed, 0)).toBe(total);
      // Takes conflict only on the same slot or head item; at each window's end the takers racing for
      // its last free slots conflict (all but one), then find it full: still fewer retries than batches.
      expect(retries).toBeLessThan(batches);
    });
  });
});
