/**
 * touch, getAndTouch, getAndLock and unlock: Couchbase's document operations that change a document's
 * expiry or lock it without changing its content. A locked document refuses every writer that does not
 * present the lock's CAS, until that CAS writes or unlocks it, or the lock ends.
 *
 * Every layer here runs on a clock the test moves (`open({ now })`), in ms since the epoch.
 */
import { LOCKED_CAS, LookupInSpec, MutateInSpec, open } from '../../src';
import { expectDocumentError } from '../support/document-assertions';
import { documentSuite } from './document-suite';
import { clocked, T0 } from './clocked';

documentSuite('touch and getAndTouch', (ctx) => {
  const layer = clocked(ctx);

  it('touch gives the document a new expiry and a new CAS, and leaves its content alone', async () => {
    const { c, clock } = await layer();
    const { cas } = await c.upsert('d', { a: 1 });
    const touched = await c.touch('d', 10);
    expect(touched.cas).toEqual(expect.any(String));
    expect(touched.cas).not.toBe(cas);
    expect(await c.get('d')).toEqual({ content: { a: 1 }, cas: touched.cas, expiresAt: new Date(T0 + 10_000) });
    clock.now = T0 + 10_000;
    expect(await c.exists('d')).toBe(false);
  });

  it('touch with 0 removes the expiry', async () => {
    const { c, clock } = await layer();
    await c.insert({ a: 1 }, { id: 'd', expiry: 5 });
    await c.touch('d', 0);
    clock.now = T0 + 60_000;
    expect((await c.get('d')).expiresAt).toBeUndefined();
  });

  it('getAndTouch returns the content, the new CAS and the new expiry', async () => {
    const { c } = await layer();
    await c.upsert('d', { a: [1, 2] }, { expiry: 100 });
    const got = await c.getAndTouch('d', 20);
    expect(got.content).toEqual({ a: [1, 2] });
    expect(got.expiresAt).toEqual(new Date(T0 + 20_000));
    expect((await c.get('d')).cas).toBe(got.cas);
  });

  it('touch and getAndTouch of a missing or expired document are DOCUMENT_NOT_FOUND; a bad expiry is INVALID_ARGUMENT', async () => {
    const { c, clock } = await layer();
    await expectDocumentError(c.touch('nope', 1), 'DOCUMENT_NOT_FOUND');
    await c.insert({}, { id: 'd', expiry: 1 });
    clock.now = T0 + 1_000;
    await expectDocumentError(c.getAndTouch('d', 1), 'DOCUMENT_NOT_FOUND');
    await expectDocumentError(c.touch('d', -1), 'INVALID_ARGUMENT');
  });

  it('a touch in a caller transaction reports no CAS until commit', async () => {
    const { c, docs } = await layer();
    await c.upsert('d', { a: 1 });
    const result = await docs.transact(async (tr) => c.touch('d', 30, { tr }));
    expect(result.cas).toBeUndefined();
    expect((await c.get('d')).expiresAt).toEqual(new Date(T0 + 30_000));
  });
});

documentSuite('getAndLock and unlock', (ctx) => {
  const layer = clocked(ctx);

  it('getAndLock returns the content and a new CAS; reads then report LOCKED_CAS', async () => {
    const { c } = await layer();
    const { cas: before } = await c.upsert('d', { a: 1 });
    const locked = await c.getAndLock('d', 10);
    expect(locked.content).toEqual({ a: 1 });
    expect(locked.cas).not.toBe(before);
    expect((await c.get('d')).cas).toBe(LOCKED_CAS);
    expect((await c.getMany(['d']))[0]?.cas).toBe(LOCKED_CAS);
    expect((await c.get('d')).content).toEqual({ a: 1 });
  });

  it('refuses every writer without the lock CAS with DOCUMENT_LOCKED, changing nothing', async () => {
    const { c } = await layer();
    const { cas: before } = await c.upsert('d', { a: 1 });
    await c.getAndLock('d', 10);
    await expectDocumentError(c.upsert('d', { b: 1 }), 'DOCUMENT_LOCKED');
    await expectDocumentError(c.replace('d', { b: 1 }), 'DOCUMENT_LOCKED');
    await expectDocumentError(c.replace('d', { b: 1 }, { cas: before as string }), 'DOCUMENT_LOCKED');
    await expectDocumentError(c.remove('d'), 'DOCUMENT_LOCKED');
    await expectDocumentError(c.mutateIn('d', [MutateInSpec.upsert('b', 1)]), 'DOCUMENT_LOCKED');
    await expectDocumentError(c.mutateIn('d', [MutateInSpec.upsert('b', 1)], { cas: before as string }), 'DOCUMENT_LOCKED');
    await expectDocumentError(c.touch('d', 5), 'DOCUMENT_LOCKED');
    await expectDocumentError(c.getAndLock('d', 5), 'DOCUMENT_LOCKED');
    await expectDocumentError(c.insert({}, { id: 'd' }), 'DOCUMENT_EXISTS');
    expect((await c.get('d')).content).toEqual({ a: 1 });
    expect((await c.lookupIn('d', [LookupInSpec.get('a')])).entries[0].value).toBe(1);
  });

  it('a replace with the lock CAS writes and ends the lock', async () => {
    const { c } = await layer();
    await c.upsert('d', { a: 1 });
    const { cas } = await c.getAndLock('d', 10);
    const written = await c.replace('d', { a: 2 }, { cas: cas as string });
    expect(await c.get('d')).toEqual({ content: { a: 2 }, cas: written.cas });
    await c.upsert('d', { a: 3 });
  });

  it('a mutateIn with the lock CAS writes and ends the lock', async () => {
    const { c } = await layer();
    await c.upsert('d', { a: 1 });
    const { cas } = await c.getAndLock('d', 10);
    await c.mutateIn('d', [MutateInSpec.upsert('b', 2)], { cas: cas as string });
    expect((await c.get('d')).content).toEqual({ a: 1, b: 2 });
    expect((await c.get('d')).cas).not.toBe(LOCKED_CAS);
    await c.upsert('d', { a: 3 });
  });

  it('a remove with the lock CAS removes the document and its lock', async () => {
    const { c } = await layer();
    await c.upsert('d', { a: 1 });
    const { cas } = await c.getAndLock('d', 10);
    await c.remove('d', { cas: cas as string });
    expect(await c.exists('d')).toBe(false);
    await c.insert({ a: 2 }, { id: 'd' });
    await c.upsert('d', { a: 3 });
  });

  it('unlock with the lock CAS ends the lock and leaves content and CAS alone', async () => {
    const { c } = await layer();
    await c.upsert('d', { a: 1 });
    const { cas } = await c.getAndLock('d', 10);
    await c.unlock('d', cas as string);
    expect(await c.get('d')).toEqual({ content: { a: 1 }, cas });
    await c.upsert('d', { a: 2 });
  });

  it('unlock: another CAS is CAS_MISMATCH, no lock is DOCUMENT_NOT_LOCKED, no document is DOCUMENT_NOT_FOUND', async () => {
    const { c } = await layer();
    const { cas: before } = await c.upsert('d', { a: 1 });
    await expectDocumentError(c.unlock('d', before as string), 'DOCUMENT_NOT_LOCKED');
    await c.getAndLock('d', 10);
    await expectDocumentError(c.unlock('d', before as string), 'CAS_MISMATCH');
    await expectDocumentError(c.unlock('nope', before as string), 'DOCUMENT_NOT_FOUND');
    await expectDocumentError(c.unlock('d', 'not a cas'), 'INVALID_ARGUMENT');
    await expectDocumentError(c.upsert('d', {}), 'DOCUMENT_LOCKED');
  });

  it('the lock ends by itself after its time', async () => {
    const { c, clock } = await layer();
    await c.upsert('d', { a: 1 });
    const { cas } = await c.getAndLock('d', 5);
    clock.now = T0 + 4_999;
    await expectDocumentError(c.upsert('d', {}), 'DOCUMENT_LOCKED');
    clock.now = T0 + 5_000;
    expect((await c.get('d')).cas).toBe(cas);
    await c.upsert('d', { a: 2 });
    expect((await c.get('d')).content).toEqual({ a: 2 });
  });

  it('a lock time is over 0 and at most 30 seconds; a missing document is DOCUMENT_NOT_FOUND', async () => {
    const { c } = await layer();
    await c.upsert('d', {});
    for (const bad of [0, -1, 31, Number.NaN]) await expectDocumentError(c.getAndLock('d', bad), 'INVALID_ARGUMENT');
    await expectDocumentError(c.getAndLock('nope', 5), 'DOCUMENT_NOT_FOUND');
    await c.upsert('d', { free: true });
  });

  it('a lock taken in a caller transaction holds once it commits', async () => {
    const { c, docs } = await layer();
    await c.upsert('d', { a: 1 });
    const got = await docs.transact(async (tr) => c.getAndLock('d', 10, { tr }));
    expect(got).toEqual({ content: { a: 1 }, cas: undefined });
    await expectDocumentError(c.upsert('d', {}), 'DOCUMENT_LOCKED');
  });
});

documentSuite('what locks cost the writers of collections that never lock', (ctx) => {
  const layer = clocked(ctx);

  it('an upsert reads no key and clears 1 range in a collection that never had a document locked; the lock key and 2 ranges once one was', async () => {
    const { c, counter } = await layer();
    await c.upsert('warm', { a: 0 });
    await c.upsert('warm', { a: 1 });
    const blind = await counter.measure(() => c.upsert('d', { a: 1 }));
    expect({ gets: blind.counts.gets, rangeReads: blind.counts.rangeReads, clearRanges: blind.counts.clearRanges }).toEqual({
      gets: 0,
      rangeReads: 0,
      clearRanges: 1,
    });
    await c.getAndLock('warm', 5);
    await c.upsert('other', { a: 0 });
    const checked = await counter.measure(() => c.upsert('d', { a: 2 }));
    // Around the lock key it read, so that its read conflicts with no concurrent upsert of 'd'.
    expect({ gets: checked.counts.gets, rangeReads: checked.counts.rangeReads, clearRanges: checked.counts.clearRanges }).toEqual({
      gets: 1,
      rangeReads: 0,
      clearRanges: 2,
    });
  });

  it("a writer that trusted 'never locked' conflicts with the collection's first lock, and its retry finds the lock", async () => {
    const { docs, kv, c, clock } = await layer();
    const other = await open({ database: kv, now: () => clock.now });
    try {
      const theirs = other.collection('app.items');
      await c.upsert('d', { a: 0 });
      await theirs.upsert('warm', { a: 0 }); // the other layer has cached that no document was ever locked
      const tr = kv.createTransaction();
      await theirs.upsert('d', { a: 1 }, { tr });
      await c.getAndLock('d', 5);
      await expect(tr.commit()).rejects.toMatchObject({ code: 1020 });
      await expectDocumentError(theirs.upsert('d', { a: 1 }), 'DOCUMENT_LOCKED');
      expect((await docs.collection('app.items').get('d')).content).toEqual({ a: 0 });
    } finally {
      await other.close();
    }
  });
});
