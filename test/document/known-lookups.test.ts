/**
 * What a write's attempt already knows, taken without a promise (the later calls of a combined batch):
 * the collection from the cached manifest once the attempt has looked the manifest up, and a
 * collection's lock flag once the attempt has read the metadata version. Each answers only where the
 * asynchronous lookup would answer the same without reading, and `undefined` everywhere else. Each
 * transaction here has its document context first, as every document write's has.
 */
import { DocTransaction } from '../../src/document/doc-transaction';
import { LockFlags } from '../../src/document/collection/lock-flags';
import type { Database } from '../../src/kv/contract/database';
import { kvError } from '../../src/kv/contract/errors';
import type { CollectionRegistry } from '../../src/document/manifest/collection-registry';
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

describe('CollectionRegistry.knownTarget', () => {
  it('is undefined until the attempt has looked the manifest up, then what forWrite returned', async () => {
    await kv.transact(async (tr) => {
      DocTransaction.of(tr);
      expect(registry.knownTarget(tr, PATH)).toBeUndefined();
      const target = await registry.forWrite(tr, PATH, true);
      expect(registry.knownTarget(tr, PATH)).toBe(target);
    });
  });

  it('is undefined for a collection the cached manifest does not have', async () => {
    await kv.transact(async (tr) => {
      DocTransaction.of(tr);
      await registry.forWrite(tr, PATH, true);
      expect(registry.knownTarget(tr, OTHER)).toBeUndefined();
    });
  });

  it('is undefined on a retry (forWrite then checks the stored manifest) and after the attempt wrote a manifest', async () => {
    const tr = kv.createTransaction();
    DocTransaction.of(tr);
    await registry.forWrite(tr, PATH, true);
    expect(registry.knownTarget(tr, PATH)).toBeDefined();
    await tr.onError(kvError('not_committed', 'a conflict'));
    DocTransaction.of(tr);
    await registry.forWrite(tr, PATH, true);
    expect(registry.knownTarget(tr, PATH)).toBeUndefined();
    tr.cancel();
    await kv.transact(async (tr) => {
      DocTransaction.of(tr);
      await registry.forWrite(tr, PATH, true);
      expect(registry.knownTarget(tr, PATH)).toBeDefined();
      (await registry.forWrite(tr, OTHER, true)).create?.();
      expect(registry.knownTarget(tr, PATH)).toBeUndefined();
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
