import { isDocumentError, type DocumentError } from '../../src/document/errors';
import { Layout } from '../../src/document/keys/layout';
import {
  addCollection,
  defaultManifest,
  dropCollection,
  parseManifest,
  resolveCollection,
  type ManifestLookupError,
} from '../../src/document/manifest/manifest';
import {
  ensureCollection,
  getCollectionId,
  getManifest,
  getScopeId,
  planCollection,
  prepareManifestWrite,
  readDroppedCollections,
  wroteManifest,
  manifestKeys,
  manifestUidKey,
  readManifest,
  readManifestUid,
  readUsedIds,
  setManifest,
  writeManifest,
  type EnsureCollectionOptions,
} from '../../src/document/manifest/manifest-store';
import { Database } from '../../src/kv/contract/database';
import { isKvError } from '../../src/kv/contract/errors';
import type { Transaction } from '../../src/kv/contract/types';
import { Barrier } from '../support/barrier';
import { CountingEngine } from '../../src/kv/counting-engine';
import { documentEngines } from '../support/document-engines';

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection, the promise resolved');
}

async function documentError(promise: Promise<unknown>): Promise<DocumentError> {
  const err = await rejection(promise);
  if (isDocumentError(err)) return err;
  throw err;
}

/** The code and the manifest uid of the lookup error `promise` rejects with. */
async function lookupError(promise: Promise<unknown>): Promise<[string, string]> {
  const err = await documentError(promise);
  return [err.code, (err as ManifestLookupError).manifestUid];
}

interface ScopeJson {
  name: string;
  uid: string;
  collections?: { name: string; uid: string; maxTTL?: number }[];
}

/** A manifest's JSON: the `_default` scope with `_default._default`, then `scopes`. */
function manifestJson(uid: string, scopes: ScopeJson[] = []): string {
  return JSON.stringify({
    uid,
    scopes: [{ name: '_default', uid: '0', collections: [{ name: '_default', uid: '0' }] }, ...scopes],
  });
}

const layout = new Layout(['manifest-test']);
const sys = layout.system;
const collectionPrefix = (id: number) => layout.collectionPrefix(id);
const docKey = (collectionId: number, id: string) => Buffer.concat([collectionPrefix(collectionId), Buffer.from(id)]);

for (const engine of documentEngines) {
  describe(`manifest store [${engine.name}]`, () => {
    let db: Database;

    beforeEach(async () => {
      db = await engine.open();
    });

    afterEach(async () => {
      await db.close();
    });

    const tx = <T>(fn: (tr: Transaction) => Promise<T>) => db.transact(fn);
    const manifestNow = () => tx((tr) => getManifest(tr, sys));
    const set = (json: string) => tx((tr) => setManifest(tr, sys, json, { collectionPrefix }));
    const ensure = (path: string, options?: EnsureCollectionOptions) => tx((tr) => ensureCollection(tr, sys, path, options));
    const drop = (scope: string, name: string, withPrefix = true) =>
      tx(async (tr) => {
        const next = dropCollection(await getManifest(tr, sys), scope, name);
        return writeManifest(tr, sys, next, withPrefix ? { collectionPrefix } : {});
      });
    const counted = () => {
      const counter = new CountingEngine(db.engine);
      return { counter, kv: new Database(counter) };
    };

    describe('before any manifest is set', () => {
      it('getManifest returns the default manifest; readManifest and readManifestUid find nothing', async () => {
        await tx(async (tr) => {
          expect(await getManifest(tr, sys)).toEqual(defaultManifest());
          expect(await readManifest(tr, sys)).toBeUndefined();
          expect(await readManifestUid(tr, sys)).toBeUndefined();
        });
      });

      it('resolves the default collection and scope against manifest uid 0', async () => {
        expect(await tx((tr) => getCollectionId(tr, sys, '.'))).toEqual({ manifestUid: '0', collectionId: 0 });
        expect(await tx((tr) => getScopeId(tr, sys, ''))).toEqual({ manifestUid: '0', scopeId: 0 });
        expect(await lookupError(tx((tr) => getCollectionId(tr, sys, 'app.users')))).toEqual(['UNKNOWN_SCOPE', '0']);
      });
    });

    describe('setManifest and getManifest', () => {
      it('stores the manifest and its uid; getManifest returns it normalised', async () => {
        const json = manifestJson('0A', [{ name: 'app', uid: '08', collections: [{ name: 'users', uid: 'C', maxTTL: 60 }] }]);
        const change = await set(json);
        expect([change.changed, change.addedCollections]).toEqual([true, [12]]);
        await tx(async (tr) => {
          expect(await getManifest(tr, sys)).toEqual(parseManifest(json));
          expect((await getManifest(tr, sys)).uid).toBe('a');
          expect(await readManifestUid(tr, sys)).toBe('a');
          expect(await getCollectionId(tr, sys, 'app.users')).toEqual({ manifestUid: 'a', collectionId: 12, maxTTL: 60 });
          expect(await getScopeId(tr, sys, 'app.anything')).toEqual({ manifestUid: 'a', scopeId: 8 });
        });
      });

      it('is transactional: an update whose transaction does not commit leaves nothing', async () => {
        const tr = db.createTransaction();
        await setManifest(tr, sys, manifestJson('1', [{ name: 'app', uid: '8' }]));
        tr.cancel();
        const failed = tx(async (tr2) => {
          await setManifest(tr2, sys, manifestJson('2', [{ name: 'app', uid: '8' }]));
          throw new Error('the write fails after the update');
        });
        await expect(failed).rejects.toThrow('the write fails');
        expect(await manifestNow()).toEqual(defaultManifest());
      });

      it('stores a manifest larger than one value in chunks of at most 10,000 bytes', async () => {
        const collections = Array.from({ length: 3000 }, (_, i) => ({ name: `collection-${i}`, uid: (8 + i).toString(16) }));
        const json = manifestJson('1', [{ name: 'app', uid: '8', collections }]);
        expect(json.length).toBeGreaterThan(100_000);
        await set(json);
        const { begin, end } = sys.range(manifestKeys.chunks);
        const chunks = await db.getRangeAll(begin, end);
        expect(chunks.length).toBe(Math.ceil(json.length / 10_000));
        expect(chunks.every((kv) => kv.value.length <= 10_000)).toBe(true);
        expect(await manifestNow()).toEqual(parseManifest(json));
        // A smaller successor leaves no stale chunk behind.
        const smaller = manifestJson('2', [{ name: 'app', uid: '8' }]);
        await set(smaller);
        expect(await db.getRangeAll(begin, end)).toHaveLength(1);
        expect(await manifestNow()).toEqual(parseManifest(smaller));
      });

      it('rejects invalid JSON and invalid manifests with INVALID_ARGUMENT naming the field, writing nothing', async () => {
        expect((await documentError(set('{'))).code).toBe('INVALID_ARGUMENT');
        const err = await documentError(set(manifestJson('1', [{ name: 'app', uid: '8', collections: [{ name: 'c', uid: '3' }] }])));
        expect([err.code, err.path]).toEqual(['INVALID_ARGUMENT', 'scopes[1].collections[0].uid']);
        expect(await manifestNow()).toEqual(defaultManifest());
      });

      it('refuses a manifest uid lower than the current one with OUT_OF_RANGE', async () => {
        await set(manifestJson('10'));
        expect((await documentError(set(manifestJson('f', [{ name: 'app', uid: '8' }])))).code).toBe('OUT_OF_RANGE');
        expect((await manifestNow()).uid).toBe('10');
      });

      it('accepts a repeated set (equal uid, same content) as a no-op that writes nothing', async () => {
        const json = manifestJson('3', [{ name: 'app', uid: '8' }]);
        await set(json);
        const { counter, kv } = counted();
        const { result, counts } = await counter.measure(() => kv.transact((tr) => setManifest(tr, sys, json)));
        expect(result.changed).toBe(false);
        expect(counts.keysWritten + counts.clearRanges).toBe(0);
      });

      it('refuses an equal uid with different content with OUT_OF_RANGE', async () => {
        await set(manifestJson('3'));
        expect((await documentError(set(manifestJson('3', [{ name: 'app', uid: '8' }])))).code).toBe('OUT_OF_RANGE');
      });

      it('treats the epoch manifest as already set: setting it is a no-op', async () => {
        expect((await set(manifestJson('0'))).changed).toBe(false);
        expect(await tx((tr) => readManifestUid(tr, sys))).toBeUndefined();
      });

      it('judges unknown scopes and collections against the stored manifest uid', async () => {
        await set(manifestJson('2b', [{ name: 'app', uid: '8' }]));
        expect(await lookupError(tx((tr) => getCollectionId(tr, sys, 'app.nope')))).toEqual(['UNKNOWN_COLLECTION', '2b']);
        expect(await lookupError(tx((tr) => getScopeId(tr, sys, 'nope')))).toEqual(['UNKNOWN_SCOPE', '2b']);
      });

      it('rejects an invalid path with INVALID_ARGUMENT', async () => {
        expect((await documentError(tx((tr) => getCollectionId(tr, sys, 'no-dot')))).code).toBe('INVALID_ARGUMENT');
        expect((await documentError(tx((tr) => getScopeId(tr, sys, 'a.b.c')))).code).toBe('INVALID_ARGUMENT');
      });
    });

    describe('dropped ids', () => {
      it('are recorded and never reused, however many updates later', async () => {
        await set(
          manifestJson('1', [
            { name: 'app', uid: '8', collections: [{ name: 'c', uid: '9' }] },
            { name: 'old', uid: '9' },
          ]),
        );
        await set(manifestJson('2', [{ name: 'app', uid: '8' }]));
        await set(manifestJson('3', [{ name: 'app', uid: '8', collections: [{ name: 'd', uid: 'a' }] }]));
        const collection = await documentError(set(manifestJson('4', [{ name: 'app', uid: '8', collections: [{ name: 'c', uid: '9' }] }])));
        expect([collection.code, collection.path]).toEqual(['INVALID_ARGUMENT', 'scopes[1].collections[0].uid']);
        const scope = await documentError(set(manifestJson('4', [{ name: 'old', uid: '9' }])));
        expect([scope.code, scope.path]).toEqual(['INVALID_ARGUMENT', 'scopes[1].uid']);
        expect(await tx((tr) => readUsedIds(tr, sys))).toEqual({ maxCollectionId: 9, maxScopeId: 9 });
      });

      it('readUsedIds finds none before any drop', async () => {
        expect(await tx((tr) => readUsedIds(tr, sys))).toEqual({ maxCollectionId: undefined, maxScopeId: undefined });
      });
    });

    describe('dropping a collection', () => {
      const ids = [0, 8, 9, 0x88, 0x108];
      const seed = async () => {
        const collections = ids.filter((id) => id !== 0).map((id) => ({ name: `c${id}`, uid: id.toString(16) }));
        await tx(async (tr) => {
          await setManifest(tr, sys, manifestJson('1', [{ name: 'app', uid: '8', collections }]));
          for (const id of ids) {
            tr.set(docKey(id, 'doc-a'), 'a');
            tr.set(docKey(id, 'doc-b'), 'b');
          }
        });
      };
      const keysOf = async (id: number) => {
        const prefix = collectionPrefix(id);
        const all = await db.getRangeAll(layout.prefix, Buffer.concat([layout.prefix, Buffer.of(0xff)]));
        return all.filter((kv) => kv.key.subarray(0, prefix.length).equals(prefix)).length;
      };

      it('makes it unreachable at once and clears its keys (and only its keys) in the same transaction', async () => {
        await seed();
        expect((await drop('app', 'c136')).droppedCollections).toEqual([0x88]);
        expect((await documentError(tx((tr) => getCollectionId(tr, sys, 'app.c136')))).code).toBe('UNKNOWN_COLLECTION');
        expect(await keysOf(0x88)).toBe(0);
        // 0x108 encodes as 88 02: it shares a first byte with 0x88 (88 01) and must survive.
        for (const id of [0, 8, 9, 0x108]) expect(await keysOf(id)).toBe(2);
      });

      it('clears the keys of every collection of a dropped scope', async () => {
        await seed();
        await set(manifestJson('2'));
        for (const id of [8, 9, 0x88, 0x108]) expect(await keysOf(id)).toBe(0);
        expect(await keysOf(0)).toBe(2);
        expect(await tx((tr) => readUsedIds(tr, sys))).toEqual({ maxCollectionId: 0x108, maxScopeId: 8 });
      });

      it('clears the _default collection when the first manifest set leaves it out', async () => {
        await tx(async (tr) => tr.set(docKey(0, 'doc'), 'x'));
        await set(JSON.stringify({ uid: '1', scopes: [{ name: '_default', uid: '0' }] }));
        expect(await keysOf(0)).toBe(0);
        expect((await documentError(tx((tr) => getCollectionId(tr, sys, '.')))).code).toBe('UNKNOWN_COLLECTION');
      });

      it('leaves the keys to the caller without collectionPrefix (still unreachable: the id is never reused)', async () => {
        await seed();
        await drop('app', 'c8', false);
        expect(await keysOf(8)).toBe(2);
        expect((await documentError(tx((tr) => getCollectionId(tr, sys, 'app.c8')))).code).toBe('UNKNOWN_COLLECTION');
      });
    });

    describe('ensureCollection (a collection is added on first write)', () => {
      it('adds a missing collection and its scope by a manifest update, then finds it', async () => {
        expect(await ensure('app.users')).toEqual({ manifestUid: '1', collectionId: 8, created: true });
        const again = await tx((tr) => ensureCollection(tr, sys, { scope: 'app', collection: 'users' }));
        expect(again).toEqual({ manifestUid: '1', collectionId: 8, created: false });
        expect(await tx((tr) => getScopeId(tr, sys, 'app'))).toEqual({ manifestUid: '1', scopeId: 8 });
        expect(await ensure('.events')).toEqual({ manifestUid: '2', collectionId: 9, created: true });
      });

      it('finds the default collection without writing', async () => {
        expect(await ensure('.')).toEqual({ manifestUid: '0', collectionId: 0, created: false });
        expect(await tx((tr) => readManifestUid(tr, sys))).toBeUndefined();
      });

      it('creates nothing when the write’s transaction does not commit', async () => {
        const failed = tx(async (tr) => {
          await ensureCollection(tr, sys, 'app.users');
          throw new Error('the write fails');
        });
        await expect(failed).rejects.toThrow('the write fails');
        expect(await manifestNow()).toEqual(defaultManifest());
      });

      it('with autoCreate: false, throws UNKNOWN_COLLECTION or UNKNOWN_SCOPE with the manifest uid instead', async () => {
        await ensure('app.users');
        expect(await lookupError(ensure('app.orders', { autoCreate: false }))).toEqual(['UNKNOWN_COLLECTION', '1']);
        expect(await lookupError(ensure('other.orders', { autoCreate: false }))).toEqual(['UNKNOWN_SCOPE', '1']);
        expect((await manifestNow()).uid).toBe('1');
      });

      it('does not create system names or bring back a dropped _default collection', async () => {
        expect((await documentError(ensure('app._system'))).code).toBe('UNKNOWN_SCOPE');
        expect((await documentError(ensure('_system.c'))).code).toBe('UNKNOWN_SCOPE');
        await set(JSON.stringify({ uid: '1', scopes: [{ name: '_default', uid: '0' }] }));
        expect((await documentError(ensure('.'))).code).toBe('UNKNOWN_COLLECTION');
      });

      it('gives a created collection the maxTTL asked for; an existing one keeps its own', async () => {
        expect(await ensure('app.sessions', { maxTTL: 600 })).toMatchObject({ maxTTL: 600, created: true });
        expect(await ensure('app.sessions', { maxTTL: 5 })).toMatchObject({ maxTTL: 600, created: false });
        expect((await documentError(ensure('app.bad', { maxTTL: -1 }))).code).toBe('INVALID_ARGUMENT');
      });

      it('re-creates a dropped collection with a new id, so its old documents stay unreachable', async () => {
        const old = await tx(async (tr) => {
          const created = await ensureCollection(tr, sys, 'app.users');
          tr.set(docKey(created.collectionId, 'doc'), 'x');
          return created;
        });
        await drop('app', 'users');
        const again = await ensure('app.users');
        expect(again).toEqual({ manifestUid: '3', collectionId: 9, created: true });
        const prefix = collectionPrefix(old.collectionId);
        expect(await db.getRangeAll(prefix, Buffer.concat([prefix, Buffer.of(0xff)]))).toEqual([]);
      });

      it('uses a manifest the caller already holds, reading nothing when the collection exists', async () => {
        await ensure('app.users');
        const manifest = await manifestNow();
        const { counter, kv } = counted();
        const { result, counts } = await counter.measure(() => kv.transact((tr) => ensureCollection(tr, sys, 'app.users', { manifest })));
        expect(result.collectionId).toBe(8);
        expect(counts.gets + counts.rangeReads).toBe(0);
      });

      it('refuses an invalid path', async () => {
        expect((await documentError(ensure('users'))).code).toBe('INVALID_ARGUMENT');
        expect((await documentError(ensure('app.$users'))).code).toBe('INVALID_ARGUMENT');
      });
    });

    describe('concurrency (two processes, one database)', () => {
      /** Runs `ensureCollection` in a retried transaction whose first attempt waits at `barrier` after reading. */
      const ensureAfter = (barrier: Barrier, path: string) => {
        let attempt = 0;
        return tx(async (tr) => {
          const result = await ensureCollection(tr, sys, path);
          if (attempt++ === 0) await barrier.arrive();
          return result;
        });
      };

      it('of two transactions adding different collections, one commits and the other conflicts', async () => {
        const tr1 = db.createTransaction();
        const tr2 = db.createTransaction();
        expect((await ensureCollection(tr1, sys, 'app.a')).collectionId).toBe(8);
        expect((await ensureCollection(tr2, sys, 'app.b')).collectionId).toBe(8);
        await tr1.commit();
        expect(isKvError(await rejection(tr2.commit()), 'not_committed')).toBe(true);
        expect(await tx((tr) => getCollectionId(tr, sys, 'app.a'))).toEqual({ manifestUid: '1', collectionId: 8 });
      });

      it('the retry loop adds both, with different ids', async () => {
        const barrier = new Barrier(2);
        const [a, b] = await Promise.all([ensureAfter(barrier, 'app.a'), ensureAfter(barrier, 'app.b')]);
        expect(new Set([a.collectionId, b.collectionId])).toEqual(new Set([8, 9]));
        const manifest = await manifestNow();
        expect(manifest.uid).toBe('2');
        expect(resolveCollection(manifest, 'app.a').collectionId).toBe(a.collectionId);
        expect(resolveCollection(manifest, 'app.b').collectionId).toBe(b.collectionId);
      });

      it('two transactions creating the same collection end with one collection and one id', async () => {
        const barrier = new Barrier(2);
        const [a, b] = await Promise.all([ensureAfter(barrier, 'app.users'), ensureAfter(barrier, 'app.users')]);
        expect([a.collectionId, b.collectionId]).toEqual([8, 8]);
        expect([a.created, b.created].sort()).toEqual([false, true]);
        expect((await manifestNow()).uid).toBe('1');
      });

      it('a writer that put a read conflict on the uid key conflicts with a drop committed after its read version', async () => {
        await ensure('app.users');
        const { collectionId } = resolveCollection(await manifestNow(), 'app.users');
        // The writer trusts a copy of the manifest it holds: no read, only the conflict key.
        const writer = db.createTransaction();
        await writer.getReadVersion();
        writer.addReadConflictKey(manifestUidKey(sys));
        writer.set(docKey(collectionId, 'doc'), 'x');
        await drop('app', 'users');
        expect(isKvError(await rejection(writer.commit()), 'not_committed')).toBe(true);
      });

      it('two collections planned concurrently in one transaction: the second create() fails instead of undoing the first', async () => {
        const tr = db.createTransaction();
        const [a, b] = await Promise.all([planCollection(tr, sys, 'app.a'), planCollection(tr, sys, 'app.b')]);
        expect([a.collectionId, b.collectionId]).toEqual([8, 8]);
        a.create?.();
        expect(() => b.create?.()).toThrow(/another manifest update was written in this transaction/);
        await tr.commit();
        expect((await manifestNow()).scopes[1].collections.map((c) => c.name)).toEqual(['a']);
      });
    });

    describe('planCollection', () => {
      it('reads and checks everything first and writes nothing until create()', async () => {
        const { counter, kv } = counted();
        const tr = kv.createTransaction();
        const planned = await planCollection(tr, sys, 'app.users');
        expect(planned).toMatchObject({ manifestUid: '1', collectionId: 8, created: true });
        expect(wroteManifest(tr)).toBe(false);
        const before = counter.take();
        expect(before.keysWritten + before.clearRanges).toBe(0);
        planned.create?.();
        expect(wroteManifest(tr)).toBe(true);
        await tr.commit();
        expect((await tx((t) => getCollectionId(t, sys, 'app.users'))).collectionId).toBe(8);
      });

      it('leaves nothing when create() is not called, even if the transaction commits', async () => {
        await tx(async (tr) => {
          await planCollection(tr, sys, 'app.users');
          tr.set('other', 'x');
        });
        expect(await manifestNow()).toEqual(defaultManifest());
      });

      it('finds an existing collection (no create) even when the manifest given is older', async () => {
        const old = await manifestNow();
        await ensure('app.users');
        const planned = await tx((tr) => planCollection(tr, sys, 'app.users', { manifest: old }));
        expect(planned).toEqual({ manifestUid: '1', collectionId: 8, created: false });
      });
    });

    describe('prepareManifestWrite', () => {
      it('writes only at apply(), and a repeated manifest applies as a no-op', async () => {
        const next = addCollection(defaultManifest(), 'app', 'users');
        await tx(async (tr) => {
          const prepared = await prepareManifestWrite(tr, sys, next);
          expect(prepared.change.changed).toBe(true);
          expect(await readManifestUid(tr, sys)).toBeUndefined();
          prepared.apply();
          expect(await readManifestUid(tr, sys)).toBe('1');
        });
        await tx(async (tr) => {
          const again = await prepareManifestWrite(tr, sys, next);
          expect(again.change.changed).toBe(false);
          again.apply();
          expect(wroteManifest(tr)).toBe(false);
        });
      });

      it('readDroppedCollections lists every dropped id in order', async () => {
        await ensure('app.a');
        await ensure('app.b');
        await ensure('app.c');
        await drop('app', 'c');
        await drop('app', 'a');
        expect(await tx((tr) => readDroppedCollections(tr, sys))).toEqual([8, 10]);
      });
    });
  });
}
