/**
 * A consumer processes each change exactly once even when its processes are killed (SIGKILL, on the
 * lmdb engine) in the middle of batches, while other processes run the same consumer and new changes
 * keep coming. Nothing here depends on timing but the moments of the kills: the assertions are on
 * what the store holds at the end.
 */
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join, relative, resolve } from 'path';
import { open, type DocLayer } from '../../src';
import { startWorker, type Worker } from '../kv/lmdb/child-processes';
import { Random, testSeed } from '../support/random';
import { transpileTree } from '../support/transpile';

jest.setTimeout(120_000);

const REPO = resolve(__dirname, '../..');
const DOCUMENTS = 40;

let root: string;
let script: string;
const workers: Worker[] = [];
let docs: DocLayer | undefined;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'doclayer-consumer-crash-'));
  const source = join(__dirname, 'consumer-worker.ts');
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

function start(mode: 'follow' | 'drain', path: string): Worker {
  const worker = startWorker(script, [mode, path]);
  workers.push(worker);
  return worker;
}

describe('ChangeConsumer.process in processes killed mid-batch [lmdb]', () => {
  it('handles every change exactly once across SIGKILLs, with two processes running the consumer', async () => {
    const random = new Random(testSeed(1515));
    const path = join(root, 'store');
    docs = await open({ path });
    await docs.createCollection('app.items', { history: true });
    const items = docs.collection('app.items');
    const out = docs.collection('app.out');
    for (let i = 0; i < DOCUMENTS / 2; i++) await items.upsert(`d${i}`, { i });

    let running = [start('follow', path), start('follow', path)];
    for (let round = 0; round < 3; round++) {
      await Promise.all(running.map((worker) => worker.waitFor((lines) => lines.includes('running'), 60_000, 'the worker to start')));
      for (let i = 0; i < DOCUMENTS / 6; i++) await items.upsert(`d${random.int(DOCUMENTS)}`, { round, i });
      await new Promise((wake) => setTimeout(wake, random.between(20, 120)));
      const victim = running[random.int(2)];
      victim.kill('SIGKILL');
      await victim.exited;
      running = [running.find((worker) => worker !== victim) as Worker, start('follow', path)];
    }
    for (const worker of running) worker.kill('SIGKILL');
    await Promise.all(running.map((worker) => worker.exited));

    const drain = start('drain', path);
    await drain.succeeded(60_000);

    // Every change the feed holds now was handled once: one record per token, and the count agrees.
    const records = [];
    for await (const item of out.scan()) if (item.id !== 'total') records.push(item);
    expect((await out.get('total')).content).toBe(records.length);
    const ids = new Set(records.map((record) => (record.content as { id: string }).id));
    const written = new Set<string>();
    for await (const item of items.scan()) written.add(String(item.id));
    expect(ids).toEqual(written);
    // Every record is a change the consumer passed; the consumer's position is the feed's end.
    const feed = [];
    for await (const change of items.changes()) feed.push(change.token);
    expect(await items.consumer('copier').position()).toBe(feed.at(-1));
    expect(records.map((record) => String(record.id))).toEqual(expect.arrayContaining(feed));
  });
});
