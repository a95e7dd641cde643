/**
 * Scopes and collections through the collections manifest: paths, the manifest API of the DocLayer,
 * collections added by their first write (race-free across processes), drops, isolation, the LEB128
 * collection prefix of stored keys, and the per-layer manifest cache with its invalidation.
 *
 * A "process" is a DocLayer of its own over the same database: its own cached manifest and watch.
 */
import { MutateInSpec, open, type DocLayer, type ManifestLookupError } from '../../src';
import { Layout } from '../../src/document/keys/layout';
import { strinc } from '../../src/kv/contract/bytes';
import { Database } from '../../src/kv/contract/database';
import type { Engine, Watch } from '../../src/kv/contract/types';
import { pack } from '../../src/tuple';
import { expectDocumentError } from '../support/document-assertions';
import { documentSuite } from './document-suite';

const layout = new Layout(['doclayer']);

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/** The keys stored under a collection id's prefix, as hex. */
async function keysOfCollection(kv: Database, id: number): Promise<string[]> {
  const prefix = layout.collectionPrefix(id);
  const pairs = await kv.getRangeAll(prefix, strinc(prefix));
  return pairs.map((pair) => pair.key.toString('hex'));
}

/** Retries `check` until it passes (a watch reports a commit asynchronously), for up to 2 s. */
async function eventually(check: () => Promise<void>): Promise<void> {
  const deadline = Date.now() + 2000;
  for (;;) {
    try {
      await check();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }
}

/**
 * The same database, with watches that never fire (until cancelled): a process that has not yet
 * heard of a manifest change, for as long as a test needs.
 */
function withSilentWatches(kv: Database): Database {
  const inner = kv.engine;
  const silent = (): Watch => {
    let cancel = () => undefined as void;
    const promise = new Promise<boolean>((resolve) => {
      cancel = () => resolve(false);
    });
    return { promise, cancel };
  };
  const engine: Engine = {
    name: inner.name,
    createTransaction: () => {
      const tr = inner.createTransaction();
      return new Proxy(tr, {
        get(target, property) {
          if (property === 'watch') return silent;
          const value = Reflect.get(target, property, target) as unknown;
          return typeof value === 'function' ? (value.bind(target) as unknown) : value;
        },
      });
    },
    close: () => inner.close(),
  };
  return new Database(engine);
}

/** DocLayers over `kv` that the test closes at its end (the suite closes the database). */
function processes() {
  const layers: DocLayer[] = [];
  afterEach(async () => {
    for (const layer of layers.splice(0)) await layer.close();
  });
  return async (kv: Database, options: { autoCreate?: boolean } = {}): Promise<DocLayer> => {
    const layer = await open({ database: kv, ...options });
    layers.push(layer);
    return layer;
  };
}

documentSuite('collection paths', (ctx) => {
  it("scope('app').collection('users') and collection('app.users') are one collection, one handle", async () => {
    const { docs } = await ctx.open();
    expect(docs.scope('app').collection('users')).toBe(docs.collection('app.users'));
    await docs.scope('app').collection('users').insert({ a: 1 }, { id: 'd' });
    expect((await docs.collection('app.users').get('d')).content).toEqual({ a: 1 });
    expect(docs.collection('app.users').scope).toBe('app');
    expect(docs.collection('app.users').name).toBe('users');
  });

  it("'.c1' is _default.c1, and a bare name is a collection of the _default scope", async () => {
    const { docs } = await ctx.open();
    await docs.collection('.c1').insert({ a: 1 }, { id: 'd' });
    for (const c of [docs.collection('_default.c1'), docs.collection('c1'), docs.scope().collection('c1'), docs.scope('_default').collection('c1')]) {
      expect((await c.get('d')).content).toEqual({ a: 1 });
    }
    expect(await docs.getCollectionId('.c1')).toEqual({ manifestUid: '1', collectionId: 8 });
  });

  it("'.', '_default._default', no path and scope().collection() are the default collection", async () => {
    const { docs } = await ctx.open();
    await docs.collection('.').insert({ a: 1 }, { id: 'd' });
    for (const c of [
      docs.collection(),
      docs.collection('_default._default'),
      docs.scope().collection(),
      docs.scope('_default').collection('_default'),
    ]) {
      expect((await c.get('d')).content).toEqual({ a: 1 });
    }
    expect((await docs.getManifest()).uid).toBe('0');
  });

  it('a path with several dots, or an invalid name, is INVALID_ARGUMENT', async () => {
    const { docs } = await ctx.open();
    for (const path of ['a.b.c', '..', 'app.', 'app.$users', '%x.users', 'app.users%x'.replace('%x', '$'), 'a b.c', 'x'.repeat(252)]) {
      if (path === 'app.') continue; // '' is _default: valid
      await expectDocumentError(() => docs.collection(path), 'INVALID_ARGUMENT');
    }
    await expectDocumentError(() => docs.collection(42 as unknown as string), 'INVALID_ARGUMENT');
    await expectDocumentError(() => docs.scope('app.users'), 'INVALID_ARGUMENT');
    await expectDocumentError(() => docs.scope('%app'), 'INVALID_ARGUMENT');
    await expectDocumentError(() => docs.scope('app').collection('a.b'), 'INVALID_ARGUMENT');
    await expectDocumentError(() => docs.scope('app').collection(''), 'INVALID_ARGUMENT');
  });
});

documentSuite('DocLayer manifest API', (ctx) => {
  it('getCollectionId and getScopeId resolve against the stored manifest, with its uid', async () => {
    const { docs } = await ctx.open();
    expect(await docs.getCollectionId('.')).toEqual({ manifestUid: '0', collectionId: 0 });
    expect(await docs.getCollectionId('_default._default')).toEqual({ manifestUid: '0', collectionId: 0 });
    expect(await docs.getScopeId('')).toEqual({ manifestUid: '0', scopeId: 0 });
    await docs.collection('app.users').insert({}, { id: 'd' });
    expect(await docs.getCollectionId('app.users')).toEqual({ manifestUid: '1', collectionId: 8 });
    expect(await docs.getScopeId('app')).toEqual({ manifestUid: '1', scopeId: 8 });
    // A scope lookup ignores a .collection part, even of a collection that does not exist.
    expect(await docs.getScopeId('app.nothing')).toEqual({ manifestUid: '1', scopeId: 8 });
    expect(await docs.getScopeId('_default')).toEqual({ manifestUid: '1', scopeId: 0 });
  });

  it('getCollectionId needs exactly one dot; getScopeId at most one', async () => {
    const { docs } = await ctx.open();
    for (const path of ['users', '', 'a.b.c', '...']) await expectDocumentError(docs.getCollectionId(path), 'INVALID_ARGUMENT');
    for (const path of ['a.b.c', '..']) await expectDocumentError(docs.getScopeId(path), 'INVALID_ARGUMENT');
    await expectDocumentError(docs.getScopeId('$app'), 'INVALID_ARGUMENT');
  });

  it('unknown collections and scopes are UNKNOWN_COLLECTION / UNKNOWN_SCOPE carrying the manifest uid', async () => {
    const { docs } = await ctx.open();
    await docs.collection('app.users').insert({}, { id: 'd' });
    const collection = (await expectDocumentError(docs.getCollectionId('app.orders'), 'UNKNOWN_COLLECTION')) as ManifestLookupError;
    expect(collection.manifestUid).toBe('1');
    const scope = (await expectDocumentError(docs.getCollectionId('shop.orders'), 'UNKNOWN_SCOPE')) as ManifestLookupError;
    expect(scope.manifestUid).toBe('1');
    await expectDocumentError(docs.getScopeId('shop'), 'UNKNOWN_SCOPE');
  });

  it('setManifest stores the manifest (getManifest returns it normalised) and collections use its ids', async () => {
    const { docs } = await ctx.open();
    const stored = await docs.setManifest({
      uid: '0A',
      scopes: [
        { name: '_default', uid: '0', collections: [{ name: '_default', uid: '0' }] },
        { name: 'app', uid: '00C', collections: [{ name: 'users', uid: '2A', maxTTL: 60 }] },
      ],
    });
    expect(stored.uid).toBe('a');
    expect(await docs.getManifest()).toEqual(stored);
    expect(JSON.stringify(stored)).toBe(
      '{"uid":"a","scopes":[{"name":"_default","uid":"0","collections":[{"name":"_default","uid":"0"}]},' +
        '{"name":"app","uid":"c","collections":[{"name":"users","uid":"2a","maxTTL":60}]}]}',
    );
    expect(await docs.getCollectionId('app.users')).toEqual({ manifestUid: 'a', collectionId: 0x2a, maxTTL: 60 });
    await docs.collection('app.users').insert({ a: 1 }, { id: 'd' });
    expect(await keysOfCollection(docs.kv, 0x2a)).not.toEqual([]);
    // The next collection created on demand takes an id above every one in use.
    await docs.collection('app.orders').insert({}, { id: 'o' });
    expect(await docs.getCollectionId('app.orders')).toEqual({ manifestUid: 'b', collectionId: 0x2b });
  });

  it('setManifest refuses invalid manifests (INVALID_ARGUMENT) and a lower uid (OUT_OF_RANGE), changing nothing', async () => {
    const { docs } = await ctx.open();
    await docs.collection('app.users').insert({}, { id: 'd' });
    const before = await docs.getManifest();
    await expectDocumentError(docs.setManifest('{"uid":"5"'), 'INVALID_ARGUMENT');
    await expectDocumentError(docs.setManifest({ uid: '5', scopes: [] }), 'INVALID_ARGUMENT');
    await expectDocumentError(
      docs.setManifest({ uid: '0', scopes: [{ name: '_default', uid: '0', collections: [{ name: '_default', uid: '0' }] }] }),
      'OUT_OF_RANGE',
    );
    // Renaming an id is refused.
    const renamed = JSON.parse(JSON.stringify(before)) as { uid: string; scopes: { collections: { name: string }[] }[] };
    renamed.uid = '9';
    renamed.scopes[1].collections[0].name = 'people';
    await expectDocumentError(docs.setManifest(renamed), 'INVALID_ARGUMENT');
    expect(await docs.getManifest()).toEqual(before);
  });

  it('createCollection adds a collection with a maxTTL; an existing one is INVALID_ARGUMENT', async () => {
    const { docs } = await ctx.open();
    expect(await docs.createCollection('app.sessions', { maxTTL: 30 })).toEqual({ manifestUid: '1', collectionId: 8, maxTTL: 30 });
    await expectDocumentError(docs.createCollection('app.sessions'), 'INVALID_ARGUMENT');
    await expectDocumentError(docs.createCollection('app.bad', { maxTTL: -1 }), 'INVALID_ARGUMENT');
    await expectDocumentError(docs.createCollection('app._system'), 'INVALID_ARGUMENT');
  });
});

documentSuite('collections added by their first write', (ctx) => {
  const process = processes();

  it('adds the collection and its scope by one manifest update; reads of a missing collection add nothing', async () => {
    const { docs } = await ctx.open();
    const orders = docs.collection('shop.orders');
    await expectDocumentError(orders.get('o'), 'DOCUMENT_NOT_FOUND');
    expect(await orders.exists('o')).toBe(false);
    expect(await orders.getMany(['o'])).toEqual([undefined]);
    expect(await collect(orders.scan())).toEqual([]);
    await expectDocumentError(orders.replace('o', {}), 'DOCUMENT_NOT_FOUND');
    await expectDocumentError(orders.remove('o'), 'DOCUMENT_NOT_FOUND');
    expect((await docs.getManifest()).uid).toBe('0');
    await orders.insert({ total: 3 }, { id: 'o' });
    const manifest = await docs.getManifest();
    expect(manifest.uid).toBe('1');
    expect(manifest.scopes.map((s) => s.name)).toEqual(['_default', 'shop']);
    expect((await orders.get('o')).content).toEqual({ total: 3 });
  });

  it('each kind of write adds it: upsert, mutateIn that creates the document', async () => {
    const { docs } = await ctx.open();
    await docs.collection('a.x').upsert('d', { v: 1 });
    await docs.collection('a.y').mutateIn('d', [MutateInSpec.upsert('v', 2)], { storeSemantics: 'upsert' });
    expect(await docs.getCollectionId('a.x')).toMatchObject({ collectionId: 8 });
    expect(await docs.getCollectionId('a.y')).toMatchObject({ collectionId: 9 });
    expect((await docs.collection('a.y').get('d')).content).toEqual({ v: 2 });
  });

  it('a write that fails adds nothing, even inside a caller transaction that commits', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection('app.never');
    await expectDocumentError(c.mutateIn('d', [MutateInSpec.upsert('v', 1)]), 'DOCUMENT_NOT_FOUND');
    await docs.transact(async (tr) => {
      await expectDocumentError(
        c.mutateIn('d', [MutateInSpec.insert('v', 1), MutateInSpec.insert('v', 2)], { tr, storeSemantics: 'upsert' }),
        'PATH_EXISTS',
      );
      await docs.collection().upsert('other', {}, { tr });
    });
    expect((await docs.getManifest()).uid).toBe('0');
    await expectDocumentError(docs.getCollectionId('app.never'), 'UNKNOWN_SCOPE');
  });

  it('several collections created one after another in one transaction', async () => {
    const { docs } = await ctx.open();
    await docs.transact(async (tr) => {
      await docs.collection('app.a').insert({ a: 1 }, { id: 'd', tr });
      await docs.collection('app.b').insert({ b: 1 }, { id: 'd', tr });
      expect((await docs.collection('app.a').get('d', { tr })).content).toEqual({ a: 1 });
    });
    expect((await docs.getManifest()).uid).toBe('2');
    expect((await docs.collection('app.b').get('d')).content).toEqual({ b: 1 });
  });

  it('with autoCreate: false (open option or per handle), every operation on a missing collection is UNKNOWN_COLLECTION', async () => {
    const { docs, kv } = await ctx.open();
    const strict = await process(kv, { autoCreate: false });
    for (const c of [strict.collection('app.users'), docs.collection('app.users', { autoCreate: false })]) {
      await expectDocumentError(c.insert({}, { id: 'd' }), 'UNKNOWN_SCOPE');
      await expectDocumentError(c.get('d'), 'UNKNOWN_SCOPE');
    }
    await docs.createCollection('app.other');
    const users = strict.collection('app.users');
    await expectDocumentError(users.insert({}, { id: 'd' }), 'UNKNOWN_COLLECTION');
    await expectDocumentError(users.upsert('d', {}), 'UNKNOWN_COLLECTION');
    await expectDocumentError(users.mutateIn('d', [MutateInSpec.upsert('a', 1)], { storeSemantics: 'upsert' }), 'UNKNOWN_COLLECTION');
    await expectDocumentError(users.get('d'), 'UNKNOWN_COLLECTION');
    await expectDocumentError(users.exists('d'), 'UNKNOWN_COLLECTION');
    await expectDocumentError(collect(users.scan()), 'UNKNOWN_COLLECTION');
    await expectDocumentError(users.remove('d'), 'UNKNOWN_COLLECTION');
    expect((await docs.getManifest()).uid).toBe('1');
    await docs.createCollection('app.users');
    await users.insert({ ok: true }, { id: 'd' });
    expect((await users.get('d')).content).toEqual({ ok: true });
    // The default collection exists from the start.
    await strict.collection().insert({}, { id: 'd' });
  });

  it('system names and a dropped _default collection are never created: UNKNOWN_COLLECTION', async () => {
    const { docs } = await ctx.open();
    await expectDocumentError(docs.collection('_system').insert({}, { id: 'd' }), 'UNKNOWN_COLLECTION');
    await docs.dropCollection('.');
    await expectDocumentError(docs.collection().insert({}, { id: 'd' }), 'UNKNOWN_COLLECTION');
    await expectDocumentError(docs.collection().get('d'), 'DOCUMENT_NOT_FOUND');
  });

  it('two processes creating collections at once: each collection gets one id, distinct, and every document lands', async () => {
    const { kv } = await ctx.open();
    const a = await process(kv);
    const b = await process(kv);
    await Promise.all([
      a.collection('app.a').insert({ by: 'a' }, { id: 'd' }),
      b.collection('app.b').insert({ by: 'b' }, { id: 'd' }),
      a.collection('app.shared').insert({ by: 'a' }, { id: 'from-a' }),
      b.collection('app.shared').insert({ by: 'b' }, { id: 'from-b' }),
      b.collection('other.c').upsert('d', { by: 'b' }),
    ]);
    const manifest = await a.getManifest();
    const ids = manifest.scopes.flatMap((s) => s.collections.map((c) => c.uid));
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toHaveLength(5);
    for (const layer of [a, b]) {
      expect((await layer.collection('app.a').get('d')).content).toEqual({ by: 'a' });
      expect((await layer.collection('app.b').get('d')).content).toEqual({ by: 'b' });
      expect((await collect(layer.collection('app.shared').scan())).map((item) => item.id)).toEqual(['from-a', 'from-b']);
      expect((await layer.collection('other.c').get('d')).content).toEqual({ by: 'b' });
    }
  });
});

documentSuite('dropping a collection', (ctx) => {
  const process = processes();

  it('makes its documents unreachable at once and clears its keys; the id is never reused', async () => {
    const { docs, kv } = await ctx.open();
    const users = docs.collection('app.users');
    await users.insert({ v: 'old' }, { id: 'd' });
    await docs.collection('app.keep').insert({ v: 'kept' }, { id: 'd' });
    expect(await keysOfCollection(kv, 8)).not.toEqual([]);
    const manifest = await docs.dropCollection('app.users');
    expect(manifest.uid).toBe('3');
    await expectDocumentError(users.get('d'), 'DOCUMENT_NOT_FOUND');
    expect(await collect(users.scan())).toEqual([]);
    expect(await keysOfCollection(kv, 8)).toEqual([]);
    expect((await docs.collection('app.keep').get('d')).content).toEqual({ v: 'kept' });
    // Writing again re-creates it under a new id: the old documents do not come back.
    await users.insert({ v: 'new' }, { id: 'e' });
    expect(await docs.getCollectionId('app.users')).toEqual({ manifestUid: '4', collectionId: 10 });
    await expectDocumentError(users.get('d'), 'DOCUMENT_NOT_FOUND');
    expect((await users.get('e')).content).toEqual({ v: 'new' });
  });

  it('by setManifest too, and of whole scopes', async () => {
    const { docs, kv } = await ctx.open();
    await docs.collection('app.users').insert({}, { id: 'd' });
    await docs.collection('app.orders').insert({}, { id: 'd' });
    const current = await docs.getManifest();
    await docs.setManifest({ uid: '10', scopes: current.scopes.filter((s) => s.name !== 'app') });
    expect(await keysOfCollection(kv, 8)).toEqual([]);
    expect(await keysOfCollection(kv, 9)).toEqual([]);
    await expectDocumentError(docs.getScopeId('app'), 'UNKNOWN_SCOPE');
    await expectDocumentError(docs.collection('app.users').get('d'), 'DOCUMENT_NOT_FOUND');
  });

  it('of an unknown collection is UNKNOWN_COLLECTION / UNKNOWN_SCOPE; an invalid path INVALID_ARGUMENT', async () => {
    const { docs } = await ctx.open();
    await expectDocumentError(docs.dropCollection('app.users'), 'UNKNOWN_SCOPE');
    await docs.createCollection('app.users');
    await expectDocumentError(docs.dropCollection('app.orders'), 'UNKNOWN_COLLECTION');
    await expectDocumentError(docs.dropCollection('a.b.c'), 'INVALID_ARGUMENT');
  });

  it("by another process: this process's cached manifest is dropped when its watch fires", async () => {
    const { kv } = await ctx.open();
    const a = await process(kv);
    const b = await process(kv);
    const users = a.collection('app.users');
    await users.insert({ v: 'old' }, { id: 'd' });
    expect((await users.get('d')).content).toEqual({ v: 'old' });
    await b.dropCollection('app.users');
    await b.collection('app.users').insert({ v: 'new' }, { id: 'd' });
    // Once a's watch fires, a reads the re-created collection (a new id), not the dropped one.
    await eventually(async () => expect((await users.get('d')).content).toEqual({ v: 'new' }));
    expect(await users.exists('d')).toBe(true);
  });
});

documentSuite('collection isolation and key prefixes', (ctx) => {
  it('documents with the same id in two collections never see each other', async () => {
    const { docs } = await ctx.open();
    const users = docs.collection('app.users');
    const orders = docs.scope('app').collection('orders');
    await users.insert({ kind: 'user', list: [1] }, { id: 'x' });
    await expectDocumentError(orders.get('x'), 'DOCUMENT_NOT_FOUND');
    expect(await orders.exists('x')).toBe(false);
    await orders.insert({ kind: 'order' }, { id: 'x' });
    await orders.mutateIn('x', [MutateInSpec.upsert('extra', true)]);
    expect((await users.get('x')).content).toEqual({ kind: 'user', list: [1] });
    expect((await users.lookupIn('x', [{ op: 'exists', path: 'extra' }])).entries[0].value).toBe(false);
    expect((await orders.getMany(['x'])).map((r) => r?.content)).toEqual([{ kind: 'order', extra: true }]);
    await users.remove('x');
    expect((await orders.get('x')).content).toEqual({ kind: 'order', extra: true });
    expect(await collect(users.scan())).toEqual([]);
    expect((await collect(orders.scan())).map((item) => item.id)).toEqual(['x']);
  });

  it('the collection prefix of a stored key is the canonical LEB128 of the collection id', async () => {
    const { docs, kv } = await ctx.open();
    const vectors: [string, string][] = [
      ['8', '08'],
      ['7f', '7f'],
      ['80', '8001'],
      ['555', 'd50a'],
      ['ffff', 'ffff03'],
      ['cafef00d', '8de0fbd70c'],
    ];
    await docs.setManifest({
      uid: '1',
      scopes: [
        { name: '_default', uid: '0', collections: [{ name: '_default', uid: '0' }] },
        { name: 'app', uid: '8', collections: vectors.map(([uid]) => ({ name: `c${uid}`, uid })) },
      ],
    });
    await docs.collection().insert({ v: 0 }, { id: 'd' });
    for (const [uid] of vectors) await docs.collection(`app.c${uid}`).insert({ v: uid }, { id: 'd' });
    const documents = Buffer.concat([pack(['doclayer']), Buffer.of(0x01)]);
    // The range ends at strinc: a LEB128 byte may be 0xff.
    const stored = await kv.getRangeAll(documents, strinc(documents));
    const byPrefix = new Map<string, number>();
    for (const { key } of stored) {
      const rest = key.subarray(documents.length).toString('hex');
      const docId = pack(['d']).toString('hex');
      const at = rest.indexOf(docId);
      byPrefix.set(rest.slice(0, at), (byPrefix.get(rest.slice(0, at)) ?? 0) + 1);
    }
    expect([...byPrefix.keys()].sort()).toEqual(['00', ...vectors.map(([, leb]) => leb)].sort());
    for (const [uid, leb] of vectors) {
      const prefix = Buffer.concat([documents, Buffer.from(leb, 'hex')]);
      const keys = await kv.getRangeAll(prefix, strinc(prefix));
      expect(keys.length).toBeGreaterThan(0);
      expect((await docs.collection(`app.c${uid}`).get('d')).content).toEqual({ v: uid });
    }
  });
});

documentSuite('the manifest cache', (ctx) => {
  const process = processes();

  it('get and insert through a named collection read no manifest key once it is cached', async () => {
    const { docs, counter } = await ctx.open();
    const users = docs.collection('app.users');
    const named = await users.insert({ a: 1 }, { id: 'warm' });
    expect(named.cas).toBeDefined();
    await users.get('warm');
    await users.get('warm');
    const system = layout.system.range([]);
    const inSystem = (key: unknown) => Buffer.isBuffer(key) && Buffer.compare(key, system.begin) >= 0 && Buffer.compare(key, system.end) < 0;
    const actions: [string, () => Promise<unknown>][] = [
      ['get', () => users.get('warm')],
      ['get(path)', () => users.get('warm', 'a')],
      ['insert', () => users.insert({ b: 2 }, { id: 'new' })],
      ['exists', () => users.exists('warm')],
    ];
    for (const [what, action] of actions) {
      const { counts, attempts } = await counter.measure(action);
      expect({ what, attempts: counts.attempts }).toEqual({ what, attempts: 1 });
      const reads = attempts.flatMap((a) => [...a.gets.map((g) => g.key), ...a.ranges.map((r) => r.begin)]);
      expect({ what, system: reads.filter(inSystem).length }).toEqual({ what, system: 0 });
    }
    const get = await counter.measure(() => users.get('warm'));
    expect([get.counts.rangeReads, get.counts.gets]).toEqual([1, 0]);
    const insert = await counter.measure(() => users.insert({}, { id: 'another' }));
    // Every write reads the metadata version (free with the read version), not the index catalog
    // key, once the catalog is cached (docs/indexes.md).
    expect([insert.counts.rangeReads, insert.counts.gets, insert.counts.metadataVersionReads]).toEqual([1, 0, 1]);
  });

  it('a collection created by another process is found at once, whatever this cache holds', async () => {
    const { kv } = await ctx.open();
    const db = withSilentWatches(kv);
    const a = await process(db);
    const b = await process(db);
    await a.collection().insert({}, { id: 'warm' });
    await b.collection('shop.orders').insert({ n: 1 }, { id: 'o' });
    // a's cache predates shop.orders and its watch never fires: a collection missing from the
    // cache is looked up in the stored manifest.
    expect((await a.collection('shop.orders').get('o')).content).toEqual({ n: 1 });
    await a.collection('shop.orders').upsert('p', { n: 2 });
    expect(await b.getCollectionId('shop.orders')).toEqual({ manifestUid: '1', collectionId: 8 });
  });

  it('a transaction that relied on the cache conflicts with a later drop, and its retry re-checks the manifest', async () => {
    const { kv } = await ctx.open();
    const db = withSilentWatches(kv);
    const a = await process(db);
    const b = await process(db);
    const users = a.collection('app.users');
    await users.insert({ v: 0 }, { id: 'before' });
    await users.get('before');
    let attempts = 0;
    await a.transact(async (tr) => {
      attempts++;
      await users.upsert('d', { attempt: attempts }, { tr });
      // The drop commits after this transaction's read version: its commit fails, and the retry
      // (whose watch never fired) sees the new manifest by checking the uid.
      if (attempts === 1) await b.dropCollection('app.users');
    });
    expect(attempts).toBe(2);
    expect(await b.getCollectionId('app.users')).toEqual({ manifestUid: '3', collectionId: 9 });
    expect((await b.collection('app.users').get('d')).content).toEqual({ attempt: 2 });
    expect(await keysOfCollection(kv, 8)).toEqual([]);
  });

  it('the window: a process that has not heard of a drop writes unreachable keys, which purgeDropped removes', async () => {
    const { kv } = await ctx.open();
    const db = withSilentWatches(kv);
    const a = await process(db);
    const b = await process(db);
    const users = a.collection('app.users');
    await users.insert({ v: 0 }, { id: 'before' });
    await users.get('before');
    await b.dropCollection('app.users');
    // a's transaction starts after the drop, and a's watch has not fired: it still uses id 8.
    await users.upsert('stale', { v: 1 });
    expect(await keysOfCollection(kv, 8)).not.toEqual([]);
    expect(await b.collection('app.users').exists('stale')).toBe(false);
    await expectDocumentError(b.getCollectionId('app.users'), 'UNKNOWN_COLLECTION');
    expect(await b.purgeDropped()).toBe(1);
    expect(await keysOfCollection(kv, 8)).toEqual([]);
  });

  it('is invalidated by manifest changes made through this layer at once', async () => {
    const { docs } = await ctx.open();
    const users = docs.collection('app.users');
    await users.insert({ v: 'old' }, { id: 'd' });
    await docs.dropCollection('app.users');
    await expectDocumentError(users.get('d'), 'DOCUMENT_NOT_FOUND');
    await users.insert({ v: 'new' }, { id: 'd' });
    expect((await users.get('d')).content).toEqual({ v: 'new' });
    expect(await docs.getCollectionId('app.users')).toMatchObject({ collectionId: 9 });
  });
});
