/**
 * Retry backoff (docs/queue.md, "Retry backoff"): the delay a policy gives for an item's attempts
 * (fixed, exponential with a cap, jitter within its bounds), `nack` applying it, and consumers moving
 * a failing item to the scheduled area with its attempts counted in the store, then to the dead-letter
 * queue; on every engine, with a manual clock. Under injected commit_unknown_result, every item is
 * handled once or dead-lettered once.
 */
import { open, type DocLayer } from '../../src';
import { DocumentError } from '../../src/document/errors';
import type { JsonValue } from '../../src/document/types';
import type { Database } from '../../src/kv/contract/database';
import type { Transaction } from '../../src/kv/contract/types';
import { openMemoryDatabase } from '../../src/kv/memory/memory-engine';
import { backoffDelay, checkedBackoff, DEFAULT_MAX_BACKOFF_MS, type BackoffPolicy } from '../../src/structures/queue/backoff';
import type { QueueOptions } from '../../src/structures/queue/queue';
import { pack, unpack } from '../../src/tuple';
import { documentEngines, type DocumentEngine } from '../support/document-engines';
import { Random, testSeed } from '../support/random';

let current: DocumentEngine = documentEngines[0];
const opened: { close(): Promise<void> }[] = [];

async function setUp(options: QueueOptions = {}, database?: Database) {
  const db = database ?? (await current.open());
  const docs = await open({ database: db });
  opened.push(docs, db);
  const clock = { now: 1_000_000 };
  const c = docs.collection();
  const q = c.queue<JsonValue>('q', { now: () => clock.now, ...options });
  return { docs, c, q, clock };
}

async function code(action: () => unknown): Promise<string | undefined> {
  try {
    await action();
    return undefined;
  } catch (err) {
    if (err instanceof DocumentError) return err.code;
    throw err;
  }
}

/** Waits (real time, bounded) until `condition` holds. */
async function until(condition: () => Promise<boolean> | boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('backoffDelay', () => {
  const never = () => {
    throw new Error('no jitter, no random draw');
  };

  it('fixed: the same delay after every attempt', () => {
    const policy: BackoffPolicy = { type: 'fixed', delayMs: 250 };
    expect([1, 2, 5, 40].map((a) => backoffDelay(policy, a, never))).toEqual([250, 250, 250, 250]);
  });

  it('exponential: delayMs * 2^(attempts - 1), capped by maxDelayMs or 2^31 - 1 ms', () => {
    expect([1, 2, 3, 4, 5].map((a) => backoffDelay({ type: 'exponential', delayMs: 100, maxDelayMs: 1000 }, a, never))).toEqual([
      100, 200, 400, 800, 1000,
    ]);
    expect(backoffDelay({ type: 'exponential', delayMs: 100 }, 5000, never)).toBe(DEFAULT_MAX_BACKOFF_MS);
  });

  it('jitter: uniform in [d * (1 - jitter), d], drawn from the random source given', () => {
    const policy: BackoffPolicy = { type: 'exponential', delayMs: 1000, jitter: 0.25 };
    expect(backoffDelay(policy, 1, () => 0)).toBe(1000);
    expect(backoffDelay(policy, 1, () => 0.999999)).toBe(750);
    const r = new Random(testSeed(18));
    const delays = Array.from({ length: 200 }, () => backoffDelay(policy, 3, r.next));
    for (const d of delays) {
      expect(d).toBeGreaterThanOrEqual(3000);
      expect(d).toBeLessThanOrEqual(4000);
    }
    expect(new Set(delays).size).toBeGreaterThan(50);
  });

  it('rejects a malformed policy with INVALID_ARGUMENT', async () => {
    const bad = [
      { type: 'linear', delayMs: 1 },
      { type: 'fixed', delayMs: -1 },
      { type: 'fixed', delayMs: 1.5 },
      { type: 'exponential', delayMs: 10, maxDelayMs: -5 },
      { type: 'exponential', delayMs: 10, jitter: 1.5 },
      { type: 'exponential', delayMs: 10, jitter: Number.NaN },
      null,
    ];
    for (const policy of bad) expect(await code(() => checkedBackoff(policy as unknown as BackoffPolicy))).toBe('INVALID_ARGUMENT');
  });
});

for (const engine of documentEngines) {
  describe(`Queue retry backoff [${engine.name}]`, () => {
    beforeAll(() => {
      current = engine;
    });
    afterEach(async () => {
      for (const closable of opened.splice(0)) await closable.close();
    });
    afterAll(async () => engine.cleanup?.());

    it('a queue with a malformed policy is refused when the handle is made', async () => {
      const { c } = await setUp();
      expect(await code(() => c.queue('p', { backoff: { type: 'fixed', delayMs: -1 } }))).toBe('INVALID_ARGUMENT');
    });

    it("nack without delayMs waits the queue's backoff for the item's attempts, then dead-letters", async () => {
      const { q, clock } = await setUp({ maxAttempts: 3, backoff: { type: 'exponential', delayMs: 100 } });
      await q.push('job');
      for (const wait of [100, 200]) {
        const [lease] = await q.lease(1);
        expect(await q.nack(lease)).toBe('requeued');
        clock.now += wait - 1;
        expect(await q.peek()).toBeUndefined();
        clock.now += 1;
        expect(await q.peek()).toBe('job');
      }
      const [last] = await q.lease(1);
      expect(last.attempts).toBe(3);
      expect(await q.nack(last)).toBe('dead-lettered');
      expect(await q.deadLetters.pop()).toBe('job');
    });

    it("nack's delayMs wins over the policy, and its own backoff over the queue's", async () => {
      const { q, clock } = await setUp({ backoff: { type: 'fixed', delayMs: 1000 } });
      await q.push('job');
      const [first] = await q.lease(1);
      await q.nack(first, { delayMs: 0 });
      expect(await q.peek()).toBe('job');
      const [second] = await q.lease(1);
      await q.nack(second, { backoff: { type: 'fixed', delayMs: 10 } });
      clock.now += 10;
      expect(await q.peek()).toBe('job');
    });

    it("jitter comes from the handle's random source", async () => {
      const { q, clock } = await setUp({ random: () => 0.5, backoff: { type: 'exponential', delayMs: 100, jitter: 0.5 } });
      await q.push('job');
      const [lease] = await q.lease(1);
      await q.nack(lease);
      clock.now += 74;
      expect(await q.peek()).toBeUndefined();
      clock.now += 1;
      expect(await q.peek()).toBe('job');
    });

    it('a consumer moves a failing item behind its backoff, counting attempts in the store, then dead-letters it', async () => {
      const { q, clock } = await setUp({ maxAttempts: 3, backoff: { type: 'exponential', delayMs: 20 } });
      await q.pushMany(['bad', 'good']);
      const handled: JsonValue[] = [];
      const consumer = q.consume((item) => {
        if (item === 'bad') throw new Error('no');
        handled.push(item);
      });
      try {
        // The failing item waits; the next one is handled meanwhile (it no longer blocks the head).
        // (Counted once its transaction has committed: the handler runs before the commit.)
        await until(() => consumer.stats.consumed === 1, 'the good item is handled');
        expect(handled).toContain('good');
        expect(consumer.stats.failures).toBe(1);
        expect(await q.peek()).toBeUndefined();
        clock.now += 19;
        expect(await q.peek()).toBeUndefined();
        clock.now += 1;
        await until(() => consumer.stats.failures === 2, 'the second failure');
        await until(async () => (await q.peek()) === undefined, 'the item is moved again');
        // The second wait is twice the first.
        clock.now += 39;
        expect(await q.peek()).toBeUndefined();
        clock.now += 1;
        await until(() => consumer.stats.deadLettered === 1, 'the item is dead-lettered');
      } finally {
        await consumer.stop();
      }
      expect(consumer.stats).toMatchObject({ consumed: 1, failures: 3, deadLettered: 1 });
      expect(await q.size()).toBe(0);
      expect(await q.deadLetters.pop()).toBe('bad');
    });

    it("a consumer's failures count in the stored item: a lease afterwards sees them", async () => {
      const { q, clock } = await setUp({ maxAttempts: 5, backoff: { type: 'fixed', delayMs: 50 } });
      await q.push('bad');
      const consumer = q.consume(() => {
        throw new Error('no');
      });
      try {
        await until(() => consumer.stats.failures === 1, 'the first failure');
      } finally {
        await consumer.stop();
      }
      clock.now += 50;
      const [lease] = await q.lease(1);
      expect(lease).toMatchObject({ value: 'bad', attempts: 2 });
    });

    it('without a policy a failing item stays at the head, as before', async () => {
      const { q } = await setUp({ maxAttempts: 2 });
      await q.pushMany(['bad', 'good']);
      const consumer = q.consume((item) => {
        if (item === 'bad') throw new Error('no');
      });
      try {
        await until(() => consumer.stats.consumed === 1, 'the good item is handled after the bad one is dead-lettered');
      } finally {
        await consumer.stop();
      }
      const stats = consumer.stats;
      expect(stats).toMatchObject({ failures: 2, deadLettered: 1 });
      expect(await q.deadLetters.pop()).toBe('bad');
    });
  });
}

describe('Queue retry backoff under injected faults [memory]', () => {
  afterEach(async () => {
    for (const closable of opened.splice(0)) await closable.close();
  });

  it('with commit_unknown_result, each item is handled exactly once or dead-lettered exactly once', async () => {
    const seed = testSeed(183);
    const database = openMemoryDatabase({ faults: { seed, notCommitted: 0.1, unknownResult: 0.15 } });
    const { docs, q } = await setUp({ maxAttempts: 3, now: Date.now, backoff: { type: 'fixed', delayMs: 1 } }, database);
    const items = Array.from({ length: 30 }, (_, i) => i);
    await q.pushMany(items);
    // Items divisible by 5 always fail; the others fail on their first call only.
    const calls = new Map<number, number>();
    const consumer = q.consume(
      (item, tr: Transaction) => {
        const n = item as number;
        calls.set(n, (calls.get(n) ?? 0) + 1);
        if (n % 5 === 0 || calls.get(n) === 1) throw new Error(`fails ${n}`);
        tr.add(pack(['handled', n]), 1);
      },
      { concurrency: 2 },
    );
    try {
      await until(async () => (await q.size()) === 0, 'the queue is drained');
    } finally {
      await consumer.stop();
    }
    const handled = await readHandled(docs);
    const dead: JsonValue[] = [];
    for await (const v of q.deadLetters.iterate()) dead.push(v);
    const failing = items.filter((n) => n % 5 === 0);
    expect([...dead].sort((a, b) => (a as number) - (b as number))).toEqual(failing);
    expect(handled).toEqual(new Map(items.filter((n) => n % 5 !== 0).map((n) => [n, 1])));
  });
});

async function readHandled(docs: DocLayer): Promise<Map<number, number>> {
  const begin = pack(['handled']);
  const rows = await docs.kv.getRangeAll(begin, Buffer.concat([begin, Buffer.of(0xff)]));
  return new Map(rows.map(({ key, value }) => [unpack(key)[1] as number, Number(value.readBigInt64LE(0))]));
}
