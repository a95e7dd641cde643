/**
 * Queue's behaviour, operation by operation: FIFO order, the JSON form, delayed items, blocking pops,
 * leases with their fencing, dead letters, idempotency tokens, transactional consumers, and what each
 * operation reads and writes.
 */
import { open } from '../../src';
import { DocumentError, isDocumentError } from '../../src/document/errors';
import type { JsonValue } from '../../src/document/types';
import { Database } from '../../src/kv/contract/database';
import { documentEngines, type DocumentEngine } from '../support/document-engines';
import type { Transaction } from '../../src/kv/contract/types';
import type { DocumentKeys } from '../../src/document/keys/layout';
import type { Queue, Lease } from '../../src/structures/queue/queue';
import { QueueKeys } from '../../src/structures/queue/keys';
import { TokenKind } from '../../src/structures/queue/tokens';
import { CountingEngine } from '../../src/kv/counting-engine';
import { Random, testSeed } from '../support/random';

/** The engine the tests of the current block run on: every block below runs once per engine. */
let current: DocumentEngine = documentEngines[0];

/** What setUp opened, closed after each test (an open LMDB store with a watch keeps the process alive). */
const opened: { close(): Promise<void> }[] = [];

async function setUp(options: { now?: () => number; maxAttempts?: number } = {}) {
  const engine = new CountingEngine((await current.open()).engine);
  const database = new Database(engine);
  const docs = await open({ database });
  opened.push(docs, database);
  const c = docs.collection();
  const q = c.queue<JsonValue>('q', options);
  return { docs, c, q, engine };
}

/** A clock the test moves by hand. */
function manualClock(start = 1_000_000) {
  const clock = { now: start, fn: () => clock.now };
  return clock;
}

async function code(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise;
    return undefined;
  } catch (err) {
    if (err instanceof DocumentError) return err.code;
    throw err;
  }
}

async function drain(q: Queue<JsonValue>): Promise<JsonValue[]> {
  const out: JsonValue[] = [];
  for (let v = await q.pop(); v !== undefined; v = await q.pop()) out.push(v);
  return out;
}

for (const engine of documentEngines) {
  describe(`Queue [${engine.name}]`, () => {
    beforeAll(() => {
      current = engine;
    });
    afterEach(async () => {
      for (const closable of opened.splice(0)) await closable.close();
    });
    afterAll(async () => engine.cleanup?.());

    describe('Queue.push and Queue.pop', () => {
      it('pop returns items oldest first, then undefined', async () => {
        const { q } = await setUp();
        await q.push('a');
        await q.pushMany(['b', 'c']);
        await q.push('d');
        expect(await drain(q)).toEqual(['a', 'b', 'c', 'd']);
        expect(await q.pop()).toBeUndefined();
      });

      it('a queue that was never written is empty', async () => {
        const { q } = await setUp();
        expect(await q.pop()).toBeUndefined();
        expect(await q.peek()).toBeUndefined();
        expect(await q.size()).toBe(0);
        expect(await q.lease(3)).toEqual([]);
      });

      it('items read back exactly as document values do', async () => {
        const { q } = await setUp();
        const proto = JSON.parse('{"__proto__": 1, "b": [true, false]}') as JsonValue;
        const values: JsonValue[] = [null, 0, -0, 1.5, -7, 2n ** 64n, 'x\0y', '😀', [], {}, [[1], { a: [null] }], proto, 'long'.repeat(20_000)];
        await q.pushMany(values);
        const got = await drain(q);
        expect(got).toEqual(values);
        expect(Object.is(got[2], -0)).toBe(true);
        expect(Object.keys(got[11] as object)).toEqual(['__proto__', 'b']);
      });

      it('rejects what is not JSON, values too deep and items too large, writing nothing', async () => {
        const { q } = await setUp();
        expect(await code(q.push(undefined as unknown as JsonValue))).toBe('INVALID_VALUE');
        let deep: JsonValue = 1;
        for (let i = 0; i < 31; i++) deep = [deep];
        expect(await code(q.push(deep))).toBe('VALUE_TOO_DEEP');
        expect(await code(q.push('x'.repeat(100_000)))).toBe('DOCUMENT_TOO_LARGE');
        expect(await code(q.push(1, { delayMs: -1 }))).toBe('INVALID_ARGUMENT');
        expect(await code(q.pop({ spread: 0 }))).toBe('INVALID_ARGUMENT');
        expect(await q.size()).toBe(0);
      });

      it('is WRONG_KIND on a plain document', async () => {
        const { c } = await setUp();
        await c.upsert('doc', { a: 1 });
        const q = c.queue('doc');
        expect(await code(q.push(1))).toBe('WRONG_KIND');
        expect(await code(q.pop())).toBe('WRONG_KIND');
      });

      it('size, peek and iterate see every item not yet consumed, in pop order', async () => {
        const { q } = await setUp();
        await q.pushMany([1, 2, 3, 4, 5, 6, 7]);
        expect(await q.size()).toBe(7);
        expect(await q.peek()).toBe(1);
        const paged: JsonValue[] = [];
        for await (const v of q.iterate({ pageSize: 2 })) paged.push(v);
        expect(paged).toEqual([1, 2, 3, 4, 5, 6, 7]);
        const all: JsonValue[] = [];
        for await (const v of q) all.push(v);
        expect(all).toEqual(paged);
      });

      it('a spreading pop takes one of the first `spread` items', async () => {
        const { c } = await setUp();
        const q = c.queue<number>('q', { random: () => 0.99 });
        await q.pushMany([1, 2, 3, 4, 5]);
        expect(await q.pop({ spread: 3 })).toBe(3);
        expect(await q.pop()).toBe(1);
      });
    });

    describe('Queue as a document', () => {
      it("collection.get returns the JSON form: an array, next to pop last (Couchbase's CouchbaseQueue)", async () => {
        const { c, q } = await setUp();
        await q.pushMany(['a', 'b', { c: 1 }]);
        expect((await c.get('q')).content).toEqual([{ c: 1 }, 'b', 'a']);
        await q.pop();
        expect((await c.get('q')).content).toEqual([{ c: 1 }, 'b']);
      });

      it('clear removes the document', async () => {
        const { c, q } = await setUp();
        await q.pushMany([1, 2]);
        await q.clear();
        expect(await code(c.get('q'))).toBe('DOCUMENT_NOT_FOUND');
        expect(await q.size()).toBe(0);
        await q.push(3);
        expect(await drain(q)).toEqual([3]);
      });
    });

    describe('Queue transactions', () => {
      it('a pop in a transaction that aborts leaves the item', async () => {
        const { docs, q } = await setUp();
        await q.push(1);
        await expect(
          docs.transact(async (tr) => {
            expect(await q.pop({ tr })).toBe(1);
            throw new Error('abort');
          }),
        ).rejects.toThrow('abort');
        expect(await q.pop()).toBe(1);
      });

      it("a transaction's own pushes are not visible to its pops (their keys are known only at commit)", async () => {
        const clock = manualClock();
        const { docs, q } = await setUp({ now: clock.fn });
        await q.push('old');
        const popped = await docs.transact(async (tr) => {
          await q.push('new', { tr });
          await q.push('later', { tr, delayMs: 1 });
          clock.now += 5;
          const first = await q.pop({ tr });
          const second = await q.pop({ tr });
          const seen: JsonValue[] = [];
          for await (const v of q.iterate({ tr })) seen.push(v);
          return { first, second, seen };
        });
        expect(popped).toEqual({ first: 'old', second: undefined, seen: [] });
        expect(await drain(q)).toEqual(['later', 'new']);
      });

      it('pushes in one transaction keep their order', async () => {
        const { docs, q } = await setUp();
        await docs.transact(async (tr) => {
          await q.push(1, { tr });
          await q.pushMany([2, 3], { tr });
          await q.push(4, { tr });
        });
        expect(await drain(q)).toEqual([1, 2, 3, 4]);
      });

      it('a push with a dedupeId happens once within a minute, again after two', async () => {
        const clock = manualClock();
        const { q } = await setUp({ now: clock.fn });
        await q.push('a', { dedupeId: 'order-1' });
        clock.now += 30_000;
        await q.push('a', { dedupeId: 'order-1' });
        expect(await q.size()).toBe(1);
        clock.now += 150_000;
        await q.push('a', { dedupeId: 'order-1' });
        expect(await q.size()).toBe(2);
      });

      it('pushes and pops one after another write their receipts at one key, reused: the store does not grow by a key per call', async () => {
        const { docs, c, q } = await setUp();
        for (let i = 1; i <= 5; i++) await q.push(i);
        expect(await drain(q)).toEqual([1, 2, 3, 4, 5]);
        const receipts = await docs.transact(async (tr) => {
          const keys = new QueueKeys((await c.structureAccess().keysToRead(tr, 'q')) as DocumentKeys);
          return tr.getRangeAll(keys.tokens, keys.tokensBefore(Number.MAX_SAFE_INTEGER));
        });
        expect(receipts).toHaveLength(1);
        expect(receipts[0].value[0]).toBe(TokenKind.popped);
      });

      it('tokens older than two minutes are swept', async () => {
        const clock = manualClock(0);
        const { docs, c, q } = await setUp({ now: clock.fn });
        for (let i = 0; i < 5; i++) await q.push(i, { dedupeId: `order-${i}` });
        const tokens = () =>
          docs.transact(async (tr) => {
            const keys = new QueueKeys((await c.structureAccess().keysToRead(tr, 'q')) as DocumentKeys);
            return (await tr.getRangeAll(keys.tokens, keys.tokensBefore(Number.MAX_SAFE_INTEGER))).length;
          });
        expect(await tokens()).toBe(5);
        clock.now += 3 * 60_000;
        await q.push(5);
        expect(await tokens()).toBe(1);
      });
    });

    describe('Queue receipts', () => {
      it("a call's receipt goes to the minute bucket it started in, though its slot's key was made for an earlier one", async () => {
        const clock = manualClock(0);
        const { docs, c, q } = await setUp({ now: clock.fn });
        await q.push('a');
        clock.now += 60_000;
        await q.push('b');
        expect(await q.pop()).toBe('a');
        const perBucket = await docs.transact(async (tr) => {
          const keys = new QueueKeys((await c.structureAccess().keysToRead(tr, 'q')) as DocumentKeys);
          const inBucket = async (bucket: number) =>
            (await tr.getRangeAll(keys.tokensBefore(bucket), keys.tokensBefore(bucket + 1))).map((kv) => kv.value[0]);
          return [await inBucket(0), await inBucket(1)];
        });
        expect(perBucket).toEqual([[TokenKind.pushed], [TokenKind.popped]]);
      });
    });

    describe('Queue delayed items', () => {
      it('a delayed item is invisible until its time, then popped ahead of ready items', async () => {
        const clock = manualClock();
        const { q } = await setUp({ now: clock.fn });
        await q.push('later', { delayMs: 100 });
        await q.push('now');
        expect(await q.size()).toBe(2);
        expect(await q.peek()).toBe('now');
        clock.now += 100;
        await q.push('after');
        expect(await drain(q)).toEqual(['later', 'now', 'after']);
      });
    });

    describe('Queue.pop with wait', () => {
      it('returns an item pushed while it waits', async () => {
        const { q } = await setUp();
        const popped = q.pop({ wait: 5_000 });
        await new Promise((resolve) => setTimeout(resolve, 20));
        await q.push('hello');
        expect(await popped).toBe('hello');
      });

      it('returns undefined when the time runs out, and when its signal aborts', async () => {
        const { q } = await setUp();
        expect(await q.pop({ wait: 20 })).toBeUndefined();
        const controller = new AbortController();
        const popped = q.pop({ wait: 60_000, signal: controller.signal });
        setTimeout(() => controller.abort(), 20);
        expect(await popped).toBeUndefined();
        // Nothing left behind: the item goes to the next pop.
        await q.push(1);
        expect(await q.pop()).toBe(1);
      });

      it('wakes for a delayed item becoming visible (no write announces it)', async () => {
        const { q } = await setUp();
        await q.push('soon', { delayMs: 30 });
        expect(await q.pop({ wait: 5_000 })).toBe('soon');
      });

      it('cannot wait inside a transaction', async () => {
        const { docs, q } = await setUp();
        await expect(docs.transact((tr) => q.pop({ tr, wait: 10 }))).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
      });
    });

    describe('Queue leases', () => {
      it('lease, ack: the item leaves the queue', async () => {
        const clock = manualClock();
        const { q } = await setUp({ now: clock.fn });
        await q.pushMany(['a', 'b', 'c']);
        const leases = await q.lease(2, { visibilityMs: 1000 });
        expect(leases.map((l) => [l.value, l.attempts, l.deadline])).toEqual([
          ['a', 1, clock.now + 1000],
          ['b', 1, clock.now + 1000],
        ]);
        expect(await q.size()).toBe(3);
        expect(await q.peek()).toBe('c');
        await q.ack(leases[0]);
        // Repeating a successful ack is a no-op.
        await q.ack(leases[0]);
        expect(await q.size()).toBe(2);
      });

      it('an expired lease makes the item visible again, ahead of ready items, with one more attempt', async () => {
        const clock = manualClock();
        const { q } = await setUp({ now: clock.fn });
        await q.pushMany(['a', 'b']);
        const [first] = await q.lease(1, { visibilityMs: 100 });
        clock.now += 100;
        const [second] = await q.lease(1, { visibilityMs: 100 });
        expect(second).toMatchObject({ value: 'a', attempts: 2 });
        expect(second.id).not.toBe(first.id);
        // The lease id fences the first holder out.
        expect(await code(q.ack(first))).toBe('LEASE_EXPIRED');
        expect(await code(q.extend(first, 1000))).toBe('LEASE_EXPIRED');
        expect(await code(q.nack(first))).toBe('LEASE_EXPIRED');
        await q.ack(second);
        expect(await drain(q)).toEqual(['b']);
      });

      it('an ack after the deadline is rejected even before anyone takes the item', async () => {
        const clock = manualClock();
        const { q } = await setUp({ now: clock.fn });
        await q.push('a');
        const [lease] = await q.lease(1, { visibilityMs: 100 });
        clock.now += 100;
        expect(await code(q.ack(lease))).toBe('LEASE_EXPIRED');
        expect(await q.pop()).toBe('a');
      });

      it('extend moves the deadline; the lease from before the extend keeps working', async () => {
        const clock = manualClock();
        const { q } = await setUp({ now: clock.fn });
        await q.push('a');
        const [lease] = await q.lease(1, { visibilityMs: 100 });
        clock.now += 50;
        const extended = await q.extend(lease, 200);
        expect(extended).toEqual({ ...lease, deadline: clock.now + 200 });
        clock.now += 100;
        expect(await q.pop()).toBeUndefined();
        const again = await q.extend(lease, 300);
        expect(again.deadline).toBe(clock.now + 300);
        await q.ack(lease);
        expect(await q.size()).toBe(0);
      });

      it('nack makes the item visible again (after a delay), keeping its attempts', async () => {
        const clock = manualClock();
        const { q } = await setUp({ now: clock.fn });
        await q.pushMany(['a', 'b']);
        const [lease] = await q.lease(1);
        expect(await q.nack(lease, { delayMs: 50 })).toBe('requeued');
        expect(await q.nack(lease, { delayMs: 50 })).toBe('requeued');
        expect(await code(q.ack(lease))).toBe('LEASE_EXPIRED');
        expect(await q.peek()).toBe('b');
        clock.now += 50;
        const [again] = await q.lease(1);
        expect(again).toMatchObject({ value: 'a', attempts: 2 });
      });

      it('after maxAttempts leases an item goes to the dead-letter queue, by nack or by expiry', async () => {
        const clock = manualClock();
        const { c, q } = await setUp({ now: clock.fn, maxAttempts: 2 });
        await q.pushMany(['by-nack', 'by-expiry']);
        for (let round = 1; round <= 2; round++) {
          const leases = await q.lease(2, { visibilityMs: 100 });
          expect(leases.map((l) => l.attempts)).toEqual([round, round]);
          const outcome = await q.nack(leases.find((l) => l.value === 'by-nack') as Lease<JsonValue>);
          expect(outcome).toBe(round === 2 ? 'dead-lettered' : 'requeued');
          clock.now += 100;
        }
        expect(await q.pop()).toBeUndefined();
        expect(await q.size()).toBe(0);
        expect(await drain(q.deadLetters)).toEqual(['by-nack', 'by-expiry']);
        expect(q.deadLetters.id).toBe('q.dead');
        expect((await c.get('q.dead')).content).toEqual([]);
      });

      it('acks in a caller transaction that commits', async () => {
        const { docs, q } = await setUp();
        await q.push('a');
        const [lease] = await q.lease(1);
        await docs.transact((tr) => q.ack(lease, { tr }));
        expect(await q.size()).toBe(0);
      });

      it('checks its arguments', async () => {
        const { q } = await setUp();
        expect(await code(q.lease(0))).toBe('INVALID_ARGUMENT');
        expect(await code(q.lease(1, { visibilityMs: 0 }))).toBe('INVALID_ARGUMENT');
        expect(await code(q.ack({ id: 'nope', jobId: '', value: 1, deadline: 1, attempts: 1 }))).toBe('INVALID_ARGUMENT');
        expect(await code(q.ack({ id: '00000000-0000-4000-8000-000000000000', jobId: '', value: 1, deadline: 1, attempts: 1 }))).toBe(
          'LEASE_EXPIRED',
        );
      });
    });

    describe('Queue.consume', () => {
      it("commits the handler's writes with the pops", async () => {
        const { docs, q } = await setUp();
        await q.pushMany([1, 2, 3, 4, 5]);
        const consumer = q.consume(async (n, tr) => tr.add('sum', n as number), { batchSize: 2 });
        while ((await q.size()) > 0) await new Promise((resolve) => setTimeout(resolve, 2));
        const stats = await consumer.stop();
        expect(stats).toMatchObject({ consumed: 5, failures: 0, deadLettered: 0 });
        expect((await docs.kv.get('sum'))?.readBigInt64LE(0)).toBe(15n);
      });

      it('an idle consumer waits and wakes for a push; stop ends it', async () => {
        const { q } = await setUp();
        const seen: JsonValue[] = [];
        const consumer = q.consume((item) => void seen.push(item));
        await new Promise((resolve) => setTimeout(resolve, 20));
        await q.push('late');
        while (seen.length === 0) await new Promise((resolve) => setTimeout(resolve, 2));
        expect(await consumer.stop()).toMatchObject({ consumed: 1 });
        expect(seen).toEqual(['late']);
      });

      it('an idle consumer does not spin on an item delayed beyond what a timer can wait (24.8 days)', async () => {
        const { q, engine } = await setUp();
        await q.push('later', { delayMs: 30 * 86_400_000 });
        const consumer = q.consume(() => undefined, { schedules: false });
        await new Promise((resolve) => setTimeout(resolve, 50));
        const attempts = engine.counts().attempts;
        await new Promise((resolve) => setTimeout(resolve, 100));
        await consumer.stop();
        // (A take may still be finishing on a loaded machine; a spinning loop makes dozens.)
        expect(engine.counts().attempts).toBeLessThanOrEqual(attempts + 2);
      });

      it('a failing handler aborts its transaction; the item is retried, then dead-lettered', async () => {
        const { docs, q } = await setUp();
        await q.pushMany(['bad', 'good']);
        const errors: JsonValue[] = [];
        const consumer = q.consume(
          async (item, tr: Transaction) => {
            tr.set(`wrote-${item as string}`, 'x');
            if (item === 'bad') throw new Error('cannot handle');
          },
          { maxAttempts: 3, onError: (_err, item) => void errors.push(item ?? null) },
        );
        while ((await q.size()) > 0) await new Promise((resolve) => setTimeout(resolve, 5));
        const stats = await consumer.stop();
        expect(stats).toMatchObject({ consumed: 1, failures: 3, deadLettered: 1 });
        expect(errors).toEqual(['bad', 'bad', 'bad']);
        expect(await docs.kv.get('wrote-bad')).toBeUndefined();
        expect(await docs.kv.get('wrote-good')).toBeDefined();
        expect(await drain(q.deadLetters)).toEqual(['bad']);
      });

      it('workers ready at once share transactions: each item handled once, in fewer commits', async () => {
        const { docs, q, engine } = await setUp();
        const items = Array.from({ length: 40 }, (_, i) => i);
        await q.pushMany(items);
        const handled: number[] = [];
        let allSeen!: () => void;
        const seen = new Promise<void>((resolve) => (allSeen = resolve));
        const before = engine.counts().commits;
        // Each handler takes 0.1 ms by the consumer's clock, whatever the machine's load: fast enough to share.
        const clock = manualClock(0);
        const consumer = q.consume(
          async (n, tr) => {
            clock.now += 0.1;
            tr.add(`count-${n as number}`, 1);
            handled.push(n as number);
            if (new Set(handled).size === items.length) allSeen();
          },
          { concurrency: 8, handlerClock: clock.fn },
        );
        await seen;
        const stats = await consumer.stop();
        expect(stats).toMatchObject({ consumed: 40, failures: 0 });
        // Several items per commit (a handler that runs again on a retry is seen twice here).
        expect(new Set(handled)).toEqual(new Set(items));
        expect(engine.counts().commits - before).toBeLessThan(20);
        for (const n of items) expect((await docs.kv.get(`count-${n}`))?.readBigInt64LE(0)).toBe(1n);
      });

      it('workers sharing a transaction take their items in one read of the kind and the head', async () => {
        const { q, engine } = await setUp();
        const items = Array.from({ length: 48 }, (_, i) => i);
        await q.pushMany(items);
        const clock = manualClock(0);
        const { attempts } = await engine.measure(async () => {
          const consumer = q.consume(
            () => {
              clock.now += 0.1;
            },
            { concurrency: 4, batchSize: 2, handlerClock: clock.fn, schedules: false },
          );
          while ((await q.size()) > 0) await new Promise((resolve) => setTimeout(resolve, 2));
          await consumer.stop();
        });
        // Attempts that popped more than one worker's batch (2 items) read the kind once (1 point read)
        // and the head once (its 2 areas' range reads): one take for all their workers, not one each.
        const sharedAttempts = attempts.filter((a) => a.clears.length > 2);
        expect(sharedAttempts.length).toBeGreaterThan(0);
        // One run in a loaded full-suite run (not reproduced since) saw a second point read in one
        // shared attempt: a queue setting read while the settings cache (known-settings.ts) was not
        // warm is the likely one. The head is read once per attempt all the same, and the kind once in
        // every other attempt (the old code read both once per worker: 4 and 8).
        for (const a of sharedAttempts) {
          expect(a.ranges.length).toBe(2);
          expect(a.gets.length).toBeLessThanOrEqual(2);
        }
        expect(sharedAttempts.filter((a) => a.gets.length === 1).length).toBeGreaterThanOrEqual(sharedAttempts.length - 1);
      });

      it('workers idle together all wake for a push', async () => {
        const { q } = await setUp();
        await q.pushMany([0, 1, 2, 3]);
        const clock = manualClock(0);
        // (A handler runs again when its transaction is retried: items are counted once.)
        const seen = new Set<number>();
        const consumer = q.consume(
          (n) => {
            clock.now += 0.1;
            seen.add(n as number);
          },
          { concurrency: 4, handlerClock: clock.fn },
        );
        while (seen.size < 4) await new Promise((resolve) => setTimeout(resolve, 2));
        // Every worker is now waiting on the empty queue; pushes wake them.
        await new Promise((resolve) => setTimeout(resolve, 20));
        await q.pushMany([4, 5, 6, 7, 8, 9, 10, 11]);
        while (seen.size < 12) await new Promise((resolve) => setTimeout(resolve, 2));
        expect(await consumer.stop()).toMatchObject({ consumed: 12, failures: 0 });
        expect(await q.size()).toBe(0);
      });

      it('a failing handler among workers sharing a transaction fails alone: the others commit', async () => {
        const { docs, q } = await setUp();
        const items = Array.from({ length: 24 }, (_, i) => (i === 5 ? 'bad' : `good-${i}`));
        await q.pushMany(items);
        // Fast handlers by the consumer's clock, whatever the machine's load, so that the workers share.
        const clock = manualClock(0);
        let badRuns = 0;
        const consumer = q.consume(
          async (item, tr: Transaction) => {
            clock.now += 0.1;
            tr.add(`count-${item as string}`, 1);
            if (item === 'bad') {
              badRuns++;
              throw new Error('cannot handle');
            }
          },
          { concurrency: 8, maxAttempts: 2, handlerClock: clock.fn },
        );
        while ((await q.size()) > 0) await new Promise((resolve) => setTimeout(resolve, 5));
        const stats = await consumer.stop();
        // maxAttempts failures poison the item, each counted from one run of the handler.
        expect(stats).toMatchObject({ consumed: 23, deadLettered: 1, failures: 2 });
        expect(badRuns).toBe(2);
        for (const item of items.filter((i) => i !== 'bad')) expect((await docs.kv.get(`count-${item}`))?.readBigInt64LE(0)).toBe(1n);
        expect(await docs.kv.get('count-bad')).toBeUndefined();
        expect(await drain(q.deadLetters)).toEqual(['bad']);
      });

      it('a failing item is handled exactly maxAttempts times, however many workers take it, shared or alone', async () => {
        const r = new Random(testSeed(17));
        for (let round = 0; round < 6; round++) {
          const concurrency = r.pick([2, 4, 8]);
          const maxAttempts = r.between(1, 3);
          const batchSize = r.between(1, 3);
          // Strict pops put every worker on the head batch; spread ones meet the bad items less often.
          const spread = r.chance(0.5) ? 1 : undefined;
          // Fast handlers by the consumer's clock make the workers share transactions; slow ones do not.
          const fast = r.chance(0.5);
          const items = Array.from({ length: 16 }, (_, i) => (r.chance(0.25) ? `bad-${i}` : `good-${i}`));
          const bad = items.filter((item) => item.startsWith('bad'));
          const context = JSON.stringify({ seed: r.seed, round, concurrency, maxAttempts, batchSize, spread, fast, bad });
          const { docs, q } = await setUp();
          await q.pushMany(items);
          const clock = manualClock(0);
          const delays = new Random(r.seed + round);
          const runs = new Map<string, number>();
          const consumer = q.consume(
            async (item, tr: Transaction) => {
              const name = item as string;
              clock.now += fast ? 0.1 : 5;
              runs.set(name, (runs.get(name) ?? 0) + 1);
              // Handlers that take a while overlap with other workers' transactions.
              await new Promise((resolve) => setTimeout(resolve, delays.int(3)));
              tr.add(`count-${name}`, 1);
              if (name.startsWith('bad')) throw new Error('cannot handle');
            },
            { concurrency, maxAttempts, batchSize, spread, handlerClock: clock.fn, schedules: false },
          );
          while ((await q.size()) > 0) await new Promise((resolve) => setTimeout(resolve, 5));
          const stats = await consumer.stop();
          expect({ context, stats: { consumed: stats.consumed, failures: stats.failures, deadLettered: stats.deadLettered } }).toEqual({
            context,
            stats: { consumed: items.length - bad.length, failures: bad.length * maxAttempts, deadLettered: bad.length },
          });
          expect({ context, runs: bad.map((item) => runs.get(item)) }).toEqual({ context, runs: bad.map(() => maxAttempts) });
          for (const item of items) {
            expect({ context, item, count: (await docs.kv.get(`count-${item}`))?.readBigInt64LE(0) }).toEqual({
              context,
              item,
              count: item.startsWith('bad') ? undefined : 1n,
            });
          }
          expect((await drain(q.deadLetters)).sort()).toEqual([...bad].sort());
        }
      });

      it('workers with slow handlers run their own transactions: the handlers overlap', async () => {
        const { q } = await setUp();
        await q.pushMany(Array.from({ length: 24 }, (_, i) => i));
        let running = 0;
        let overlap = 0;
        const consumer = q.consume(
          async () => {
            running++;
            overlap = Math.max(overlap, running);
            await new Promise((resolve) => setTimeout(resolve, 5));
            running--;
          },
          { concurrency: 4 },
        );
        while ((await q.size()) > 0) await new Promise((resolve) => setTimeout(resolve, 5));
        expect(await consumer.stop()).toMatchObject({ consumed: 24 });
        expect(overlap).toBeGreaterThan(1);
      });

      it('stops when its signal aborts', async () => {
        const { q } = await setUp();
        const controller = new AbortController();
        const consumer = q.consume(() => undefined, { concurrency: 3, signal: controller.signal });
        controller.abort();
        expect(await consumer.done).toMatchObject({ consumed: 0 });
      });

      it('checks its options', async () => {
        const { q } = await setUp();
        expect(() => q.consume(() => undefined, { concurrency: 0 })).toThrow(DocumentError);
        expect(() => q.consume(() => undefined, { batchSize: 1.5 })).toThrow(DocumentError);
      });
    });

    describe('Queue costs', () => {
      it('push in a transaction: 1 point read (the kind), no range read, 4 keys written', async () => {
        const { docs, q, engine } = await setUp();
        await q.push(0);
        const { counts } = await engine.measure(() => docs.transact((tr) => q.push(1, { tr })));
        // The item (versionstamped key), the version (versionstamped value), size and pushed (atomic adds).
        expect(counts).toMatchObject({ gets: 1, rangeReads: 0, versionstamped: 2, atomicOps: 2, sets: 0, clears: 0 });
        // The metadata version (sent with the read version on a cluster), by which the queue's events are known off.
        expect(counts.metadataVersionReads).toBe(1);
      });

      it('strict pop in a transaction: the kind, 2 limit-1 range reads issued together, 1 clear', async () => {
        const { docs, q, engine } = await setUp();
        await q.pushMany([1, 2]);
        const { counts, attempts } = await engine.measure(() => docs.transact((tr) => q.pop({ tr })));
        expect(counts).toMatchObject({ gets: 1, rangeReads: 2, clears: 1, atomicOps: 1, versionstamped: 1, sets: 0 });
        expect(attempts[0].ranges.map((r) => [r.limit, r.snapshot])).toEqual([
          [1, true],
          [1, true],
        ]);
      });

      it('pop in its own transaction adds its receipt (1 key)', async () => {
        const { q, engine } = await setUp();
        await q.pushMany([1, 2]);
        const { counts } = await engine.measure(() => q.pop());
        expect(counts).toMatchObject({ gets: 1, rangeReads: 2, clears: 1, sets: 1 });
      });

      it('ack: 1 point read of the item, its clear, the size and a token', async () => {
        const { docs, q, engine } = await setUp();
        await q.push(1);
        const [lease] = await q.lease(1);
        const { counts } = await engine.measure(() => docs.transact((tr) => q.ack(lease, { tr })));
        expect(counts).toMatchObject({ gets: 1, rangeReads: 0, clears: 1, atomicOps: 1, sets: 1 });
      });
    });

    describe('Queue errors', () => {
      it('are DocumentErrors with stable codes', async () => {
        const { q } = await setUp();
        await q.push(1);
        const [lease] = await q.lease(1);
        await q.ack(lease);
        await q.clear();
        try {
          await q.ack(lease);
          throw new Error('expected LEASE_EXPIRED');
        } catch (err) {
          expect(isDocumentError(err, 'LEASE_EXPIRED')).toBe(true);
        }
      });
    });
  });
}
