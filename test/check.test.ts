/**
 * checkDocuments: a sound store reports nothing; a store damaged on purpose through raw KV writes
 * (garbage keys and values, a bumped counter, a hole in a list, a dropped collection's leftovers)
 * reports each damage, on the memory and LMDB engines.
 */
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { checkDocuments, open, type DocLayer, type DocumentCheckProgress } from '../src';
import { docIdElement } from '../src/document/keys/ids';
import { DocumentKeys, META_EXPIRY, META_LENGTH, META_SIZE } from '../src/document/keys/layout';
import { bodyKey } from '../src/structures/structure-keys';
import { packPrefixed } from '../src/tuple/pack';

/** A string matching `pattern`, inside an expected object. */
const matching = (pattern: RegExp): string => expect.stringMatching(pattern) as string;

const ONE = Buffer.from([1, 0, 0, 0, 0, 0, 0, 0]);

let root: string;
let stores = 0;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'doclayer-check-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const engines: [string, () => Promise<DocLayer>][] = [
  ['memory', () => open({ memory: {} })],
  ['lmdb', () => open({ path: join(root, `store-${stores++}`) })],
];

/** The keys of document `id` of collection `path`. */
async function keysOf(db: DocLayer, id: string, path = '_default._default'): Promise<DocumentKeys> {
  const { collectionId } = await db.getCollectionId(path);
  return new DocumentKeys(db.layout.collectionPrefix(collectionId), docIdElement(id));
}

/** A store holding a document of each kind. */
async function filled(openDb: () => Promise<DocLayer>): Promise<DocLayer> {
  const db = await openDb();
  const c = db.collection();
  await c.upsert('a', { name: 'ann', tags: ['x', 'y'], nested: { deep: [1, { k: null }] }, long: 'z'.repeat(250_000) });
  await c.upsert('old', { gone: true }, { expiry: new Date(Date.now() - 1000) });
  await c.set('s').add('m1');
  await c.set('s').add(2);
  await c.map('m').set('k', { v: [1, 2] });
  await c.map('m').set('j', 'w');
  for (const n of [1, 2, 3]) await c.list('l').push({ n });
  await c.queue('q').push('job1');
  await c.queue('q').push('job2', { delayMs: 60_000 });
  await c.text('t').append('héllo');
  await c.counter('n').add(5);
  await db.collection('app.users').upsert('u1', { ok: 1 });
  return db;
}

describe.each(engines)('checkDocuments [%s]', (_name, openDb) => {
  let db: DocLayer;
  beforeEach(async () => {
    db = await filled(openDb);
  });
  afterEach(() => db.close());

  it('finds nothing wrong in a sound store, expired documents included', async () => {
    const report = await checkDocuments(db);
    expect(report).toEqual({ ok: true, documents: 9, problems: [] });
  });

  it('walks in bounded transactions, resuming at the next document, and reports progress', async () => {
    const progress: DocumentCheckProgress[] = [];
    const report = await checkDocuments(db, { keysPerTransaction: 3, onProgress: (p) => progress.push(p) });
    expect(report).toEqual({ ok: true, documents: 9, problems: [] });
    expect(progress.length).toBeGreaterThan(5);
    expect(progress[progress.length - 1].documents).toBe(9);
    const keys = progress.map((p) => p.keys);
    expect(keys).toEqual([...keys].sort((x, y) => x - y));
  });

  it('reports a key that does not decode under the document layout, and goes on', async () => {
    const collection = db.layout.collectionPrefix(0);
    const garbage = Buffer.concat([collection, Buffer.from([0x05, 0xff, 0x13, 0x37])]);
    await db.kv.transact((tr) => tr.set(garbage, Buffer.from('junk')));
    const report = await checkDocuments(db);
    expect(report.ok).toBe(false);
    expect(report.documents).toBe(9);
    expect(report.problems).toEqual([{ collection: '_default._default', key: garbage.toString('hex'), problem: matching(/does not decode/) }]);
  });

  it('reports a key with a bad section byte after a valid document id', async () => {
    const keys = await keysOf(db, 'a');
    const bad = Buffer.concat([keys.prefix, Buffer.from([0x07, 0x01])]);
    await db.kv.transact((tr) => tr.set(bad, Buffer.of(0)));
    const report = await checkDocuments(db);
    expect(report.problems).toEqual([{ collection: '_default._default', key: bad.toString('hex'), problem: matching(/0x07, neither metadata/) }]);
  });

  it('reports a document whose leaf does not decode', async () => {
    const keys = await keysOf(db, 'a');
    await db.kv.transact((tr) => tr.set(keys.dataKey(['name']), Buffer.from([0xee, 0x01, 0x02])));
    const report = await checkDocuments(db);
    expect(report.problems).toEqual([
      { collection: '_default._default', id: 'a', problem: matching(/^the document does not decode: TupleError unknown type code 0xee/) },
    ]);
  });

  it('reports a document whose long string lost a chunk', async () => {
    const keys = await keysOf(db, 'a');
    const header = keys.dataKey(['long']);
    await db.kv.transact(async (tr) => {
      const [, firstChunk] = await tr.getRangeAll(header, Buffer.concat([header, Buffer.of(0xff)]), { limit: 2 });
      tr.clear(firstChunk.key);
    });
    const report = await checkDocuments(db);
    expect(report.problems).toEqual([
      {
        collection: '_default._default',
        id: 'a',
        problem: 'the document does not decode: DocumentError CORRUPT_DATA: corrupt document data: a long string with missing chunks',
      },
    ]);
  });

  it('reports a document with an entry below a scalar leaf', async () => {
    const keys = await keysOf(db, 'a');
    await db.kv.transact(async (tr) => tr.set(packPrefixed(keys.dataKey(['name']), ['child']), (await tr.get(keys.dataKey(['name'])))!));
    const report = await checkDocuments(db);
    expect(report.problems).toEqual([{ collection: '_default._default', id: 'a', problem: matching(/an entry whose parent has no entry/) }]);
  });

  it('reports a set whose size counter disagrees with its members', async () => {
    const keys = await keysOf(db, 's');
    await db.kv.transact((tr) => tr.add(keys.meta(META_SIZE), ONE));
    const report = await checkDocuments(db);
    expect(report.problems).toEqual([{ collection: '_default._default', id: 's', problem: 'its stored size is 3 but it holds 2 members' }]);
  });

  it('reports a map and a queue whose sizes disagree, and a text whose length does', async () => {
    await db.kv.transact(async (tr) => {
      tr.add((await keysOf(db, 'm')).meta(META_SIZE), ONE);
      tr.add((await keysOf(db, 'q')).meta(META_SIZE), Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]));
      tr.add((await keysOf(db, 't')).meta(META_LENGTH), ONE);
    });
    const report = await checkDocuments(db);
    expect(report.problems).toEqual([
      { collection: '_default._default', id: 'm', problem: 'its stored size is 3 but it holds 2 keys' },
      { collection: '_default._default', id: 'q', problem: 'its stored size is 1 but it holds 2 items' },
      { collection: '_default._default', id: 't', problem: 'its stored length is 6 but it holds 5 UTF-16 code units' },
    ]);
  });

  it('reports a list with a hole in its positions', async () => {
    const keys = await keysOf(db, 'l');
    const body = bodyKey(keys);
    await db.kv.transact(async (tr) => {
      const elements = await tr.getRangeAll(Buffer.concat([body, Buffer.of(0x00)]), Buffer.concat([body, Buffer.of(0xff)]));
      const positions = elements.filter((e) => e.key.length > body.length && e.value.length > 0).map((e) => e.key);
      // The second element's subtree: its marker and its leaf.
      tr.clearRange(positions[2], Buffer.concat([positions[2], Buffer.of(0xff)]));
    });
    const report = await checkDocuments(db);
    expect(report.problems).toEqual([{ collection: '_default._default', id: 'l', problem: matching(/positions jump from/) }]);
  });

  it('reports a structure whose expiry key disagrees with the expiry in its kind', async () => {
    await db.collection().counter('expiring').add(1, { expiry: 3600 });
    expect((await checkDocuments(db)).problems).toEqual([]);
    const keys = await keysOf(db, 'expiring');
    await db.kv.transact((tr) => tr.clear(keys.meta(META_EXPIRY)));
    const report = await checkDocuments(db);
    expect(report.problems).toEqual([
      { collection: '_default._default', id: 'expiring', problem: matching(/^its kind records the expiry \S+Z but its expiry key none$/) },
    ]);
  });

  it("reports a structure's kind without its root entry", async () => {
    const keys = await keysOf(db, 'n');
    await db.kv.transact((tr) => tr.clearRange(keys.root, keys.end));
    const report = await checkDocuments(db);
    expect(report.problems).toEqual([{ collection: '_default._default', id: 'n', problem: 'a counter without its root entry' }]);
  });

  it('reports documents left in a collection that the manifest does not have', async () => {
    const { collectionId } = await db.getCollectionId('app.users');
    await db.dropCollection('app.users');
    const leftover = new DocumentKeys(db.layout.collectionPrefix(collectionId), 'u1');
    await db.kv.transact((tr) => {
      tr.set(leftover.root, Buffer.from([0x05]));
      tr.set(new DocumentKeys(db.layout.collectionPrefix(collectionId), 'u2').root, Buffer.from([0x05]));
    });
    const report = await checkDocuments(db);
    expect(report.documents).toBe(8);
    expect(report.problems).toEqual([
      { collection: `#${collectionId}`, problem: matching(/^2 documents in collection id \d+, which the manifest does not have/) },
    ]);
  });
});
