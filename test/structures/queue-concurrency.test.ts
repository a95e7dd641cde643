/**
 * Producers and consumers on one queue, on the memory engine with injected commit faults: not_committed,
 * commit_unknown_result (the commit applied, then reported unknown) and transaction_too_old. Every item
 * pushed is consumed exactly once, and in FIFO order per producer where the consumers pop strictly.
 */
import { open, type Collection, type DocLayer } from '../../src';
import { openMemoryDatabase } from '../../src/kv/memory/memory-engine';
import type { Transaction } from '../../src/kv/contract/types';
import type { Queue } from '../../src/structures/queue/queue';
import { pack, packWithVersionstamp, unpack, Versionstamp } from '../../src/tuple';
import { testSeed } from '../support/random';

const PRODUCERS = 4;
const PER_PRODUCER = 40;
const TOTAL = PRODUCERS * PER_PRODUCER;

type Job = {
  p: number;
  i: number;
};

async function setUp(salt: number): Promise<{ docs: DocLayer; c: Collection; q: Queue<Job> }> {
  const seed = testSeed(salt);
  const docs = await open({ database: openMemoryDatabase({ faults: { seed, notCommitted: 0.1, unknownResult: 0.1, tooOld: 0.02 } }) });
  const c = docs.collection();
  const q = c.queue<Job>('jobs');
  return { docs, c, q };
}

/** Each producer pushes its items in order, one transaction each (retried, and idempotent). */
function produce(q: Queue<Job>): Promise<void[]> {
  return Promise.all(
    Array.from({ length: PRODUCERS }, async (_, p) => {
      for (let i = 0; i < PER_PRODUCER; i++) await q.push({ p, i });
    }),
  );
}

async function drained(q: Queue<Job>): Promise<void> {
  while ((await q.size()) > 0) await new Promise((resolve) => setTimeout(resolve, 5));
}

const userVersions = new WeakMap<Transaction, number>();

/** What a consumer's handler writes: a per-item counter and a log entry ordered by commit. */
function record(tr: Transaction, job: Job): void {
  tr.add(pack(['count', job.p, job.i]), 1);
  const n = userVersions.get(tr) ?? 0;
  userVersions.set(tr, n + 1);
  tr.setVersionstampedKey(packWithVersionstamp(['log', Versionstamp.incomplete(n)]), pack([job.p, job.i]));
}

async function checkExactlyOnceAndFifo(docs: DocLayer, fifo: boolean): Promise<void> {
  const counts = await docs.kv.getRangeAll(pack(['count']), Buffer.concat([pack(['count']), Buffer.of(0xff)]));
  expect(counts).toHaveLength(TOTAL);
  for (const { value } of counts) expect(value.readBigInt64LE(0)).toBe(1n);
  const log = await docs.kv.getRangeAll(pack(['log']), Buffer.concat([pack(['log']), Buffer.of(0xff)]));
  expect(log).toHaveLength(TOTAL);
  if (fifo) {
    const next = new Array<number>(PRODUCERS).fill(0);
    for (const { value } of log) {
      const [p, i] = unpack(value) as [number, number];
      expect({ p, i }).toEqual({ p, i: next[p] });
      next[p]++;
    }
  }
}

describe('Queue under concurrency with injected faults', () => {
  it('transactional consumers handle every item exactly once, FIFO per producer (strict pops)', async () => {
    const { docs, q } = await setUp(1);
    const consumers = Array.from({ length: 3 }, () => q.consume(async (job, tr) => record(tr, job), { spread: 1 }));
    await produce(q);
    await drained(q);
    const stats = await Promise.all(consumers.map((c) => c.stop()));
    expect(stats.reduce((n, s) => n + s.failures, 0)).toBe(0);
    // The faults did hit the consumers' transactions.
    expect(stats.reduce((n, s) => n + s.retries, 0)).toBeGreaterThan(0);
    await checkExactlyOnceAndFifo(docs, true);
  });

  it('batched consumers with spreading pops handle every item exactly once', async () => {
    const { docs, q } = await setUp(2);
    const consumer = q.consume(async (job, tr) => record(tr, job), { concurrency: 4, batchSize: 3 });
    await produce(q);
    await drained(q);
    const stats = await consumer.stop();
    expect(stats.failures).toBe(0);
    expect(stats.consumed).toBeLessThanOrEqual(TOTAL);
    await checkExactlyOnceAndFifo(docs, false);
  });

  it('pops in their own transactions return every item exactly once, in order per producer for each popper', async () => {
    const { q } = await setUp(3);
    const received: Job[][] = [[], [], []];
    let count = 0;
    const poppers = received.map(async (mine) => {
      while (count < TOTAL) {
        const job = await q.pop({ wait: 20 });
        if (job === undefined) continue;
        mine.push(job);
        count++;
      }
    });
    await produce(q);
    await Promise.all(poppers);
    const all = received.flat().map((j) => `${j.p}/${j.i}`);
    expect(new Set(all).size).toBe(TOTAL);
    expect(all).toHaveLength(TOTAL);
    for (const mine of received) {
      for (let p = 0; p < PRODUCERS; p++) {
        const seq = mine.filter((j) => j.p === p).map((j) => j.i);
        expect(seq).toEqual([...seq].sort((a, b) => a - b));
      }
    }
    expect(await q.size()).toBe(0);
  });

  it('pushes and pops one after another, retried after faults: each item pushed once and popped once; a retry never takes the receipt an earlier call left in the slot it reuses for its own', async () => {
    const docs = await open({ database: openMemoryDatabase({ faults: { seed: testSeed(5), notCommitted: 0.3, unknownResult: 0.2 } }) });
    const q = docs.collection().queue<number>('q');
    for (let i = 0; i < 40; i++) await q.push(i);
    const popped: (number | undefined)[] = [];
    for (let i = 0; i < 41; i++) popped.push(await q.pop());
    expect(popped).toEqual([...Array.from({ length: 40 }, (_, i) => i), undefined]);
    await docs.close();
  });

  it('leases acked by several workers: every item acked exactly once, none expired', async () => {
    const { q } = await setUp(4);
    const acked = new Map<string, number>();
    let done = 0;
    const workers = Array.from({ length: 3 }, async () => {
      while (done < TOTAL) {
        const leases = await q.lease(2, { visibilityMs: 60_000, spread: 2 });
        if (leases.length === 0) {
          await new Promise((resolve) => setTimeout(resolve, 2));
          continue;
        }
        for (const lease of leases) {
          await q.ack(lease);
          const key = `${lease.value.p}/${lease.value.i}`;
          acked.set(key, (acked.get(key) ?? 0) + 1);
          done++;
        }
      }
    });
    await produce(q);
    await Promise.all(workers);
    expect(acked.size).toBe(TOTAL);
    expect([...acked.values()].every((n) => n === 1)).toBe(true);
    expect(await q.size()).toBe(0);
  });
});
