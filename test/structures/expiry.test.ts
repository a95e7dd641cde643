/**
 * Structure expiry (docs/structures.md, "Expiry"): a structure carries an expiry as a document does,
 * set by the write that creates it or by `touch`, capped by its collection's maxTTL; once it passes,
 * the structure reads as missing (empty) at once and its next write starts a fresh one; the purge
 * removes it through the expiry index. Structures without an expiry read no key more than before.
 *
 * Every layer here runs on a clock the test moves (`open({ now })`), in ms since the epoch.
 */
import { checkDocuments, open, type Collection } from '../../src';
import { Layout } from '../../src/document/keys/layout';
import type { KvCounts } from '../../src/kv/counting-engine';
import { expectDocumentError } from '../support/document-assertions';
import { documentSuite } from '../document/document-suite';
import { clocked, documentKeys, indexEntries, T0 } from '../document/clocked';
import { testSeed } from '../support/random';

const layout = new Layout(['doclayer']);

/** One structure of each kind: how to create it with options, and how it reads (its JSON form). */
interface Kind {
  readonly name: string;
  write(c: Collection, id: string, opts?: { expiry?: number | Date }): Promise<unknown>;
  read(c: Collection, id: string): Promise<unknown>;
  readonly empty: unknown;
  readonly written: unknown;
  handle(c: Collection, id: string): { expiry(): Promise<Date | undefined>; touch(e: number | Date): Promise<boolean>; persist(): Promise<boolean> };
}

const KINDS: readonly Kind[] = [
  {
    name: 'list',
    write: (c, id, o) => c.list(id).push('a', o),
    read: (c, id) => c.list(id).toArray(),
    empty: [],
    written: ['a'],
    handle: (c, id) => c.list(id),
  },
  {
    name: 'map',
    write: (c, id, o) => c.map(id).set('k', 1, o),
    read: (c, id) => c.map(id).entries(),
    empty: [],
    written: [['k', 1]],
    handle: (c, id) => c.map(id),
  },
  {
    name: 'set',
    write: (c, id, o) => c.set(id).add('m', o),
    read: (c, id) => c.set(id).values(),
    empty: [],
    written: ['m'],
    handle: (c, id) => c.set(id),
  },
  {
    name: 'counter',
    write: (c, id, o) => c.counter(id).add(5, o),
    read: (c, id) => c.counter(id).get(),
    empty: 0,
    written: 5,
    handle: (c, id) => c.counter(id),
  },
  {
    name: 'text',
    write: (c, id, o) => c.text(id).append('hi', o),
    read: (c, id) => c.text(id).get(),
    empty: '',
    written: 'hi',
    handle: (c, id) => c.text(id),
  },
  {
    name: 'sortedset',
    write: (c, id, o) => c.sortedSet(id).add('m', 1, o),
    read: (c, id) => c.sortedSet(id).range(0, -1),
    empty: [],
    written: [['m', 1]],
    handle: (c, id) => c.sortedSet(id),
  },
  {
    name: 'queue',
    write: (c, id, o) => c.queue(id).push('job', o),
    read: (c, id) => c.queue(id).size(),
    empty: 0,
    written: 1,
    handle: (c, id) => c.queue(id),
  },
];

documentSuite('structure expiry', (ctx) => {
  const layer = clocked(ctx);

  describe.each(KINDS)('$name', (kind) => {
    it('a structure created with an expiry reads as missing (empty) once it passes, before any purge', async () => {
      const { c, clock } = await layer();
      await kind.write(c, 's', { expiry: 10 });
      const handle = kind.handle(c, 's');
      expect(await handle.expiry()).toEqual(new Date(T0 + 10_000));
      expect(await c.get('s')).toMatchObject({ expiresAt: new Date(T0 + 10_000) });
      clock.now = T0 + 9_999;
      expect(await kind.read(c, 's')).toEqual(kind.written);
      clock.now = T0 + 10_000;
      expect(await kind.read(c, 's')).toEqual(kind.empty);
      expect(await handle.expiry()).toBeUndefined();
      expect(await c.exists('s')).toBe(false);
      await expectDocumentError(c.get('s'), 'DOCUMENT_NOT_FOUND');
    });

    it('the first write after it expired starts a fresh structure, without the old elements or expiry', async () => {
      const { c, kv, clock } = await layer();
      await kind.write(c, 's', { expiry: 10 });
      clock.now = T0 + 10_000;
      await kind.write(c, 's');
      expect(await kind.read(c, 's')).toEqual(kind.written);
      expect(await kind.handle(c, 's').expiry()).toBeUndefined();
      // The fresh structure dropped the expired one's index entry.
      expect(await indexEntries(kv)).toEqual([]);
    });

    it('touch gives an existing structure a new expiry, persist removes it; a missing structure stays missing', async () => {
      const { c, kv, clock } = await layer();
      const handle = kind.handle(c, 's');
      expect(await handle.touch(10)).toBe(false);
      expect(await c.exists('s')).toBe(false);
      await kind.write(c, 's');
      expect(await handle.touch(10)).toBe(true);
      expect(await handle.expiry()).toEqual(new Date(T0 + 10_000));
      expect(await handle.touch(new Date(T0 + 20_000))).toBe(true);
      expect(await c.get('s')).toMatchObject({ expiresAt: new Date(T0 + 20_000) });
      expect((await indexEntries(kv)).map(([at]) => at)).toEqual([T0 + 20_000]);
      expect(await handle.persist()).toBe(true);
      expect(await handle.expiry()).toBeUndefined();
      expect(await indexEntries(kv)).toEqual([]);
      clock.now = T0 + 30_000;
      expect(await kind.read(c, 's')).toEqual(kind.written);
    });
  });

  it('an expiry applies only when the write creates the structure: later writes keep the expiry it has', async () => {
    const { c, clock } = await layer();
    const s = c.set('s');
    await s.add(1, { expiry: 10 });
    await s.add(2, { expiry: 100 });
    await s.add(3);
    expect(await s.expiry()).toEqual(new Date(T0 + 10_000));
    const plain = c.counter('k');
    await plain.add(1);
    await plain.add(1, { expiry: 10 });
    expect(await plain.expiry()).toBeUndefined();
    clock.now = T0 + 10_000;
    expect(await s.size()).toBe(0);
    expect(await plain.get()).toBe(2);
  });

  it('every creating write of every structure takes the expiry option', async () => {
    const { c } = await layer();
    const writes: [string, (id: string) => Promise<unknown>][] = [
      ['list.unshift', (id) => c.list(id).unshift(1, { expiry: 5 })],
      ['list.insert', (id) => c.list(id).insert(0, 1, { expiry: 5 })],
      ['list.append', (id) => c.list(id).append(1, { expiry: 5 })],
      ['list.prepend', (id) => c.list(id).prepend(1, { expiry: 5 })],
      ['map.increment', (id) => c.map(id).increment('n', 1, { expiry: 5 })],
      ['counter.incr', (id) => c.counter(id).incr(1, { expiry: 5 })],
      ['counter.decr', (id) => c.counter(id).decr(1, { expiry: 5 })],
      ['counter.set', (id) => c.counter(id).set(7, { expiry: 5 })],
      ['counter.reset', (id) => c.counter(id).reset({ expiry: 5 })],
      ['text.prepend', (id) => c.text(id).prepend('x', { expiry: 5 })],
      ['text.set', (id) => c.text(id).set('x', { expiry: 5 })],
      ['queue.pushMany', (id) => c.queue(id).pushMany([1, 2], { expiry: 5 })],
      ['sortedSet.increment', (id) => c.sortedSet(id).increment('m', 1, { expiry: 5 })],
    ];
    for (const [name, write] of writes) {
      await write(name);
      expect({ name, expiresAt: (await c.get(name)).expiresAt }).toEqual({ name, expiresAt: new Date(T0 + 5_000) });
    }
  });

  it('a bad expiry is INVALID_ARGUMENT and writes nothing', async () => {
    const { c, kv } = await layer();
    for (const expiry of [-1, NaN, Infinity, '10', new Date(NaN), new Date(0)]) {
      await expectDocumentError(c.list('l').push(1, { expiry: expiry as number }), 'INVALID_ARGUMENT');
      await expectDocumentError(c.counter('k').incr(1, { expiry: expiry as number }), 'INVALID_ARGUMENT');
    }
    await c.set('s').add(1);
    await expectDocumentError(c.set('s').touch(-1), 'INVALID_ARGUMENT');
    expect(await c.exists('l')).toBe(false);
    expect(await c.exists('k')).toBe(false);
    expect(await c.set('s').expiry()).toBeUndefined();
    expect(await indexEntries(kv)).toEqual([]);
  });

  it('expiry() and touch() on a plain document are WRONG_KIND; an expired plain document is replaced by a structure', async () => {
    const { c, clock, kv } = await layer();
    await c.insert({ a: 1 }, { id: 'doc', expiry: 10 });
    await expectDocumentError(c.list('doc').expiry(), 'WRONG_KIND');
    await expectDocumentError(c.list('doc').touch(5), 'WRONG_KIND');
    clock.now = T0 + 10_000;
    await c.list('doc').push(1, { expiry: 30 });
    expect(await c.list('doc').toArray()).toEqual([1]);
    // The expired document's index entry went with it.
    expect((await indexEntries(kv)).map(([at]) => at)).toEqual([T0 + 40_000]);
  });

  it("collection.touch and getAndTouch of a structure change the structure's expiry", async () => {
    const { c, clock } = await layer();
    const l = c.list('l');
    await l.push(1);
    await c.touch('l', 10);
    expect(await l.expiry()).toEqual(new Date(T0 + 10_000));
    expect(await c.getAndTouch('l', 20)).toMatchObject({ content: [1], expiresAt: new Date(T0 + 20_000) });
    expect(await l.expiry()).toEqual(new Date(T0 + 20_000));
    clock.now = T0 + 20_000;
    expect(await l.size()).toBe(0);
    await expectDocumentError(c.touch('l', 10), 'DOCUMENT_NOT_FOUND');
    clock.now = T0;
    await c.touch('l', 0);
    expect(await l.expiry()).toBeUndefined();
  });

  it('clear() removes the structure and its expiry index entry', async () => {
    const { c, kv } = await layer();
    await c.map('m').set('a', 1, { expiry: 10 });
    await c.map('m').clear();
    expect(await indexEntries(kv)).toEqual([]);
    expect(await c.exists('m')).toBe(false);
  });

  it('purgeExpired removes expired structures, every key of them, through the expiry index', async () => {
    const { docs, c, kv, clock } = await layer();
    const { collectionId } = await docs.createCollection('app.items');
    await c.set('gone').add(1, { expiry: 10 });
    await c.queue('jobs').pushMany([1, 2, 3], { expiry: 10 });
    await c.text('later').set('x'.repeat(150_000), { expiry: 10 });
    await c.text('later').touch(60);
    await c.counter('kept').add(1);
    clock.now = T0 + 10_000;
    expect(await docs.purgeExpired()).toBe(2);
    expect((await indexEntries(kv)).map(([at]) => at)).toEqual([T0 + 60_000]);
    expect(await c.text('later').length()).toBe(150_000);
    clock.now = T0 + 60_000;
    expect(await docs.purgeExpired()).toBe(1);
    expect(await indexEntries(kv)).toEqual([]);
    expect(await c.counter('kept').get()).toBe(1);
    await c.counter('kept').clear();
    expect(await documentKeys(kv, collectionId)).toBe(0);
  });

  it("a collection's maxTTL caps a structure's expiry and gives one created without an expiry maxTTL from its creation", async () => {
    const { docs, clock } = await layer();
    await docs.createCollection('app.capped', { maxTTL: 60 });
    const c = docs.collection('app.capped');
    await c.counter('plain').add(1);
    await c.counter('long').add(1, { expiry: 3600 });
    await c.counter('short').add(1, { expiry: 40 });
    expect(await c.counter('plain').expiry()).toEqual(new Date(T0 + 60_000));
    expect(await c.counter('long').expiry()).toEqual(new Date(T0 + 60_000));
    expect(await c.counter('short').expiry()).toEqual(new Date(T0 + 40_000));
    // Element writes do not extend it; touch does, within the cap; persist is maxTTL from now.
    clock.now = T0 + 30_000;
    await c.counter('plain').add(1);
    expect(await c.counter('plain').expiry()).toEqual(new Date(T0 + 60_000));
    await c.counter('long').touch(3600);
    expect(await c.counter('long').expiry()).toEqual(new Date(T0 + 90_000));
    await c.counter('short').persist();
    expect(await c.counter('short').expiry()).toEqual(new Date(T0 + 90_000));
    clock.now = T0 + 60_000;
    expect(await c.counter('plain').get()).toBe(0);
    expect(await c.counter('long').get()).toBe(1);
  });

  it('concurrent writes with an expiry to a new structure all land; the one that creates it sets the expiry', async () => {
    const { c } = await layer();
    const k = c.counter('k');
    const values = await Promise.all(Array.from({ length: 8 }, () => k.incr(1, { expiry: 10 })));
    expect([...values].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(await k.expiry()).toEqual(new Date(T0 + 10_000));
    const l = c.list('l');
    await Promise.all(Array.from({ length: 8 }, (_, i) => l.push(i, { expiry: 10 })));
    expect(await l.size()).toBe(8);
    expect(await l.expiry()).toEqual(new Date(T0 + 10_000));
  });

  it("a queue's leases outlive its expiry only until the purge: then ack is LEASE_EXPIRED", async () => {
    const { docs, c, clock } = await layer();
    const q = c.queue('q');
    await q.pushMany(['a', 'b'], { expiry: 10 });
    const [first, second] = await q.lease(2);
    clock.now = T0 + 10_000;
    expect(await q.size()).toBe(0);
    await q.ack(first);
    expect(await docs.purgeExpired()).toBe(1);
    await expectDocumentError(q.ack(second), 'LEASE_EXPIRED');
    expect(await c.exists('q')).toBe(false);
  });

  ctx.describeWithFaults('with commit faults', () => {
    it('structures created, touched and re-created under commit_unknown_result end with one expiry, in step with its index entry', async () => {
      const { kv, counter } = await ctx.openWithFaults({ seed: testSeed(1801), notCommitted: 0.1, tooOld: 0.05, unknownResult: 0.2 });
      const clock = { now: T0 };
      const docs = await open({ database: kv, now: () => clock.now });
      try {
        const c = docs.collection('app.items');
        const ids = Array.from({ length: 12 }, (_, i) => `s${i}`);
        await Promise.all(ids.flatMap((id) => [0, 1, 2, 3].map((m) => c.set(id).add(m, { expiry: 10 }))));
        expect(await indexEntries(kv)).toHaveLength(ids.length);
        await Promise.all(ids.map((id) => c.set(id).touch(20)));
        expect((await indexEntries(kv)).map(([at]) => at)).toEqual(ids.map(() => T0 + 20_000));
        clock.now = T0 + 20_000;
        await Promise.all(ids.map((id) => c.set(id).add('fresh')));
        expect(await indexEntries(kv)).toEqual([]);
        for (const id of ids)
          expect({ id, values: await c.set(id).values(), expiry: await c.set(id).expiry() }).toEqual({ id, values: ['fresh'], expiry: undefined });
        expect(await checkDocuments(docs)).toMatchObject({ ok: true, problems: [] });
        expect(counter.counts().commitErrors.get(1021) ?? 0).toBeGreaterThan(0);
      } finally {
        await docs.close();
      }
    });
  });

  it('an id too long for an expiry index entry is KEY_TOO_LARGE with an expiry, and nothing is written', async () => {
    const { docs, c, kv } = await layer();
    const { collectionId } = await docs.createCollection('app.items');
    const id = 'x'.repeat(kv.maxKeyBytes + 1 - layout.system.pack(['expiry', T0 + 60_000, collectionId, '']).length);
    await expectDocumentError(c.counter(id).add(1, { expiry: 60 }), 'KEY_TOO_LARGE');
    expect(await c.exists(id)).toBe(false);
    await c.counter(id).add(1);
    await expectDocumentError(c.counter(id).touch(60), 'KEY_TOO_LARGE');
    expect(await c.counter(id).get()).toBe(1);
    expect(await c.counter(id).expiry()).toBeUndefined();
    expect(await indexEntries(kv)).toEqual([]);
  });

  it('iteration of an expired structure yields nothing', async () => {
    const { c, clock } = await layer();
    await c.list('l').push(1, { expiry: 1 });
    clock.now = T0 + 1_000;
    const seen: unknown[] = [];
    for await (const v of c.list('l')) seen.push(v);
    expect(seen).toEqual([]);
  });
});

/** What an operation read and wrote, as counts. */
function cost(c: KvCounts) {
  return { gets: c.gets, rangeReads: c.rangeReads, keysRead: c.keysRead, keysWritten: c.keysWritten, clears: c.clears, clearRanges: c.clearRanges };
}

documentSuite('structure expiry costs', (ctx) => {
  const clockedLayer = clocked(ctx);
  /** A layer whose collection exists and whose cached manifest is current, so that measures count operations alone. */
  const layer = async () => {
    const opened = await clockedLayer();
    await opened.c.counter('warm').add(1);
    await opened.c.counter('warm').get();
    return opened;
  };

  /** Each operation, on a structure that has an expiry and on one that has none. */
  const OPS: [string, (c: Collection, id: string) => Promise<unknown>][] = [
    ['set.add', (c, id) => c.set(id).add('new')],
    ['set.has', (c, id) => c.set(id).has('m')],
    ['map.set', (c, id) => c.map(`${id}m`).set('k', 2)],
    ['list.push', (c, id) => c.list(`${id}l`).push(2)],
    ['list.toArray', (c, id) => c.list(`${id}l`).toArray()],
    ['counter.add', (c, id) => c.counter(`${id}k`).add(1)],
    ['counter.incr', (c, id) => c.counter(`${id}k`).incr(1)],
    ['text.append', (c, id) => c.text(`${id}t`).append('!')],
    ['queue.push', (c, id) => c.queue(`${id}q`).push(2)],
    ['queue.pop', (c, id) => c.queue(`${id}q`).pop()],
  ];

  it('an operation reads and writes the same keys whether or not the structure has an expiry', async () => {
    const { c, counter } = await layer();
    for (const [id, opts] of [
      ['with', { expiry: 3600 }],
      ['without', {}],
    ] as const) {
      await c.set(id).add('m', opts);
      await c.map(`${id}m`).set('k', 1, opts);
      await c.list(`${id}l`).push(1, opts);
      await c.counter(`${id}k`).add(1, opts);
      await c.text(`${id}t`).append('x', opts);
      await c.queue(`${id}q`).push(1, opts);
    }
    for (const [name, op] of OPS) {
      const withExpiry = await counter.measure(() => op(c, 'with'));
      const without = await counter.measure(() => op(c, 'without'));
      expect({ name, ...cost(withExpiry.counts) }).toEqual({ name, ...cost(without.counts) });
    }
  });

  it('counter.add on an existing counter reads the kind key alone, with or without an expiry', async () => {
    const { c, counter } = await layer();
    await c.counter('k').add(1, { expiry: 60 });
    const [attempt] = (await counter.measure(() => c.counter('k').add(1))).attempts;
    expect(attempt.gets.length).toBe(1);
    expect(attempt.ranges.length).toBe(0);
  });

  it('creating a structure with an expiry writes 2 keys more (its expiry key and index entry) and reads nothing more', async () => {
    const { c, counter } = await layer();
    const plain = await counter.measure(() => c.counter('a').add(1));
    const expiring = await counter.measure(() => c.counter('b').add(1, { expiry: 60 }));
    expect(cost(expiring.counts)).toEqual({ ...cost(plain.counts), keysWritten: cost(plain.counts).keysWritten + 2 });
  });

  it('touch reads the kind key and writes the kind, expiry and version keys and the index entry (clearing the old one)', async () => {
    const { c, counter } = await layer();
    await c.set('s').add(1, { expiry: 60 });
    const { counts } = await counter.measure(() => c.set('s').touch(120));
    expect(cost(counts)).toEqual({ gets: 1, rangeReads: 0, keysRead: 1, keysWritten: 4, clears: 1, clearRanges: 0 });
  });
});
