import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { int64LE } from '../../src/kv/contract/bytes';
import type { Database } from '../../src/kv/contract/database';
import type { KeyRange } from '../../src/kv/contract/key-range';
import type { KeyValue } from '../../src/kv/contract/types';
import { seededRandom } from '../../src/kv/engine-parts/seeded-random';
import { openLmdbDatabase, type LmdbEngineOptions } from '../../src/kv/lmdb';
import { encodeConflictRecord } from '../../src/kv/lmdb/conflict-record';
import { StoreSnapshot, type ConflictRecordEntry, type StoreReader } from '../../src/kv/lmdb/lmdb-store';
import { RangeCache } from '../../src/kv/lmdb/range-cache';
import { expectKvError } from '../support/kv-assertions';
import { printablePairs } from '../support/printable';

const root = mkdtempSync(join(tmpdir(), 'doclayer-range-cache-'));
let stores = 0;
const opened: Database[] = [];

function newStore(): string {
  return join(root, `store-${stores++}`);
}

function open(options: Partial<LmdbEngineOptions> = {}): Database {
  const db = openLmdbDatabase({ path: options.path ?? newStore(), durability: 'fast', ...options });
  opened.push(db);
  return db;
}

afterEach(async () => {
  jest.restoreAllMocks();
  await Promise.all(opened.splice(0).map((db) => db.close()));
});

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

/** Counts the range reads that reach LMDB (a cursor each), as opposed to those the cache answers. */
function countStoreReads(): { readonly count: number } {
  const spy = jest.spyOn(StoreSnapshot.prototype, 'collect');
  return {
    get count() {
      return spy.mock.calls.length;
    },
  };
}

const doc = (db: Database) => db.getRangeAll('doc/', 'doc0');

describe('the lmdb engine’s range cache', () => {
  it('answers a full range read again from memory while no commit writes into the range', async () => {
    const db = open();
    await db.transact((tr) => ['a', 'b', 'c'].forEach((k) => tr.set(`doc/${k}`, k)));
    await db.set('other', 'x');
    const reads = countStoreReads();
    expect(printablePairs(await doc(db))).toEqual(["'doc/a'='a'", "'doc/b'='b'", "'doc/c'='c'"]);
    expect(printablePairs(await doc(db))).toEqual(["'doc/a'='a'", "'doc/b'='b'", "'doc/c'='c'"]);
    expect(reads.count).toBe(1);
    // A commit outside the range leaves it kept; limited reads of the same bounds take its ends.
    await db.set('other', 'y');
    expect(printablePairs(await db.getRangeAll('doc/', 'doc0', { limit: 1 }))).toEqual(["'doc/a'='a'"]);
    expect(printablePairs(await db.getRangeAll('doc/', 'doc0', { limit: 2, reverse: true }))).toEqual(["'doc/c'='c'", "'doc/b'='b'"]);
    expect(reads.count).toBe(1);
    // One inside it (a set, a clear, an atomic add, a versionstamped key) is read again.
    await db.set('doc/b', 'B');
    expect(printablePairs(await doc(db))).toEqual(["'doc/a'='a'", "'doc/b'='B'", "'doc/c'='c'"]);
    await db.clear('doc/a');
    expect(printablePairs(await doc(db))).toEqual(["'doc/b'='B'", "'doc/c'='c'"]);
    await db.transact((tr) => tr.add('doc/n', int64LE(5)));
    expect((await doc(db)).map(({ key }) => key.toString())).toEqual(['doc/b', 'doc/c', 'doc/n']);
    await db.transact((tr) => tr.setVersionstampedKey(Buffer.concat([Buffer.from('doc/v'), Buffer.alloc(10), int64LE(5).subarray(0, 4)]), 'v'));
    expect(await doc(db)).toHaveLength(4);
    expect(reads.count).toBe(5);
    expect(await doc(db)).toHaveLength(4);
    expect(reads.count).toBe(5);
  });

  it('sees the commits of another engine on the same store, as another process would make them', async () => {
    const path = newStore();
    const a = open({ path });
    const b = open({ path });
    await b.set('doc/a', '1');
    expect(printablePairs(await doc(a))).toEqual(["'doc/a'='1'"]);
    const reads = countStoreReads();
    await b.set('elsewhere', 'x');
    expect(printablePairs(await doc(a))).toEqual(["'doc/a'='1'"]);
    expect(reads.count).toBe(0);
    await b.set('doc/a', '2');
    expect(printablePairs(await doc(a))).toEqual(["'doc/a'='2'"]);
    await b.clearRange('doc/', 'doc0');
    expect(await doc(a)).toEqual([]);
    expect(reads.count).toBe(2);
  });

  it('answers a transaction at an older read version with what the store held then', async () => {
    const db = open();
    await db.set('doc/a', 'old');
    const before = db.createTransaction();
    await before.getReadVersion();
    await db.set('doc/a', 'new');
    // Kept at the newer version: of no use to the older transaction, which reads its own version.
    expect(printablePairs(await doc(db))).toEqual(["'doc/a'='new'"]);
    expect(printablePairs(await before.getRangeAll('doc/', 'doc0'))).toEqual(["'doc/a'='old'"]);
    expect(printablePairs(await doc(db))).toEqual(["'doc/a'='new'"]);
    before.cancel();
  });

  it('merges a transaction’s own writes over a kept range', async () => {
    const db = open();
    await db.transact((tr) => ['a', 'c'].forEach((k) => tr.set(`doc/${k}`, k)));
    await doc(db);
    const pairs = await db.transact(async (tr) => {
      tr.set('doc/b', 'mine');
      tr.clear('doc/c');
      return tr.getRangeAll('doc/', 'doc0');
    });
    expect(printablePairs(pairs)).toEqual(["'doc/a'='a'", "'doc/b'='mine'"]);
    expect(printablePairs(await doc(db))).toEqual(["'doc/a'='a'", "'doc/b'='mine'"]);
  });

  it('drops what it kept when the log no longer holds a commit it has not seen', async () => {
    const path = newStore();
    const clock = { now: 1_000_000 };
    const a = open({ path, now: () => clock.now });
    const b = open({ path, now: () => clock.now });
    await b.set('doc/a', '1');
    await doc(a);
    await b.set('doc/a', '2');
    // 10 s later b's commit prunes the record of its commit on doc/a, which a never read.
    clock.now += 10_000;
    await b.set('elsewhere', 'x');
    expect(printablePairs(await doc(a))).toEqual(["'doc/a'='2'"]);
  });

  it('drops what it kept when more commits came since than it checks', async () => {
    const path = newStore();
    const a = open({ path });
    const b = open({ path });
    await b.set('doc/a', '0');
    await doc(a);
    for (let i = 1; i <= 300; i++) await b.set(i === 150 ? 'doc/a' : `elsewhere/${i}`, String(i));
    expect(printablePairs(await doc(a))).toEqual(["'doc/a'='150'"]);
  });

  it('keeps nothing with readCacheBytes 0, and refuses a size that is not a whole number of bytes', async () => {
    const db = open({ readCacheBytes: 0 });
    await db.set('doc/a', '1');
    const reads = countStoreReads();
    await doc(db);
    await doc(db);
    expect(reads.count).toBe(2);
    for (const readCacheBytes of [-1, 1.5, Number.NaN, '16' as unknown as number]) {
      expect(() => openLmdbDatabase({ path: newStore(), readCacheBytes })).toThrow(/readCacheBytes/);
      try {
        openLmdbDatabase({ path: newStore(), readCacheBytes });
      } catch (err) {
        await expectKvError(Promise.reject(err), 'invalid_option_value');
      }
    }
  });

  it('reads what an engine without a cache reads, at the same version, under random commits of two engines (seeded)', async () => {
    for (const seed of [1, 2, 3]) {
      const random = seededRandom(seed);
      const path = newStore();
      const engines = [open({ path }), open({ path })];
      const plain = open({ path, readCacheBytes: 0 });
      const storeReads = countStoreReads();
      let reads = 0;
      const key = (n: number) => `k${String(n).padStart(2, '0')}`;
      const RANGES = [
        [0, 9],
        [5, 24],
        [10, 39],
        [0, 39],
        [20, 20],
        [30, 34],
      ];
      const pick = (n: number) => Math.floor(random() * n);
      for (let step = 0; step < 400; step++) {
        const db = engines[pick(2)];
        const roll = random();
        if (roll < 0.7) {
          // A few ranges, overlapping, read again and again so that the cache answers them.
          const [x, y] = RANGES[pick(RANGES.length)];
          const limit = random() < 0.2 ? 1 + pick(3) : 0;
          const reverse = limit > 0 && random() < 0.5;
          const tr = db.createTransaction();
          const version = await tr.getReadVersion();
          const got = await tr.getRangeAll(key(x), key(y + 1), { limit, reverse });
          reads++;
          const check = plain.createTransaction();
          check.setReadVersion(version);
          const want = await check.getRangeAll(key(x), key(y + 1), { limit, reverse });
          expect({ seed, step, pairs: printablePairs(got) }).toEqual({ seed, step, pairs: printablePairs(want) });
          tr.cancel();
          check.cancel();
        } else {
          await db.transact((tr) => {
            for (let n = 1 + pick(3); n > 0; n--) {
              const what = random();
              // Most writes go beside the ranges read, which then stay kept.
              const k = random() < 0.2 ? key(pick(40)) : `other/${pick(40)}`;
              if (what < 0.55) tr.set(k, `${seed}-${step}`);
              else if (what < 0.8) tr.clear(k);
              else if (what < 0.95) tr.add(k, int64LE(1));
              else {
                const [x, y] = [pick(40), pick(40)].sort((p, q) => p - q);
                tr.clearRange(key(x), key(y + 1));
              }
            }
          });
        }
      }
      // The cache answered at least a quarter of the reads (the plain engine read the store every time).
      expect(storeReads.count - reads).toBeLessThan(reads * 0.75);
      jest.restoreAllMocks();
    }
  });
});

describe('RangeCache', () => {
  /** A store reader holding only a conflict log: the records given, after `horizon`. */
  function logReader(records: { version: bigint; ranges: KeyRange[] }[], horizon = 0n): StoreReader {
    const entries: ConflictRecordEntry[] = records.map(({ version, ranges }) => ({ version, record: encodeConflictRecord({ time: 0, ranges }) }));
    return {
      get: () => undefined,
      scan: () => [],
      collect: () => undefined,
      lastVersion: () => entries[entries.length - 1]?.version ?? horizon,
      horizon: () => horizon,
      conflictRecords: (after, limit) => entries.filter((e) => after === undefined || e.version > after).slice(0, limit),
    };
  }
  const b = (s: string) => Buffer.from(s);
  const pairs = (...keys: string[]): KeyValue[] => keys.map((k) => ({ key: b(k), value: b('v') }));
  const range = (begin: string, end: string): KeyRange => ({ begin: b(begin), end: b(end) });

  it('answers a kept range at later versions until a commit writes into it, whatever process made it', () => {
    const cache = new RangeCache(1 << 20);
    const records: { version: bigint; ranges: KeyRange[] }[] = [];
    cache.keep(logReader(records), 10n, b('d/'), b('d0'), pairs('d/a'));
    expect(cache.lookup(logReader(records), 10n, b('d/'), b('d0'))).toHaveLength(1);
    // This process's commit outside the range, known without reading the log.
    cache.committed(10n, 11n, [range('e', 'f')]);
    expect(cache.lookup(logReader([]), 11n, b('d/'), b('d0'))).toHaveLength(1);
    // Another process's commits, read from the log: one beside the range, then one into it.
    records.push({ version: 12n, ranges: [range('d0', 'd1')] });
    expect(cache.lookup(logReader(records), 12n, b('d/'), b('d0'))).toHaveLength(1);
    records.push({ version: 13n, ranges: [range('a', 'b'), range('d/b', 'd/c')] });
    expect(cache.lookup(logReader(records), 13n, b('d/'), b('d0'))).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('checks a range by bounds of its own, whatever becomes of the Buffers it was given', () => {
    const cache = new RangeCache(1 << 20);
    const [begin, end] = [b('d/'), b('d0')];
    cache.keep(logReader([]), 10n, begin, end, pairs('d/a'));
    begin.fill(0x7a);
    end.fill(0x7a);
    cache.committed(10n, 11n, [range('d/a', 'd/b')]);
    expect(cache.lookup(logReader([]), 11n, b('d/'), b('d0'))).toBeUndefined();
  });

  it('checks a range against commits of many ranges and long keys, before and after such a commit', () => {
    const cache = new RangeCache(1 << 20);
    const long = (tag: string, i: number) => `${tag}/${String(i).padStart(4, '0')}/${'x'.repeat(100)}`;
    // 40 ranges of 100-byte bounds: more than a commit's slot holds before it grows.
    const many = (tag: string) => Array.from({ length: 40 }, (_, i) => range(long(tag, 2 * i), long(tag, 2 * i + 1)));
    let version = 10n;
    const keep = (begin: string, end: string) => cache.keep(logReader([]), version, b(begin), b(end), pairs(begin));
    const hit = (begin: string, end: string) => cache.lookup(logReader([]), version, b(begin), b(end)) !== undefined;
    const commit = (ranges: KeyRange[]) => cache.committed(version, ++version, ranges);
    // Kept ranges between two written ranges, touching one's end, or inside one.
    keep(long('m', 7), long('m', 8));
    keep(long('m', 41), long('m', 42));
    keep(long('m', 42), long('m', 43));
    commit(many('m'));
    expect(hit(long('m', 7), long('m', 8))).toBe(true);
    expect(hit(long('m', 41), long('m', 42))).toBe(true);
    expect(hit(long('m', 42), long('m', 43))).toBe(false);
    // A small commit after the large one, into a range kept in between, then beside it.
    keep('s/a', 's/c');
    commit([range('r', 's/a')]);
    expect(hit('s/a', 's/c')).toBe(true);
    commit([range('s/b', 's/b\x00')]);
    expect(hit('s/a', 's/c')).toBe(false);
  });

  it('does not answer a reader older than the version it checked the range at', () => {
    const cache = new RangeCache(1 << 20);
    cache.keep(logReader([]), 20n, b('d/'), b('d0'), pairs('d/a'));
    expect(cache.lookup(logReader([]), 19n, b('d/'), b('d0'))).toBeUndefined();
    expect(cache.lookup(logReader([]), 20n, b('d/'), b('d0'))).toHaveLength(1);
  });

  it('does not record its own commit when another process committed before it, and reads the log instead', () => {
    const cache = new RangeCache(1 << 20);
    cache.keep(logReader([]), 10n, b('d/'), b('d0'), pairs('d/a'));
    // Version 11 was another process's, writing into the range; this process committed 12 after it.
    cache.committed(11n, 12n, [range('x', 'y')]);
    const records = [
      { version: 11n, ranges: [range('d/a', 'd/b')] },
      { version: 12n, ranges: [range('x', 'y')] },
    ];
    expect(cache.lookup(logReader(records), 12n, b('d/'), b('d0'))).toBeUndefined();
  });

  it('drops everything when the log was pruned past what it knows', () => {
    const cache = new RangeCache(1 << 20);
    cache.keep(logReader([]), 10n, b('d/'), b('d0'), pairs('d/a'));
    cache.keep(logReader([]), 10n, b('e/'), b('e0'), pairs('e/a'));
    expect(cache.lookup(logReader([{ version: 15n, ranges: [range('x', 'y')] }], 14n), 15n, b('d/'), b('d0'))).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('keeps at most its bytes, dropping the least recently used ranges first', () => {
    const value = Buffer.alloc(1000);
    const big = (k: string): KeyValue[] => [{ key: b(k), value }];
    const cache = new RangeCache(64 * 1024);
    const reader = logReader([]);
    for (let i = 0; i < 10; i++) cache.keep(reader, 1n, b(`r${i}`), b(`r${i}z`), big(`r${i}a`));
    // r0 used again: r1 and the others after it go first.
    expect(cache.lookup(reader, 1n, b('r0'), b('r0z'))).toBeDefined();
    for (let i = 10; i < 80; i++) cache.keep(reader, 1n, b(`r${i}`), b(`r${i}z`), big(`r${i}a`));
    expect(cache.size).toBeLessThan(80);
    expect(cache.size * 1000).toBeLessThanOrEqual(64 * 1024);
    expect(cache.lookup(reader, 1n, b('r1'), b('r1z'))).toBeUndefined();
    expect(cache.lookup(reader, 1n, b('r79'), b('r79z'))).toBeDefined();
    // A range over a sixteenth of the budget is not kept.
    cache.keep(reader, 1n, b('huge'), b('hugez'), [{ key: b('huge/a'), value: Buffer.alloc(8 * 1024) }]);
    expect(cache.lookup(reader, 1n, b('huge'), b('hugez'))).toBeUndefined();
  });

  it('rests when the ranges it keeps are written into before they are read again, and keeps a working set read again and again', () => {
    const cache = new RangeCache(64 << 20);
    const empty = logReader([]);
    // 1,024 ranges kept, each written into by the next commit and only then read again.
    let version = 1n;
    for (let i = 0; i < 1024; i++) {
      const [begin, end] = [b(`once${i}`), b(`once${i}z`)];
      expect(cache.lookup(empty, version, begin, end)).toBeUndefined();
      cache.keep(empty, version, begin, end, pairs(`once${i}a`));
      cache.committed(version, version + 1n, [range(`once${i}a`, `once${i}b`)]);
      version++;
      expect(cache.lookup(empty, version, begin, end)).toBeUndefined();
    }
    // It emptied and keeps nothing for a while.
    expect(cache.size).toBe(0);
    cache.keep(empty, version, b('later'), b('laterz'), pairs('latera'));
    expect(cache.lookup(empty, version, b('later'), b('laterz'))).toBeUndefined();
    // After its rest it keeps again; 3,000 ranges (more than a count's 1,024) read three times each stay kept.
    for (let i = 0; i < 16 * 1024; i++) cache.keep(empty, version, b('rest'), b('restz'), pairs('resta'));
    let hits = 0;
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 3000; i++) {
        const [begin, end] = [b(`w${i}`), b(`w${i}z`)];
        if (cache.lookup(empty, version, begin, end)) hits++;
        else cache.keep(empty, version, begin, end, pairs(`w${i}a`));
      }
    }
    expect(hits).toBe(6000);
    // The working set, and the range the last read of the rest kept.
    expect(cache.size).toBe(3001);
  });
});
