/**
 * What an operation that takes its collection from the cached manifest relies on: the read conflict
 * on the manifest's uid, taken without reading it. A manifest update committed after the operation's
 * read version (another process adding or dropping a collection) must fail its commit, so that its
 * retry checks the stored manifest; this holds on the path that answers from the cached copy without
 * a promise of its own, with and without a document context on the transaction.
 */
import { DocTransaction } from '../../src/document/doc-transaction';
import type { Database } from '../../src/kv/contract/database';
import type { Transaction } from '../../src/kv/contract/types';
import { CollectionRegistry, type CollectionTarget, type WriteTarget } from '../../src/document/manifest/collection-registry';
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

/** Another process adds a collection: the stored manifest's uid changes. */
async function updateManifestElsewhere(): Promise<void> {
  const other = new CollectionRegistry(kv, layout);
  try {
    await kv.transact(async (tr) => (await other.forWrite(tr, OTHER, true)).create?.());
  } finally {
    other.close();
  }
}

/** A blind write under the collection `prefix`, which on its own conflicts with nothing. */
function writeUnder(tr: Transaction, prefix: Buffer): void {
  tr.set(Buffer.concat([prefix, Buffer.from('x')]), Buffer.from('y'));
}

describe.each([
  ['with a document context', true],
  ['without a document context', false],
])('a lookup answered by the cached manifest, %s', (_title, withContext) => {
  it('forWrite: a manifest update committed after the read version fails the commit', async () => {
    const tr = kv.createTransaction();
    if (withContext) DocTransaction.of(tr);
    const target = await registry.forWrite(tr, PATH, true);
    expect(target.create).toBeUndefined();
    writeUnder(tr, target.prefix);
    await updateManifestElsewhere();
    await expect(tr.commit()).rejects.toMatchObject({ code: 1020 });
  });

  it('forRead: a manifest update committed after the read version fails the commit', async () => {
    const tr = kv.createTransaction();
    if (withContext) DocTransaction.of(tr);
    const target = await registry.forRead(tr, PATH, true);
    expect(target).toBeDefined();
    writeUnder(tr, (target as { prefix: Buffer }).prefix);
    await updateManifestElsewhere();
    await expect(tr.commit()).rejects.toMatchObject({ code: 1020 });
  });

  it('writeTarget, answered without a promise: a manifest update committed after the read version fails the commit', async () => {
    const tr = kv.createTransaction();
    if (withContext) DocTransaction.of(tr);
    const target = registry.writeTarget(tr, PATH, true);
    expect(target).not.toBeInstanceOf(Promise);
    writeUnder(tr, (target as WriteTarget).prefix);
    await updateManifestElsewhere();
    await expect(tr.commit()).rejects.toMatchObject({ code: 1020 });
  });

  it('readTarget, answered without a promise: a manifest update committed after the read version fails the commit', async () => {
    const tr = kv.createTransaction();
    if (withContext) DocTransaction.of(tr);
    const target = registry.readTarget(tr, PATH, true);
    expect(target).not.toBeInstanceOf(Promise);
    writeUnder(tr, (target as CollectionTarget).prefix);
    await updateManifestElsewhere();
    await expect(tr.commit()).rejects.toMatchObject({ code: 1020 });
  });

  it('writeTarget for a caller that reads at once, answered without a promise: a manifest update committed after its read fails the commit', async () => {
    const tr = kv.createTransaction();
    if (withContext) DocTransaction.of(tr);
    const target = registry.writeTarget(tr, PATH, true, true);
    expect(target).not.toBeInstanceOf(Promise);
    const reading = tr.get(Buffer.concat([(target as WriteTarget).prefix, Buffer.from('k')]));
    writeUnder(tr, (target as WriteTarget).prefix);
    await updateManifestElsewhere();
    await reading;
    await expect(tr.commit()).rejects.toMatchObject({ code: 1020 });
  });

  it('without an update, the commit succeeds', async () => {
    const tr = kv.createTransaction();
    if (withContext) DocTransaction.of(tr);
    writeUnder(tr, (await registry.forWrite(tr, PATH, true)).prefix);
    await expect(tr.commit()).resolves.toBeUndefined();
  });
});
