/**
 * `npm run bench:bullmq`: doclayer's transactional queue consumers against what Node.js users run for
 * jobs today, BullMQ workers on Redis with AOF fsynced every second (Debian's `redis-server`, started
 * here on a free loopback port), the same jobs in one run; ratio = doclayer / BullMQ.
 *
 *   npm run bench:bullmq -- [--engine memory,lmdb-fast] [--workers 1,8] [--jobs 5000] [--rounds 3]
 *
 * Each row pushes N jobs one at a time (`queue.push` | `Queue.add`, timed as the push row), then handles
 * them with a consumer of 1 or 8 workers (`queue.consume(handler, { concurrency })` | one `Worker` with
 * that `concurrency`), timed from the consumer's start until the N-th job is done. Each row runs
 * `rounds` times, the two sides alternating, and each side's best round counts. The handler does no
 * work, so the rows measure the queue. BullMQ jobs are removed on completion (as doclayer's pop removes
 * the item). Run whole, it also writes its table into bench/results.md; without redis-server it says
 * so and exits 0. Rates are noisy on a shared machine: compare ratios of one run.
 */
import { Queue, Worker } from 'bullmq';
import { listArg, openEngine, type EngineName } from './redis';
import { NO_REDIS, redisServerVersion, startRedis } from './redis-server';
import { writeResultsSection } from './results-section';

export interface BullRow {
  readonly engine: string;
  readonly operation: string;
  readonly ours: number;
  readonly bullmq: number;
  readonly ratio: number;
}

const job = (i: number) => ({ n: i, task: 'resize-image' });

/** Items per second while `work` runs. */
export async function timed(items: number, work: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await work();
  return items / (Number(process.hrtime.bigint() - start) / 1e9);
}

export async function runBullmqBench(
  options: { engines?: readonly EngineName[]; workers?: readonly number[]; jobs?: number; rounds?: number; onRow?: (r: BullRow) => void } = {},
): Promise<BullRow[]> {
  const engines = options.engines ?? ['memory', 'lmdb-fast'];
  const workersList = options.workers ?? [1, 8];
  const jobs = options.jobs ?? 5_000;
  const rounds = options.rounds ?? 3;
  const rows: BullRow[] = [];
  const server = await startRedis('everysec');
  const connection = { host: '127.0.0.1', port: server.port, maxRetriesPerRequest: null };
  let fresh = 0;
  try {
    for (const engine of engines) {
      const { docs, close } = await openEngine(engine);
      try {
        const c = docs.collection();
        const oursRun = async (workers: number, n: number) => {
          const q = c.queue<ReturnType<typeof job>>(`jobs-${fresh++}`);
          const push = await timed(n, async () => {
            for (let i = 0; i < n; i++) await q.push(job(i));
          });
          let handled = 0;
          let finished!: () => void;
          const all = new Promise<void>((resolve) => (finished = resolve));
          const handle = await timed(n, async () => {
            const consumer = q.consume(
              () => {
                if (++handled === n) finished();
              },
              { concurrency: workers },
            );
            await all;
            await consumer.stop();
          });
          return { push, handle };
        };
        const bullRun = async (workers: number, n: number) => {
          const name = `jobs-${fresh++}`;
          const queue = new Queue(name, { connection, defaultJobOptions: { removeOnComplete: true, removeOnFail: true } });
          try {
            const push = await timed(n, async () => {
              for (let i = 0; i < n; i++) await queue.add('job', job(i));
            });
            let handled = 0;
            let finished!: () => void;
            const all = new Promise<void>((resolve) => (finished = resolve));
            const handle = await timed(n, async () => {
              const worker = new Worker(name, async () => undefined, { connection, concurrency: workers });
              worker.on('completed', () => {
                if (++handled === n) finished();
              });
              await all;
              await worker.close();
            });
            return { push, handle };
          } finally {
            await queue.obliterate({ force: true });
            await queue.close();
          }
        };
        // Warm-up (JIT, connections) on queues of their own.
        await oursRun(2, 300);
        await bullRun(2, 300);
        for (const workers of workersList) {
          // Rounds alternate the two sides; each side's best round counts (as in bench:redis), so
          // that a burst of load from other jobs on a shared machine does not decide a row.
          const ours = { push: 0, handle: 0 };
          const bull = { push: 0, handle: 0 };
          for (let round = 0; round < rounds; round++) {
            const o = await oursRun(workers, jobs);
            const b = await bullRun(workers, jobs);
            ours.push = Math.max(ours.push, o.push);
            ours.handle = Math.max(ours.handle, o.handle);
            bull.push = Math.max(bull.push, b.push);
            bull.handle = Math.max(bull.handle, b.handle);
          }
          const add = (operation: string, a: number, b: number) => {
            const row = { engine, operation, ours: a, bullmq: b, ratio: a / b };
            rows.push(row);
            options.onRow?.(row);
          };
          add(`push ${jobs.toLocaleString('en-US')} jobs, one at a time`, ours.push, bull.push);
          add(`handle them, ${workers} worker${workers > 1 ? 's' : ''}`, ours.handle, bull.handle);
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

/** A rate in whole items per second, with thousands separators. */
export const rate = (n: number) => Math.round(n).toLocaleString('en-US');

export function bullmqTable(rows: readonly BullRow[]): string[] {
  return [
    '| doclayer engine | operation | doclayer (jobs/s) | BullMQ on Redis AOF everysec (jobs/s) | ratio |',
    '| --- | --- | ---: | ---: | ---: |',
    ...rows.map((r) => `| ${r.engine} | ${r.operation} | ${rate(r.ours)} | ${rate(r.bullmq)} | ${r.ratio.toFixed(2)}x |`),
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
  const jobs = Number(listArg(args, 'jobs')?.[0] ?? 5000);
  const rounds = Number(listArg(args, 'rounds')?.[0] ?? 3);
  if (!Number.isSafeInteger(rounds) || rounds < 1) throw new Error(`--rounds: a positive integer, not ${String(listArg(args, 'rounds')?.[0])}`);
  const started = Date.now();
  console.log(
    `doclayer queue consumers vs BullMQ on Redis ${version} (AOF everysec), ${jobs} jobs per row, best of ${rounds} rounds; ratio = doclayer / BullMQ`,
  );
  const rows = await runBullmqBench({
    engines,
    workers,
    jobs,
    rounds,
    onRow: (r) =>
      console.log(
        `${r.engine.padEnd(10)} ${r.operation.padEnd(34)} ${rate(r.ours).padStart(8)} vs ${rate(r.bullmq).padStart(8)}  ${r.ratio.toFixed(2)}x`,
      ),
  });
  const lines = bullmqTable(rows);
  console.log(`\n${lines.join('\n')}\n\n(${((Date.now() - started) / 1000).toFixed(0)} s)`);
  if (engines === undefined && workers === undefined) {
    const file = writeResultsSection('bench:bullmq', [
      `Written by \`npm run bench:bullmq\` on ${new Date().toISOString().slice(0, 10)}: doclayer's queue consumers in process against BullMQ workers`,
      `on Redis ${version} with AOF everysec, ${jobs.toLocaleString('en-US')} jobs per row, each side's best of ${rounds} alternating rounds, in one run on a shared 2-core machine (compare the ratios).`,
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
