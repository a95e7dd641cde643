/**
 * node-foundationdb's own public API (the `foundationdb` package's JavaScript, unchanged) on the fdb
 * shim over the memory engine: what the tests of an app built on the package see.
 */
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { Barrier } from '../support/barrier';
import { fdbShim, foundationdb, openFdbDatabase, openFdbDatabaseOn, type FdbDatabase } from '../support/fdb-shim';
import type { Engine } from '../../src/kv/contract/types';
import { LmdbEngine } from '../../src/kv/lmdb';
import { fromFoundationDB } from '../../src/kv/fdb';
import { open } from '../../src/open';
import { MemoryEngine } from '../../src/kv/memory/memory-engine';

const fdb = foundationdb();
const { keySelector, tuple, MutationType, StreamingMode } = fdb;

const b = (s: string): Buffer => Buffer.from(s, 'latin1');
const int64 = (n: number): Buffer => {
  const out = Buffer.alloc(8);
  out.writeBigInt64LE(BigInt(n));
  return out;
};
const keys = (pairs: Array<[Buffer, Buffer]>): string[] => pairs.map(([key]) => key.toString('latin1'));

async function rejection(promise: Promise<unknown>): Promise<Error & { code?: number }> {
  try {
    await promise;
  } catch (err) {
    return err as Error & { code?: number };
  }
  throw new Error('expected a rejection');
}

/** Keys `k00`..`k<n-1>` with value `v<i>`. */
async function fill(db: FdbDatabase, n: number): Promise<void> {
  await db.doTn(async (tn) => {
    for (let i = 0; i < n; i++) tn.set(`k${String(i).padStart(2, '0')}`, `v${i}`);
  });
}

describe('fdb.open on the shim', () => {
  it('opens the same cluster, with the same data, each time it is given the same cluster file', async () => {
    const first = fdb.open('shared.cluster');
    await first.set('greeting', 'hello');
    first.close();
    expect(await fdb.open('shared.cluster').get('greeting')).toEqual(b('hello'));
    expect(await fdb.open('other.cluster').get('greeting')).toBeUndefined();
    expect(await fdbShim.engine('shared.cluster').createTransaction().get('greeting')).toEqual(b('hello'));
  });

  it('refuses new transactions once the database is closed, as the addon does', () => {
    const db = openFdbDatabase();
    db.close();
    expect(() => db.rawCreateTransaction()).toThrow('Cannot create transaction after db closed');
  });
});

describe('db.doTn', () => {
  it('retries the body of a transaction that loses a conflict, until it commits', async () => {
    const db = openFdbDatabase();
    await db.set('counter', int64(10));
    const bothHaveRead = new Barrier(2);
    let attempts = 0;
    const increment = (): Promise<void> => {
      let first = true;
      return db.doTn(async (tn) => {
        attempts++;
        const seen = (await tn.get('counter'))!.readBigInt64LE(0);
        if (first) {
          first = false;
          await bothHaveRead.arrive();
        }
        tn.set('counter', int64(Number(seen) + 1));
      });
    };
    await Promise.all([increment(), increment()]);
    // Both read 10 before either committed: one commit conflicts (1020), onError resets, the body runs again.
    expect(attempts).toBe(3);
    expect((await db.get('counter'))!.readBigInt64LE(0)).toBe(12n);
  });

  it('rejects with FDBError not_committed (1020) once retry_limit retries have conflicted', async () => {
    const db = openFdbDatabase();
    let attempts = 0;
    const err = await rejection(
      db.doTn(
        async (tn) => {
          attempts++;
          await tn.get('contended');
          // Another transaction writes what this one read, so its commit always conflicts.
          await db.set('contended', `by another writer ${attempts}`);
          tn.set('mine', 'x');
        },
        { retry_limit: 2 },
      ),
    );
    expect(err).toBeInstanceOf(fdb.FDBError);
    expect(err.code).toBe(1020);
    expect(attempts).toBe(3);
  });

  it('does not retry an error that is not retryable: key_too_large (2102) surfaces from the commit', async () => {
    const db = openFdbDatabase();
    let attempts = 0;
    let setThrew = false;
    const err = await rejection(
      db.doTn(async (tn) => {
        attempts++;
        try {
          tn.set(Buffer.alloc(10_001, 'k'), 'v');
        } catch {
          setThrew = true;
        }
      }),
    );
    // FDB's client defers a mutation's error to the next read or the commit; the set itself returns.
    expect(setThrew).toBe(false);
    expect(err).toBeInstanceOf(fdb.FDBError);
    expect(err.code).toBe(2102);
    expect(attempts).toBe(1);
  });

  it('fails with transaction_timed_out (1031) after the timeout option, without retrying', async () => {
    const db = openFdbDatabase();
    let attempts = 0;
    const err = await rejection(
      db.doTn(
        async (tn) => {
          attempts++;
          await new Promise((resolve) => setTimeout(resolve, 60));
          await tn.get('k');
        },
        { timeout: 20 },
      ),
    );
    expect(err.code).toBe(1031);
    expect(attempts).toBe(1);
  });

  it('gives every transaction the database default timeout (transaction_timeout)', async () => {
    const db = openFdbDatabase();
    db.setNativeOptions({ transaction_timeout: 20 });
    const err = await rejection(
      db.doTn(async (tn) => {
        await new Promise((resolve) => setTimeout(resolve, 60));
        tn.set('k', 'v');
      }),
    );
    expect(err.code).toBe(1031);
    expect(await db.get('k')).toBeUndefined();
  });

  it('accepts options that have no effect on an in-process store', async () => {
    const db = openFdbDatabase();
    db.setNativeOptions({ max_watches: 100, datacenter_id: 'dc1', snapshot_ryw_enable: true });
    await db.doTn(async (tn) => tn.set('k', 'v'), { causal_read_risky: true, tag: 'reports', priority_batch: true });
    expect(await db.get('k')).toEqual(b('v'));
  });
});

describe('range reads through keySelector, getRange, getRangeAll and getRangeBatch', () => {
  it('resolves selectors with offsets at both ends of a range', async () => {
    const db = openFdbDatabase();
    await fill(db, 10);
    const pairs = await db.getRangeAll(keySelector.firstGreaterThan('k02'), keySelector.add(keySelector.lastLessOrEqual('k07'), 1));
    expect(keys(pairs)).toEqual(['k03', 'k04', 'k05', 'k06', 'k07']);
    const shifted = await db.getRangeAll(keySelector.add(keySelector.firstGreaterOrEqual('k02'), 3), keySelector.lastLessThan('k09'));
    expect(keys(shifted)).toEqual(['k05', 'k06', 'k07']);
    expect(await db.getKey(keySelector.add(keySelector.lastLessThan('k05'), -2))).toEqual(b('k02'));
    expect(await db.getKey(keySelector.lastLessThan('k00'))).toBeUndefined();
  });

  it('honours limit and reverse, and reads a prefix when the end is left out', async () => {
    const db = openFdbDatabase();
    await fill(db, 30);
    await db.set('other', 'x');
    expect(keys(await db.getRangeAll('k', 'l', { limit: 3 }))).toEqual(['k00', 'k01', 'k02']);
    expect(keys(await db.getRangeAll('k', 'l', { limit: 3, reverse: true }))).toEqual(['k29', 'k28', 'k27']);
    expect(await db.getRangeAllStartsWith('k1')).toHaveLength(10);
    expect(keys(await db.getRangeAllStartsWith('o'))).toEqual(['other']);
  });

  it('streams a large range with `for await` in batches that follow the streaming mode, each continuing after the last', async () => {
    const db = openFdbDatabase();
    const value = Buffer.alloc(1000, 'v');
    await db.doTn(async (tn) => {
      for (let i = 0; i < 300; i++) tn.set(`row${String(i).padStart(3, '0')}`, value);
    });
    const seen: string[] = [];
    await db.doTn(async (tn) => {
      for await (const [key] of tn.getRange('row', 'rox')) seen.push(key.toString());
    });
    expect(seen).toHaveLength(300);
    expect(seen).toEqual([...seen].sort());

    const batchSizes = async (streamingMode: number, options: { reverse?: boolean; limit?: number } = {}): Promise<number[]> =>
      db.doTn(async (tn) => {
        const sizes: number[] = [];
        for await (const batch of tn.getRangeBatch('row', 'rox', { streamingMode, ...options })) sizes.push(batch.length);
        return sizes;
      });
    // Byte targets as in fdb_c, each batch stopping at the pair (1006 bytes here) that reaches it:
    // iterator 4096 bytes, growing by half per batch; small 256; want_all 80,000; exact only the limit.
    const iterator = await batchSizes(StreamingMode.Iterator);
    expect(iterator.slice(0, 3)).toEqual([5, 7, 10]);
    expect(iterator.reduce((a, n) => a + n, 0)).toBe(300);
    const small = (await batchSizes(StreamingMode.Small, { reverse: true })).filter((n) => n > 0);
    expect(small).toEqual(Array.from({ length: 300 }, () => 1));
    expect(await batchSizes(StreamingMode.WantAll)).toEqual([80, 80, 80, 60]);
    expect(await batchSizes(StreamingMode.Exact, { limit: 250 })).toEqual([250]);
    expect((await rejection(batchSizes(StreamingMode.Exact))).code).toBe(2210);
  });

  it('reads its own writes, and through snapshot() records no read conflict', async () => {
    const db = openFdbDatabase();
    await fill(db, 3);
    const tn = db.rawCreateTransaction();
    tn.set('k01', 'changed');
    tn.clear('k02');
    tn.set('k10', 'new');
    expect((await tn.getRangeAll('k', 'l')).map(([k, v]) => `${k.toString()}=${v.toString()}`)).toEqual(['k00=v0', 'k01=changed', 'k10=new']);
    const snapshotReader = db.rawCreateTransaction();
    const reader = db.rawCreateTransaction();
    await snapshotReader.snapshot().get('k00');
    await reader.get('k00');
    snapshotReader.set('elsewhere', '1');
    reader.set('elsewhere', '2');
    await db.set('k00', 'concurrent');
    await snapshotReader.rawCommit();
    expect((await rejection(reader.rawCommit())).code).toBe(1020);
  });
});

describe('subspaces and tuple encoding', () => {
  it('keeps tuple-encoded keys and JSON values under the subspace prefix, in tuple order', async () => {
    const db = openFdbDatabase();
    const users = db.at(fdb.root.at('app').withKeyEncoding(fdb.encoders.tuple).withValueEncoding(fdb.encoders.json));
    await users.doTn(async (tn) => {
      tn.set(['user', 2], { name: 'bo' });
      tn.set(['user', 10], { name: 'cy' });
      tn.set(['user', 1], { name: 'al' });
      tn.set(['team', 'x'], { size: 3 });
    });
    expect(await users.get(['user', 10])).toEqual({ name: 'cy' });
    const all = await users.getRangeAllStartsWith(['user']);
    expect(all.map(([key, value]): unknown[] => [key, value])).toEqual([
      [['user', 1], { name: 'al' }],
      [['user', 2], { name: 'bo' }],
      [['user', 10], { name: 'cy' }],
    ]);
    const [[rawKey]] = await db.getRangeAll('app', 'app\xff');
    expect(rawKey.subarray(0, 3)).toEqual(b('app'));
    expect(tuple.unpack(rawKey.subarray(3))).toEqual(['team', 'x']);
  });
});

describe('the directory layer', () => {
  it('creates, opens, lists and removes directories, and removing one clears its contents', async () => {
    const db = openFdbDatabase();
    const users = await fdb.directory.createOrOpen(db, ['app', 'users']);
    await fdb.directory.createOrOpen(db, ['app', 'orders']);
    const again = await fdb.directory.createOrOpen(db, ['app', 'users']);
    expect(again.getSubspace().prefix).toEqual(users.getSubspace().prefix);

    const scoped = db.at(users);
    await scoped.set('alice', '1');
    expect(await scoped.get('alice')).toEqual(b('1'));

    const listed = await db.doTn(async (tn) => {
      const names: string[] = [];
      for await (const name of fdb.directory.list(tn, ['app'])) names.push(name.toString());
      return names;
    });
    expect(listed.sort()).toEqual(['orders', 'users']);
    expect(await fdb.directory.remove(db, ['app', 'users'])).toBe(true);
    expect(await fdb.directory.exists(db, ['app', 'users'])).toBe(false);
    expect(await scoped.get('alice')).toBeUndefined();
    expect((await fdb.directory.listAll(db, ['app'])).map(String)).toEqual(['orders']);
  });
});

describe('versionstamps', () => {
  it('writes the commit versionstamp into keys and values, and reports it through getVersionstamp', async () => {
    const db = openFdbDatabase();
    const stamp = await db.doTn(async (tn) => {
      tn.setVersionstampSuffixedKey('log/', 'entry', b('!'));
      tn.setVersionstampPrefixedValue('latest', b('payload'));
      return tn.getVersionstamp();
    });
    const versionstamp = await stamp.promise;
    expect(versionstamp).toHaveLength(10);
    const [[key, value]] = await db.getRangeAllStartsWith('log/');
    expect(key).toEqual(Buffer.concat([b('log/'), versionstamp, b('!')]));
    expect(value).toEqual(b('entry'));
    expect(await db.getVersionstampPrefixedValue('latest')).toEqual({ stamp: versionstamp, value: b('payload') });
  });

  it('bakes tuple versionstamps with per-transaction codes into keys and values', async () => {
    const db = openFdbDatabase().withKeyEncoding(fdb.encoders.tuple).withValueEncoding(fdb.encoders.tuple);
    const first = ['events', tuple.unboundVersionstamp()];
    const second = ['events', tuple.unboundVersionstamp()];
    await db.doTn(async (tn) => {
      tn.setVersionstampedKey(first, ['a']);
      tn.setVersionstampedKey(second, ['b']);
      tn.setVersionstampedValue(['pointer'], ['at', tuple.unboundVersionstamp()]);
    });
    const events = await db.getRangeAllStartsWith(['events']);
    expect(events.map(([, value]) => value)).toEqual([['a'], ['b']]);
    // The tuples passed in were baked after the commit: they name the keys that were written.
    expect(events.map(([key]) => key)).toEqual([first, second]);
    const pointer = (await db.get(['pointer'])) as unknown[];
    const stamp = (first[1] as { value: Buffer }).value;
    expect(pointer).toEqual(['at', { type: 'versionstamp', value: Buffer.concat([stamp.subarray(0, 10), Buffer.from([0, 2])]) }]);
  });
});

describe('watches', () => {
  it('fires when another transaction changes the key, and resolves false when cancelled', async () => {
    const db = openFdbDatabase();
    await db.set('k', 'v0');
    const watch = await db.getAndWatch('k');
    expect(watch.value).toEqual(b('v0'));
    const quiet = await db.doTn(async (tn) => tn.watch('untouched'));
    await db.set('k', 'v1');
    await expect(watch.promise).resolves.toBe(true);
    quiet.cancel();
    await expect(quiet.promise).resolves.toBe(false);
  });

  it('resolves false for a watch whose transaction conflicted, and rejects with throwAllErrors', async () => {
    const db = openFdbDatabase();
    const tn = db.rawCreateTransaction();
    await tn.get('x');
    const lenient = tn.watch('x');
    const strict = tn.watch('x', { throwAllErrors: true });
    await db.set('x', 'changed');
    tn.set('y', '1');
    expect((await rejection(tn.rawCommit())).code).toBe(1020);
    await expect(lenient.promise).resolves.toBe(false);
    expect((await rejection(strict.promise)).code).toBe(1020);
  });

  it('fails the watches of a transaction that times out, as FDB does', async () => {
    const db = openFdbDatabase();
    const watch = await db.doTn(async (tn) => tn.watch('k', { throwAllErrors: true }), { timeout: 30 });
    expect((await rejection(watch.promise)).code).toBe(1031);
  });
});

describe('atomic operations', () => {
  it.each([
    ['Add', int64(5), int64(7), int64(12)],
    ['Max', b('\x05'), b('\x07'), b('\x07')],
    ['Min', b('\x05'), b('\x07'), b('\x05')],
    ['BitAnd', b('\x0c'), b('\x0a'), b('\x08')],
    ['BitOr', b('\x0c'), b('\x0a'), b('\x0e')],
    ['BitXor', b('\x0c'), b('\x0a'), b('\x06')],
    ['ByteMin', b('b'), b('a'), b('a')],
    ['ByteMax', b('b'), b('c'), b('c')],
    ['AppendIfFits', b('ab'), b('cd'), b('abcd')],
    ['CompareAndClear', b('same'), b('same'), undefined],
  ] as const)('%s, as FDB defines it', async (name, existing, operand, expected) => {
    const db = openFdbDatabase();
    await db.set('k', existing);
    await db.atomicOp(MutationType[name], 'k', operand);
    expect(await db.get('k')).toEqual(expected);
  });

  it('adds without reading, so concurrent increments never conflict', async () => {
    const db = openFdbDatabase();
    const allStarted = new Barrier(10);
    let attempts = 0;
    await Promise.all(
      Array.from({ length: 10 }, () =>
        db.doTn(async (tn) => {
          attempts++;
          await tn.getReadVersion();
          await allStarted.arrive();
          tn.add('hits', int64(1));
        }),
      ),
    );
    expect(attempts).toBe(10);
    expect((await db.get('hits'))!.readBigInt64LE(0)).toBe(10n);
  });

  it('reports an unknown mutation type with invalid_mutation_type (2018) at commit', async () => {
    const db = openFdbDatabase();
    const err = await rejection(db.doTn(async (tn) => tn.atomicOpNative(99 as never, b('k'), b('v'))));
    expect(err.code).toBe(2018);
    expect(err.message).toContain('Unrecognized atomic mutation type');
  });
});

describe("node-foundationdb's own tests of transaction options and read versions (its test/kv.ts)", () => {
  const root = mkdtempSync(join(tmpdir(), 'doclayer-node-foundationdb-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  let stores = 0;
  const engines: ReadonlyArray<readonly [string, () => Engine]> = [
    ['memory', () => new MemoryEngine()],
    ['lmdb', () => new LmdbEngine({ path: join(root, `store-${stores++}`) })],
  ];

  describe.each(engines)('on the %s engine', (_name, makeEngine) => {
    let engine: Engine;
    let db: FdbDatabase;
    beforeEach(() => {
      engine = makeEngine();
      db = openFdbDatabaseOn(engine);
    });
    afterEach(async () => {
      db.close();
      await engine.close();
    });

    it('hands out range results of their own, as the addon does: changing them changes no later read', async () => {
      await db.set('r/a', 'one');
      await db.set('r/b', 'two');
      for (let round = 0; round < 3; round++) {
        const pairs = await db.getRangeAll('r/', 'r0');
        expect(pairs.map(([key, value]) => `${key.toString()}=${value.toString()}`)).toEqual(['r/a=one', 'r/b=two']);
        for (const [key, value] of pairs) {
          key.fill(0x78);
          value.fill(0x78);
        }
      }
      const streamed = await db.doTn(async (tn) => {
        const seen: string[] = [];
        for await (const [key, value] of tn.getRange('r/', 'r0')) {
          seen.push(`${key.toString()}=${value.toString()}`);
          value.fill(0x78);
        }
        return seen;
      });
      expect(streamed).toEqual(['r/a=one', 'r/b=two']);
      expect((await db.getRangeAll('r/', 'r0')).map(([, value]) => value.toString())).toEqual(['one', 'two']);
    });

    it("gives doclayer's fdb adapter the engine's key limit, so documents refuse longer keys typed", async () => {
      const adapter = fromFoundationDB(db);
      expect(adapter.maxKeyBytes).toBe(engine.maxKeyBytes ?? 10_000);
      const docs = await open({ database: adapter });
      await expect(docs.collection().upsert('x'.repeat(adapter.maxKeyBytes), 1)).rejects.toMatchObject({ code: 'KEY_TOO_LARGE' });
    });

    it('obeys transaction options: with read_your_writes_disable a get does not see the set before it', async () => {
      await db.doTransaction(
        async (tn) => {
          tn.set('x', 'hi there');
          expect(await tn.get('x')).toBeUndefined();
        },
        { read_your_writes_disable: true },
      );
      expect(await db.get('x')).toEqual(b('hi there'));
    });

    it('fails a get, and the watch made with it, after setReadVersion of version 0 (version_invalid, 2011)', async () => {
      let watch: { promise: Promise<unknown> } | undefined;
      const err = await rejection(
        db.doTn(async (tn) => {
          tn.setReadVersion(Buffer.alloc(8));
          watch = tn.watch('x');
          await tn.get('x');
        }),
      );
      expect(err.code).toBe(2011);
      expect((await rejection(watch!.promise)).code).toBe(2011);
    });

    it('reads at a version set with setReadVersion', async () => {
      await db.set('k', 'v1');
      const first = db.rawCreateTransaction();
      expect(await first.get('k')).toEqual(b('v1'));
      const version = await first.getReadVersion();
      await db.set('k', 'v2');
      expect(await db.doTn(async (tn) => (tn.setReadVersion(version), tn.get('k')))).toEqual(b('v1'));
      first.rawCancel();
    });
  });
});

describe("FDB's metadata version key through the package", () => {
  const key = b('\xff/metadataVersion');

  it('reads \\xff/metadataVersion without options and sets it with setVersionstampedValue to the commit versionstamp', async () => {
    const db = openFdbDatabase();
    expect(await db.get(key)).toBeUndefined();
    const stamp = await db.doTn(async (tn) => {
      tn.atomicOp(MutationType.SetVersionstampedValue, key, Buffer.alloc(14));
      return tn.getVersionstamp();
    });
    const versionstamp = await stamp.promise;
    expect(await db.get(key)).toEqual(versionstamp);
    // The engine underneath sees the same metadata version.
    expect(await db.doTn((tn) => tn.snapshot().get(key))).toEqual(versionstamp);
  });

  it('refuses any other parameter with client_invalid_operation (2000), as FDB does', async () => {
    const db = openFdbDatabase();
    const err = await rejection(db.doTn(async (tn) => tn.atomicOp(MutationType.SetVersionstampedValue, key, Buffer.alloc(15))));
    expect(err.code).toBe(2000);
  });
});
