import { mkdtempSync, rmSync } from 'fs';
import { open as openRawLmdb } from 'lmdb';
import { tmpdir } from 'os';
import { join } from 'path';
import { int64LE, readInt64LE } from '../../src/kv/contract/bytes';
import type { Database } from '../../src/kv/contract/database';
import { isKvError } from '../../src/kv/contract/errors';
import { firstGreaterOrEqual, firstGreaterThan, lastLessOrEqual, lastLessThan } from '../../src/kv/contract/key-selector';
import { Limits } from '../../src/kv/contract/limits';
import { LMDB_MAX_KEY_BYTES, LmdbEngine, openLmdbDatabase, type LmdbEngineOptions } from '../../src/kv/lmdb';
import * as conflictRecord from '../../src/kv/lmdb/conflict-record';
import * as rangeSet from '../../src/kv/client/range-set';
import { LmdbStore, StoreSnapshot } from '../../src/kv/lmdb/lmdb-store';
import { commitBatch, type CommitOutcome, type CommitRequest } from '../../src/kv/lmdb/commit-batch';
import { StoredConflictLog } from '../../src/kv/lmdb/stored-conflict-log';
import { keyAfter } from '../../src/kv/contract/bytes';
import { openMemoryDatabase } from '../../src/kv/memory/memory-engine';
import { seededRandom } from '../../src/kv/engine-parts/seeded-random';
import type { KeySelector, Transaction } from '../../src/kv/contract/types';
import { expectKvError } from '../support/kv-assertions';
import { printablePairs } from '../support/printable';

const root = mkdtempSync(join(tmpdir(), 'doclayer-lmdb-engine-'));
let stores = 0;
const opened: Database[] = [];

function newStore(): string {
  return join(root, `store-${stores++}`);
}

function open(options: Partial<LmdbEngineOptions> = {}): Database {
  const db = openLmdbDatabase({ path: options.path ?? newStore(), ...options });
  opened.push(db);
  return db;
}

afterEach(async () => {
  await Promise.all(opened.splice(0).map((db) => db.close()));
});

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

/** `bytes` followed by FDB's 4-byte little-endian offset of the versionstamp placeholder. */
function stampedKey(prefix: string): Buffer {
  const offset = Buffer.alloc(4);
  offset.writeUInt32LE(prefix.length, 0);
  return Buffer.concat([Buffer.from(prefix), Buffer.alloc(10), offset]);
}

async function commitStamped(db: Database, value: string): Promise<{ stamp: Buffer; version: bigint }> {
  const tr = db.createTransaction();
  tr.setVersionstampedKey(stampedKey('log/'), value);
  const stamp = tr.getVersionstamp();
  await tr.commit();
  return { stamp: await stamp, version: tr.getCommittedVersion() };
}

describe('LmdbEngine', () => {
  describe('reopening a store', () => {
    it('keeps the data, the versionstamp order and increasing commit versions across close and open', async () => {
      const path = newStore();
      const first = openLmdbDatabase({ path });
      await first.set('kept', 'v');
      const before = [await commitStamped(first, 'one'), await commitStamped(first, 'two')];
      const readVersionBefore = await first.createTransaction().getReadVersion();
      await first.close();

      const second = open({ path });
      expect(String(await second.get('kept'))).toBe('v');
      expect(await second.createTransaction().getReadVersion()).toBe(readVersionBefore);
      const after = await commitStamped(second, 'three');
      expect(after.version).toBeGreaterThan(before[1].version);
      expect(Buffer.compare(before[1].stamp, after.stamp)).toBeLessThan(0);
      const log = await second.getRangeAll('log/', 'log0');
      expect(log.map((kv) => kv.value.toString())).toEqual(['one', 'two', 'three']);
    });

    it("keeps each user key behind one 0x00 byte in LMDB's 'data' database, the layout stores were written in", async () => {
      const path = newStore();
      const first = openLmdbDatabase({ path });
      await first.transact((tr) => ['', 'a', 'b\xff'].forEach((k) => tr.set(k, `v${k}`)));
      await first.close();

      const raw = openRawLmdb<Buffer, Buffer>({ path, maxDbs: 4, keyEncoding: 'binary', encoding: 'binary' });
      const data = raw.openDB<Buffer, Buffer>('data', { keyEncoding: 'binary', encoding: 'binary' });
      expect([...data.getKeys({ start: Buffer.from([0]) })].map((k) => Buffer.from(k).toString('hex'))).toEqual(['00', '0061', '0062c3bf']);
      // A key written the way an earlier version of the engine wrote it reads back as the user key.
      await data.put(Buffer.from([0, 0x7a]), Buffer.from('written before'));
      await raw.close();

      const second = open({ path });
      expect(printablePairs(await second.getRangeAll('', '\xff'))).toEqual([
        "''='v'",
        "'a'='va'",
        "'b\\xc3\\xbf'='vb\\xc3\\xbf'",
        "'z'='written before'",
      ]);
    });

    it('keeps commit versions increasing even when the clock has gone back', async () => {
      const path = newStore();
      const first = openLmdbDatabase({ path, now: () => 2_000_000 });
      await first.set('k', '1');
      const tr = first.createTransaction();
      tr.set('k', '2');
      await tr.commit();
      const last = tr.getCommittedVersion();
      await first.close();

      const second = open({ path, now: () => 1_000_000 });
      const later = second.createTransaction();
      later.set('k', '3');
      await later.commit();
      expect(later.getCommittedVersion()).toBeGreaterThan(last);
    });
  });

  describe('keys', () => {
    it('stores the empty key, FDB’s smallest', async () => {
      const db = open();
      await db.set('', 'empty');
      await db.set('a', 'a');
      expect(String(await db.get(''))).toBe('empty');
      expect(printablePairs(await db.getRangeAll('', 'b'))).toEqual(["''='empty'", "'a'='a'"]);
      expect(printablePairs(await db.getRangeAll('', 'b', { reverse: true }))).toEqual(["'a'='a'", "''='empty'"]);
      const tr = db.createTransaction();
      expect((await tr.getKey(lastLessThan('a'))).length).toBe(0);
      await db.clear('');
      expect(await db.get('')).toBeUndefined();
    });

    it(`accepts keys of ${LMDB_MAX_KEY_BYTES} bytes and rejects longer ones with key_too_large (2102), naming the engine's limit`, async () => {
      const db = open();
      await db.set(Buffer.alloc(LMDB_MAX_KEY_BYTES, 'k'), 'v');
      const tr = db.createTransaction();
      let message = '';
      try {
        tr.set(Buffer.alloc(LMDB_MAX_KEY_BYTES + 1, 'k'), 'v');
      } catch (err) {
        expect(isKvError(err, 'key_too_large')).toBe(true);
        message = (err as Error).message;
      }
      expect(message).toContain(`lmdb engine's limit is ${LMDB_MAX_KEY_BYTES} bytes`);
      await expectKvError(async () => db.createTransaction().watch(Buffer.alloc(LMDB_MAX_KEY_BYTES + 1, 'k')).promise, 'key_too_large');
    });

    it('reads and clears longer keys as FDB does: they cannot exist, so there is nothing to find', async () => {
      const db = open();
      const longest = Buffer.alloc(LMDB_MAX_KEY_BYTES, 'k');
      await db.set(longest, 'v');
      const longer = Buffer.alloc(Limits.maxKeyBytes, 'k');
      expect(await db.get(longer)).toBeUndefined();
      await db.clear(longer);
      expect(String(await db.get(longest))).toBe('v');
    });

    it('answers range reads, selectors and range clears with bounds over the key limit exactly as the memory engine', async () => {
      const lmdb = open();
      const memory = openMemoryDatabase();
      opened.push(memory);
      const base = Buffer.alloc(LMDB_MAX_KEY_BYTES - 1, 'k');
      const keys = [Buffer.from('j'), Buffer.concat([base, Buffer.from('a')]), Buffer.concat([base, Buffer.from('b')]), base, Buffer.from('l')];
      for (const db of [lmdb, memory]) await db.transact((tr) => keys.forEach((k, i) => tr.set(k, String(i))));
      // Bounds around the stored keys, up to FDB's 10,000 bytes.
      const bounds = [
        base,
        Buffer.concat([base, Buffer.from('a')]),
        Buffer.concat([base, Buffer.from('a'), Buffer.alloc(1)]),
        Buffer.concat([base, Buffer.from('a'), Buffer.alloc(3000, 'z')]),
        Buffer.concat([base, Buffer.from('b'), Buffer.alloc(5000, 0)]),
        Buffer.concat([base, Buffer.from('c'), Buffer.alloc(1)]),
        Buffer.from('j'),
        Buffer.from('z'),
      ];
      const read = <T>(db: Database, fn: (tr: Transaction) => Promise<T>): Promise<T> => db.transact(fn);
      const results = async (db: Database) => {
        const out: unknown[] = [];
        for (const b of bounds) {
          for (const e of bounds) {
            for (const options of [{}, { reverse: true }, { limit: 1 }, { limit: 1, reverse: true }]) {
              out.push(printablePairs(await read(db, (tr) => tr.getRangeAll(b, e, options))));
            }
          }
          for (const selector of [firstGreaterOrEqual(b), firstGreaterThan(b), lastLessOrEqual(b), lastLessThan(b)] as KeySelector[]) {
            out.push(await read(db, (tr) => tr.getKey(selector)));
          }
        }
        return out.map((x) => (Buffer.isBuffer(x) ? x.toString('hex') : x));
      };
      expect(await results(lmdb)).toEqual(await results(memory));
      for (const db of [lmdb, memory]) await db.clearRange(bounds[2], bounds[4]);
      expect(printablePairs(await lmdb.getRangeAll('', Buffer.from([0xff])))).toEqual(
        printablePairs(await memory.getRangeAll('', Buffer.from([0xff]))),
      );
    });
  });

  describe('range clears followed by writes inside the range', () => {
    it('leave exactly what the memory engine leaves, whatever sets, clears and atomic adds follow (seeded)', async () => {
      const lmdb = open();
      const memory = openMemoryDatabase();
      opened.push(memory);
      const random = seededRandom(17);
      const pick = (n: number) => Math.floor(random() * n);
      const name = (i: number) => `k${i.toString().padStart(2, '0')}`;
      const key = () => name(pick(12));
      for (let round = 0; round < 40; round++) {
        const steps: Array<(tr: Transaction) => void> = [];
        for (let i = 0; i < 6; i++) {
          const k = key();
          steps.push((tr) => tr.set(k, `r${round}`));
        }
        const [low, high] = [pick(12), pick(12)].sort((x, y) => x - y);
        steps.push((tr) => tr.clearRange(name(low), `${name(high)}\xff`));
        for (let i = 0; i < 8; i++) {
          // Mostly keys inside the cleared range, which the clear may leave for these writes.
          const k = random() < 0.85 ? name(low + pick(high - low + 1)) : key();
          const choice = pick(10);
          if (choice < 6) steps.push((tr) => tr.set(k, `r${round}s${i}`));
          else if (choice < 8) steps.push((tr) => tr.clear(k));
          else if (choice < 9) steps.push((tr) => tr.add(k, 1));
          else steps.push((tr) => tr.clearRange(k, `${k}\xff`));
        }
        // The first six steps write the keys the range clear then finds in the store.
        for (const db of [lmdb, memory]) {
          await db.transact((tr) => steps.slice(0, 6).forEach((step) => step(tr)));
          await db.transact((tr) => steps.slice(6).forEach((step) => step(tr)));
        }
        expect(printablePairs(await lmdb.getRangeAll('', '\xff'))).toEqual(printablePairs(await memory.getRangeAll('', '\xff')));
      }
    });

    it('leave exactly what the memory engine leaves when the writes set keys in order, many to the values they hold (seeded)', async () => {
      const lmdb = open();
      const memory = openMemoryDatabase();
      opened.push(memory);
      const random = seededRandom(23);
      const pick = (n: number) => Math.floor(random() * n);
      const name = (i: number) => `d${i.toString().padStart(2, '0')}`;
      const stamp = Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]);
      for (let round = 0; round < 40; round++) {
        // A document's rewrite: the clear of its range, a versionstamped value at its first key, then
        // keys in order with values from a few (so that most hold the value already stored) and,
        // sometimes, a write that ends the ordered run (a key set again, or one before the last).
        const sets: [string, string][] = [];
        for (let i = 0; i < 16; i++) if (random() < 0.6) sets.push([name(i), `v${pick(3)}`]);
        if (random() < 0.3) sets.push([name(pick(16)), `late${round}`]);
        for (const db of [lmdb, memory]) {
          await db.transact((tr) => {
            tr.clearRange('d', 'e');
            tr.setVersionstampedValue('d', stamp);
            for (const [key, value] of sets) tr.set(key, value);
          });
        }
        expect(printablePairs(await lmdb.getRangeAll('d\x00', 'e'))).toEqual(printablePairs(await memory.getRangeAll('d\x00', 'e')));
        expect((await lmdb.get('d'))?.length).toBe(10);
      }
    });

    it('keep a key set again to its value, and remove the others, across chunks of the replacement (256 pairs) and of the clear (4,096 keys)', async () => {
      const db = open();
      const name = (i: number) => `k${i.toString().padStart(5, '0')}`;
      await db.transact((tr) => {
        for (let i = 0; i < 5000; i++) tr.set(name(i), i % 3 === 0 ? 'same' : 'old');
      });
      await db.transact((tr) => {
        tr.clearRange('k', 'l');
        for (let i = 0; i < 5000; i++) if (i % 10 !== 0) tr.set(name(i), i % 3 === 0 ? 'same' : 'new');
        tr.set('k99999', 'after');
      });
      const left = await db.getRangeAll('k', 'l');
      expect(left).toHaveLength(4501);
      const expected = (i: number) => (i % 3 === 0 ? 'same' : 'new');
      expect(left.slice(0, 4500).every((kv) => kv.value.toString() === expected(Number(kv.key.toString().slice(1))))).toBe(true);
      expect(left.slice(0, 4500).some((kv) => kv.key.toString().endsWith('0'))).toBe(false);
      expect(left[4500].value.toString()).toBe('after');
    });

    it('remove every other key of a range larger than one chunk of the clear (4,096 keys)', async () => {
      const db = open();
      const name = (i: number) => `k${i.toString().padStart(5, '0')}`;
      await db.transact((tr) => {
        for (let i = 0; i < 5000; i++) tr.set(name(i), 'old');
      });
      await db.transact((tr) => {
        tr.clearRange('k', 'l');
        for (let i = 0; i < 5000; i++) if (i % 10 !== 0) tr.set(name(i), 'new');
      });
      const left = await db.getRangeAll('k', 'l');
      expect(left).toHaveLength(4500);
      expect(left.every((kv) => kv.value.toString() === 'new' && !kv.key.toString().endsWith('0'))).toBe(true);
    });
  });

  describe('results', () => {
    it('are the caller’s to modify: changing them changes neither the store nor the transaction’s writes', async () => {
      const db = open();
      await db.set('stored', 'abc');
      const tr = db.createTransaction();
      (await tr.get('stored'))!.fill(0x78);
      tr.set('pending', 'def');
      (await tr.get('pending'))!.fill(0x78);
      for (const kv of await tr.getRangeAll('', 'z')) {
        kv.key.fill(0x78);
        kv.value.fill(0x78);
      }
      expect(printablePairs(await tr.getRangeAll('', 'z'))).toEqual(["'pending'='def'", "'stored'='abc'"]);
      await tr.commit();
      expect(printablePairs(await db.getRangeAll('', 'z'))).toEqual(["'pending'='def'", "'stored'='abc'"]);
    });

    it('hold exactly the stored bytes, each pair its own, for keys and values short and long', async () => {
      const db = open();
      const random = seededRandom(17);
      const bytes = (size: number) => Buffer.from(Array.from({ length: size }, () => Math.floor(random() * 256)));
      const sizes = [0, 1, 47, 48, 49, 64, 200, 4000];
      const pairs = sizes.map((size, i) => ({
        key: Buffer.concat([Buffer.from([i]), bytes(Math.min(size, LMDB_MAX_KEY_BYTES - 1))]),
        value: bytes(size * 25),
      }));
      await db.transact((tr) => pairs.forEach(({ key, value }) => tr.set(key, value)));
      const read = await db.transact(async (tr) => {
        const range = await tr.getRangeAll(Buffer.alloc(0), Buffer.from([0xff]));
        const points = await Promise.all(pairs.map(({ key }) => tr.get(key)));
        return { range, points };
      });
      expect(read.range.map(({ key }) => key)).toEqual(pairs.map(({ key }) => key));
      expect(read.range.map(({ value }) => value)).toEqual(pairs.map(({ value }) => value));
      expect(read.points).toEqual(pairs.map(({ value }) => value));
      read.range.forEach(({ key, value }) => {
        key.fill(0x78);
        value.fill(0x78);
      });
      expect(read.points).toEqual(pairs.map(({ value }) => value));
    });
  });

  describe('group commit', () => {
    it('commits concurrent transactions in shared LMDB transactions, with distinct, increasing versionstamps', async () => {
      const db = open();
      const writers = 100;
      const results = await Promise.all(Array.from({ length: writers }, (_, i) => commitStamped(db, String(i))));
      const versions = new Set(results.map((r) => r.version));
      expect(versions.size).toBeLessThan(writers);
      expect(new Set(results.map((r) => r.stamp.toString('hex'))).size).toBe(writers);
      for (const r of results) expect(r.stamp.readBigUInt64BE(0)).toBe(r.version);
      const byStamp = [...results].sort((a, b) => Buffer.compare(a.stamp, b.stamp)).map((r) => r.stamp.toString('hex'));
      const log = await db.getRangeAll('log/', 'log0');
      expect(log.map((kv) => kv.key.subarray(4).toString('hex'))).toEqual(byStamp);
    });

    it('checks conflicts between the transactions of one batch, in batch order', async () => {
      const db = open();
      await db.set('n', int64LE(0));
      const transactions = await Promise.all(
        Array.from({ length: 10 }, async () => {
          const tr = db.createTransaction();
          tr.set('n', int64LE(readInt64LE(await tr.get('n')) + 1n));
          return tr;
        }),
      );
      const outcomes = await Promise.all(
        transactions.map((tr) =>
          tr.commit().then(
            () => 'committed',
            (err: unknown) => (isKvError(err, 'not_committed') ? 'conflict' : err),
          ),
        ),
      );
      expect(outcomes.filter((o) => o === 'committed')).toHaveLength(1);
      expect(outcomes.filter((o) => o === 'conflict')).toHaveLength(9);
      expect(readInt64LE(await db.get('n'))).toBe(1n);
    });

    it("commits and reads the same way with durability 'fast'", async () => {
      const db = open({ durability: 'fast' });
      await Promise.all(Array.from({ length: 20 }, () => db.transact((tr) => tr.add(`n`, 1))));
      expect(readInt64LE(await db.get('n'))).toBe(20n);
    });
  });

  describe('several engines on one store in one process', () => {
    it('detect each other’s conflicts and fire each other’s watches', async () => {
      const path = newStore();
      const a = open({ path });
      const b = open({ path });
      await a.set('x', '0');
      const ta = a.createTransaction();
      const tb = b.createTransaction();
      ta.set('x', String(Number(await ta.get('x')) + 1));
      tb.set('x', String(Number(await tb.get('x')) + 1));
      await ta.commit();
      await expectKvError(tb.commit(), 'not_committed');
      const watching = b.createTransaction();
      const watch = watching.watch('x');
      await watching.commit();
      await a.set('x', 'changed');
      expect(await watch.promise).toBe(true);
    });

    it("poll past their own commits that wrote no watched key, and still see the other engine's", async () => {
      const path = newStore();
      const a = open({ path });
      const b = open({ path });
      const decoded = jest.spyOn(conflictRecord, 'decodeConflictRecord');
      try {
        const watching = b.createTransaction();
        const watch = watching.watch('x');
        await watching.commit();
        for (let i = 0; i < 5; i++) {
          await Promise.all(Array.from({ length: 10 }, (_, j) => b.set(`y${j}`, String(i))));
          await new Promise((resolve) => setTimeout(resolve, 25));
        }
        // b's timed polls saw new versions, all b's own and none on 'x': no record was decoded.
        expect(decoded).not.toHaveBeenCalled();
        await a.set('x', 'changed');
        expect(await watch.promise).toBe(true);
        expect(decoded).toHaveBeenCalled();
        // b's own commit on a watched key fires its watch too.
        const again = b.createTransaction();
        const second = again.watch('x');
        await again.commit();
        await b.set('y0', 'skipped');
        await b.set('x', 'changed by b');
        expect(await second.promise).toBe(true);
      } finally {
        decoded.mockRestore();
      }
    });

    it("refuse a read version that the other engine's prune passed, though the horizon was read before", async () => {
      const path = newStore();
      const clockA = { now: 1_000_000 };
      const clockB = { now: 1_000_000 };
      const a = open({ path, now: () => clockA.now });
      const b = open({ path, now: () => clockB.now });
      // A checked commit of a: it reads the store's horizon.
      await a.transact(async (tr) => {
        await tr.get('seed');
        tr.set('seed', 'a');
      });
      const tr = a.createTransaction();
      await tr.get('x');
      await b.set('x', 'b');
      // b's next commit, 10 s later on its clock, prunes the one on 'x' past tr's read version.
      clockB.now += 10_000;
      await b.set('y', 'b');
      tr.set('z', 'a');
      await expectKvError(tr.commit(), 'transaction_too_old');
    });

    it("resolve 'sync' commits after a flush of their batch and 'fast' ones without one, on one folder", async () => {
      const path = newStore();
      const fast = open({ path, durability: 'fast' });
      const sync = open({ path, durability: 'sync' });
      const flushes = jest.spyOn(LmdbStore.prototype, 'flushed');
      try {
        await Promise.all(Array.from({ length: 10 }, () => fast.transact((tr) => tr.add('n', int64LE(1n)))));
        expect(flushes).not.toHaveBeenCalled();
        await Promise.all(Array.from({ length: 10 }, () => sync.transact((tr) => tr.add('n', int64LE(1n)))));
        expect(flushes).toHaveBeenCalled();
        expect(flushes.mock.calls.length).toBeLessThanOrEqual(10);
        expect(readInt64LE(await fast.get('n'))).toBe(20n);
      } finally {
        flushes.mockRestore();
      }
    });

    it("see each other's commits whatever their durability", async () => {
      const path = newStore();
      const fast = open({ path, durability: 'fast' });
      const sync = open({ path, durability: 'sync' });
      const flushes = jest.spyOn(LmdbStore.prototype, 'flushed');
      try {
        await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? fast : sync).transact((tr) => tr.add('n', int64LE(1n)))));
        await sync.set('last', 'sync');
        expect(flushes.mock.calls.length).toBeGreaterThanOrEqual(2);
        expect(readInt64LE(await fast.get('n'))).toBe(10n);
        expect(String(await fast.get('last'))).toBe('sync');
      } finally {
        flushes.mockRestore();
      }
    });
  });

  describe('read snapshots', () => {
    it('read their own moment, before and after the package moves on to a newer read transaction', async () => {
      const store = LmdbStore.open(newStore(), 0n);
      const scanned = (snapshot: StoreSnapshot) =>
        snapshot.scan(Buffer.from('k'), Buffer.from('l'), false, Infinity).map(([k, v]) => `${k.toString()}=${v.toString()}`);
      try {
        await store.write((w) => w.set(Buffer.from('k1'), Buffer.from('old')));
        const before = store.snapshot();
        expect(scanned(before)).toEqual(['k1=old']);
        // Committed in this turn: the package stops reading through the snapshot's transaction by default.
        const written = store.write((w) => {
          w.set(Buffer.from('k1'), Buffer.from('new'));
          w.set(Buffer.from('k2'), Buffer.from('new'));
        });
        expect(scanned(before)).toEqual(['k1=old']);
        const after = store.snapshot();
        expect(scanned(after)).toEqual(['k1=new', 'k2=new']);
        expect(scanned(before)).toEqual(['k1=old']);
        await written;
        await new Promise((resolve) => setTimeout(resolve, 5));
        expect(scanned(before)).toEqual(['k1=old']);
        expect(scanned(after)).toEqual(['k1=new', 'k2=new']);
        before.release();
        after.release();
      } finally {
        await store.close();
      }
    });

    it('releases the snapshot of an abandoned transaction after 5 seconds: its later reads fail with transaction_too_old (1007)', async () => {
      // The engine's clock stands still, so only the release can make the read fail.
      const db = open({ now: () => 1_000_000 });
      await db.set('k', 'v');
      const abandoned = db.createTransaction();
      expect(String(await abandoned.get('k'))).toBe('v');
      await new Promise((resolve) => setTimeout(resolve, Limits.maxTransactionAgeMs + 1000));
      await expectKvError(abandoned.get('k'), 'transaction_too_old');
      // A new transaction reads as usual.
      expect(String(await db.get('k'))).toBe('v');
    }, 20_000);
  });

  describe('the conflict log in the store', () => {
    it('keeps only the last 5 seconds of commits', async () => {
      const path = newStore();
      const clock = { now: 1_000_000 };
      const db = open({ path, now: () => clock.now });
      for (let i = 0; i < 10; i++) {
        await db.set(`k${i}`, 'v');
        clock.now += 1000;
      }
      const store = LmdbStore.open(path, 0n);
      const snapshot = store.snapshot();
      try {
        const records = snapshot.conflictRecords(undefined, 100);
        // Commits at 1,000 ms intervals: the last one and those within 5 s before it.
        expect(records.length).toBe(6);
        expect(snapshot.horizon()).toBeLessThan(records[0].version);
      } finally {
        snapshot.release();
        await store.close();
      }
    });

    it('reads a few records per commit to prune them when commits come steadily', async () => {
      const clock = { now: 1_000_000 };
      const db = open({ now: () => clock.now });
      const reads = jest.spyOn(Object.getPrototypeOf(StoreSnapshot.prototype) as StoreSnapshot, 'conflictRecords');
      try {
        let read = 0;
        for (let i = 0; i < 120; i++) {
          if (i === 80) {
            read = 0;
            for (const result of reads.mock.results) read -= (result.value as unknown[]).length;
          }
          await db.set(`k${i}`, 'v');
          clock.now += 100;
        }
        for (const result of reads.mock.results) read += (result.value as unknown[]).length;
        // Past the first 5 s each commit makes the oldest record due: one read and removed, the next
        // one or two read to find it is not.
        expect(read / 40).toBeLessThanOrEqual(3);
      } finally {
        reads.mockRestore();
      }
    });

    it("reads the store's horizon once while no other engine commits", async () => {
      const db = open();
      await db.set('k', '0');
      const horizons = jest.spyOn(Object.getPrototypeOf(StoreSnapshot.prototype) as StoreSnapshot, 'horizon');
      try {
        for (let i = 0; i < 20; i++) await db.transact(async (tr) => tr.set('k', String(Number(await tr.get('k')) + 1)));
        expect(horizons.mock.calls.length).toBeLessThanOrEqual(1);
        expect(String(await db.get('k'))).toBe('20');
      } finally {
        horizons.mockRestore();
      }
    });

    it('coalesces read conflicts only for a transaction that a commit since its read version could conflict with', async () => {
      const db = open();
      await db.set('a', '0');
      const coalesced = jest.spyOn(rangeSet, 'coalesceRanges');
      const readsA = (call: unknown[]) => (call[0] as { begin: Buffer }[]).some((range) => range.begin.toString() === 'a');
      try {
        // Reads out of key order, then commits alone.
        const alone = db.createTransaction();
        await alone.get('b');
        await alone.get('a');
        alone.set('c', '1');
        await alone.commit();
        expect(coalesced.mock.calls.filter(readsA)).toHaveLength(0);
        // The same reads, with a commit on 'a' since: checked, and refused.
        const raced = db.createTransaction();
        await raced.get('b');
        await raced.get('a');
        await db.set('a', '1');
        raced.set('c', '2');
        await expectKvError(raced.commit(), 'not_committed');
        expect(coalesced.mock.calls.filter(readsA).length).toBeGreaterThan(0);
      } finally {
        coalesced.mockRestore();
      }
    });

    it('checks a commit queued behind a full batch against that batch, though it holds no snapshot any more', async () => {
      const db = open();
      await db.set('k', '0');
      // Both read 'k' at one version; each gives its snapshot back when it commits.
      const first = db.createTransaction();
      const last = db.createTransaction();
      await Promise.all([first.get('k'), last.get('k')]);
      first.set('k', '1');
      last.set('k', '2');
      // 1,025 commits in one turn: a batch takes 1,024, so `last` waits in the queue while the batch
      // with `first` commits and prunes the conflicts it keeps in memory.
      const commits = [first.commit()];
      for (let i = 0; i < 1_023; i++) {
        const filler = db.createTransaction();
        filler.set(`filler/${i}`, 'x');
        commits.push(filler.commit());
      }
      // A conflict with `first`, not a read version too old to check.
      const refused = expectKvError(last.commit(), 'not_committed');
      await Promise.all(commits);
      await refused;
      expect(String(await db.get('k'))).toBe('1');
    });

    it('keeps in memory only the commits after the oldest read version a transaction may still be checked at', async () => {
      const store = LmdbStore.open(newStore(), 1_000n);
      const conflicts = new StoredConflictLog();
      const now = 1_000_000;
      const key = (k: string) => Buffer.from(k);
      const writing = (k: string, read?: { version: bigint; key: string }): CommitRequest => ({
        readVersion: read?.version,
        readTakenAt: read && now,
        readConflictCount: read ? 1 : 0,
        readConflicts: () => (read ? [{ begin: key(read.key), end: keyAfter(key(read.key)) }] : []),
        writeConflicts: [{ begin: key(k), end: keyAfter(key(k)) }],
        mutations: [{ type: 'set', key: key(k), value: key('v') }],
        bytes: 64,
      });
      const batch = async (request: CommitRequest, oldestRead: bigint | undefined): Promise<CommitOutcome> =>
        (await store.write((writer) => commitBatch(writer, [request], { now, conflicts, faults: undefined, oldestRead: () => oldestRead })))[0];
      const versionOf = (outcome: CommitOutcome) => {
        if (!outcome.committed) throw outcome.error;
        return outcome.version;
      };
      try {
        const v1 = versionOf(await batch(writing('a'), undefined));
        // A reader at v1 may still commit: the next commits are kept for it.
        const v2 = versionOf(await batch(writing('a'), v1));
        versionOf(await batch(writing('b'), v1));
        expect(conflicts.mirroredCommits).toBe(2);
        const conflict = await batch(writing('c', { version: v1, key: 'a' }), v1);
        expect(conflict.committed || conflict.error.code).toBe(1020);
        // Nobody reads any more: nothing is kept, and a read version before the last commit is too old.
        const v4 = versionOf(await batch(writing('d'), undefined));
        expect(conflicts.mirroredCommits).toBe(0);
        const tooOld = await batch(writing('e', { version: v2, key: 'z' }), undefined);
        expect(tooOld.committed || tooOld.error.code).toBe(1007);
        // A read version at the last commit is checked: nothing was written into its reads since.
        expect((await batch(writing('f', { version: v4 + 1n, key: 'a' }), undefined)).committed).toBe(true);
      } finally {
        await store.close();
      }
    });

    it('prunes a fast stream of commits in runs: a few reads of the log per run, not per commit', async () => {
      const path = newStore();
      const clock = { now: 1_000_000 };
      const db = open({ path, now: () => clock.now });
      const reads = jest.spyOn(Object.getPrototypeOf(StoreSnapshot.prototype) as StoreSnapshot, 'conflictRecords');
      try {
        // A commit per ms: past the first 5 s, each one makes a record due.
        let calls = 0;
        for (let i = 0; i < 5_400; i++) {
          if (i === 5_100) calls = -reads.mock.calls.length;
          await db.set(`k${i % 10}`, 'v');
          clock.now += 1;
        }
        calls += reads.mock.calls.length;
        expect(calls / 300).toBeLessThan(0.5);
      } finally {
        reads.mockRestore();
      }
      const store = LmdbStore.open(path, 0n);
      const snapshot = store.snapshot();
      try {
        // The last 5 s of commits, and at most the run not yet due by the lag.
        const records = snapshot.conflictRecords(undefined, 10_000);
        expect(records.length).toBeGreaterThanOrEqual(5_000);
        expect(records.length).toBeLessThanOrEqual(5_060);
        expect(snapshot.horizon()).toBeLessThan(records[0].version);
      } finally {
        snapshot.release();
        await store.close();
      }
    });
  });

  describe('options and lifecycle', () => {
    it("rejects a durability other than 'sync' or 'fast' with invalid_option_value (2006)", async () => {
      await expectKvError(() => new LmdbEngine({ path: newStore(), durability: 'eventually' as never }), 'invalid_option_value');
    });

    it('completes the commits in flight before close resolves, then fails new work with client_invalid_operation (2000)', async () => {
      const path = newStore();
      const db = openLmdbDatabase({ path });
      const reader = db.createTransaction();
      await reader.get('k');
      const commits = Array.from({ length: 10 }, (_, i) => db.set(`k${i}`, 'v'));
      // Let them reach the group commit.
      await new Promise((resolve) => setImmediate(resolve));
      await db.close();
      await Promise.all(commits);
      expect(() => db.createTransaction()).toThrow(/closed/);
      await expectKvError(reader.get('k'), 'client_invalid_operation');
      const again = open({ path });
      expect(await again.getRangeAll('k', 'l')).toHaveLength(10);
    });

    it('treats a folder name with an extension as a folder', async () => {
      const db = open({ path: join(root, `store-${stores++}.lmdb`) });
      await db.set('k', 'v');
      expect(String(await db.get('k'))).toBe('v');
    });
  });
});
