import { Layout } from '../../src/document/keys/layout';
import { CollectionRegistry } from '../../src/document/manifest/collection-registry';
import type { Database } from '../../src/kv/contract/database';
import { openMemoryDatabase } from '../../src/kv/memory/memory-engine';

export const layout = new Layout(['doclayer']);
export const PATH = { scope: '_default', collection: '_default' };
export const OTHER = { scope: '_default', collection: 'other' };

/**
 * A memory database holding the default collection, and a registry whose cached manifest has it: the
 * state in which lookups may be answered from the cache. Close both when done.
 */
export async function openCachedRegistry(): Promise<{ kv: Database; registry: CollectionRegistry }> {
  const kv = openMemoryDatabase();
  const registry = new CollectionRegistry(kv, layout);
  await kv.transact(async (tr) => (await registry.forWrite(tr, PATH, true)).create?.());
  await kv.transact((tr) => registry.forWrite(tr, PATH, true));
  return { kv, registry };
}
