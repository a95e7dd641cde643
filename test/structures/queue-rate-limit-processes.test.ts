/**
 * A rate limit holds across processes: three processes consume one rate-limited queue in one LMDB
 * folder, each recording (in the consumer's transaction, with the job) the window its take was counted
 * in. Every job is handled exactly once, and no window holds more than `max` jobs, by what the
 * processes recorded.
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

describe('Queue rate limits across processes [lmdb]', () => {
  it('three processes consuming one queue take at most max jobs per window, each job once', async () => {
    const path = join(root, 'store');
    const setup = await open({ path });
    const jobs = setup.collection().queue<number>('jobs');
    await jobs.setRateLimit(LIMIT);
    await jobs.pushMany(Array.from({ length: JOBS }, (_, i) => i));
    await setup.close();

    workers.push(...Array.from({ length: 3 }, () => startWorker(script, [path, String(LIMIT.intervalMs)])));
    await Promise.all(workers.map((worker) => worker.succeeded(45_000)));
    const consumed = workers.map((worker) => Number(/consumed (\d+) failures 0/.exec(worker.lines.join('\n'))?.[1]));
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
  });
});
