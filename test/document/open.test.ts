/**
 * open(): which engine each option opens, what close() closes, and the lmdb default on disk, with the
 * manifest cache of two layers on one store in two engines (two "processes").
 */
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { open, type DocLayer } from '../../src';
import { isKvError } from '../../src/kv/contract/errors';
import { FdbUnavailableError } from '../../src/kv/fdb';
import { StoreSnapshot } from '../../src/kv/lmdb/lmdb-store';
import { openMemoryDatabase } from '../../src/kv/memory/memory-engine';
import { expectDocumentError } from '../support/document-assertions';

let root: string;
const opened: DocLayer[] = [];

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'doclayer-open-'));
});

afterEach(async () => {
  for (const layer of opened.splice(0)) await layer.close();
});

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

let stores = 0;
const folder = () => join(root, `store-${stores++}`);

async function track(layer: Promise<DocLayer>): Promise<DocLayer> {
  const docs = await layer;
  opened.push(docs);
  return docs;
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

describe('open', () => {
  it('opens a new in-memory database by default, and with memory options', async () => {
    const docs = await track(open());
    expect(docs.kv.engine.name).toBe('memory');
    const faulty = await track(open({ memory: { faults: { seed: 1, notCommitted: 0.2 } } }));
    expect(faulty.kv.engine.name).toBe('memory');
    await faulty.collection().upsert('d', { a: 1 });
    expect((await faulty.collection().get('d')).content).toEqual({ a: 1 });
  });

  it('open({ path }) keeps documents, collections and the manifest on disk across close and open', async () => {
    const path = folder();
    const first = await open({ path });
    expect(first.kv.engine.name).toBe('lmdb');
    await first.collection('app.users').insert({ name: 'Ada' }, { id: 'ada' });
    await first.createCollection('app.sessions', { maxTTL: 60 });
    await first.close();
    await expect(first.kv.get('x')).rejects.toMatchObject({ code: 2000 });

    const second = await track(open({ path, durability: 'fast' }));
    expect((await second.collection('app.users').get('ada')).content).toEqual({ name: 'Ada' });
    expect(await second.getCollectionId('app.sessions')).toEqual({ manifestUid: '2', collectionId: 9, maxTTL: 60 });
  });

  it('on one folder opened twice (two engines, as two processes), a manifest change reaches the other cache', async () => {
    const path = folder();
    const a = await track(open({ path }));
    const b = await track(open({ path }));
    const users = a.collection('app.users');
    await users.insert({ v: 'old' }, { id: 'd' });
    expect((await users.get('d')).content).toEqual({ v: 'old' });
    await b.dropCollection('app.users');
    await b.collection('app.users').insert({ v: 'new' }, { id: 'd' });
    // The other engine's commit reaches a's watch within lmdb's poll (20 ms); until then a may still
    // read the dropped collection's id, which finds nothing (its keys were cleared).
    const deadline = Date.now() + 2000;
    let seen: unknown;
    while (Date.now() < deadline) {
      seen = await users.get('d').then(
        (found) => found.content,
        (err: Error) => err.message,
      );
      if ((seen as { v?: string }).v === 'new') break;
      expect(seen).toMatch(/^DOCUMENT_NOT_FOUND/);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(seen).toEqual({ v: 'new' });
  });

  it('uses a database given as is, and leaves it open at close()', async () => {
    const kv = openMemoryDatabase();
    const docs = await open({ database: kv });
    expect(docs.kv).toBe(kv);
    await docs.collection().insert({}, { id: 'd' });
    await docs.close();
    expect(await kv.getRangeAll('', '\xff')).not.toEqual([]);
    await kv.close();
  });

  it('open({ fdb }) reports a missing FoundationDB client as FdbUnavailableError', async () => {
    const err = await rejection(open({ fdb: { apiVersion: 710 } }));
    // With a client library installed and a cluster to reach, this would open; here there is none.
    if (!(err instanceof FdbUnavailableError)) expect(isKvError(err)).toBe(true);
  });

  it('open({ path, readCacheBytes }) gives the lmdb engine its range cache size', async () => {
    const docs = await track(open({ path: folder(), readCacheBytes: 0 }));
    await docs.collection().upsert('d', { a: 1, b: [2, 3] });
    const reads = jest.spyOn(StoreSnapshot.prototype, 'collect');
    try {
      for (let i = 0; i < 3; i++) expect((await docs.collection().get('d')).content).toEqual({ a: 1, b: [2, 3] });
      // No cache: each whole-document get reads LMDB (with the default, only the first would).
      expect(reads.mock.calls.length).toBeGreaterThanOrEqual(3);
    } finally {
      reads.mockRestore();
    }
  });

  it('refuses several engines, durability or readCacheBytes without path, and bad prefixes with INVALID_ARGUMENT', async () => {
    await expectDocumentError(open({ path: folder(), memory: {} }), 'INVALID_ARGUMENT');
    await expectDocumentError(open({ database: openMemoryDatabase(), fdb: {} }), 'INVALID_ARGUMENT');
    await expectDocumentError(open({ durability: 'fast' }), 'INVALID_ARGUMENT');
    const refused = await open({ memory: {}, readCacheBytes: 1024 }).then(
      () => undefined,
      (err: Error & { code?: string }) => ({ code: err.code, message: err.message }),
    );
    expect(refused?.code).toBe('INVALID_ARGUMENT');
    expect(refused?.message).toContain('readCacheBytes is an option of path (the lmdb engine)');
    await expectDocumentError(open({ prefix: Buffer.of(0xff) }), 'INVALID_ARGUMENT');
    await expectDocumentError(open({ prefix: 'x' as never }), 'INVALID_ARGUMENT');
    await expectDocumentError(open({ now: 5 as never }), 'INVALID_ARGUMENT');
  });
});
