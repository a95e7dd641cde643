/**
 * `doclayer/node-red` as settings.js uses it: the module is the store factory Node-RED calls, and its
 * `atomic` object (listed in functionGlobalContext) reaches the store Node-RED created.
 */
import doclayer = require('../../src/node-red');
import { closeStores, get, sharedDatabase } from './support/store-fixture';

const created: doclayer.DoclayerContextStore[] = [];

/** A store as Node-RED creates one: by calling the module with the entry's config, then open(). */
async function createdByNodeRed(config?: doclayer.ContextStoreConfig): Promise<doclayer.DoclayerContextStore> {
  const store = doclayer(config ?? { database: sharedDatabase() });
  created.push(store);
  await store.open();
  return store;
}

afterEach(async () => {
  await Promise.all(created.splice(0).map((store) => store.close()));
  await closeStores();
});

describe('doclayer/node-red', () => {
  it('is the factory a contextStorage entry names as module, and says so when Node-RED logs it', () => {
    expect(typeof doclayer).toBe('function');
    expect(String(doclayer)).toBe('doclayer/node-red');
    const store = doclayer({ database: sharedDatabase() });
    created.push(store);
    for (const method of ['open', 'close', 'get', 'set', 'keys', 'delete', 'clean', 'incr', 'decr'] as const) {
      expect(typeof store[method]).toBe('function');
    }
  });
});

describe('atomic (the Function-node API)', () => {
  it('returns promises from the only open store', async () => {
    const store = await createdByNodeRed();
    expect(await doclayer.atomic.incr('global', 'count')).toBe(1);
    expect(await doclayer.atomic.incr('global', 'count', 5)).toBe(6);
    expect(await doclayer.atomic.decr('global', 'count', 2)).toBe(4);
    expect(await doclayer.atomic.push('f1', 'q', 'a')).toBe(1);
    expect(await doclayer.atomic.unshift('f1', 'q', 'z')).toBe(2);
    expect(await doclayer.atomic.shift('f1', 'q')).toBe('z');
    expect(await doclayer.atomic.pop('f1', 'q')).toBe('a');
    expect(await doclayer.atomic.append('n1:f1', 's', 'b')).toBe('b');
    expect(await doclayer.atomic.prepend('n1:f1', 's', 'a')).toBe('ab');
    expect(await get(store, 'global', 'count')).toBe(4);
  });

  it('calls back (err, result) when given a callback', async () => {
    await createdByNodeRed();
    const args = await new Promise<unknown[]>((resolve) => doclayer.atomic.incr('global', 'c', 2, (...a) => resolve(a)));
    expect(args).toEqual([null, 2]);
    const args2 = await new Promise<unknown[]>((resolve) => doclayer.atomic.incr('global', 'c', (...a) => resolve(a)));
    expect(args2).toEqual([null, 3]);
  });

  it('rejects with the store error', async () => {
    await createdByNodeRed();
    await doclayer.atomic.append('global', 's', 'x');
    await expect(doclayer.atomic.incr('global', 's')).rejects.toMatchObject({ code: 'NOT_A_NUMBER' });
  });

  it('fails with NO_STORE when no store is open, or several are and none is chosen', async () => {
    await expect(doclayer.atomic.incr('global', 'c')).rejects.toMatchObject({ code: 'NO_STORE' });
    const config = { database: sharedDatabase() };
    const chosen = await createdByNodeRed(config);
    await createdByNodeRed();
    await expect(doclayer.atomic.incr('global', 'c')).rejects.toMatchObject({ code: 'NO_STORE' });
    const [err] = await new Promise<unknown[]>((resolve) => doclayer.atomic.incr('global', 'c', (...a) => resolve(a)));
    expect(err).toMatchObject({ code: 'NO_STORE' });
    expect(await doclayer.atomicContextFor(config).incr('global', 'c')).toBe(1);
    expect(await get(chosen, 'global', 'c')).toBe(1);
  });

  it('forgets a closed store, and finds the one Node-RED creates when it starts again', async () => {
    const config = { database: sharedDatabase() };
    const before = await createdByNodeRed(config);
    await doclayer.atomic.incr('global', 'c');
    await before.close();
    await expect(doclayer.atomic.incr('global', 'c')).rejects.toMatchObject({ code: 'NO_STORE' });
    await createdByNodeRed(config);
    expect(await doclayer.atomicContextFor(config).incr('global', 'c')).toBe(2);
  });
});
