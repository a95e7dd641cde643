/**
 * Document expiry (TTL): per-document expiry, the collection's maxTTL cap, expired documents reading
 * as missing at once, which writes keep or clear an expiry, and the sweeper that purges expired
 * documents through the expiry index.
 *
 * Every layer here runs on a clock the test moves (`open({ now })`), in ms since the epoch.
 */
import { LookupInSpec, MutateInSpec, open } from '../../src';
import { capExpiry } from '../../src/document/collection/expiry';
import { Layout } from '../../src/document/keys/layout';
import { pack, unpack } from '../../src/tuple';
import { expectDocumentError } from '../support/document-assertions';
import { documentSuite } from './document-suite';
import { clocked, documentKeys, indexEntries, T0 } from './clocked';

const layout = new Layout(['doclayer']);

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

describe('capExpiry', () => {
  const now = 1_700_000_000;

  it('leaves the expiry alone without a maxTTL (absent or 0)', () => {
    expect(capExpiry(undefined, undefined, now)).toBeUndefined();
    expect(capExpiry(0, now + 10 ** 6, now)).toBe(now + 10 ** 6);
  });

  it('gives a document without expiry one of maxTTL seconds', () => {
    expect(capExpiry(60, undefined, now)).toBe(now + 60);
    expect(capExpiry(60, 0, now)).toBe(now + 60);
  });

  it('brings a later expiry down to maxTTL seconds from now, and keeps an earlier one', () => {
    expect(capExpiry(60, now + 3600, now)).toBe(now + 60);
    expect(capExpiry(60, now + 30, now)).toBe(now + 30);
  });
});

documentSuite('document expiry', (ctx) => {
  const layer = clocked(ctx);

  it('insert with an expiry in seconds: get reports expiresAt, and the document reads as missing once it passes', async () => {
    const { c, clock } = await layer();
    await c.insert({ a: 1 }, { id: 'd', expiry: 10 });
    expect(await c.get('d')).toMatchObject({ content: { a: 1 }, expiresAt: new Date(T0 + 10_000) });
    expect((await c.get('d', 'a')).expiresAt).toEqual(new Date(T0 + 10_000));
    clock.now = T0 + 9_999;
    expect(await c.exists('d')).toBe(true);
    clock.now = T0 + 10_000;
    await expectDocumentError(c.get('d'), 'DOCUMENT_NOT_FOUND');
    await expectDocumentError(c.get('d', 'a'), 'DOCUMENT_NOT_FOUND');
    await expectDocumentError(c.get('d', 'nope'), 'DOCUMENT_NOT_FOUND');
    await expectDocumentError(c.lookupIn('d', [LookupInSpec.get('a')]), 'DOCUMENT_NOT_FOUND');
    expect(await c.exists('d')).toBe(false);
    expect(await c.getMany(['d'])).toEqual([undefined]);
    expect(await collect(c.scan())).toEqual([]);
    await expectDocumentError(c.replace('d', { b: 1 }), 'DOCUMENT_NOT_FOUND');
    await expectDocumentError(c.remove('d'), 'DOCUMENT_NOT_FOUND');
    await expectDocumentError(c.mutateIn('d', [MutateInSpec.upsert('b', 1)]), 'DOCUMENT_NOT_FOUND');
  });

  it('an expiry can be an absolute Date; fractions of a second round up to the millisecond', async () => {
    const { c, clock } = await layer();
    await c.insert({}, { id: 'at', expiry: new Date(T0 + 1234) });
    await c.insert({}, { id: 'frac', expiry: 0.0015 });
    expect((await c.get('at')).expiresAt).toEqual(new Date(T0 + 1234));
    expect((await c.get('frac')).expiresAt).toEqual(new Date(T0 + 2));
    clock.now = T0 + 1234;
    expect(await c.exists('at')).toBe(false);
    // A Date already past: the document is missing from the start.
    await c.insert({}, { id: 'past', expiry: new Date(T0) });
    expect(await c.exists('past')).toBe(false);
  });

  it('expiry 0 is none; a negative, non-finite or non-number expiry, a bad Date, or expiry with preserveExpiry is INVALID_ARGUMENT, writing nothing', async () => {
    const { c, kv } = await layer();
    await c.insert({}, { id: 'none', expiry: 0 });
    expect((await c.get('none')).expiresAt).toBeUndefined();
    for (const expiry of [-1, NaN, Infinity, '10', new Date(NaN), new Date(0), new Date(8.64e15 + 1)]) {
      await expectDocumentError(c.insert({}, { id: 'bad', expiry: expiry as number }), 'INVALID_ARGUMENT');
      await expectDocumentError(c.upsert('bad', {}, { expiry: expiry as number }), 'INVALID_ARGUMENT');
    }
    await expectDocumentError(c.upsert('bad', {}, { expiry: 5, preserveExpiry: true }), 'INVALID_ARGUMENT');
    await expectDocumentError(c.replace('none', {}, { expiry: 5, preserveExpiry: true }), 'INVALID_ARGUMENT');
    await expectDocumentError(c.mutateIn('none', [MutateInSpec.upsert('a', 1)], { expiry: 5, preserveExpiry: true }), 'INVALID_ARGUMENT');
    expect(await c.exists('bad')).toBe(false);
    expect(await indexEntries(kv)).toEqual([]);
  });

  it("stores the expiry at the document's 'x' metadata key and in the index (expiresAt, collection id, id)", async () => {
    const { c, kv, docs } = await layer();
    await c.insert({}, { id: 'd', expiry: 5 });
    const { collectionId } = await docs.getCollectionId('app.items');
    expect(await indexEntries(kv)).toEqual([[T0 + 5000, collectionId, 'd']]);
    const docPrefix = Buffer.concat([layout.collectionPrefix(collectionId), pack(['d'])]);
    const value = await kv.get(Buffer.concat([docPrefix, Buffer.of(0x00, 0x78)]));
    expect(unpack(value as Buffer)).toEqual([T0 + 5000]);
  });

  it('insert over an expired document succeeds, and the new document has only its own expiry', async () => {
    const { c, clock, kv } = await layer();
    await c.insert({ old: true }, { id: 'd', expiry: 1 });
    await expectDocumentError(c.insert({}, { id: 'd' }), 'DOCUMENT_EXISTS');
    clock.now = T0 + 1000;
    await c.insert({ new: true }, { id: 'd' });
    expect(await c.get('d')).toEqual({ content: { new: true }, cas: expect.any(String) as unknown });
    expect(await indexEntries(kv)).toEqual([]);
  });

  it('mutateIn with upsert or insert semantics recreates an expired document from nothing', async () => {
    const { c, clock } = await layer();
    await c.insert({ old: 1 }, { id: 'u', expiry: 1 });
    await c.insert({ old: 1 }, { id: 'i', expiry: 1 });
    clock.now = T0 + 1000;
    await c.mutateIn('u', [MutateInSpec.upsert('fresh', 1)], { storeSemantics: 'upsert' });
    await c.mutateIn('i', [MutateInSpec.upsert('fresh', 1)], { storeSemantics: 'insert' });
    expect((await c.get('u')).content).toEqual({ fresh: 1 });
    expect((await c.get('i')).content).toEqual({ fresh: 1 });
  });

  it('upsert and replace without an expiry clear the old one (as Couchbase); preserveExpiry keeps it', async () => {
    const { c, clock } = await layer();
    for (const id of ['u', 'r', 'up', 'rp']) await c.insert({ v: 0 }, { id, expiry: 60 });
    await c.upsert('u', { v: 1 });
    await c.replace('r', { v: 1 });
    await c.upsert('up', { v: 1 }, { preserveExpiry: true });
    await c.replace('rp', { v: 1 }, { preserveExpiry: true });
    clock.now = T0 + 60_000;
    expect(await c.exists('u')).toBe(true);
    expect(await c.exists('r')).toBe(true);
    expect(await c.exists('up')).toBe(false);
    expect(await c.exists('rp')).toBe(false);
  });

  it('mutateIn clears the expiry unless preserveExpiry, and sets a new one with expiry', async () => {
    const { c, clock } = await layer();
    for (const id of ['plain', 'kept', 'moved']) await c.insert({ n: 0 }, { id, expiry: 60 });
    await c.mutateIn('plain', [MutateInSpec.increment('n', 1)]);
    await c.mutateIn('kept', [MutateInSpec.increment('n', 1)], { preserveExpiry: true });
    await c.mutateIn('moved', [MutateInSpec.increment('n', 1)], { expiry: 120 });
    expect((await c.get('plain')).expiresAt).toBeUndefined();
    expect((await c.get('kept')).expiresAt).toEqual(new Date(T0 + 60_000));
    expect((await c.get('moved')).expiresAt).toEqual(new Date(T0 + 120_000));
    clock.now = T0 + 60_000;
    expect(await c.exists('kept')).toBe(false);
    expect((await c.get('moved')).content).toEqual({ n: 1 });
  });

  it("a collection's maxTTL caps every expiry, and gives documents written without one maxTTL from now", async () => {
    const { docs, clock } = await layer();
    await docs.createCollection('app.sessions', { maxTTL: 60 });
    const sessions = docs.collection('app.sessions');
    await sessions.insert({}, { id: 'none' });
    await sessions.insert({}, { id: 'long', expiry: 3600 });
    await sessions.insert({}, { id: 'short', expiry: 10 });
    await sessions.insert({}, { id: 'date', expiry: new Date(T0 + 86_400_000) });
    expect((await sessions.get('none')).expiresAt).toEqual(new Date(T0 + 60_000));
    expect((await sessions.get('long')).expiresAt).toEqual(new Date(T0 + 60_000));
    expect((await sessions.get('short')).expiresAt).toEqual(new Date(T0 + 10_000));
    expect((await sessions.get('date')).expiresAt).toEqual(new Date(T0 + 60_000));
    // Every write without an expiry renews the cap from its own time, upsert, replace and mutateIn alike.
    clock.now = T0 + 5_000;
    await sessions.upsert('none', { v: 1 });
    await sessions.replace('long', { v: 1 });
    await sessions.mutateIn('short', [MutateInSpec.upsert('v', 1)]);
    for (const id of ['none', 'long', 'short']) expect((await sessions.get(id)).expiresAt).toEqual(new Date(T0 + 65_000));
    clock.now = T0 + 65_000;
    expect(await collect(sessions.scan())).toEqual([]);
  });

  it('the maxTTL set by setManifest applies to later writes', async () => {
    const { docs } = await layer();
    const c = docs.collection('app.items');
    await c.insert({}, { id: 'before' });
    const manifest = await docs.getManifest();
    await docs.setManifest({
      uid: '10',
      scopes: manifest.scopes.map((s) => ({ ...s, collections: s.collections.map((col) => (col.name === 'items' ? { ...col, maxTTL: 5 } : col)) })),
    });
    await c.insert({}, { id: 'after' });
    expect((await c.get('before')).expiresAt).toBeUndefined();
    expect((await c.get('after')).expiresAt).toEqual(new Date(T0 + 5000));
  });

  it('reading a sub-document checks the expiry with one more point read, issued with the others', async () => {
    const { c, counter } = await layer();
    await c.insert({ a: { b: 1 } }, { id: 'd', expiry: 60 });
    await c.get('d');
    const whole = await counter.measure(() => c.get('d'));
    expect([whole.counts.rangeReads, whole.counts.gets]).toEqual([1, 0]);
    const path = await counter.measure(() => c.get('d', 'a.b'));
    // The subtree range, the CAS (snapshot) and the expiry key.
    expect([path.counts.rangeReads, path.counts.gets]).toEqual([1, 2]);
  });
});

documentSuite('purgeExpired and the sweeper', (ctx) => {
  const layer = clocked(ctx);

  it('deletes expired documents and their index entries, keeps the others, and says how many', async () => {
    const { c, clock, kv, docs } = await layer();
    const { collectionId } = await docs.createCollection('app.items');
    await c.insert({ v: 1 }, { id: 'soon', expiry: 1 });
    await c.insert({ v: 2 }, { id: 'later', expiry: 100 });
    await c.insert({ v: 3 }, { id: 'never' });
    expect(await docs.purgeExpired()).toBe(0);
    clock.now = T0 + 1000;
    expect(await docs.purgeExpired()).toBe(1);
    expect(await indexEntries(kv)).toEqual([[T0 + 100_000, collectionId, 'later']]);
    expect((await collect(c.scan())).map((item) => item.id)).toEqual(['later', 'never']);
    expect(await docs.purgeExpired({ now: new Date(T0 + 100_000) })).toBe(1);
    expect(await indexEntries(kv)).toEqual([]);
    expect(await documentKeys(kv, collectionId)).toBe(3); // 'never': its version, root and one leaf
  });

  it('re-checks each document: one rewritten with a later expiry or none is kept, its stale entry dropped', async () => {
    const { c, clock, kv, docs } = await layer();
    await c.insert({ v: 0 }, { id: 'later', expiry: 1 });
    await c.insert({ v: 0 }, { id: 'cleared', expiry: 1 });
    await c.upsert('later', { v: 1 }, { expiry: 100 });
    await c.upsert('cleared', { v: 1 });
    // upsert reads nothing, so the old entries are still in the index.
    expect((await indexEntries(kv)).length).toBe(3);
    clock.now = T0 + 1000;
    expect(await docs.purgeExpired()).toBe(0);
    expect((await c.get('later')).content).toEqual({ v: 1 });
    expect((await c.get('cleared')).content).toEqual({ v: 1 });
    expect((await indexEntries(kv)).map((e) => e[0])).toEqual([T0 + 100_000]);
  });

  it('works in bounded transactions of batchSize entries', async () => {
    const { c, clock, counter, docs } = await layer();
    for (let i = 0; i < 25; i++) await c.insert({ i }, { id: i, expiry: 1 });
    clock.now = T0 + 1000;
    const { result, counts } = await counter.measure(() => docs.purgeExpired({ batchSize: 4 }));
    expect(result).toBe(25);
    expect(counts.commits).toBe(7);
    expect(await collect(c.scan())).toEqual([]);
    await expectDocumentError(docs.purgeExpired({ batchSize: 0 }), 'INVALID_ARGUMENT');
    await expectDocumentError(docs.purgeExpired({ now: NaN }), 'INVALID_ARGUMENT');
  });

  it("drops the entries of a dropped collection's documents", async () => {
    const { c, clock, kv, docs } = await layer();
    await c.insert({}, { id: 'd', expiry: 1 });
    await docs.dropCollection('app.items');
    clock.now = T0 + 1000;
    expect(await docs.purgeExpired()).toBe(0);
    expect(await indexEntries(kv)).toEqual([]);
  });

  it('the sweeper purges on its interval, can be stopped, and close() stops it', async () => {
    const { c, clock, kv, docs } = await layer();
    await c.insert({}, { id: 'd', expiry: 1 });
    clock.now = T0 + 1000;
    docs.startExpirySweeper(5);
    await expectDocumentError(() => docs.startExpirySweeper(5), 'INVALID_ARGUMENT');
    const deadline = Date.now() + 2000;
    while ((await indexEntries(kv)).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    expect(await indexEntries(kv)).toEqual([]);
    await docs.stopExpirySweeper();
    await c.insert({}, { id: 'e', expiry: 1 });
    clock.now = T0 + 2000;
    await new Promise((r) => setTimeout(r, 30));
    expect((await indexEntries(kv)).length).toBe(1);
    expect(() => docs.startExpirySweeper(0)).toThrow(/positive number/);
  });

  it('open({ expirySweepIntervalMs }) starts the sweeper, and reports failed runs to onError', async () => {
    const { kv } = await ctx.open();
    const clock = { now: T0 };
    const docs = await open({ database: kv, now: () => clock.now, expirySweepIntervalMs: 5 });
    const c = docs.collection('app.items');
    await c.insert({}, { id: 'd', expiry: 1 });
    clock.now = T0 + 1000;
    const deadline = Date.now() + 2000;
    while ((await indexEntries(kv)).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    expect(await indexEntries(kv)).toEqual([]);
    await docs.close();
    await expectDocumentError(open({ database: kv, expirySweepIntervalMs: -1 }), 'INVALID_ARGUMENT');

    // A layer over a database that is closed under it: every run fails, and says so.
    const failing = await open();
    const errors: unknown[] = [];
    failing.startExpirySweeper(5, { onError: (err) => errors.push(err) });
    await failing.kv.close();
    while (errors.length < 2 && Date.now() < deadline + 2000) await new Promise((r) => setTimeout(r, 5));
    await failing.close();
    expect(errors.length).toBeGreaterThanOrEqual(2);
  });
});
