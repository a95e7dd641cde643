/**
 * The doclayer context store beyond the memory spec: its engines and configuration, what it does with
 * values JSON cannot hold, the order of keys and of calls, and its errors.
 */
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { DoclayerContextStore } from '../../src/node-red/context-store';
import { StoreSnapshot } from '../../src/kv/lmdb/lmdb-store';
import { fdbShim } from '../support/fdb-shim';
import { callbackArguments, closeStores, get, keys, openStore, result, set, sharedDatabase } from './support/store-fixture';

let folder: string;

beforeAll(() => {
  folder = mkdtempSync(join(tmpdir(), 'doclayer-node-red-'));
});

afterEach(closeStores);

afterAll(() => {
  rmSync(folder, { recursive: true, force: true });
});

describe('DoclayerContextStore engines and config', () => {
  it('keeps context in an LMDB folder under the userDir by default, across close and reopen', async () => {
    const settings = { userDir: join(folder, 'user') };
    const store = await openStore({ settings });
    await set(store, 'global', 'a.b', [1, 2]);
    await store.close();
    const reopened = await openStore({ settings });
    expect(await get(reopened, 'global', 'a')).toEqual({ b: [1, 2] });
    expect(await keys(reopened, 'global')).toEqual(['a']);
  });

  it('shares an LMDB folder given as path between stores', async () => {
    const path = join(folder, 'shared');
    const one = await openStore({ path, durability: 'fast' });
    const two = await openStore({ path, durability: 'fast' });
    await result((cb) => one.incr('global', 'n', 1, cb));
    expect(await result((cb) => two.incr('global', 'n', 1, cb))).toBe(2);
  });

  it('gives readCacheBytes to its LMDB store: with 0, every read of a key reads LMDB', async () => {
    const count = async (readCacheBytes: number | undefined): Promise<number> => {
      const store = await openStore({ path: join(folder, `cache-${String(readCacheBytes)}`), durability: 'fast', readCacheBytes });
      await set(store, 'global', 'k', { a: 1, b: [2, 3] });
      const reads = jest.spyOn(StoreSnapshot.prototype, 'collect');
      try {
        for (let i = 0; i < 3; i++) expect(await get(store, 'global', 'k')).toEqual({ a: 1, b: [2, 3] });
        return reads.mock.calls.length;
      } finally {
        reads.mockRestore();
      }
    };
    const uncached = await count(0);
    expect(uncached).toBeGreaterThanOrEqual(3);
    // With the default size, the repeated reads of the unchanged key come from the cache.
    expect(await count(undefined)).toBeLessThan(uncached);
  });

  it('runs on a FoundationDB cluster given as fdb.clusterFile (here node-foundationdb over the fdb shim)', async () => {
    expect(fdbShim).toBeDefined();
    const store = await openStore({ fdb: { clusterFile: 'node-red-context-test.cluster' } });
    await set(store, 'f1', 'x', { y: 'z' });
    expect(await result((cb) => store.push('f1', 'x.list', 1, cb))).toBe(1);
    expect(await get(store, 'f1', 'x')).toEqual({ y: 'z', list: [1] });
  });

  it('keeps stores with different prefixes apart on one database', async () => {
    const database = sharedDatabase();
    const one = await openStore({ database, prefix: 'one' });
    const two = await openStore({ database, prefix: 'two' });
    await set(one, 'global', 'k', 1);
    expect(await get(two, 'global', 'k')).toBeUndefined();
    expect(await keys(two, 'global')).toEqual([]);
  });

  it.each<[string, object]>([
    ['path and fdb', { path: '/tmp/x', fdb: {} }],
    ['an empty path', { path: '' }],
    ['a prefix that is not a string', { prefix: 3 }],
    ['an unknown durability', { durability: 'eventually' }],
    ['durability for fdb', { fdb: {}, durability: 'fast' }],
    ['a negative readCacheBytes', { readCacheBytes: -1 }],
    ['a fractional readCacheBytes', { readCacheBytes: 1.5 }],
    ['a readCacheBytes that is not a number', { readCacheBytes: '16MB' }],
    ['readCacheBytes for a database', { database: {}, readCacheBytes: 0 }],
  ])('refuses a config with %s', (_, config) => {
    expect(() => new DoclayerContextStore(config)).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }) as Error);
  });

  it('fails calls before open and after close with STORE_CLOSED', async () => {
    const store = new DoclayerContextStore({ database: sharedDatabase() });
    const [before] = await callbackArguments((cb) => store.get('global', 'k', cb));
    expect(before).toMatchObject({ code: 'STORE_CLOSED' });
    await store.open();
    await store.close();
    const [after] = await callbackArguments((cb) => store.set('global', 'k', 1, cb));
    expect(after).toMatchObject({ code: 'STORE_CLOSED' });
  });

  it('waits on close for the calls already made, with or without callbacks', async () => {
    const store = new DoclayerContextStore({ database: sharedDatabase() });
    await store.open();
    for (let i = 0; i < 20; i++) store.set('global', `k${i}`, i);
    await store.close();
    const reopened = await openStore({ database: store.config.database });
    expect(await keys(reopened, 'global')).toHaveLength(20);
  });
});

describe('DoclayerContextStore values', () => {
  let store: DoclayerContextStore;

  beforeEach(async () => {
    store = await openStore();
  });

  it('stores a Buffer as JSON does: { type: "Buffer", data }', async () => {
    await set(store, 'global', 'b', Buffer.from([1, 2]));
    expect(await get(store, 'global', 'b')).toEqual({ type: 'Buffer', data: [1, 2] });
  });

  it('stores a Date as its ISO string, drops undefined and functions in objects and makes them null in arrays', async () => {
    await set(store, 'global', 'v', { when: new Date(0), gone: undefined, fn: () => 1, list: [undefined, () => 1, NaN] });
    expect(await get(store, 'global', 'v')).toEqual({ when: '1970-01-01T00:00:00.000Z', list: [null, null, null] });
  });

  it('deletes a key set to a value JSON has no form for (a function)', async () => {
    await set(store, 'global', 'f', 1);
    await set(store, 'global', 'f', () => 1);
    expect(await keys(store, 'global')).toEqual([]);
  });

  it('drops circular references', async () => {
    const value: Record<string, unknown> = { name: 'loop' };
    value.self = value;
    await set(store, 'global', 'c', value);
    expect(await get(store, 'global', 'c')).toEqual({ name: 'loop' });
  });

  it('refuses a bigint, as JSON.stringify does', async () => {
    const [err] = await callbackArguments((cb) => store.set('global', 'n', 1n, cb));
    expect(err).toBeInstanceOf(TypeError);
  });

  it('passes what the document layer cannot store to the callback (a value nested too deep)', async () => {
    let deep: unknown = 1;
    for (let i = 0; i < 40; i++) deep = { d: deep };
    const [err] = await callbackArguments((cb) => store.set('global', 'deep', deep, cb));
    expect(err).toMatchObject({ code: 'VALUE_TOO_DEEP' });
  });

  it('returns copies: changing a value read changes nothing stored', async () => {
    await set(store, 'global', 'o', { a: [1] });
    const read = (await get(store, 'global', 'o')) as { a: number[] };
    read.a.push(2);
    expect(await get(store, 'global', 'o')).toEqual({ a: [1] });
  });

  it('sets several keys at once, null where values are missing, as the memory store does', async () => {
    await set(store, 'global', ['a', 'b.c', 'd'], [1, 2]);
    expect(await callbackArguments((cb) => store.get('global', ['a', 'b', 'd'], cb))).toEqual([undefined, 1, { c: 2 }, null]);
    await set(store, 'global', ['x', 'y'], 'only');
    expect(await callbackArguments((cb) => store.get('global', ['x', 'y'], cb))).toEqual([undefined, 'only', null]);
  });

  it('writes nothing of a multi-key set that fails', async () => {
    const [err] = await callbackArguments((cb) => store.set('global', ['a', 'b..c'], [1, 2], cb));
    expect(err).toMatchObject({ code: 'INVALID_EXPR' });
    expect(await keys(store, 'global')).toEqual([]);
  });

  it('resolves an embedded [msg.x] against the same scope, as Node-RED does', async () => {
    await set(store, 'n1:f1', 'which', 'second');
    await set(store, 'n1:f1', 'table', { first: 1, second: 2 });
    expect(await get(store, 'n1:f1', 'table[msg.which]')).toBe(2);
    await set(store, 'n1:f1', 'table[msg.which]', 20);
    expect(await get(store, 'n1:f1', 'table')).toEqual({ first: 1, second: 20 });
    const [err] = await callbackArguments((cb) => store.get('n1:f1', 'table[msg.missing]', cb));
    expect(err).toMatchObject({ code: 'INVALID_EXPR', message: 'Invalid expression started at position 6' });
  });
});

describe('DoclayerContextStore order', () => {
  let store: DoclayerContextStore;

  beforeEach(async () => {
    store = await openStore();
  });

  it('lists keys as Object.keys would: integer-like keys first, ascending, then in creation order', async () => {
    for (const k of ['b', '10', 'a', '2', '01']) await set(store, 'global', k, 1);
    expect(await keys(store, 'global')).toEqual(['2', '10', 'b', 'a', '01']);
  });

  it('moves a key deleted and set again to the end, also within one multi-key set', async () => {
    await set(store, 'global', ['a', 'b', 'c'], [1, 2, 3]);
    await set(store, 'global', 'a', undefined);
    await set(store, 'global', 'a', 1);
    expect(await keys(store, 'global')).toEqual(['b', 'c', 'a']);
    await set(store, 'global', ['b', 'c', 'b'], [undefined, 3, 2]);
    expect(await keys(store, 'global')).toEqual(['c', 'a', 'b']);
  });

  it('runs calls made without waiting in the order they were made', async () => {
    store.set('global', 'first', 1);
    store.set('global', 'second', 2);
    store.set('global', 'first', undefined);
    store.set('global', 'first', 3);
    const [, value] = await callbackArguments((cb) => store.get('global', 'first', cb));
    expect(value).toBe(3);
    expect(await keys(store, 'global')).toEqual(['second', 'first']);
  });

  it('reports a failed set without a callback as a process warning', async () => {
    const emitWarning = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      store.set('global', 'n', 1n);
      await new Promise((resolve) => setImmediate(resolve));
      expect(emitWarning).toHaveBeenCalledWith('a context set without a callback failed: Do not know how to serialize a BigInt', {
        code: 'DOCLAYER_CONTEXT_SET_FAILED',
      });
    } finally {
      emitWarning.mockRestore();
    }
  });
});

describe('DoclayerContextStore arguments', () => {
  it('fails calls with a scope that is not a non-empty string, or a key that is not a string', async () => {
    const store = await openStore();
    expect((await callbackArguments((cb) => store.get('', 'k', cb)))[0]).toMatchObject({ code: 'INVALID_ARGUMENT' });
    expect((await callbackArguments((cb) => store.set('global', 5 as unknown as string, 1, cb)))[0]).toMatchObject({ code: 'INVALID_ARGUMENT' });
    expect((await callbackArguments((cb) => store.get('global', ['a', {} as string], cb)))[0]).toMatchObject({ code: 'INVALID_ARGUMENT' });
  });

  it('throws when a callback is given that is not a function', async () => {
    const store = await openStore();
    expect(() => store.set('global', 'k', 1, 'yes' as never)).toThrow(new Error('Callback must be a function'));
  });
});
