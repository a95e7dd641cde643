/**
 * Schedulers of one queue in three processes on one LMDB folder, one of them killed half-way: every
 * occurrence of an interval schedule is enqueued exactly once. The assertions are on what the store
 * holds at the end.
 */
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join, relative, resolve } from 'path';
import { open, type DocLayer } from '../../src';
import { startWorker, type Worker } from '../kv/lmdb/child-processes';
import { scheduledItems } from '../support/queue-scheduled';
import { transpileTree } from '../support/transpile';

jest.setTimeout(60_000);

const REPO = resolve(__dirname, '../..');
const EVERY_MS = 50;
const RUN_MS = 1_500;

let root: string;
let script: string;
const workers: Worker[] = [];
let docs: DocLayer | undefined;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'doclayer-repeat-processes-'));
  const source = join(__dirname, 'repeat-worker.ts');
  transpileTree([source], REPO, join(root, 'compiled'));
  script = join(root, 'compiled', relative(REPO, source)).replace(/\.ts$/, '.js');
});

afterEach(async () => {
  for (const worker of workers.splice(0)) worker.kill();
  await docs?.close();
  docs = undefined;
});

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

describe('Queue schedulers in three processes, one killed [lmdb]', () => {
  it('enqueue every occurrence of an interval schedule exactly once', async () => {
    const path = join(root, 'store');
    docs = await open({ path });
    const q = docs.collection().queue('q');
    for (let i = 0; i < 3; i++) workers.push(startWorker(script, [path, String(RUN_MS)]));
    await Promise.all(workers.map((w) => w.waitFor((lines) => lines.includes('running'), 30_000, 'the worker to start')));
    // Created once every scheduler runs: they learn of it by their watch, from another process.
    const info = await q.repeat('tick', { everyMs: EVERY_MS }, 'tick');
    // One process dies half-way (SIGKILL, maybe inside a pass): the others go on.
    await new Promise((resolve) => setTimeout(resolve, RUN_MS / 2));
    const [victim, ...survivors] = workers;
    victim.kill('SIGKILL');
    await victim.exited;
    await Promise.all(survivors.map((w) => w.succeeded(30_000)));

    const ats = (await scheduledItems(docs)).map(([, at]) => at);
    // No occurrence twice, none skipped, from the first on.
    expect(ats).toEqual(Array.from({ length: ats.length }, (_, i) => (info.next as number) + EVERY_MS * i));
    // The schedulers ran for most of RUN_MS after the schedule was made (process start-up aside).
    expect(ats.length).toBeGreaterThanOrEqual(10);
    const [listed] = await (async () => {
      const out = [];
      for await (const r of q.repeats()) out.push(r);
      return out;
    })();
    expect(listed.count).toBe(ats.length);
  });
});
