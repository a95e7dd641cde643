/**
 * `npm run bench:jobs-priorities`: jobs with priorities, doclayer's queue against BullMQ with `priority`
 * on Redis with AOF fsynced every second (Debian's `redis-server`, started here on a free loopback
 * port), the same jobs in one run; ratio = doclayer / BullMQ.
 *
 *   npm run bench:jobs-priorities -- [--engine memory,lmdb-fast] [--workers 1,8] [--jobs 5000]
 *
 * Each row pushes N jobs one at a time over 10 priorities, interleaved (job i has priority i % 10), so
 * that pop order differs from push order everywhere: `queue.push(job, { priority: p })` against
 * `Queue.add(name, job, { priority: 10 - p })` (BullMQ: a lower number is a higher priority, 1 the
 * highest, 0 none). Then a consumer of 1 or 8 workers handles them (`queue.consume(handler,
 * { concurrency })` | one `Worker` with that `concurrency`), timed from its start until the N-th job.
 * The handler does no work, so the rows measure the queue.
 *
 * Order is checked in both: handlers are recorded in the order they start (for doclayer, the last
 * attempt of each job's transaction, since a retried transaction runs its handlers again), and a job is
 * out of order when a job of a lower priority started before it. With every job pushed before the
 * consumer starts, a strict priority queue has none; doclayer's workers running transactions of their
 * own spread their pops over the head (docs/queue.md, "Consumers"), which trades order for conflicts.
 * Run whole, it writes its table into bench/results.md; without redis-server it says so and exits 0.
 * Rates are noisy on a shared machine: compare ratios of one run.
 */
import { Queue, Worker } from 'bullmq';
import { rate, timed } from './bullmq';
import { listArg, openEngine, type EngineName } from './redis';
import { NO_REDIS, redisServerVersion, startRedis } from './redis-server';
import { writeResultsSection } from './results-section';

const PRIORITIES = 10;

type Job = {
  readonly n: number;
  readonly p: number;
};

export interface PriorityRow {
  readonly engine: string;
  readonly operation: string;
  readonly ours: number;
  readonly bullmq: number;
  readonly ratio: number;
  /** Jobs started after a job of a lower priority (handle rows only). */
  readonly oursOutOfOrder?: number;
  readonly bullmqOutOfOrder?: number;
}

const job = (i: number): Job => ({ n: i, p: i % PRIORITIES });

/** Jobs that started after a job of a lower priority had started. */
export function outOfOrder(priorities: readonly number[]): number {
  let lowest = Infinity;
  let count = 0;
  for (const p of priorities) {
    if (p > lowest) count++;
    lowest = Math.min(lowest, p);
  }
  return count;
}

export async function runJobsPrioritiesBench(
  options: { engines?: readonly EngineName[]; workers?: readonly number[]; jobs?: number; onRow?: (r: PriorityRow) => void } = {},
): Promise<PriorityRow[]> {
  const engines = options.engines ?? ['memory', 'lmdb-fast'];
  const workersList = options.workers ?? [1, 8];
  const jobs = options.jobs ?? 5_000;
  const rows: PriorityRow[] = [];
  const server = await startRedis('everysec');
  const connection = { host: '127.0.0.1', port: server.port, maxRetriesPerRequest: null };
  let fresh = 0;
  try {
    for (const engine of engines) {
      const { docs, close } = await openEngine(engine);
      try {
        const c = docs.collection();
        const oursRun = async (workers: number, n: number) => {
          const q = c.queue<Job>(`jobs-${fresh++}`);
          const push = await timed(n, async () => {
            for (let i = 0; i < n; i++) {
              const j = job(i);
              await q.push(j, { priority: j.p });
            }
          });
          // The start order of each job's last run (a retried transaction runs its handlers again).
          const startedAt = new Map<number, number>();
          let started = 0;
          let finished!: () => void;
          const all = new Promise<void>((resolve) => (finished = resolve));
          const handle = await timed(n, async () => {
            const consumer = q.consume(
              (j) => {
                startedAt.set(j.n, started++);
                if (startedAt.size === n) finished();
              },
              { concurrency: workers },
            );
            await all;
            await consumer.stop();
          });
          const order = [...startedAt.entries()].sort((a, b) => a[1] - b[1]).map(([i]) => job(i).p);
          return { push, handle, outOfOrder: outOfOrder(order) };
        };
        const bullRun = async (workers: number, n: number) => {
          const name = `jobs-${fresh++}`;
          const queue = new Queue(name, { connection, defaultJobOptions: { removeOnComplete: true, removeOnFail: true } });
          try {
            const push = await timed(n, async () => {
              for (let i = 0; i < n; i++) {
                const j = job(i);
                await queue.add('job', j, { priority: PRIORITIES - j.p });
              }
            });
            const order: number[] = [];
            let handled = 0;
            let finished!: () => void;
            const all = new Promise<void>((resolve) => (finished = resolve));
            const handle = await timed(n, async () => {
              const worker = new Worker<Job>(
                name,
                async (j) => {
                  order.push(j.data.p);
                },
                { connection, concurrency: workers },
              );
              worker.on('completed', () => {
                if (++handled === n) finished();
              });
              await all;
              await worker.close();
            });
            return { push, handle, outOfOrder: outOfOrder(order) };
          } finally {
            await queue.obliterate({ force: true });
            await queue.close();
          }
        };
        // Warm-up (JIT, connections) on queues of their own.
        await oursRun(2, 300);
        await bullRun(2, 300);
        for (const workers of workersList) {
          const ours = await oursRun(workers, jobs);
          const bull = await bullRun(workers, jobs);
          const add = (operation: string, a: number, b: number, order?: [number, number]) => {
            const row: PriorityRow = {
              engine,
              operation,
              ours: a,
              bullmq: b,
              ratio: a / b,
              ...(order === undefined ? {} : { oursOutOfOrder: order[0], bullmqOutOfOrder: order[1] }),
            };
            rows.push(row);
            options.onRow?.(row);
          };
          add(`push ${jobs.toLocaleString('en-US')} jobs over ${PRIORITIES} priorities, one at a time`, ours.push, bull.push);
          add(`handle them, ${workers} worker${workers > 1 ? 's' : ''}`, ours.handle, bull.handle, [ours.outOfOrder, bull.outOfOrder]);
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

const count = (n: number | undefined) => (n === undefined ? '' : n.toLocaleString('en-US'));

export function prioritiesTable(rows: readonly PriorityRow[]): string[] {
  return [
    '| doclayer engine | operation | doclayer (jobs/s) | BullMQ on Redis AOF everysec (jobs/s) | ratio | out of order: doclayer | out of order: BullMQ |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: |',
    ...rows.map(
      (r) =>
        `| ${r.engine} | ${r.operation} | ${rate(r.ours)} | ${rate(r.bullmq)} | ${r.ratio.toFixed(2)}x | ${count(r.oursOutOfOrder)} | ${count(r.bullmqOutOfOrder)} |`,
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
  const jobs = Number(listArg(args, 'jobs')?.[0] ?? 5000);
  const started = Date.now();
  console.log(`jobs with priorities: doclayer vs BullMQ on Redis ${version} (AOF everysec), ${jobs} jobs per row; ratio = doclayer / BullMQ`);
  const rows = await runJobsPrioritiesBench({
    engines,
    workers,
    jobs,
    onRow: (r) =>
      console.log(
        `${r.engine.padEnd(10)} ${r.operation.padEnd(52)} ${rate(r.ours).padStart(8)} vs ${rate(r.bullmq).padStart(8)}  ${r.ratio.toFixed(2)}x` +
          (r.oursOutOfOrder === undefined ? '' : `  out of order ${count(r.oursOutOfOrder)} vs ${count(r.bullmqOutOfOrder)}`),
      ),
  });
  const lines = prioritiesTable(rows);
  console.log(`\n${lines.join('\n')}\n\n(${((Date.now() - started) / 1000).toFixed(0)} s)`);
  if (engines === undefined && workers === undefined) {
    const file = writeResultsSection('bench:jobs-priorities', [
      `Written by \`npm run bench:jobs-priorities\` on ${new Date().toISOString().slice(0, 10)}: jobs over ${PRIORITIES} priorities, doclayer's queue`,
      `consumers in process against BullMQ workers with \`priority\` on Redis ${version} with AOF everysec, ${jobs.toLocaleString('en-US')} jobs per row,`,
      'in one run on a shared 2-core machine (compare the ratios). Out of order: jobs that started after a job of a lower priority',
      '(doclayer\'s workers running their own transactions spread their pops over the head, docs/queue.md "Consumers").',
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
