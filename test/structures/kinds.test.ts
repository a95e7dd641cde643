/**
 * Structures as documents: handles touch nothing, missing structures read as empty, `collection.get`
 * (and getMany, scan) return each structure's JSON form, and using a document of one kind as another
 * is WRONG_KIND, from either side, with nothing written.
 */
import { LookupInSpec, MutateInSpec, open, type Collection } from '../../src';
import { documentSuite } from '../document/document-suite';
import { errorOf, writesOf } from './support';

/** One structure of each kind (but the queue, tested with it), written once. */
async function fill(c: Collection): Promise<void> {
  await c.list('list').push({ a: 1 });
  await c.map('map').set('k', [1, 2]);
  await c.set('set').add('m');
  await c.counter('counter').add(5);
  await c.text('text').append('hi 😀');
  await c.sortedSet('sortedset').add('m', 1.5);
  await c.upsert('doc', { plain: true });
}

const JSON_FORMS = {
  list: [{ a: 1 }],
  map: { k: [1, 2] },
  set: ['m'],
  counter: 5,
  text: 'hi 😀',
  sortedset: [['m', 1.5]],
  doc: { plain: true },
};

/** Every kind's handle on `id`, with one read and one write each. */
function uses(c: Collection, id: string): Record<string, [() => Promise<unknown>, () => Promise<unknown>]> {
  return {
    list: [() => c.list(id).size(), () => c.list(id).push(1)],
    map: [() => c.map(id).get('k'), () => c.map(id).set('x', 1)],
    set: [() => c.set(id).has('m'), () => c.set(id).add('x')],
    counter: [() => c.counter(id).get(), () => c.counter(id).add(1)],
    text: [() => c.text(id).get(), () => c.text(id).append('x')],
    sortedset: [() => c.sortedSet(id).rank('m'), () => c.sortedSet(id).add('x', 1)],
  };
}

documentSuite('structures as documents', (ctx) => {
  it('handles touch nothing; a missing structure reads as empty and is created by its first write', async () => {
    const { docs, counter } = await ctx.open();
    const c = docs.collection('app.things');
    counter.take();
    c.list('a');
    c.map('a');
    c.set('a');
    c.counter('a');
    c.text('a');
    c.sortedSet('a');
    expect(counter.take().attempts).toBe(0);
    expect([await c.list('a').size(), await c.list('a').toArray(), await c.map('a').size(), await c.map('a').get('k')]).toEqual([
      0,
      [],
      0,
      undefined,
    ]);
    expect([await c.set('a').size(), await c.counter('a').get(), await c.text('a').get(), await c.text('a').length()]).toEqual([0, 0, '', 0]);
    expect(writesOf(counter.take())).toBe(0);
    expect(await c.exists('a')).toBe(false);
  });

  it("collection.get, getMany and scan return each structure's JSON form", async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    await fill(c);
    for (const [id, form] of Object.entries(JSON_FORMS)) expect([id, (await c.get(id)).content]).toEqual([id, form]);
    const many = await c.getMany(Object.keys(JSON_FORMS));
    expect(many.map((r) => r?.content)).toEqual(Object.values(JSON_FORMS));
    const scanned: Record<string, unknown> = {};
    for await (const item of c.scan({ pageSize: 2 })) scanned[item.id as string] = item.content;
    expect(scanned).toEqual(JSON_FORMS);
    expect(typeof (await c.get('set')).cas).toBe('string');
  });

  it('collection.get sees a structure written earlier in the same transaction', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    await c.set('s').add('old');
    await docs.transact(async (tr) => {
      await c.set('s').add('new', { tr });
      await c.counter('k').add(2, { tr });
      expect((await c.get('s', { tr })).content).toEqual(['new', 'old']);
      expect((await c.get('k', { tr })).content).toBe(2);
    });
  });

  it('using a structure as another kind, or a plain document as a structure, is WRONG_KIND', async () => {
    const { docs, counter } = await ctx.open();
    const c = docs.collection();
    await fill(c);
    counter.take();
    for (const id of Object.keys(JSON_FORMS)) {
      for (const [kind, [read, write]] of Object.entries(uses(c, id))) {
        if (kind === id) continue;
        expect([id, kind, (await errorOf(read())).code]).toEqual([id, kind, 'WRONG_KIND']);
        expect([id, kind, (await errorOf(write())).code]).toEqual([id, kind, 'WRONG_KIND']);
      }
    }
    expect(writesOf(counter.take())).toBe(0);
    for (const [id, form] of Object.entries(JSON_FORMS)) expect((await c.get(id)).content).toEqual(form);
  });

  it('sub-document operations on a structure are WRONG_KIND, with nothing written', async () => {
    const { docs, counter } = await ctx.open();
    const c = docs.collection();
    await fill(c);
    counter.take();
    for (const id of ['list', 'map', 'set', 'counter', 'text', 'sortedset']) {
      const attempts = [
        c.get(id, 'k'),
        c.get(id, '[0]'),
        c.lookupIn(id, [LookupInSpec.get('')]),
        c.lookupIn(id, [LookupInSpec.count('')]),
        c.lookupIn(id, [LookupInSpec.exists('k'), LookupInSpec.get('[0]')]),
        c.mutateIn(id, [MutateInSpec.upsert('k', 1)]),
        c.mutateIn(id, [MutateInSpec.arrayAppend('', 1)]),
        c.mutateIn(id, [MutateInSpec.upsert('', { whole: 1 })]),
        c.mutateIn(id, [MutateInSpec.increment('n', 1)], { storeSemantics: 'upsert' }),
      ];
      // Started together; each failure is caught at once (engines settle on later turns of the event loop).
      const errors = await Promise.all(attempts.map(errorOf));
      for (const [i, err] of errors.entries()) expect([id, i, err.code]).toEqual([id, i, 'WRONG_KIND']);
    }
    expect(writesOf(counter.take())).toBe(0);
    for (const [id, form] of Object.entries(JSON_FORMS)) expect((await c.get(id)).content).toEqual(form);
  });

  it('whole-document writes replace or remove a structure, as they do any document', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    await fill(c);
    expect(await c.exists('set')).toBe(true);
    expect((await errorOf(c.insert({}, { id: 'set' }))).code).toBe('DOCUMENT_EXISTS');
    await c.upsert('set', ['now', 'a', 'document']);
    expect((await errorOf(c.set('set').add('x'))).code).toBe('WRONG_KIND');
    expect((await c.get('set', '[0]')).content).toBe('now');
    await c.remove('counter');
    expect(await c.counter('counter').get()).toBe(0);
    await c.replace('list', { also: 'plain' });
    expect((await c.get('list')).content).toEqual({ also: 'plain' });
  });

  it('an expired plain document is missing: a structure is created in its place', async () => {
    const { kv } = await ctx.open();
    let clock = 1_000_000;
    const docs = await open({ database: kv, now: () => clock });
    try {
      const c = docs.collection();
      await c.upsert('d', { old: true }, { expiry: 10 });
      expect((await errorOf(c.set('d').add('x'))).code).toBe('WRONG_KIND');
      clock += 11_000;
      expect(await c.set('d').size()).toBe(0);
      expect(await c.set('d').add('x')).toBe(true);
      expect((await c.get('d')).content).toEqual(['x']);
      clock += 1e9;
      expect((await c.get('d')).content).toEqual(['x']);
    } finally {
      await docs.close();
    }
  });

  it('a plain document whose path is missing still fails with its own error', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    await c.upsert('doc', { a: 1 });
    expect((await errorOf(c.get('doc', 'a.b'))).code).toBe('PATH_MISMATCH');
    expect((await errorOf(c.get('doc', 'b'))).code).toBe('PATH_NOT_FOUND');
    expect((await c.lookupIn('doc', [LookupInSpec.get('a[0]')])).entries[0].error).toMatchObject({ code: 'PATH_MISMATCH' });
  });

  it('a handle writes into its collection as it is at each write: after a drop, into the re-created one', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection('app.hits');
    const hits = c.counter('h');
    expect(await hits.incr()).toBe(1);
    expect(await hits.incr()).toBe(2);
    const before = await docs.getCollectionId('app.hits');
    await docs.dropCollection('app.hits');
    // The same handle, called again: its write re-creates the collection under a new id and starts afresh.
    expect(await hits.incr()).toBe(1);
    expect((await docs.getCollectionId('app.hits')).collectionId).not.toBe(before.collectionId);
    expect([await hits.get(), (await c.get('h')).content]).toEqual([1, 1]);
  });

  it('handles of several structures of one collection, written in turn, each write their own document', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection('app.things');
    const counters = [c.counter('a'), c.counter('b'), c.counter(7), c.counter('a')];
    for (let round = 0; round < 3; round++) for (const k of counters) await k.incr();
    await c.map('m').set('k', 1);
    await c.counter('b').add(10);
    expect([await c.counter('a').get(), await c.counter('b').get(), await c.counter(7).get()]).toEqual([6, 13, 3]);
    expect((await c.get('m')).content).toEqual({ k: 1 });
  });
});
