/**
 * A rate limit holds across processes: three processes consume one rate-limited queue in one LMDB
 * folder, each recording (in the consumer's transaction, with the job) the window its take was counted
 * in. Every job is handled exactly once, and no window holds more than `max` jobs, by what the
 * processes recorded; also when the processes started on the queue without a limit (and remembered
 * that) and another process set it later.
 */
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join, relative, resolve } from 'path';
import { open } from '../../src';
import { startWorker, type Worker } from '../kv/lmdb/child-processes';
import { transpileTree } from '../support/transpile';

jest.setTimeout(60_000);

const REPO = resolve(__dirname, '../..');
const JOBS = 120;
const LIMIT = { max: 15, intervalMs: 100 };

let root: string;
let script: string;
const workers: Worker[] = [];

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'doclayer-rate-limit-'));
  const source = join(__dirname, 'rate-limit-worker.ts');
  transpileTree([source], REPO, join(root, 'compiled'));
  script = join(root, 'compiled', relative(REPO, source)).replace(/\.ts$/, '.js');
});

afterEach(() => {
  for (const worker of workers.splice(0)) worker.kill();
});

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

/** Starts three workers on the store at `path`, consuming `JOBS` jobs in all. */
function startWorkers(path: string): Worker[] {
  const started = Array.from({ length: 3 }, () => startWorker(script, [path, String(LIMIT.intervalMs), String(JOBS)]));
  workers.push(...started);
  return started;
}

/** Every job handled once, by the workers' reports and the store, and no window over `LIMIT.max`. */
async function checkRun(path: string, running: readonly Worker[]): Promise<void> {
  await Promise.all(running.map((worker) => worker.succeeded(45_000)));
  // A worker whose handler failed (a job handled twice fails its insert) says so, with the errors.
  const reports = running.map((worker) => ({ line: worker.lines.find((line) => line.startsWith('consumed ')), stderr: worker.errors }));
  expect(reports.filter(({ line }) => line === undefined || !line.endsWith(' failures 0'))).toEqual([]);
  const consumed = reports.map(({ line }) => Number(/consumed (\d+)/.exec(line!)?.[1]));
  expect(consumed.reduce((a, b) => a + b, 0)).toBe(JOBS);
  const docs = await open({ path });
  try {
    const c = docs.collection();
    const perWindow = new Map<number, number>();
    const done = new Set<string>();
    for await (const item of c.scan()) {
      const id = String(item.id);
      if (!id.startsWith('done-')) continue;
      done.add(id);
      const { window } = item.content as { window: number };
      perWindow.set(window, (perWindow.get(window) ?? 0) + 1);
    }
    expect(done.size).toBe(JOBS);
    expect(Math.max(...perWindow.values())).toBeLessThanOrEqual(LIMIT.max);
    // The limit mattered: the jobs needed at least JOBS / max windows.
    expect(perWindow.size).toBeGreaterThanOrEqual(JOBS / LIMIT.max);
    expect(await c.queue('jobs').size()).toBe(0);
    expect(await c.queue('jobs.dead').size()).toBe(0);
  } finally {
    await docs.close();
  }
}

describe('Queue rate limits across processes [lmdb]', () => {
  it('three processes consuming one queue take at most max jobs per window, each job once', async () => {
    const path = join(root, 'limited-first');
    const setup = await open({ path });
    const jobs = setup.collection().queue<number>('jobs');
    await jobs.setRateLimit(LIMIT);
    await jobs.pushMany(Array.from({ length: JOBS }, (_, i) => i));
    await setup.close();
    await checkRun(path, startWorkers(path));
  });

  it('processes that knew the queue had no limit obey one set by another process', async () => {
    const path = join(root, 'limited-later');
    const setup = await open({ path });
    const jobs = setup.collection().queue<number>('jobs');
    // The workers start on an empty queue without a limit: their idle takes find none.
    await jobs.push(-1);
    expect(await jobs.pop()).toBe(-1);
    const running = startWorkers(path);
    await Promise.all(running.map((worker) => worker.waitFor((lines) => lines.includes('running'), 30_000, 'the worker to start')));
    await new Promise((resolve) => setTimeout(resolve, 200));
    await jobs.setRateLimit(LIMIT);
    await jobs.pushMany(Array.from({ length: JOBS }, (_, i) => i));
    await setup.close();
    await checkRun(path, running);
  });
});
