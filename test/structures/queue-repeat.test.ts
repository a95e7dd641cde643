/**
 * Repeatable jobs (src/structures/queue/repeat.ts, docs/queue.md "Repeatable jobs"), on every engine:
 * schedules upserted, listed and removed; each occurrence enqueued once as a delayed item visible at its
 * time; the missed-occurrence policy; limits and ends; seeded random schedules and clock moves against
 * a reference model; several schedulers racing; commit_unknown_result; the scheduler loop and
 * consumers running it; and what a pass reads and writes.
 */
import { open, type DocLayer } from '../../src';
import { DocumentError } from '../../src/document/errors';
import type { JsonValue } from '../../src/document/types';
import { Database } from '../../src/kv/contract/database';
import { CountingEngine } from '../../src/kv/counting-engine';
import { parseCron } from '../../src/structures/queue/cron';
import type { Queue } from '../../src/structures/queue/queue';
import { documentEngines, type DocumentEngine } from '../support/document-engines';
import { Random, testSeed } from '../support/random';
import { scheduledItems } from '../support/queue-scheduled';

let current: DocumentEngine = documentEngines[0];
const opened: { close(): Promise<void> }[] = [];

/** A clock the test moves by hand. */
function manualClock(start = Date.UTC(2026, 0, 1)) {
  const clock = { now: start, fn: () => clock.now };
  return clock;
}

async function setUp(now?: () => number) {
  const engine = new CountingEngine((await current.open()).engine);
  const database = new Database(engine);
  const docs = await open({ database });
  opened.push(docs, database);
  const q = docs.collection().queue<JsonValue>('q', { now });
  return { docs, database, q, engine };
}

const enqueued = (docs: DocLayer) => scheduledItems(docs);

async function code(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise;
    return undefined;
  } catch (err) {
    if (err instanceof DocumentError) return err.code;
    throw err;
  }
}

async function list(q: Queue<JsonValue>) {
  const out = [];
  for await (const info of q.repeats()) out.push(info);
  return out;
}

/** The reference: a schedule's occurrences, and what passes at given times enqueue under the policy. */
class ScheduleModel {
  next: number | undefined;
  count = 0;
  readonly enqueued: number[] = [];

  constructor(
    readonly name: string,
    private readonly after: (t: number) => number | undefined,
    first: number | undefined,
    private readonly limit: number | undefined,
  ) {
    this.next = first;
  }

  /**
   * A pass at `now`: of the occurrences missed (at or before now - lookahead) the oldest only, then every
   * one up to now + lookahead (100 at most).
   */
  pass(now: number, lookaheadMs: number): void {
    const upTo: number[] = [];
    let t = this.next;
    const overdue: number[] = [];
    while (t !== undefined && t <= now - lookaheadMs) {
      overdue.push(t);
      t = this.after(t);
    }
    if (overdue.length > 0) upTo.push(overdue[0]);
    while (t !== undefined && t <= now + lookaheadMs) {
      upTo.push(t);
      t = this.after(t);
    }
    let taken = 0;
    for (const at of upTo) {
      if (taken === 100 || (this.limit !== undefined && this.count >= this.limit)) break;
      this.enqueued.push(at);
      this.count++;
      taken++;
    }
    if (this.limit !== undefined && this.count >= this.limit) this.next = undefined;
    else if (taken < upTo.length) this.next = upTo[taken];
    else this.next = t;
  }
}

for (const engine of documentEngines) {
  describe(`Queue repeatable jobs [${engine.name}]`, () => {
    beforeAll(() => {
      current = engine;
    });
    afterEach(async () => {
      for (const closable of opened.splice(0)) await closable.close();
    });
    afterAll(async () => engine.cleanup?.());

    describe('Queue.repeat, repeats and removeRepeat', () => {
      it('stores a schedule with its next occurrence, lists it, and removes it', async () => {
        const clock = manualClock();
        const { q } = await setUp(clock.fn);
        const info = await q.repeat('report', { cron: '0 9 * * MON' }, { task: 'report' });
        expect(info).toEqual({ name: 'report', cron: '0 9 * * MON', value: { task: 'report' }, count: 0, next: Date.UTC(2026, 0, 5, 9) });
        await q.repeat('tick', { everyMs: 1000 }, 'tick', { limit: 3 });
        expect((await list(q)).map((i) => [i.name, i.next])).toEqual([
          ['report', Date.UTC(2026, 0, 5, 9)],
          ['tick', clock.now + 1000],
        ]);
        expect(await q.removeRepeat('report')).toBe(true);
        expect(await q.removeRepeat('report')).toBe(false);
        expect((await list(q)).map((i) => i.name)).toEqual(['tick']);
        // The schedules are not items.
        expect(await q.size()).toBe(0);
      });

      it('the same definition again keeps the state; another one starts over', async () => {
        const clock = manualClock();
        const { q } = await setUp(clock.fn);
        await q.repeat('tick', { everyMs: 1000 }, 'tick');
        clock.now += 1500;
        await q.runSchedules({ lookaheadMs: 0 });
        clock.now += 100;
        const again = await q.repeat('tick', { everyMs: 1000 }, 'tick');
        expect(again).toMatchObject({ count: 1, next: Date.UTC(2026, 0, 1) + 2000 });
        const changed = await q.repeat('tick', { everyMs: 500 }, 'tick');
        expect(changed).toMatchObject({ count: 0, next: clock.now + 500 });
      });

      it('rejects bad input with typed errors, writing nothing', async () => {
        const { docs, q } = await setUp();
        expect(await code(q.repeat('x', { cron: '61 * * * *' }, 1))).toBe('INVALID_ARGUMENT');
        await expect(q.repeat('x', { cron: '* 25 * * *' }, 1)).rejects.toThrow(/hour field/);
        expect(await code(q.repeat('x', { cron: '* * * * *', tz: 'Nowhere/Else' }, 1))).toBe('INVALID_ARGUMENT');
        expect(await code(q.repeat('x', { everyMs: 0 }, 1))).toBe('INVALID_ARGUMENT');
        expect(await code(q.repeat('', { everyMs: 10 }, 1))).toBe('INVALID_ARGUMENT');
        expect(await code(q.repeat('x', { everyMs: 10 }, 1, { limit: 0 }))).toBe('INVALID_ARGUMENT');
        expect(await code(q.repeat('x', { everyMs: 10 }, 1, { startAt: 10, endAt: 5 }))).toBe('INVALID_ARGUMENT');
        expect(await code(q.repeat('x', { everyMs: 10 }, undefined as unknown as JsonValue))).toBe('INVALID_VALUE');
        expect(await code(q.repeat('x', { everyMs: 10 }, 'x'.repeat(100_000)))).toBe('DOCUMENT_TOO_LARGE');
        expect(await code(q.runSchedules({ lookaheadMs: -1 }))).toBe('INVALID_ARGUMENT');
        expect(await list(q)).toEqual([]);
        expect(await docs.collection().exists('q')).toBe(false);
      });

      it('is WRONG_KIND on a plain document', async () => {
        const { docs } = await setUp();
        await docs.collection().upsert('doc', { a: 1 });
        expect(await code(docs.collection().queue('doc').repeat('x', { everyMs: 10 }, 1))).toBe('WRONG_KIND');
      });
    });

    describe('Queue.runSchedules', () => {
      it('enqueues each occurrence once, as a delayed item visible at its time', async () => {
        const clock = manualClock();
        const start = clock.now;
        const { docs, q } = await setUp(clock.fn);
        await q.repeat('tick', { everyMs: 1000 }, 'tick');
        expect(await q.runSchedules({ lookaheadMs: 500 })).toEqual({ enqueued: 0, nextAt: start + 1000 });
        clock.now += 600;
        expect(await q.runSchedules({ lookaheadMs: 500 })).toEqual({ enqueued: 1, nextAt: start + 2000 });
        expect(await q.runSchedules({ lookaheadMs: 500 })).toEqual({ enqueued: 0, nextAt: start + 2000 });
        expect(await enqueued(docs)).toEqual([['tick', start + 1000]]);
        // Not visible before its time.
        expect(await q.pop()).toBeUndefined();
        clock.now = start + 1000;
        expect(await q.pop()).toBe('tick');
      });

      it('after missed occurrences enqueues the oldest once and skips the rest', async () => {
        const clock = manualClock();
        const start = clock.now;
        const { docs, q } = await setUp(clock.fn);
        await q.repeat('tick', { everyMs: 1000 }, 'tick');
        clock.now += 10_500;
        expect(await q.runSchedules({ lookaheadMs: 0 })).toEqual({ enqueued: 1, nextAt: start + 11_000 });
        expect(await enqueued(docs)).toEqual([['tick', start + 1000]]);
        expect(await q.pop()).toBe('tick');
      });

      it('a cron schedule in a time zone, with startAt, endAt and limit', async () => {
        const clock = manualClock(Date.UTC(2026, 2, 6));
        const { docs, q } = await setUp(clock.fn);
        // 02:30 in New York does not exist on March 8, 2026.
        await q.repeat('nightly', { cron: '30 2 * * *', tz: 'America/New_York' }, 'n', {
          startAt: Date.UTC(2026, 2, 7),
          endAt: Date.UTC(2026, 2, 11),
        });
        await q.repeat('twice', { cron: '0 0 * * *' }, 't', { limit: 2 });
        for (let day = 0; day < 7; day++) {
          clock.now += 86_400_000;
          await q.runSchedules({ lookaheadMs: 0 });
        }
        expect((await enqueued(docs)).filter(([v]) => v === 'n').map(([, at]) => new Date(at).toISOString())).toEqual([
          '2026-03-07T07:30:00.000Z',
          '2026-03-09T06:30:00.000Z',
          '2026-03-10T06:30:00.000Z',
        ]);
        expect((await enqueued(docs)).filter(([v]) => v === 't')).toHaveLength(2);
        expect((await list(q)).map((i) => [i.name, i.count, i.next])).toEqual([
          ['nightly', 3, undefined],
          ['twice', 2, undefined],
        ]);
      });

      it('matches a reference model over seeded random schedules and clock moves', async () => {
        const random = new Random(testSeed(1801));
        const clock = manualClock();
        const { docs, q } = await setUp(clock.fn);
        const models: ScheduleModel[] = [];
        const crons = ['*/5 * * * *', '0 * * * *', '*/30 * * * * *', '15 9-17 * * MON-FRI', '0 0 1,15 * *'];
        for (let i = 0; i < 6; i++) {
          const name = `s${i}`;
          const limit = random.chance(0.3) ? random.between(1, 20) : undefined;
          if (random.chance(0.5)) {
            const everyMs = random.pick([1_000, 7_000, 60_000, 3_600_000]);
            const info = await q.repeat(name, { everyMs }, name, { limit });
            const anchor = clock.now;
            models.push(new ScheduleModel(name, (t) => anchor + (Math.floor((t - anchor) / everyMs) + 1) * everyMs, info.next, limit));
          } else {
            const expression = random.pick(crons);
            const info = await q.repeat(name, { cron: expression }, name, { limit });
            const cron = parseCron(expression);
            models.push(new ScheduleModel(name, (t) => cron.next(t), info.next, limit));
          }
        }
        for (let step = 0; step < 40; step++) {
          clock.now += random.pick([0, 300, 2_000, 45_000, 600_000, 7_200_000]);
          const lookaheadMs = random.pick([0, 1_000, 10_000]);
          await q.runSchedules({ lookaheadMs });
          for (const m of models) m.pass(clock.now, lookaheadMs);
        }
        const got = await enqueued(docs);
        for (const m of models) {
          expect({ name: m.name, at: got.filter(([v]) => v === m.name).map(([, at]) => at) }).toEqual({
            name: m.name,
            at: [...m.enqueued].sort((a, b) => a - b),
          });
        }
        expect((await list(q)).map((i) => [i.name, i.count, i.next])).toEqual(models.map((m) => [m.name, m.count, m.next]));
      });

      it('several schedulers racing, with clocks apart by less than the lookahead, enqueue each occurrence once', async () => {
        const clock = manualClock();
        const { docs, database, q } = await setUp(clock.fn);
        const start = clock.now;
        await q.repeat('a', { everyMs: 100 }, 'a');
        await q.repeat('b', { cron: '* * * * * *' }, 'b');
        // Handles of separate DocLayers (their passes run in transactions of their own and conflict),
        // with clocks up to 150 ms ahead or behind.
        const others = await Promise.all([150, -150, 100].map(async (skew) => ({ skew, docs: await open({ database }) })));
        opened.push(...others.map((o) => o.docs));
        const queues = [q, ...others.map((o) => o.docs.collection().queue<JsonValue>('q', { now: () => clock.now + o.skew }))];
        for (let round = 0; round < 40; round++) {
          clock.now += 100;
          await Promise.all(queues.flatMap((h) => [h.runSchedules({ lookaheadMs: 300 }), h.runSchedules({ lookaheadMs: 300 })]));
        }
        const got = await enqueued(docs);
        const as = got.filter(([v]) => v === 'a').map(([, at]) => at);
        const bs = got.filter(([v]) => v === 'b').map(([, at]) => at);
        // None twice, none skipped.
        expect(as).toEqual(Array.from({ length: as.length }, (_, i) => start + 100 * (i + 1)));
        expect(as[as.length - 1]).toBeGreaterThanOrEqual(clock.now + 300);
        // A cron's first occurrence may be the time of the call itself.
        expect(bs).toEqual(Array.from({ length: bs.length }, (_, i) => start + 1000 * i));
        expect(bs.length).toBe(5);
      });

      it('exactly once under injected commit_unknown_result and not_committed', async () => {
        if (engine.openWithFaults === undefined) return;
        const clock = manualClock();
        const start = clock.now;
        const database = await engine.openWithFaults({ seed: testSeed(1802), unknownResult: 0.3, notCommitted: 0.2 });
        const docs = await open({ database });
        opened.push(docs, database);
        const q = docs.collection().queue<JsonValue>('q', { now: clock.fn });
        await q.repeat('a', { everyMs: 100 }, 'a');
        for (let round = 0; round < 30; round++) {
          clock.now += 70;
          await Promise.all([q.runSchedules({ lookaheadMs: 50 }), docs.transact((tr) => q.runSchedules({ tr, lookaheadMs: 50 }))]);
        }
        const as = (await enqueued(docs)).map(([, at]) => at);
        expect(as).toEqual(Array.from({ length: as.length }, (_, i) => start + 100 * (i + 1)));
        expect(as.length).toBe(Math.floor((clock.now + 50 - start) / 100));
      });

      it("passes over many schedules a page per transaction, and stop at the write budget in a caller's transaction", async () => {
        const clock = manualClock();
        const { docs, q, engine } = await setUp(clock.fn);
        for (let i = 0; i < 120; i++) await q.repeat(`small-${String(i).padStart(3, '0')}`, { everyMs: 1000 }, i);
        clock.now += 1000;
        const own = await engine.measure(() => q.runSchedules({ lookaheadMs: 0 }));
        expect(own.result).toEqual({ enqueued: 120, nextAt: clock.now + 1000 });
        // Pages of 50: three transactions.
        expect(own.counts.attempts).toBe(3);
        // 40 values of 60 kB: about 4.8 MB to write (item and schedule each), over the 1 MB budget.
        const big = 'x'.repeat(60_000);
        for (let i = 0; i < 40; i++) await q.repeat(`big-${String(i).padStart(2, '0')}`, { everyMs: 60_000 }, big);
        clock.now += 60_000;
        const first = await docs.transact((tr) => q.runSchedules({ tr, lookaheadMs: 0 }));
        expect(first.enqueued).toBeLessThan(40);
        expect(first.nextAt).toBe(clock.now);
        const second = await q.runSchedules({ lookaheadMs: 0 });
        expect(first.enqueued + second.enqueued).toBe(40 + 120);
        expect((await enqueued(docs)).filter(([v]) => v === big)).toHaveLength(40);
        // One schedule of 90 kB values due every millisecond: as many as fit in the budget per pass.
        await q.repeat('huge', { everyMs: 1 }, 'y'.repeat(90_000));
        clock.now += 500;
        const huge = await docs.transact((tr) => q.runSchedules({ tr, lookaheadMs: 1000 }));
        expect(huge.enqueued).toBeGreaterThan(5);
        expect(huge.enqueued).toBeLessThanOrEqual(11);
      });

      it('a pass with nothing due reads the kind and one page of schedules, and writes nothing', async () => {
        const clock = manualClock();
        const { docs, q, engine } = await setUp(clock.fn);
        await q.repeat('a', { everyMs: 60_000 }, 'a');
        await q.repeat('b', { everyMs: 120_000 }, 'b');
        const idle = await engine.measure(() => docs.transact((tr) => q.runSchedules({ tr })));
        expect(idle.counts).toMatchObject({ gets: 1, rangeReads: 1, sets: 0, clears: 0, atomicOps: 0, versionstamped: 0 });
        clock.now += 60_000;
        // One due schedule: its plain read, its rewrite, one item as a delayed push (the item, the
        // version key, size and pushed).
        const due = await engine.measure(() => docs.transact((tr) => q.runSchedules({ tr, lookaheadMs: 0 })));
        expect(due.counts).toMatchObject({ gets: 2, rangeReads: 1, sets: 1, atomicOps: 2, versionstamped: 2 });
      });
    });

    describe('Queue.scheduler and consume', () => {
      it('the scheduler loop enqueues on time without polling, and wakes when a schedule is added', async () => {
        const { docs, q, engine } = await setUp();
        const scheduler = q.scheduler({ lookaheadMs: 200 });
        await new Promise((resolve) => setTimeout(resolve, 50));
        // Idle: one pass, then asleep on the watch.
        const idleAttempts = engine.counts().attempts;
        await new Promise((resolve) => setTimeout(resolve, 100));
        // (One pass may still be finishing on a loaded machine; a spinning loop makes dozens.)
        expect(engine.counts().attempts).toBeLessThanOrEqual(idleAttempts + 1);
        const info = await q.repeat('tick', { everyMs: 40 }, 'tick');
        await new Promise((resolve) => setTimeout(resolve, 300));
        await scheduler.stop();
        const ats = (await enqueued(docs)).map(([, at]) => at);
        expect(ats.length).toBeGreaterThanOrEqual(4);
        expect(ats).toEqual(Array.from({ length: ats.length }, (_, i) => (info.next as number) + 40 * i));
      });

      it('sleeps without spinning when the next occurrence is further than a timer can wait', async () => {
        const { q, engine } = await setUp();
        await q.repeat('yearly', { cron: '@yearly' }, 'y', { startAt: Date.now() + 400 * 86_400_000 });
        const scheduler = q.scheduler();
        await new Promise((resolve) => setTimeout(resolve, 50));
        const attempts = engine.counts().attempts;
        await new Promise((resolve) => setTimeout(resolve, 100));
        await scheduler.stop();
        expect(engine.counts().attempts).toBeLessThanOrEqual(attempts + 2);
      });

      it('a consumer with schedules: false does not', async () => {
        const { docs, q } = await setUp();
        await q.repeat('tick', { everyMs: 10 }, 'tick');
        const consumer = q.consume(() => undefined, { schedules: false });
        await new Promise((resolve) => setTimeout(resolve, 60));
        await consumer.stop();
        expect(await enqueued(docs)).toEqual([]);
      });

      it('a consumer runs the schedules by default', async () => {
        const { q } = await setUp();
        await q.repeat('tick', { everyMs: 20 }, 'tick');
        const seen: JsonValue[] = [];
        const consumer = q.consume(async (v) => void seen.push(v));
        while (seen.length < 3) await new Promise((resolve) => setTimeout(resolve, 10));
        await consumer.stop();
        expect(seen.slice(0, 3)).toEqual(['tick', 'tick', 'tick']);
      });
    });
  });
}
