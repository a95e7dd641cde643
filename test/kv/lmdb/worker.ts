/**
 * One process of the lmdb engine's multi-process and crash tests, run as
 * `node worker.js <mode> <store folder> ...`. It reports on stdout, one line per event, written
 * synchronously so that a line the parent has read describes something that already happened.
 *
 * Modes:
 * - `increment <path> <id> <rounds>`: says `ready` and waits for the key `go`; then `rounds` contended
 *   read-modify-write transactions on `counter`, and `rounds` that read the `items/` range and insert
 *   an item whose value is how many items they saw, each with an await between its reads and its
 *   writes; then `done <attempts>`.
 * - `stream <path> <sync|fast> <writers>`: commits forever from `writers` concurrent loops, each
 *   transaction writing `tx/<seq>/a`, `/b`, `/c`; after each commit resolves, `committed <seq>`.
 * - `commits <path> <count>`: `count` increments of `other`, one after another, saying `retry <code>
 *   <message>` for each error it retries; then `done`.
 * - `cycle <path> <ms>`: for `ms` milliseconds, opens the store, sets a key, closes it, again and again;
 *   then `cycled <succeeded> <failed> <first error>`.
 * - `watch <path> <key>`: watches `key`, says `watching`, then `fired <true|false>` when it settles.
 * - `set <path> <key> <value>`: sets `key`; then `set`.
 * - `read <path>`: reads `key` in a transaction it never ends, says `reading`, and waits to be killed.
 */
import { writeSync } from 'fs';
import { int64LE, readInt64LE } from '../../../src/kv/contract/bytes';
import type { Database } from '../../../src/kv/contract/database';
import { openLmdbDatabase, type LmdbDurability } from '../../../src/kv/lmdb';

function say(line: string): void {
  writeSync(1, `${line}\n`);
}

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Resolves once `key` exists, whichever process sets it. */
async function untilSet(db: Database, key: string): Promise<void> {
  for (;;) {
    const tr = db.createTransaction();
    if (await tr.get(key)) return;
    const watch = tr.watch(key);
    await tr.commit();
    await watch.promise;
  }
}

async function increment(db: Database, id: string, rounds: number): Promise<void> {
  // Start together with the other processes: the parent sets `go` once every one is ready.
  say('ready');
  await untilSet(db, 'go');
  let attempts = 0;
  for (let i = 0; i < rounds; i++) {
    await db.transact(async (tr) => {
      attempts++;
      const counter = readInt64LE(await tr.get('counter'));
      await pause(Math.random() * 3);
      tr.set('counter', int64LE(counter + 1n));
    });
    await db.transact(async (tr) => {
      attempts++;
      const items = await tr.getRangeAll('items/', 'items0');
      await pause(Math.random() * 3);
      // Only the range read can conflict: the item is new. Serially, each insert sees a different count.
      tr.set(`items/${id}/${String(i).padStart(4, '0')}`, String(items.length));
    });
  }
  say(`done ${attempts}`);
}

async function stream(db: Database, writers: number): Promise<never> {
  let next = 0;
  const payload = Buffer.alloc(2000, 'p');
  await Promise.all(
    Array.from({ length: writers }, async () => {
      for (;;) {
        const seq = next++;
        const tag = String(seq).padStart(8, '0');
        await db.transact((tr) => {
          for (const part of ['a', 'b', 'c']) tr.set(`tx/${tag}/${part}`, Buffer.concat([Buffer.from(`${seq}:`), payload]));
        });
        say(`committed ${seq}`);
      }
    }),
  );
  throw new Error('unreachable');
}

async function commits(db: Database, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const tr = db.createTransaction();
    for (;;) {
      try {
        tr.add('other', 1);
        await tr.commit();
        break;
      } catch (err) {
        // Each retried error, so that the parent can tell why a count is off.
        say(`retry ${describe(err)}`);
        await tr.onError(err);
      }
    }
  }
  say('done');
}

function describe(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return `${String(code)} ${err instanceof Error ? err.message : String(err)}`.replace(/\n/g, ' ');
}

async function cycle(path: string, ms: number): Promise<void> {
  const until = Date.now() + ms;
  let succeeded = 0;
  let failed = 0;
  let first = '';
  for (let i = 0; Date.now() < until; i++) {
    try {
      const db = openLmdbDatabase({ path });
      try {
        await db.set(`cycle/${process.pid}`, String(i));
        succeeded++;
      } finally {
        await db.close();
      }
    } catch (err) {
      failed++;
      first ||= describe(err);
    }
  }
  say(`cycled ${succeeded} ${failed} ${first}`);
}

async function watch(db: Database, key: string): Promise<void> {
  const tr = db.createTransaction();
  const watching = tr.watch(key);
  await tr.commit();
  say('watching');
  say(`fired ${await watching.promise}`);
}

async function main(): Promise<void> {
  const [mode, path, ...args] = process.argv.slice(2);
  // Opens and closes the store itself, again and again.
  if (mode === 'cycle') return cycle(path, Number(args[0]));
  const durability: LmdbDurability = mode === 'stream' && args[0] === 'fast' ? 'fast' : 'sync';
  const db = openLmdbDatabase({ path, durability });
  try {
    switch (mode) {
      case 'increment':
        return await increment(db, args[0], Number(args[1]));
      case 'stream':
        return await stream(db, Number(args[1]));
      case 'commits':
        return await commits(db, Number(args[0]));
      case 'watch':
        return await watch(db, args[0]);
      case 'set':
        await db.set(args[0], args[1]);
        return say('set');
      case 'read':
        await db.createTransaction().get('key');
        say('reading');
        return await new Promise<never>(() => setInterval(() => undefined, 60_000));
      default:
        throw new Error(`unknown mode ${mode}`);
    }
  } finally {
    await db.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
