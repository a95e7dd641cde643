import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { readInt64LE } from '../../src/kv/contract/bytes';
import type { Database } from '../../src/kv/contract/database';
import { openLmdbDatabase } from '../../src/kv/lmdb';
import { LmdbStore } from '../../src/kv/lmdb/lmdb-store';
import { settledWithin } from '../support/kv-assertions';
import { compileWorker, startWorker, type Worker } from './lmdb/child-processes';

/**
 * Several processes on one store. Timeouts are generous (a loaded 2-core machine runs these), and no
 * assertion depends on timing: only on what the store holds at the end.
 */

jest.setTimeout(120_000);

let root: string;
let script: string;
let stores = 0;
const workers: Worker[] = [];
const databases: Database[] = [];

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'doclayer-lmdb-multiprocess-'));
  script = compileWorker(join(root, 'compiled'));
});

afterEach(async () => {
  for (const worker of workers.splice(0)) worker.kill();
  await Promise.all(databases.splice(0).map((db) => db.close()));
});

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

function newStore(): string {
  return join(root, `store-${stores++}`);
}

function open(path: string): Database {
  const db = openLmdbDatabase({ path });
  databases.push(db);
  return db;
}

function start(...args: string[]): Worker {
  const worker = startWorker(script, args);
  workers.push(worker);
  return worker;
}

describe('lmdb engine: several processes on one store', () => {
  it('loses no update: contended read-modify-writes and phantom-prone range reads in 4 processes end exactly right', async () => {
    const path = newStore();
    const processes = 4;
    const rounds = 15;
    const running = Array.from({ length: processes }, (_, id) => start('increment', path, `p${id}`, String(rounds)));
    await Promise.all(running.map((worker) => worker.waitFor((lines) => lines.includes('ready'), 60_000, 'the worker to be ready')));
    const db = open(path);
    await db.set('go', '');
    await Promise.all(running.map((worker) => worker.succeeded(100_000)));
    const attempts = running.map((worker) => Number(worker.lines.find((line) => line.startsWith('done '))!.split(' ')[1]));

    const total = processes * rounds;
    const items = await db.getRangeAll('items/', 'items0');
    // Serializable inserts each saw all the items inserted before them: every count from 0 to total - 1
    // once. A missed phantom shows as a count seen twice.
    const seenCounts = items.map((kv) => Number(kv.value.toString())).sort((a, b) => a - b);
    // As numbers: a failure holding a BigInt cannot be sent from a jest worker, and its message is lost.
    expect({ counter: Number(readInt64LE(await db.get('counter'))), seenCounts }).toEqual({
      counter: total,
      seenCounts: Array.from({ length: total }, (_, i) => i),
    });
    // The processes did contend: some transactions conflicted and ran again.
    expect(attempts.reduce((a, b) => a + b, 0)).toBeGreaterThan(2 * total);
  });

  it('fires a watch in this process on a commit in another', async () => {
    const path = newStore();
    const db = open(path);
    await db.set('signal', 'before');
    const tr = db.createTransaction();
    const watch = tr.watch('signal');
    await tr.commit();
    expect((await settledWithin(watch.promise, 100)).state).toBe('pending');
    await start('set', path, 'signal', 'after').succeeded(60_000);
    expect(await settledWithin(watch.promise, 30_000)).toEqual({ state: 'fulfilled', value: true });
    expect(String(await db.get('signal'))).toBe('after');
  });

  it('reads a range again from memory only while no other process has written into it', async () => {
    const path = newStore();
    const db = open(path);
    await db.set('doc/a', '1');
    const values = async () => (await db.getRangeAll('doc/', 'doc0')).map((kv) => `${kv.key.toString()}=${kv.value.toString()}`);
    // Read twice: the second answered by the range cache.
    expect(await values()).toEqual(['doc/a=1']);
    expect(await values()).toEqual(['doc/a=1']);
    await start('set', path, 'elsewhere', 'x').succeeded(60_000);
    expect(await values()).toEqual(['doc/a=1']);
    await start('set', path, 'doc/a', '2').succeeded(60_000);
    expect(await values()).toEqual(['doc/a=2']);
    await start('set', path, 'doc/b', '3').succeeded(60_000);
    expect(await values()).toEqual(['doc/a=2', 'doc/b=3']);
  });

  it('fires a watch in another process on a commit in this one', async () => {
    const path = newStore();
    const db = open(path);
    const watcher = start('watch', path, 'signal');
    await watcher.waitFor((lines) => lines.includes('watching'), 60_000, 'the watch to start');
    await db.set('signal', 'now');
    await watcher.waitFor((lines) => lines.some((line) => line.startsWith('fired')), 30_000, 'the watch to fire');
    expect(watcher.lines).toContain('fired true');
    await watcher.succeeded(30_000);
  });

  it('frees the reader slot of a process killed in the middle of a read', async () => {
    const path = newStore();
    const store = LmdbStore.open(path, 1n);
    try {
      const reader = start('read', path);
      await reader.waitFor((lines) => lines.includes('reading'), 60_000, 'the read');
      reader.kill('SIGKILL');
      await reader.exited;
      // Its slot would pin the snapshot it was reading, in every process, until freed.
      expect(store.clearStaleReaders()).toBe(1);
      expect(store.clearStaleReaders()).toBe(0);
    } finally {
      await store.close();
    }
  });

  it.each([
    ['a new store', false],
    // This process keeps the gate of a store it closed open: it must not use it for the new store.
    ['a store deleted and made again since this process closed it', true],
  ])('loses no commit of a process while another opens and closes the store, again and again (%s)', async (_, remade) => {
    // LMDB as the package builds it resets the store's transaction counter when it opens, without the
    // write lock: a commit landing meanwhile was lost (the next one overwrote it), 7 to 17 of these
    // 1,500 adds. The store's gate keeps opens and commits apart.
    const path = newStore();
    if (remade) {
      await LmdbStore.open(path, 1n).close();
      rmSync(path, { recursive: true, force: true });
    }
    const count = 1500;
    const committer = start('commits', path, String(count));
    let opens = 0;
    let done = false;
    const exited = committer.exited.then(() => (done = true));
    while (!done) {
      const store = LmdbStore.open(path, 1n);
      await store.close();
      opens++;
      // A turn of the event loop, where the child's exit is seen (closing may settle in microtasks).
      await new Promise((resolve) => setImmediate(resolve));
    }
    await exited;
    await committer.succeeded(10_000);
    const db = open(path);
    const retries = committer.lines.filter((line) => line.startsWith('retry '));
    const maybeApplied = retries.filter((line) => line.startsWith('retry 1021 ')).length;
    const other = Number(readInt64LE(await db.get('other')));
    expect({ other, retries, inBounds: other >= count && other <= count + maybeApplied }).toEqual({ other, retries, inBounds: true });
    expect(opens).toBeGreaterThan(20);
  });

  it('lets two processes open, write and close one store again and again', async () => {
    // The package's LMDB destroys the shared mutexes of lock.mdb when the last process closes the
    // environment; one opening at that moment kept them and failed every open from then on ("Invalid
    // argument"), in both processes, within a few to about 130 cycles. The store closes holding its
    // gate, and keeps its gate open.
    const path = newStore();
    const cyclers = [start('cycle', path, '2500'), start('cycle', path, '2500')];
    await Promise.all(cyclers.map((cycler) => cycler.succeeded(60_000)));
    const results = cyclers.map((cycler) => {
      const [, succeeded, failed, ...first] = cycler.lines.find((line) => line.startsWith('cycled '))!.split(' ');
      return { succeeded: Number(succeeded), failed: Number(failed), first: first.join(' ') };
    });
    expect(results.map(({ failed, first }) => ({ failed, first }))).toEqual([
      { failed: 0, first: '' },
      { failed: 0, first: '' },
    ]);
    for (const { succeeded } of results) expect(succeeded).toBeGreaterThan(20);
  });

  describe('a process killed with SIGKILL in the middle of a stream of commits', () => {
    for (const durability of ['sync', 'fast'] as const) {
      it(`(${durability}) loses no commit that had resolved, leaves none half-applied, and does not stop the others`, async () => {
        const path = newStore();
        const bystander = start('commits', path, '400');
        const victim = start('stream', path, durability, '4');
        const reported = () => victim.lines.filter((line) => line.startsWith('committed ')).length;
        await victim.waitFor(() => reported() >= 60, 60_000, '60 reported commits');
        // At a random moment of the stream, so that the kill lands anywhere in a commit.
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 50));
        victim.kill('SIGKILL');
        const { signal } = await victim.exited;
        expect(signal).toBe('SIGKILL');
        const resolved = victim.lines.filter((line) => line.startsWith('committed ')).map((line) => Number(line.split(' ')[1]));

        // The other process carries on to the end, through the lock the victim may have held.
        await bystander.succeeded(100_000);

        const db = open(path);
        const bySeq = new Map<number, Map<string, string>>();
        for (const { key, value } of await db.getRangeAll('tx/', 'tx0')) {
          const [, tag, part] = key.toString().split('/');
          const seq = Number(tag);
          if (!bySeq.has(seq)) bySeq.set(seq, new Map());
          bySeq.get(seq)!.set(part, value.toString().split(':')[0]);
        }
        const missing = resolved.filter((seq) => !bySeq.has(seq));
        const partial = [...bySeq].filter(([seq, parts]) => parts.size !== 3 || [...parts.values()].some((v) => v !== String(seq)));
        expect({ missing, partial: partial.map(([seq]) => seq) }).toEqual({ missing: [], partial: [] });
        // Each of its 400 adds counted once, except that one retried after commit_unknown_result (1021)
        // may have been applied before (the contract: an add is not idempotent). An add counted twice
        // without such a retry, or one lost, fails here; the retried errors go with the count.
        const retries = bystander.lines.filter((line) => line.startsWith('retry '));
        const maybeApplied = retries.filter((line) => line.startsWith('retry 1021 ')).length;
        const other = Number(readInt64LE(await db.get('other')));
        expect({ other, retries, inBounds: other >= 400 && other <= 400 + maybeApplied }).toEqual({ other, retries, inBounds: true });
        // And this process can still commit.
        await db.set('after-crash', 'ok');
        expect(String(await db.get('after-crash'))).toBe('ok');
      });
    }
  });
});
