/**
 * `npm run bench:jobs-ratelimit`: a rate-limited queue consumed by 1 and 8 workers, doclayer's
 * (`queue.setRateLimit({ max, intervalMs })`, exact fixed windows stored with the queue) against BullMQ
 * workers with `limiter: { max, duration }` on Redis with AOF fsynced every second, the same jobs in
 * one run.
 *
 *   npm run bench:jobs-ratelimit -- [--engine memory,lmdb-fast] [--workers 1,8] [--jobs 3000] [--max 100] [--interval 100]
 *
 * Each row pushes N jobs, then starts a consumer of 1 or 8 workers (`queue.consume(handler, { concurrency })`
 * | one `Worker` with that `concurrency`) and times it until the N-th job is handled. The limit
 * (default 100 jobs per 100 ms, 1,000 jobs/s) is well below what either side does without one here
 * (bench:bullmq), so it binds. Reported per row: jobs/s, as a share of the limit, the ratio doclayer / BullMQ, and the
 * largest number of jobs taken in one window:
 * - doclayer: by its own windows, the slot keys set by the transactions that committed (seen through a
 *   `CountingEngine` around the engine, which costs doclayer a little), whose sum must equal the jobs
 *   handled;
 * - BullMQ: its limiter's windows rebuilt (a window opens at the first job after the last one closed
 *   and lasts `duration`: the key's PEXPIRE) from each job's `processedOn`, the worker's clock when it
 *   asked for the job. BullMQ counts in Redis, atomically in its Lua scripts (INCR, PEXPIRE at the
 *   first job of a window), so its own count never passes max: a figure over max here comes from the
 *   gap between the worker's timestamps and Redis's clock, not from its limiter;
 * and for both, the most jobs started within any `intervalMs` (doclayer: the handler's last run for
 * the job; BullMQ: `processedOn`), a sliding window: up to 2x max is what a window limiter allows. Without redis-server it says so and exits 0. Rates are noisy on
 * a shared machine: compare within one run.
 */
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { Queue as BullQueue, Worker } from 'bullmq';
import { open, type DocLayer } from '../src';
import type { DocumentKeys } from '../src/document/keys/layout';
import { Database } from '../src/kv/contract/database';
import { CountingEngine } from '../src/kv/counting-engine';
import { LmdbEngine } from '../src/kv/lmdb/lmdb-engine';
import { MemoryEngine } from '../src/kv/memory/memory-engine';
import { RateLimitKeys } from '../src/structures/queue/rate-limit';
import { unpackFrom } from '../src/tuple/pack';
import { rate } from './bullmq';
import { listArg, type EngineName } from './redis';
import { NO_REDIS, redisServerVersion, startRedis } from './redis-server';
import { writeResultsSection } from './results-section';

export interface RateLimitRow {
  readonly engine: string;
  readonly workers: number;
  readonly ours: number;
  readonly bullmq: number;
  readonly ratio: number;
  /** Largest count in one of the system's own windows. */
  readonly oursWindowMax: number;
  readonly bullWindowMax: number;
  /** Most handler starts within any interval. */
  readonly oursSlidingMax: number;
  readonly bullSlidingMax: number;
}

interface Limit {
  readonly max: number;
  readonly intervalMs: number;
}

const job = (i: number) => ({ n: i, task: 'call-api' });

/** The most times within any `intervalMs` (sorted times). */
function slidingMax(times: readonly number[], intervalMs: number): number {
  let best = 0;
  let from = 0;
  for (let to = 0; to < times.length; to++) {
    while (times[to] - times[from] >= intervalMs) from++;
    best = Math.max(best, to - from + 1);
  }
  return best;
}

/** The largest count in BullMQ's limiter windows: each opens at the first job after the last one closed. */
function limiterWindowMax(times: readonly number[], intervalMs: number): number {
  let best = 0;
  let opened = -Infinity;
  let count = 0;
  for (const t of times) {
    if (t >= opened + intervalMs) {
      opened = t;
      count = 0;
    }
    best = Math.max(best, ++count);
  }
  return best;
}

/** doclayer on `engine` through a CountingEngine (a fresh LMDB folder for the lmdb ones, removed by `close`). */
async function openCounted(engine: EngineName): Promise<{ docs: DocLayer; counter: CountingEngine; close: () => Promise<void> }> {
  const path = engine === 'memory' ? undefined : mkdtempSync(join(tmpdir(), 'doclayer-bench-lmdb-'));
  const inner = path === undefined ? new MemoryEngine() : new LmdbEngine({ path, durability: engine === 'lmdb-fast' ? 'fast' : 'sync' });
  const counter = new CountingEngine(inner);
  const database = new Database(counter);
  const docs = await open({ database });
  return {
    docs,
    counter,
    close: async () => {
      await docs.close();
      await database.close();
      if (path !== undefined) rmSync(path, { recursive: true, force: true });
    },
  };
}

export async function runRateLimitBench(
  options: {
    engines?: readonly EngineName[];
    workers?: readonly number[];
    jobs?: number;
    limit?: Limit;
    onRow?: (r: RateLimitRow) => void;
  } = {},
): Promise<RateLimitRow[]> {
  const engines = options.engines ?? ['memory', 'lmdb-fast'];
  const workersList = options.workers ?? [1, 8];
  const jobs = options.jobs ?? 3_000;
  const limit = options.limit ?? { max: 100, intervalMs: 100 };
  const rows: RateLimitRow[] = [];
  const server = await startRedis('everysec');
  const connection = { host: '127.0.0.1', port: server.port, maxRetriesPerRequest: null };
  let fresh = 0;
  try {
    for (const engine of engines) {
      const { docs, counter, close } = await openCounted(engine);
      try {
        const c = docs.collection();
        const oursRun = async (workers: number, n: number) => {
          const id = `jobs-${fresh++}`;
          const q = c.queue<ReturnType<typeof job>>(id);
          await q.setRateLimit(limit);
          for (let i = 0; i < n; i += 500) await q.pushMany(Array.from({ length: Math.min(500, n - i) }, (_, k) => job(i + k)));
          const doc = (await docs.transact(async (tr) => c.structureAccess().keysToRead(tr, id))) as DocumentKeys;
          const keys = new RateLimitKeys(doc);
          // When the handler last ran for each job: a transaction that is retried runs its handlers again,
          // and the last run is the one that committed.
          const startOf = new Map<number, number>();
          let finished!: () => void;
          const all = new Promise<void>((resolve) => (finished = resolve));
          let seconds = 0;
          const { attempts } = await counter.measure(async () => {
            const started = process.hrtime.bigint();
            const consumer = q.consume(
              (j) => {
                startOf.set(j.n, Date.now());
                if (startOf.size === n) finished();
              },
              { concurrency: workers },
            );
            await all;
            // Every job handled once: its transaction committed.
            while ((await q.size()) > 0) await new Promise((resolve) => setTimeout(resolve, 1));
            seconds = Number(process.hrtime.bigint() - started) / 1e9;
            await consumer.stop();
          });
          const starts = [...startOf.values()];
          // The slots claimed per window, by the transactions that committed.
          const perWindow = new Map<number, number>();
          let claimed = 0;
          for (const attempt of attempts) {
            if (attempt.commit !== 'committed') continue;
            for (const { key } of attempt.sets) {
              if (key.length <= keys.slots.length || key.compare(keys.slots, 0, keys.slots.length, 0, keys.slots.length) !== 0) continue;
              const window = unpackFrom(key, keys.slots.length)[0] as number;
              perWindow.set(window, (perWindow.get(window) ?? 0) + 1);
              claimed++;
            }
          }
          if (claimed !== n) throw new Error(`doclayer: ${claimed} slots claimed for ${n} jobs handled`);
          starts.sort((a, b) => a - b);
          await q.clear();
          return { rate: n / seconds, windowMax: Math.max(...perWindow.values()), slidingMax: slidingMax(starts, limit.intervalMs) };
        };
        const bullRun = async (workers: number, n: number) => {
          const name = `jobs-${fresh++}`;
          const queue = new BullQueue(name, { connection, defaultJobOptions: { removeOnComplete: true, removeOnFail: true } });
          try {
            for (let i = 0; i < n; i += 500) {
              await queue.addBulk(Array.from({ length: Math.min(500, n - i) }, (_, k) => ({ name: 'job', data: job(i + k) })));
            }
            const starts: number[] = [];
            let handled = 0;
            let finished!: () => void;
            const all = new Promise<void>((resolve) => (finished = resolve));
            const started = process.hrtime.bigint();
            const worker = new Worker(
              name,
              async (j) => {
                // When the limiter counted the job (moveToActive's timestamp).
                starts.push(j.processedOn ?? Date.now());
              },
              { connection, concurrency: workers, limiter: { max: limit.max, duration: limit.intervalMs } },
            );
            worker.on('completed', () => {
              if (++handled === n) finished();
            });
            await all;
            const seconds = Number(process.hrtime.bigint() - started) / 1e9;
            await worker.close();
            starts.sort((a, b) => a - b);
            return { rate: n / seconds, windowMax: limiterWindowMax(starts, limit.intervalMs), slidingMax: slidingMax(starts, limit.intervalMs) };
          } finally {
            await queue.obliterate({ force: true });
            await queue.close();
          }
        };
        // Warm-up (JIT, connections) on queues of their own.
        await oursRun(2, Math.min(limit.max * 2, 400));
        await bullRun(2, Math.min(limit.max * 2, 400));
        for (const workers of workersList) {
          const ours = await oursRun(workers, jobs);
          const bull = await bullRun(workers, jobs);
          const row: RateLimitRow = {
            engine,
            workers,
            ours: ours.rate,
            bullmq: bull.rate,
            ratio: ours.rate / bull.rate,
            oursWindowMax: ours.windowMax,
            bullWindowMax: bull.windowMax,
            oursSlidingMax: ours.slidingMax,
            bullSlidingMax: bull.slidingMax,
          };
          rows.push(row);
          options.onRow?.(row);
        }
      } finally {
        await close();
      }
    }
  } finally {
    await server.stop();
  }
  return rows;
}

const share = (n: number, limit: Limit) => `${Math.round((100 * n) / ((limit.max * 1000) / limit.intervalMs))}%`;

export function rateLimitTable(rows: readonly RateLimitRow[], limit: Limit): string[] {
  return [
    '| doclayer engine | workers | doclayer (jobs/s, of the limit) | BullMQ (jobs/s, of the limit) | ratio | largest window: doclayer / BullMQ | most in any interval (sliding): doclayer / BullMQ |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows.map(
      (r) =>
        `| ${r.engine} | ${r.workers} | ${rate(r.ours)} (${share(r.ours, limit)}) | ${rate(r.bullmq)} (${share(r.bullmq, limit)}) | ${r.ratio.toFixed(2)}x | ` +
        `${r.oursWindowMax} / ${r.bullWindowMax} (max ${limit.max}) | ${r.oursSlidingMax} / ${r.bullSlidingMax} |`,
    ),
  ];
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const version = redisServerVersion();
  if (version === undefined) {
    console.log(NO_REDIS);
    return;
  }
  const engines = listArg(args, 'engine') as EngineName[] | undefined;
  for (const e of engines ?? [])
    if (!['memory', 'lmdb-fast', 'lmdb-sync'].includes(e)) throw new Error(`--engine: memory, lmdb-fast or lmdb-sync, not ${String(e)}`);
  const workers = listArg(args, 'workers')?.map(Number);
  const jobs = Number(listArg(args, 'jobs')?.[0] ?? 3000);
  const limit = { max: Number(listArg(args, 'max')?.[0] ?? 100), intervalMs: Number(listArg(args, 'interval')?.[0] ?? 100) };
  const started = Date.now();
  console.log(
    `rate-limited queue consumers, ${limit.max} jobs per ${limit.intervalMs} ms: doclayer vs BullMQ on Redis ${version} (AOF everysec), ${jobs} jobs per row; ratio = doclayer / BullMQ`,
  );
  const rows = await runRateLimitBench({
    engines,
    workers,
    jobs,
    limit,
    onRow: (r) => console.log(rateLimitTable([r], limit)[2]),
  });
  const lines = rateLimitTable(rows, limit);
  console.log(`\n${lines.join('\n')}\n\n(${((Date.now() - started) / 1000).toFixed(0)} s)`);
  if (args.length === 0) {
    const file = writeResultsSection('bench:jobs-ratelimit', [
      `Written by \`npm run bench:jobs-ratelimit\` on ${new Date().toISOString().slice(0, 10)}: a queue limited to ${limit.max} jobs per ${limit.intervalMs} ms`,
      `(${rate((limit.max * 1000) / limit.intervalMs)} jobs/s) consumed by doclayer's consumers in process and by BullMQ workers with \`limiter\` on Redis ${version}`,
      `with AOF everysec, ${jobs.toLocaleString('en-US')} jobs per row, in one run on a shared 2-core machine (compare the ratios). "Largest window": the most`,
      "jobs taken in one of the limiter's own windows: doclayer's fixed windows, counted by the slot keys its committed transactions set; BullMQ's",
      "windows (opening at the first job after the last one closed) rebuilt from each job's `processedOn`, the worker's clock: BullMQ counts",
      'atomically in Redis, so a figure over max in its column comes from those timestamps, not from its limiter. "Sliding": the most jobs started',
      'within any interval (a window limit allows up to 2x max there). The machine was loaded by other work: rates below the limit are CPU-bound.',
      '',
      ...lines,
    ]);
    console.log(`wrote ${file}`);
  }
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
