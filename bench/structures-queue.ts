/**
 * Queue throughput: push, and pop with 1 and 8 consumers (plain pops in their own transactions, strict
 * and spreading, and transactional consumers), against the Couchbase SDK's CouchbaseQueue design over
 * the same document layer: the queue as one JSON array, push = `arrayPrepend('')`, pop =
 * `lookupIn get('[-1]')` then `mutateIn remove('[-1]')` with that CAS, retried on CAS_MISMATCH
 * (RFC 50; couchnode gives up after 16 tries, this one retries until it succeeds).
 *
 *   node -r ts-node/register/transpile-only bench/structures-queue.ts
 *
 * Two settings:
 * - the memory engine as it is: every operation is CPU work in this one thread, so transactions hardly
 *   overlap and these rows measure the cost of an operation;
 * - the memory engine with 1 ms per round trip (each read and each commit waits 1 ms first, as a
 *   database on the network would): transactions overlap, so these rows show what concurrency buys
 *   and what conflicts cost (strict pops all want the head; spreading pops and pushes do not collide).
 *
 * Rates are items per second; a row's time covers pushing or draining a fixed number of items.
 * `runQueueBench()` returns the rows for the combined structures benchmark.
 */
import { LookupInSpec, MutateInSpec, open, type Collection } from '../src';
import { isDocumentError } from '../src/document/errors';
import { Database } from '../src/kv/contract/database';
import { MemoryEngine } from '../src/kv/memory/memory-engine';
import type { Engine, ReadTransaction, Transaction } from '../src/kv/contract/types';

export interface BenchRow {
  operation: string;
  /** Items per second, doclayer's Queue. */
  ours: number;
  /** Items per second, the CouchbaseQueue design, where measured. */
  comparison?: number;
  /** ours / comparison */
  ratio?: number;
}

const ITEMS = 2_000;
const ITEMS_WITH_LATENCY = 320;
const ROUND_TRIP_MS = 1;

/** `engine` with every read and commit delayed by `ms`, as over a network. */
export function withRoundTrips(engine: Engine, ms: number): Engine {
  const pause = () => new Promise<void>((resolve) => setTimeout(resolve, ms));
  const delayed = <T extends ReadTransaction>(inner: T): T =>
    new Proxy(inner, {
      get(target, prop) {
        const value = Reflect.get(target, prop, target) as unknown;
        if (typeof value !== 'function') return value;
        const fn = value as (...args: unknown[]) => unknown;
        switch (prop) {
          case 'get':
          case 'getKey':
          case 'getRangeAll':
          case 'commit':
            return async (...args: unknown[]) => {
              await pause();
              return fn.apply(target, args);
            };
          case 'getRange':
            return (...args: unknown[]) => ({
              async *[Symbol.asyncIterator]() {
                await pause();
                yield* fn.apply(target, args) as AsyncIterable<unknown>;
              },
            });
          case 'snapshot':
            return () => delayed(fn.apply(target, []) as ReadTransaction);
          default:
            return fn.bind(target);
        }
      },
    });
  return {
    name: `${engine.name} + ${ms} ms round trips`,
    createTransaction: () => delayed<Transaction>(engine.createTransaction()),
    close: () => engine.close(),
  };
}

type Job = {
  n: number;
  task: string;
};

const job = (n: number): Job => ({ n, task: 'resize-image' });

/** The CouchbaseQueue design: one document holding the array. */
class ArrayQueue {
  constructor(
    private readonly c: Collection,
    private readonly id: string,
  ) {}

  async push(value: Job): Promise<void> {
    await this.c.mutateIn(this.id, [MutateInSpec.arrayPrepend('', value)], { storeSemantics: 'upsert' });
  }

  async pop(): Promise<Job | undefined> {
    for (;;) {
      let found;
      try {
        found = await this.c.lookupIn(this.id, [LookupInSpec.get('[-1]')]);
      } catch (err) {
        if (isDocumentError(err, 'DOCUMENT_NOT_FOUND')) return undefined;
        throw err;
      }
      const entry = found.entries[0];
      if (entry.error !== undefined) return undefined;
      try {
        await this.c.mutateIn(this.id, [MutateInSpec.remove('[-1]')], { cas: found.cas });
        return entry.value as unknown as Job;
      } catch (err) {
        if (!isDocumentError(err, 'CAS_MISMATCH')) throw err;
      }
    }
  }
}

interface Side {
  push(value: Job): Promise<void>;
  pop(): Promise<Job | undefined>;
}

/** Items per second to run `work`, which handles `items` items. */
async function itemsPerSecond(items: number, work: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await work();
  return items / (Number(process.hrtime.bigint() - start) / 1e9);
}

async function fill(side: Side, items: number): Promise<void> {
  for (let i = 0; i < items; i++) await side.push(job(i));
}

/** `consumers` loops popping until `items` items are taken in all. */
async function drainWith(side: Side, consumers: number, items: number): Promise<void> {
  let taken = 0;
  await Promise.all(
    Array.from({ length: consumers }, async () => {
      while (taken < items) {
        if ((await side.pop()) !== undefined) taken++;
      }
    }),
  );
}

/** One setting's rows, on fresh queues. */
async function measure(engine: Engine, label: string, items: number, rows: BenchRow[]): Promise<void> {
  const docs = await open({ database: new Database(engine), prefix: ['bq'] });
  const c = docs.collection('bench');
  let fresh = 0;
  const ours = (spread = 1): Side => {
    const q = c.queue<Job>(`q${fresh++}`);
    return { push: (v) => q.push(v), pop: () => q.pop({ spread }) };
  };
  const naive = (): Side => new ArrayQueue(c, `a${fresh++}`);
  const row = (operation: string, a: number, b?: number) =>
    rows.push({ operation: `${operation} (${label})`, ours: a, ...(b === undefined ? {} : { comparison: b, ratio: a / b }) });
  const producers = (side: Side, n: number) =>
    Promise.all(Array.from({ length: 8 }, (_, p) => fill({ push: (v) => side.push({ ...v, n: v.n + p * n }), pop: () => side.pop() }, n / 8)));
  try {
    // Warm-up, so that neither side is measured while the JIT compiles it.
    for (const side of [ours(), naive()]) {
      await fill(side, 50);
      await drainWith(side, 1, 50);
    }
    {
      const a = ours();
      const b = naive();
      row('push, 1 producer', await itemsPerSecond(items, () => fill(a, items)), await itemsPerSecond(items, () => fill(b, items)));
      row('pop, 1 consumer', await itemsPerSecond(items, () => drainWith(a, 1, items)), await itemsPerSecond(items, () => drainWith(b, 1, items)));
    }
    {
      const a = ours();
      const b = naive();
      row('push, 8 producers', await itemsPerSecond(items, () => producers(a, items)), await itemsPerSecond(items, () => producers(b, items)));
      row(
        'pop, 8 consumers, strict',
        await itemsPerSecond(items, () => drainWith(a, 8, items)),
        await itemsPerSecond(items, () => drainWith(b, 8, items)),
      );
    }
    {
      // Lifecycle events (docs/queue.md, "Job ids, progress and events"): a queue with them on against
      // one with them off (the default), in this run. The ratio is on / off.
      const off = ours();
      const q = c.queue<Job>(`q${fresh++}`);
      await q.configure({ events: true });
      const on: Side = { push: (v) => q.push(v), pop: () => q.pop() };
      row(
        'push, 1 producer, events on vs off',
        await itemsPerSecond(items, () => fill(on, items)),
        await itemsPerSecond(items, () => fill(off, items)),
      );
      row(
        'pop, 1 consumer, events on vs off',
        await itemsPerSecond(items, () => drainWith(on, 1, items)),
        await itemsPerSecond(items, () => drainWith(off, 1, items)),
      );
    }
    for (const spread of [8, 32]) {
      const a = ours(spread);
      await fill(a, items);
      row(`pop, 8 consumers, spread ${spread}`, await itemsPerSecond(items, () => drainWith(a, 8, items)));
    }
    for (const concurrency of [1, 8]) {
      const q = c.queue<Job>(`q${fresh++}`);
      await fill({ push: (v) => q.push(v), pop: () => q.pop() }, items);
      const rate = await itemsPerSecond(items, async () => {
        let handled = 0;
        let finished!: () => void;
        const all = new Promise<void>((resolve) => (finished = resolve));
        const consumer = q.consume(
          (value, tr) => {
            tr.set(`done/${value.n}`, '1');
            if (++handled === items) finished();
          },
          { concurrency },
        );
        await all;
        await consumer.stop();
      });
      row(
        `consume, ${concurrency} worker${concurrency > 1 ? 's' : ''}${concurrency > 1 ? ', spread 32' : ''} (pop + a write, one transaction)`,
        rate,
      );
    }
  } finally {
    await docs.close();
    await engine.close();
  }
}

/** Every row: the memory engine as it is, then with 1 ms round trips; about 20 s in all. */
export async function runQueueBench(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  await measure(new MemoryEngine(), 'memory', ITEMS, rows);
  await measure(withRoundTrips(new MemoryEngine(), ROUND_TRIP_MS), `${ROUND_TRIP_MS} ms round trips`, ITEMS_WITH_LATENCY, rows);
  return rows;
}

function printRows(rows: BenchRow[]): void {
  const fmt = (n: number | undefined) => (n === undefined ? '' : Math.round(n).toLocaleString('en-US'));
  console.log('| queue operation | doclayer items/s | CouchbaseQueue design items/s | ratio |');
  console.log('| --- | ---: | ---: | ---: |');
  for (const r of rows)
    console.log(`| ${r.operation} | ${fmt(r.ours)} | ${fmt(r.comparison)} | ${r.ratio === undefined ? '' : `${r.ratio.toFixed(2)}x`} |`);
}

if (require.main === module) {
  const started = Date.now();
  runQueueBench().then(
    (rows) => {
      printRows(rows);
      console.log(`\n(${((Date.now() - started) / 1000).toFixed(1)} s)`);
    },
    (err: unknown) => {
      console.error(err);
      process.exitCode = 1;
    },
  );
}
