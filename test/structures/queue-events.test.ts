/**
 * Queue jobs: job ids that survive every move of an item, lifecycle events (what each operation
 * writes, in commit order, the iterator that waits by a watch, cursors, retention, exactly once under
 * commit_unknown_result), progress and job records, and counts and listings per state against a model.
 */
import { open, type DocLayer } from '../../src';
import { isDocumentError } from '../../src/document/errors';
import type { JsonValue } from '../../src/document/types';
import { Database } from '../../src/kv/contract/database';
import { CountingEngine } from '../../src/kv/counting-engine';
import type { QueueEvent } from '../../src/structures/queue/events';
import { decodeRecord, encodePayload, encodeRecord } from '../../src/structures/queue/item';
import type { JobState } from '../../src/structures/queue/jobs';
import type { Lease, Queue } from '../../src/structures/queue/queue';
import { documentEngines, type DocumentEngine } from '../support/document-engines';
import { QueueModel } from '../support/queue-model';
import { Random, testSeed } from '../support/random';
import type { Transaction } from '../../src/kv/contract/types';
import { retriesOf } from './support';

let current: DocumentEngine = documentEngines[0];
const opened: { close(): Promise<void> }[] = [];

async function setUp(options: { now?: () => number; maxAttempts?: number; events?: boolean } = {}) {
  const engine = new CountingEngine((await current.open()).engine);
  const database = new Database(engine);
  const docs = await open({ database });
  opened.push(docs, database);
  const c = docs.collection();
  const q = c.queue<JsonValue>('q', { now: options.now, maxAttempts: options.maxAttempts });
  if (options.events !== false) await q.configure({ events: true });
  return { docs, c, q, engine };
}

function manualClock(start = 1_000_000) {
  const clock = { now: start, fn: () => clock.now };
  return clock;
}

/** Every event kept, from the start, read in a transaction (no waiting). */
async function allEvents(q: Queue<JsonValue>, docs: DocLayer): Promise<QueueEvent[]> {
  const out: QueueEvent[] = [];
  await docs.transact(async (tr) => {
    out.length = 0;
    for await (const e of q.events({ from: 'start', tr, pageSize: 7 })) out.push(e);
  });
  return out;
}

const brief = (events: readonly QueueEvent[]) => events.map((e) => [e.type, e.jobId]);

for (const engine of documentEngines) {
  describe(`Queue jobs and events [${engine.name}]`, () => {
    beforeAll(() => {
      current = engine;
    });
    afterEach(async () => {
      for (const closable of opened.splice(0)) await closable.close();
    });
    afterAll(async () => engine.cleanup?.());

    describe('job ids', () => {
      it('a job keeps its id through leases, nacks, an expired lease and the dead-letter queue', async () => {
        const clock = manualClock();
        const { q } = await setUp({ now: clock.fn, maxAttempts: 3 });
        await q.pushMany(['a', 'b']);
        const [first] = await q.lease(1, { visibilityMs: 100 });
        expect(first.jobId).toMatch(/^[0-9a-f]{24}$/);
        await q.nack(first);
        const [second] = await q.lease(1, { visibilityMs: 100 });
        expect(second.value).toBe('a');
        expect(second.jobId).toBe(first.jobId);
        clock.now += 200;
        const [third] = await q.lease(1, { visibilityMs: 100 });
        expect(third.jobId).toBe(first.jobId);
        expect(await q.nack(third)).toBe('dead-lettered');
        const [dead] = await q.lease(1);
        expect(dead.value).toBe('b');
        expect(dead.jobId).not.toBe(first.jobId);
        const [inDlq] = await q.deadLetters.lease(1);
        expect(inDlq).toMatchObject({ value: 'a', jobId: first.jobId });
      });

      it('ids follow push order, and a delayed push has one too', async () => {
        const { q } = await setUp({ events: false });
        await q.push(1);
        await q.push(2, { delayMs: 1 });
        await new Promise((resolve) => setTimeout(resolve, 5));
        const leases = await q.lease(2);
        const ids = leases.map((l) => l.jobId);
        expect(new Set(ids).size).toBe(2);
        // The delayed item is visible now and goes first (scheduled before ready), pushed later.
        expect(leases.map((l) => l.value)).toEqual([2, 1]);
        expect(ids[0] > ids[1]).toBe(true);
      });

      it("a consumer's handler gets the job's id and attempts; a two-argument handler still works", async () => {
        const { q, docs } = await setUp();
        await q.pushMany(['x', 'y']);
        const [lease] = await q.lease(1, { visibilityMs: 1 });
        await new Promise((resolve) => setTimeout(resolve, 5));
        const seen: { value: JsonValue; id: string; attempts: number }[] = [];
        const consumer = q.consume(async (value, _tr, job) => {
          seen.push({ value, id: job.id, attempts: job.attempts });
          if (seen.length === 2) void consumer.stop();
        });
        await consumer.done;
        expect(seen[0]).toEqual({ value: 'x', id: lease.jobId, attempts: 1 });
        expect(seen[1].attempts).toBe(0);
        await q.push('z');
        const two: JsonValue[] = [];
        const plain = docs
          .collection()
          .queue<JsonValue>('q')
          .consume(async (value, tr) => {
            expect(typeof tr.get).toBe('function');
            two.push(value);
            void plain.stop();
          });
        await plain.done;
        expect(two).toEqual(['z']);
      });

      it('records written before job ids decode, and records with one round-trip', () => {
        const payload = encodePayload({ a: 1 });
        const old = decodeRecord(encodeRecord(true, 2, payload));
        expect(old).toMatchObject({ leased: true, attempts: 2 });
        expect(old.jobId).toBeUndefined();
        const id = Buffer.from('00112233445566778899aabb', 'hex');
        const moved = decodeRecord(encodeRecord(false, 300, payload, id));
        expect(moved).toMatchObject({ leased: false, attempts: 300 });
        expect(moved.jobId?.equals(id)).toBe(true);
        expect(moved.payload.equals(payload)).toBe(true);
      });
    });

    describe('Queue.events', () => {
      it('are off by default: operations write no events and no job records', async () => {
        const { q, docs } = await setUp({ events: false });
        await q.push(1);
        const [lease] = await q.lease(1);
        expect(await q.job(lease.jobId)).toBeUndefined();
        expect(await q.progress(lease, 50)).toBe(false);
        await q.ack(lease);
        expect(await allEvents(q, docs)).toEqual([]);
        expect(await q.eventSettings()).toEqual({ events: false, maxAgeMs: 86_400_000, maxEvents: 10_000 });
      });

      it('push, lease, progress, nack, ack, pop and dead-letter write their events in commit order', async () => {
        const clock = manualClock();
        const { q, docs } = await setUp({ now: clock.fn, maxAttempts: 2 });
        await q.pushMany(['a', 'b']);
        await q.push('c', { delayMs: 50 });
        const [a] = await q.lease(1, { visibilityMs: 100 });
        expect(await q.progress(a, { done: 0.5 })).toBe(true);
        await q.nack(a, { delayMs: 10 });
        const b = await q.pop();
        expect(b).toBe('b');
        clock.now += 60;
        const [c1] = await q.lease(1, { visibilityMs: 100 });
        expect(c1.value).toBe('a');
        expect(await q.nack(c1)).toBe('dead-lettered');
        const [cLease] = await q.lease(1);
        await q.ack(cLease);
        const events = await allEvents(q, docs);
        const ids = events.filter((e) => e.type === 'waiting' || e.type === 'delayed').map((e) => e.jobId);
        const [idA, idB, idC] = ids;
        expect(brief(events)).toEqual([
          ['waiting', idA],
          ['waiting', idB],
          ['delayed', idC],
          ['active', idA],
          ['progress', idA],
          ['retried', idA],
          ['completed', idB],
          ['active', idA],
          ['dead-lettered', idA],
          ['active', idC],
          ['completed', idC],
        ]);
        expect(idA).toBe(a.jobId);
        expect(events[2]).toMatchObject({ visibleAt: 1_000_050, at: 1_000_000 });
        expect(events[3]).toMatchObject({ attempts: 1, deadline: 1_000_100 });
        expect(events[4]).toMatchObject({ progress: { done: 0.5 } });
        expect(events[5]).toMatchObject({ attempts: 1, visibleAt: 1_000_010 });
        expect(events[8]).toMatchObject({ attempts: 2, at: 1_000_060 });
        // Cursors sort in commit order.
        const cursors = events.map((e) => e.cursor);
        expect([...cursors].sort()).toEqual(cursors);
      });

      it("a consumer writes completed events, and failed ones for its handler's failures", async () => {
        const { q, docs } = await setUp({ maxAttempts: 2 });
        await q.pushMany(['ok', 'bad']);
        let failures = 0;
        const consumer = q.consume(
          (value) => {
            if (value === 'bad') {
              failures++;
              throw new Error('no good');
            }
          },
          { onError: () => undefined },
        );
        for (let i = 0; i < 200 && (await q.deadLetters.size()) === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
        await consumer.stop();
        const events = await allEvents(q, docs);
        const types = events.map((e) => e.type);
        expect(types.slice(0, 3)).toEqual(['waiting', 'waiting', 'completed']);
        expect(types.filter((t) => t === 'failed').length).toBe(failures);
        expect(types[types.length - 1]).toBe('dead-lettered');
        const failed = events.find((e) => e.type === 'failed');
        expect(failed).toMatchObject({ attempts: 1, error: 'no good', jobId: events[1].jobId });
      });

      it('a consumer with a backoff policy writes failed, then retried or dead-lettered, with the move', async () => {
        const { docs } = await setUp({ events: false });
        const q = docs.collection().queue<JsonValue>('q', { maxAttempts: 2, backoff: { type: 'fixed', delayMs: 1 } });
        await q.configure({ events: true });
        await q.push('bad');
        const consumer = q.consume(
          () => {
            throw new Error('still bad');
          },
          { onError: () => undefined },
        );
        for (let i = 0; i < 200 && (await q.deadLetters.size()) === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
        await consumer.stop();
        const events = await allEvents(q, docs);
        const id = events[0].jobId;
        expect(events.map((e) => [e.type, e.jobId, 'attempts' in e ? e.attempts : undefined])).toEqual([
          ['waiting', id, undefined],
          ['failed', id, 1],
          ['retried', id, 1],
          ['failed', id, 2],
          ['dead-lettered', id, 2],
        ]);
        expect(events[1]).toMatchObject({ error: 'still bad' });
        const [dead] = await q.deadLetters.lease(1);
        expect(dead.jobId).toBe(id);
      });

      it("a repeatable job's occurrences are delayed pushes with their events", async () => {
        const clock = manualClock();
        const { q, docs } = await setUp({ now: clock.fn });
        await q.repeat('tick', { everyMs: 1_000 }, 'tick', { limit: 2 });
        clock.now += 1_000;
        const { enqueued } = await q.runSchedules({ lookaheadMs: 1_500 });
        expect(enqueued).toBe(2);
        const events = await allEvents(q, docs);
        expect(events.map((e) => e.type)).toEqual(['delayed', 'delayed']);
        expect(await q.counts()).toMatchObject({ delayed: 1, waiting: 1 });
      });

      it('the iterator waits by a watch: no reads while idle, woken by the next event', async () => {
        const { q, engine } = await setUp();
        await q.push('before');
        const stop = new AbortController();
        const events = q.events({ signal: stop.signal });
        const next = events.next();
        await new Promise((resolve) => setTimeout(resolve, 50));
        const idleFrom = engine.attempts.length;
        await new Promise((resolve) => setTimeout(resolve, 200));
        expect(engine.attempts.length).toBe(idleFrom);
        await q.push('after');
        const { value } = await next;
        expect(value).toMatchObject({ type: 'waiting' });
        stop.abort();
        expect(await events.next()).toEqual({ done: true, value: undefined });
      });

      it('waits for the first events of a queue that does not exist yet', async () => {
        const { docs, engine } = await setUp({ events: false });
        const q = docs.collection().queue<JsonValue>('later');
        const stop = new AbortController();
        const events = q.events({ signal: stop.signal });
        const next = events.next();
        await new Promise((resolve) => setTimeout(resolve, 50));
        const idleFrom = engine.attempts.length;
        await new Promise((resolve) => setTimeout(resolve, 100));
        expect(engine.attempts.length).toBe(idleFrom);
        await q.configure({ events: true });
        await q.push('first');
        expect((await next).value).toMatchObject({ type: 'waiting' });
        stop.abort();
        await events.return(undefined);
      });

      it('refuses another kind of document at the id', async () => {
        const { docs } = await setUp({ events: false });
        await docs.collection().set('tags').add('x');
        await expect(docs.collection().queue('tags').events().next()).rejects.toMatchObject({ code: 'WRONG_KIND' });
      });

      it("resumes after a cursor, and 'now' starts after the newest event", async () => {
        const { q, docs } = await setUp();
        await q.pushMany([1, 2, 3]);
        const all = await allEvents(q, docs);
        const resumed: QueueEvent[] = [];
        await docs.transact(async (tr) => {
          resumed.length = 0;
          for await (const e of q.events({ from: all[0].cursor, tr })) resumed.push(e);
        });
        expect(resumed).toEqual(all.slice(1));
        const stop = new AbortController();
        const fromNow = q.events({ signal: stop.signal });
        const first = fromNow.next();
        await new Promise((resolve) => setTimeout(resolve, 20));
        await q.pop();
        expect((await first).value).toMatchObject({ type: 'completed', jobId: all[0].jobId });
        stop.abort();
        await fromNow.return(undefined);
      });

      it('checks its arguments', async () => {
        const { q } = await setUp();
        await expect(q.events({ from: 'yesterday' }).next()).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
        await expect(q.configure({ maxEvents: 0 })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
        await expect(q.configure({ events: 'yes' as unknown as boolean })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
        await expect(q.job('nope')).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
        await expect(q.progress('00112233445566778899aabb', (() => 1) as unknown as JsonValue)).rejects.toMatchObject({ code: 'INVALID_VALUE' });
      });

      it('trims the log to maxEvents and to maxAgeMs', async () => {
        const clock = manualClock();
        const { q, docs } = await setUp({ now: clock.fn });
        await q.configure({ maxEvents: 5, maxAgeMs: 60_000 });
        for (let i = 0; i < 12; i++) {
          clock.now += 10_000;
          await q.push(i);
        }
        // Each push trims to 5 events first, then writes its own.
        let events = await allEvents(q, docs);
        expect(events.length).toBe(6);
        expect(events.map((e) => e.at)).toEqual([7, 8, 9, 10, 11, 12].map((i) => 1_000_000 + i * 10_000));
        clock.now += 55_000;
        await q.push('late');
        events = await allEvents(q, docs);
        // Older than a minute: all but the last push before and this one.
        expect(events.map((e) => e.at)).toEqual([1_120_000, 1_175_000]);
      });

      it('configure then a push in a transaction that wrote events: the events before stay, no trim onto them', async () => {
        const clock = manualClock();
        const { q, docs } = await setUp({ now: clock.fn });
        await q.push('before');
        await docs.transact(async (tr) => {
          await q.push(1, { tr });
          // configure drops the attempt's sink; the next push makes another, past the trim interval.
          await q.configure({ maxEvents: 1 }, { tr });
          clock.now += 600_000;
          await q.push(2, { tr });
        });
        const events = await allEvents(q, docs);
        expect(events.map((e) => e.type)).toEqual(['waiting', 'waiting', 'waiting']);
        expect(new Set(events.map((e) => e.jobId)).size).toBe(3);
        // The next transaction trims to the new retention, then writes its own.
        clock.now += 600_000;
        await q.push(3);
        expect((await allEvents(q, docs)).length).toBe(2);
      });

      it('writes each event once under injected not_committed and commit_unknown_result', async () => {
        if (current.openWithFaults === undefined) return;
        const seed = testSeed(18);
        const r = new Random(seed);
        const database = await current.openWithFaults({ seed, notCommitted: 0.1, unknownResult: 0.15 });
        const docs = await open({ database });
        opened.push(docs, database);
        const c = docs.collection();
        const q = c.queue<JsonValue>('q', { maxAttempts: 100 });
        await q.configure({ events: true });
        const expected: Record<string, number> = { waiting: 0, active: 0, completed: 0, retried: 0 };
        const leases: Lease<JsonValue>[] = [];
        for (let i = 0; i < 60; i++) {
          const op = r.int(4);
          if (op === 0 || leases.length === 0) {
            const n = r.between(1, 3);
            await q.pushMany(Array.from({ length: n }, (_, k) => i * 10 + k));
            expected.waiting += n;
          } else if (op === 1) {
            const got = await q.lease(r.between(1, 2));
            leases.push(...got);
            expected.active += got.length;
          } else if (op === 2) {
            const lease = leases.splice(r.int(leases.length), 1)[0];
            await q.ack(lease);
            expected.completed++;
          } else {
            const lease = leases.splice(r.int(leases.length), 1)[0];
            await q.nack(lease);
            expected.retried++;
          }
          if (r.chance(0.2) && (await q.pop()) !== undefined) expected.completed++;
        }
        const counted: Record<string, number> = { waiting: 0, active: 0, completed: 0, retried: 0 };
        const events: QueueEvent[] = [];
        await docs.transact(async (tr) => {
          events.length = 0;
          for await (const e of q.events({ from: 'start', tr })) events.push(e);
        });
        for (const e of events) counted[e.type]++;
        expect({ seed, counted }).toEqual({ seed, counted: expected });
      });
    });

    describe('events known off (known-settings.ts)', () => {
      /** Another database object over the same engine, as another process has: it knows nothing yet. */
      async function elsewhere(engine: CountingEngine) {
        const database = new Database(engine);
        const other = await open({ database });
        opened.push(other, database);
        return { other, q: other.collection().queue<JsonValue>('q') };
      }

      it('a queue whose events are off costs no settings read once known, on this database and on another', async () => {
        const { docs, q, engine } = await setUp({ events: false });
        // Created through this database: known at once.
        await q.push(0);
        expect((await engine.measure(() => docs.transact((tr) => q.push(1, { tr })))).counts).toMatchObject({ gets: 1 });
        await q.configure({ events: false, maxEvents: 5 });
        expect((await engine.measure(() => docs.transact((tr) => q.push(2, { tr })))).counts).toMatchObject({ gets: 1 });
        const there = await elsewhere(engine);
        // (The other layer's first read of the collection, which reads its manifest.)
        expect(await there.q.size()).toBe(3);
        // The settings key read with the kind check once; then every handle over that database knows.
        const first = await engine.measure(() => there.other.transact((tr) => there.q.push(3, { tr })));
        expect(first.counts).toMatchObject({ gets: 2 });
        const again = await engine.measure(() => there.other.transact((tr) => there.other.collection().queue('q').push(4, { tr })));
        expect(again.counts).toMatchObject({ gets: 1 });
        expect(await allEvents(q, docs)).toEqual([]);
      });

      it('a pop that expected events off (as last known here) writes its event once they were switched on elsewhere', async () => {
        const { docs, q, engine } = await setUp({ events: false });
        await q.pushMany(['a', 'b']);
        expect(await q.pop()).toBe('a');
        const there = await elsewhere(engine);
        await there.q.configure({ events: true });
        expect(await q.pop()).toBe('b');
        expect((await allEvents(q, docs)).map((e) => e.type)).toEqual(['completed']);
      });

      it('events switched on and off through another database object are obeyed by the next operation here', async () => {
        const { docs, q, engine } = await setUp({ events: false });
        await q.push('before');
        await q.push('still off');
        const there = await elsewhere(engine);
        await there.q.configure({ events: true });
        await q.push('on');
        const on = await allEvents(q, docs);
        expect(on.map((e) => e.type)).toEqual(['waiting']);
        await there.q.configure({ events: false });
        await q.push('off');
        await q.push('off again');
        expect(await allEvents(q, docs)).toHaveLength(1);
        // On again from off: known off here at the old metadata version, which the change bumped.
        await there.q.configure({ events: true });
        await q.push('on again');
        expect((await allEvents(q, docs)).map((e) => e.type)).toEqual(['waiting', 'waiting']);
      });

      it('a push that trusted "events off" conflicts with configure({ events: true }) committed meanwhile, and writes its event', async () => {
        const { docs, q, engine } = await setUp({ events: false });
        await q.push(0);
        const there = await elsewhere(engine);
        let attempts = 0;
        let pushed!: () => void;
        const firstPushDone = new Promise<void>((resolve) => (pushed = resolve));
        let switched!: () => void;
        const eventsOn = new Promise<void>((resolve) => (switched = resolve));
        const push = docs.transact(async (tr) => {
          await q.push(1, { tr });
          if (++attempts === 1) {
            pushed();
            await eventsOn;
          }
        });
        await firstPushDone;
        await there.q.configure({ events: true });
        switched();
        await push;
        expect(attempts).toBe(2);
        const events = await allEvents(q, docs);
        expect(events.map((e) => e.type)).toEqual(['waiting']);
        expect(await q.job(events[0].jobId)).toMatchObject({ state: 'waiting' });
      });

      it('a configure({ events: false }) that never commits teaches no handle "off"', async () => {
        const { docs, q } = await setUp();
        await expect(
          docs.transact(async (tr) => {
            await q.configure({ events: false }, { tr });
            throw new Error('abandoned');
          }),
        ).rejects.toThrow('abandoned');
        await q.push(1);
        expect((await allEvents(q, docs)).map((e) => e.type)).toEqual(['waiting']);
      });
    });

    describe('conflicts with events on', () => {
      it('pushes conflict neither with each other nor with a pop: events and job records are blind writes', async () => {
        const { q, docs } = await setUp();
        await q.pushMany([0, 1]);
        const pushes = [1, 2, 3, 4].map((n) => (tr: Transaction) => q.push(n, { tr }));
        expect(await retriesOf(docs, [...pushes, (tr) => q.pop({ tr })])).toBe(0);
      });

      it("progress conflicts with an ack of its job only, not with another job's", async () => {
        const { q, docs } = await setUp();
        await q.pushMany(['a', 'b']);
        const [a, b] = await q.lease(2);
        expect(await retriesOf(docs, [(tr) => q.progress(a, 1, { tr }), (tr) => q.ack(b, { tr })])).toBe(0);
        // A progress report that read the job record before an ack committed is retried, and finds the job gone.
        let readDone!: () => void;
        const read = new Promise<void>((resolve) => (readDone = resolve));
        let ackDone!: () => void;
        const acked = new Promise<void>((resolve) => (ackDone = resolve));
        let attempts = 0;
        const reporting = docs.transact(async (tr) => {
          const first = attempts++ === 0;
          const result = await q.progress(a, 2, { tr });
          if (first) {
            readDone();
            await acked;
          }
          return result;
        });
        await read;
        await q.ack(a);
        ackDone();
        expect(await reporting).toBe(false);
        expect(attempts).toBe(2);
        expect(await q.job(a.jobId)).toBeUndefined();
      });
    });

    describe('Queue.progress and Queue.job', () => {
      it("job() follows the job's state, attempts and progress until it leaves the queue", async () => {
        const clock = manualClock();
        const { q, docs } = await setUp({ now: clock.fn });
        await q.push('p', { delayMs: 100 });
        const [delayedEvent] = await allEvents(q, docs);
        const id = delayedEvent.jobId;
        expect(await q.job(id)).toEqual({ id, state: 'delayed', attempts: 0, at: 1_000_100 });
        clock.now += 100;
        expect(await q.job(id)).toEqual({ id, state: 'waiting', attempts: 0 });
        const [lease] = await q.lease(1, { visibilityMs: 50 });
        expect(await q.progress(lease.jobId, 10)).toBe(true);
        expect(await q.job(id)).toEqual({ id, state: 'active', attempts: 1, at: 1_000_150, progress: 10 });
        const extended = await q.extend(lease, 500);
        expect(await q.job(id)).toEqual({ id, state: 'active', attempts: 1, at: extended.deadline, progress: 10 });
        clock.now += 1_000;
        expect(await q.job(id)).toMatchObject({ state: 'waiting', attempts: 1 });
        const [again] = await q.lease(1);
        await q.ack(again);
        expect(await q.job(id)).toBeUndefined();
        expect(await q.progress(id, 99)).toBe(false);
      });

      it("progress from a consumer's handler is seen while the handler runs", async () => {
        const { q } = await setUp();
        await q.push('work');
        let seenDuring: unknown;
        const consumer = q.consume(async (_value, _tr, job) => {
          expect(await job.progress({ step: 1 })).toBe(true);
          seenDuring = await q.job(job.id);
          void consumer.stop();
        });
        const stats = await consumer.done;
        expect(seenDuring).toMatchObject({ state: 'waiting', progress: { step: 1 } });
        // The progress's own transaction did not make the handler's conflict.
        expect(stats).toMatchObject({ consumed: 1, retries: 0 });
        expect(await q.size()).toBe(0);
      });
    });

    describe('Queue.counts and Queue.jobs', () => {
      it('match a model over seeded operations, and dead counts the dead-letter queue', async () => {
        const seed = testSeed(1818);
        const r = new Random(seed);
        const clock = manualClock();
        const { q } = await setUp({ now: clock.fn, maxAttempts: 2, events: r.chance(0.5) });
        const model = new QueueModel(2, clock.fn);
        const leases: Lease<JsonValue>[] = [];
        let n = 0;
        const states: JobState[] = ['waiting', 'delayed', 'active', 'dead'];
        for (let step = 0; step < 40; step++) {
          const op = r.int(6);
          if (op <= 1) {
            const delayMs = r.chance(0.4) ? r.between(1, 40) : 0;
            const values = [n++, n++];
            await q.pushMany(values, { delayMs });
            model.push(values, delayMs);
          } else if (op === 2) {
            const visibilityMs = r.between(5, 40);
            const count = r.between(1, 2);
            const got = await q.lease(count, { visibilityMs });
            model.lease(
              count,
              visibilityMs,
              got.map((l) => l.id),
            );
            leases.push(...got);
          } else if (op === 3 && leases.length > 0) {
            const lease = leases.splice(r.int(leases.length), 1)[0];
            const outcome = await q.ack(lease).then(
              () => 'ok',
              (err: unknown) => (isDocumentError(err, 'LEASE_EXPIRED') ? 'expired' : Promise.reject(err)),
            );
            expect(outcome).toBe('ok' in model.ack(lease.id) ? 'ok' : 'expired');
          } else if (op === 4 && leases.length > 0) {
            const lease = leases.splice(r.int(leases.length), 1)[0];
            const delayMs = r.between(0, 20);
            const outcome = await q
              .nack(lease, { delayMs })
              .catch((err: unknown) => (isDocumentError(err, 'LEASE_EXPIRED') ? 'expired' : Promise.reject(err)));
            const modelled = model.nack(lease.id, delayMs);
            expect(outcome).toBe('ok' in modelled ? modelled.ok : 'expired');
          } else {
            clock.now += r.between(1, 30);
          }
          const counts = await q.counts();
          const expected = Object.fromEntries(states.map((s) => [s, model.jobsIn(s).length]));
          expect({ seed, step, counts }).toEqual({ seed, step, counts: expected });
          const state = states[r.int(states.length)];
          const listed: JsonValue[] = [];
          for await (const job of q.jobs({ state, pageSize: 3 })) listed.push(job.value);
          expect({ seed, step, state, listed }).toEqual({ seed, step, state, listed: model.jobsIn(state) });
        }
      });

      it('lists waiting jobs in pop order across priorities, and not the own pushes of the reading transaction', async () => {
        const clock = manualClock();
        const { q, docs } = await setUp({ now: clock.fn, events: false });
        await q.push('low');
        await q.push('high', { priority: 3 });
        const listed = await docs.transact(async (tr) => {
          await q.push('own', { priority: 5, tr });
          await q.push('own later', { delayMs: 5, tr });
          const out: JsonValue[] = [];
          for await (const job of q.jobs({ state: 'waiting', tr })) out.push(job.value);
          expect(await q.counts({ tr })).toMatchObject({ delayed: 0, active: 0 });
          return out;
        });
        expect(listed).toEqual(['high', 'low']);
        const after: JsonValue[] = [];
        for await (const job of q.jobs({ state: 'waiting' })) after.push(job.value);
        expect(after).toEqual(['own', 'high', 'low']);
      });

      it('lists jobs with their ids, attempts and times, up to a limit', async () => {
        const clock = manualClock();
        const { q } = await setUp({ now: clock.fn });
        await q.pushMany(['a', 'b', 'c']);
        await q.push('later', { delayMs: 30 });
        const [lease] = await q.lease(1, { visibilityMs: 20 });
        const waiting = [];
        for await (const job of q.jobs({ state: 'waiting', limit: 1 })) waiting.push(job);
        expect(waiting).toEqual([{ id: expect.stringMatching(/^[0-9a-f]{24}$/) as string, state: 'waiting', attempts: 0, value: 'b' }]);
        const active = [];
        for await (const job of q.jobs({ state: 'active' })) active.push(job);
        expect(active).toEqual([{ id: lease.jobId, state: 'active', attempts: 1, value: 'a', at: 1_000_020 }]);
        const delayed = [];
        for await (const job of q.jobs({ state: 'delayed' })) delayed.push(job);
        expect(delayed).toMatchObject([{ state: 'delayed', value: 'later', at: 1_000_030 }]);
        await expect(q.jobs({ state: 'done' as JobState }).next()).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
        expect(await q.counts()).toEqual({ waiting: 2, delayed: 1, active: 1, dead: 0 });
      });
    });
  });
}
