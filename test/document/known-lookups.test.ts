/**
 * What an operation takes without a promise: the collection from the cached manifest on a first
 * attempt that wrote no manifest (its read conflict on the uid taken, see registry-conflicts.test.ts),
 * and a collection's lock flag once the attempt has read the metadata version. Each answers only where
 * the asynchronous lookup would answer the same without reading, and with a promise (the lock flag:
 * `undefined`) everywhere else. Each transaction here has its document context first, as every
 * document write's has.
 */
import { DocTransaction } from '../../src/document/doc-transaction';
import { LockFlags } from '../../src/document/collection/lock-flags';
import type { Database } from '../../src/kv/contract/database';
import { kvError } from '../../src/kv/contract/errors';
import { CollectionRegistry } from '../../src/document/manifest/collection-registry';
import { open } from '../../src';
import { layout, openCachedRegistry, OTHER, PATH } from '../support/cached-registry';

let kv: Database;
let registry: CollectionRegistry;

beforeEach(async () => {
  ({ kv, registry } = await openCachedRegistry());
});

afterEach(async () => {
  registry.close();
  await kv.close();
});

describe('CollectionRegistry.writeTarget and readTarget', () => {
  it('answer a collection of the cached manifest on a first attempt without a promise: what forWrite and forRead resolve to', async () => {
    await kv.transact(async (tr) => {
      DocTransaction.of(tr);
      const target = registry.writeTarget(tr, PATH, true);
      expect(target).not.toBeInstanceOf(Promise);
      expect(registry.readTarget(tr, PATH, true)).toBe(target);
      expect(await registry.forWrite(tr, PATH, true)).toBe(target);
      expect(await registry.forRead(tr, PATH, true)).toBe(target);
    });
  });

  it('answer with a promise for a collection the cached manifest does not have, and before the manifest is loaded', async () => {
    await kv.transact(async (tr) => {
      DocTransaction.of(tr);
      const planned = registry.writeTarget(tr, OTHER, true);
      expect(planned).toBeInstanceOf(Promise);
      expect((await planned).create).toBeDefined();
      const missing = registry.readTarget(tr, OTHER, false);
      expect(missing).toBeInstanceOf(Promise);
      expect(await missing).toBeUndefined();
    });
    registry.invalidate();
    await kv.transact(async (tr) => {
      DocTransaction.of(tr);
      const loading = registry.writeTarget(tr, PATH, true);
      expect(loading).toBeInstanceOf(Promise);
      expect((await loading).create).toBeUndefined();
    });
  });

  it('answer with a promise on a retry (the stored manifest is checked) and after the attempt wrote a manifest', async () => {
    const tr = kv.createTransaction();
    DocTransaction.of(tr);
    expect(registry.writeTarget(tr, PATH, true)).not.toBeInstanceOf(Promise);
    await tr.onError(kvError('not_committed', 'a conflict'));
    DocTransaction.of(tr);
    const retried = registry.writeTarget(tr, PATH, true);
    expect(retried).toBeInstanceOf(Promise);
    expect(registry.readTarget(tr, PATH, true)).toBeInstanceOf(Promise);
    await retried;
    tr.cancel();
    await kv.transact(async (tr) => {
      DocTransaction.of(tr);
      expect(registry.writeTarget(tr, PATH, true)).not.toBeInstanceOf(Promise);
      (await registry.forWrite(tr, OTHER, true)).create?.();
      expect(registry.writeTarget(tr, PATH, true)).toBeInstanceOf(Promise);
      expect(registry.readTarget(tr, PATH, true)).toBeInstanceOf(Promise);
    });
  });
});

describe('LockFlags.knownMayBeLocked', () => {
  it('is undefined until the attempt has read the flag at its metadata version, then the flag; undefined again once the attempt bumps it', async () => {
    const locks = new LockFlags(layout.system);
    await kv.transact(async (tr) => {
      expect(locks.knownMayBeLocked(tr, 8)).toBeUndefined();
      expect(await locks.mayBeLocked(tr, 8)).toBe(false);
      expect(locks.knownMayBeLocked(tr, 8)).toBe(false);
      expect(locks.knownMayBeLocked(tr, 9)).toBeUndefined();
      await locks.enable(tr, 8);
      expect(locks.knownMayBeLocked(tr, 8)).toBeUndefined();
      expect(await locks.mayBeLocked(tr, 8)).toBe(true);
    });
    await kv.transact(async (tr) => {
      expect(locks.knownMayBeLocked(tr, 8)).toBeUndefined();
      expect(await locks.mayBeLocked(tr, 8)).toBe(true);
      expect(locks.knownMayBeLocked(tr, 8)).toBe(true);
    });
  });
});

describe('document operations on a known collection', () => {
  it('replace, remove, getMany and scan take it from the registry without a promise', async () => {
    const docs = await open();
    try {
      const c = docs.collection();
      await c.upsert('a', { n: 1 });
      await c.upsert('b', { n: 2 });
      const asynchronous = jest.spyOn(CollectionRegistry.prototype, 'forRead');
      const lookups = jest.spyOn(CollectionRegistry.prototype, 'readTarget');
      try {
        await c.replace('a', { n: 3 });
        await c.remove('b');
        expect((await c.getMany(['a', 'b'])).map((found) => found?.content)).toEqual([{ n: 3 }, undefined]);
        const scanned: unknown[] = [];
        for await (const item of c.scan()) scanned.push(item.id);
        expect(scanned).toEqual(['a']);
        expect(asynchronous).not.toHaveBeenCalled();
        expect(lookups).toHaveBeenCalledTimes(4);
        expect(lookups.mock.results.filter((result) => result.value instanceof Promise)).toEqual([]);
      } finally {
        asynchronous.mockRestore();
        lookups.mockRestore();
      }
    } finally {
      await docs.close();
    }
  });
});
