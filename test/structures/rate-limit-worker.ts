/**
 * One process of the multi-process rate-limit tests, run as `node rate-limit-worker.js <store folder>
 * <intervalMs> <jobs>`: it says `running`, then consumes queue `jobs` of the default collection with one
 * worker, recording in the consumer's transaction a document `done-<job>` (an insert: a job handled
 * twice fails) holding the window its take was counted in, and counting the jobs handled (counter
 * `handled`), until that count reaches `<jobs>`; then it says `consumed <count> failures <count>`.
 */
import { writeSync } from 'fs';
import { open } from '../../src';

async function main(): Promise<void> {
  const [path, interval, jobs] = process.argv.slice(2);
  const intervalMs = Number(interval);
  const docs = await open({ path });
  const c = docs.collection();
  const handled = c.counter('handled');
  // One worker, so the clock's last reading is the one its current take used.
  let last = 0;
  const q = c.queue<number>('jobs', { now: () => (last = Date.now()) });
  const consumer = q.consume(
    async (job, tr) => {
      await c.insert({ window: Math.floor(last / intervalMs), pid: process.pid }, { id: `done-${job}`, tr });
      await handled.add(1, { tr });
    },
    // No scheduler of repeatable jobs beside the worker: it would read the clock too. A handler's
    // failure goes to stderr, which the test shows when a worker reports failures.
    {
      batchSize: 3,
      schedules: false,
      onError: (error, job) =>
        process.stderr.write(`job ${String(job)}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`),
    },
  );
  writeSync(1, 'running\n');
  while ((await handled.get()) < Number(jobs)) await new Promise((resolve) => setTimeout(resolve, 10));
  const stats = await consumer.stop();
  writeSync(1, `consumed ${stats.consumed} failures ${stats.failures}\n`);
  await docs.close();
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
