import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { fdbShim } from '../support/fdb-shim';
import { isKvError } from '../../src/kv/contract/errors';
import type { Database } from '../../src/kv/contract/database';
import { LmdbEngine } from '../../src/kv/lmdb';
import { StoreSnapshot } from '../../src/kv/lmdb/lmdb-store';
import { MemoryEngine, openMemoryDatabase } from '../../src/kv/memory/memory-engine';
import { chooseEngine, EngineChoiceError, openDatabase, openEngine, type EngineChoice } from '../../src/kv/open-database';

const root = mkdtempSync(join(tmpdir(), 'doclayer-open-database-'));
const opened: Database[] = [];

afterEach(async () => {
  await Promise.all(opened.splice(0).map((db) => db.close()));
});

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (err) {
    return err;
  }
  throw new Error('expected a throw');
}

describe('chooseEngine', () => {
  const lmdbDefault: EngineChoice = { engine: 'lmdb', path: '/data/default' };

  it('takes the one engine the options name', () => {
    const database = openMemoryDatabase();
    opened.push(database);
    expect(chooseEngine({ database })).toEqual({ engine: 'database', database });
    expect(chooseEngine({ path: '/data/x', durability: 'fast' })).toEqual({ engine: 'lmdb', path: '/data/x', durability: 'fast' });
    expect(chooseEngine({ fdb: { clusterFile: 'a.cluster' } })).toEqual({ engine: 'fdb', fdb: { clusterFile: 'a.cluster' } });
    expect(chooseEngine({ memory: { now: Date.now } }, lmdbDefault)).toEqual({ engine: 'memory', memory: { now: Date.now } });
  });

  it('takes the fallback when the options name no engine: by default a new in-memory database', () => {
    expect(chooseEngine({})).toEqual({ engine: 'memory' });
    expect(chooseEngine({}, lmdbDefault)).toEqual(lmdbDefault);
  });

  it('gives durability and readCacheBytes to an lmdb fallback', () => {
    expect(chooseEngine({ durability: 'fast' }, lmdbDefault)).toEqual({ ...lmdbDefault, durability: 'fast' });
    expect(chooseEngine({ readCacheBytes: 0 }, lmdbDefault)).toEqual({ ...lmdbDefault, readCacheBytes: 0 });
    expect(chooseEngine({ path: '/data/x', readCacheBytes: 1024, durability: 'sync' })).toEqual({
      engine: 'lmdb',
      path: '/data/x',
      durability: 'sync',
      readCacheBytes: 1024,
    });
  });

  it('refuses several engine options with EngineChoiceError, a KvError invalid_option_value naming them', () => {
    const err = thrown(() => chooseEngine({ memory: {}, path: '/data/x', fdb: {} }));
    expect(err).toBeInstanceOf(EngineChoiceError);
    expect(isKvError(err, 'invalid_option_value')).toBe(true);
    expect(err).toMatchObject({ problem: 'several-engines', given: ['path', 'fdb', 'memory'] });
    expect((err as Error).message).toBe('invalid_option_value (2006): give at most one of database, path, fdb, memory, not path and fdb and memory');
  });

  it.each<[string, EngineChoice | undefined, object]>([
    ['the in-memory default', undefined, {}],
    ['an fdb option', lmdbDefault, { fdb: {} }],
    ['a database option', lmdbDefault, { database: openMemoryDatabase() }],
    ['a memory option', lmdbDefault, { memory: {} }],
  ])('refuses durability with %s', (_, fallback, options) => {
    const err = thrown(() => chooseEngine({ ...options, durability: 'sync' }, fallback));
    expect(err).toBeInstanceOf(EngineChoiceError);
    expect(err).toMatchObject({ problem: 'durability-without-lmdb', code: 2006 });
  });

  it.each<[string, EngineChoice | undefined, object]>([
    ['the in-memory default', undefined, {}],
    ['an fdb option', lmdbDefault, { fdb: {} }],
    ['a memory option', lmdbDefault, { memory: {} }],
  ])('refuses readCacheBytes with %s', (_, fallback, options) => {
    const err = thrown(() => chooseEngine({ ...options, readCacheBytes: 0 }, fallback));
    expect(err).toBeInstanceOf(EngineChoiceError);
    expect(err).toMatchObject({ problem: 'read-cache-without-lmdb', code: 2006 });
    expect((err as Error).message).toBe('invalid_option_value (2006): readCacheBytes is an option of the lmdb engine (path)');
  });
});

describe('openEngine', () => {
  it('returns a given database as it is, not owned', async () => {
    const database = openMemoryDatabase();
    opened.push(database);
    expect(await openEngine({ engine: 'database', database })).toEqual({ database, owned: false, engine: 'database' });
  });

  it('opens a new in-memory database, owned', async () => {
    const result = await openEngine({ engine: 'memory' });
    opened.push(result.database);
    expect(result).toMatchObject({ owned: true, engine: 'memory' });
    expect(result.database.engine).toBeInstanceOf(MemoryEngine);
  });

  it('opens (and creates) an lmdb folder with its durability, owned', async () => {
    const path = join(root, 'store');
    const first = await openEngine({ engine: 'lmdb', path, durability: 'fast' });
    opened.push(first.database);
    expect(first).toMatchObject({ owned: true, engine: 'lmdb' });
    expect(first.database.engine).toBeInstanceOf(LmdbEngine);
    await first.database.transact((tr) => tr.set(Buffer.from('k'), Buffer.from('v')));
    const second = await openEngine({ engine: 'lmdb', path });
    opened.push(second.database);
    expect(await second.database.transact((tr) => tr.get(Buffer.from('k')))).toEqual(Buffer.from('v'));
  });

  it('connects to FoundationDB (here node-foundationdb over the fdb shim), owned', async () => {
    expect(fdbShim).toBeDefined();
    const result = await openEngine({ engine: 'fdb', fdb: { clusterFile: 'open-database-test.cluster' } });
    opened.push(result.database);
    expect(result).toMatchObject({ owned: true, engine: 'fdb' });
    await result.database.transact((tr) => tr.set(Buffer.from('k'), Buffer.from('v')));
    expect(await result.database.transact((tr) => tr.get(Buffer.from('k')))).toEqual(Buffer.from('v'));
  });

  it("passes on the engine's own refusal of an option value", async () => {
    await expect(openEngine({ engine: 'lmdb', path: '' })).rejects.toMatchObject({ code: 2006 });
    await expect(openEngine({ engine: 'lmdb', path: join(root, 'bad-cache'), readCacheBytes: -1 })).rejects.toMatchObject({ code: 2006 });
  });

  it('opens an lmdb store with the range cache size it is given', async () => {
    const path = join(root, 'cache-size');
    const { database } = await openEngine({ engine: 'lmdb', path, readCacheBytes: 0 });
    opened.push(database);
    await database.transact((tr) => tr.set(Buffer.from('doc/a'), Buffer.from('1')));
    const reads = jest.spyOn(StoreSnapshot.prototype, 'collect');
    try {
      for (let i = 0; i < 3; i++) await database.getRangeAll(Buffer.from('doc/'), Buffer.from('doc0'));
      // No cache: every read reaches LMDB (with the default, the second and third would not).
      expect(reads).toHaveBeenCalledTimes(3);
    } finally {
      reads.mockRestore();
    }
  });
});

describe('openDatabase', () => {
  it('opens the engine chooseEngine chooses', async () => {
    const result = await openDatabase({}, { engine: 'lmdb', path: join(root, 'fallback') });
    opened.push(result.database);
    expect(result.engine).toBe('lmdb');
  });

  it('rejects (never throws) for options that do not go together', async () => {
    await expect(openDatabase({ durability: 'fast' })).rejects.toBeInstanceOf(EngineChoiceError);
  });
});
