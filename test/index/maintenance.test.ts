/**
 * Secondary indexes stay what the documents give, on every write path, in the writer's transaction:
 * insert, upsert, replace, remove, mutateIn (every spec kind), expiry and its purge, dropIndex,
 * dropCollection. A write that touches no indexed path costs nothing more; non-unique entries never
 * make writers of different documents conflict; unique indexes conflict racing writers of one value.
 */
import { MutateInSpec, open, type Collection, type JsonValue } from '../../src';
import { isKvError } from '../../src/kv/contract/errors';
import type { AttemptLog } from '../../src/kv/counting-engine';
import { documentSuite } from '../document/document-suite';
import { Random, testSeed } from '../support/random';
import { actualEntries, expectedEntries, keysUnder } from './support';

const INDEXES = {
  byA: { fields: ['a'] },
  byBcDescA: { fields: [{ path: 'b.c', order: 'desc' as const }, 'a'] },
  byTag: { fields: ['tags[*]'] },
  bySkuQty: { fields: ['items[*].sku', 'items[*].qty'], include: ['a'] },
  openByA: { fields: ['a'], where: { 'b.c': { $gte: 2 } } },
};

async function createAll(c: Collection): Promise<void> {
  for (const [name, spec] of Object.entries(INDEXES)) await c.createIndex(name, spec);
}

async function expectConsistent(db: Parameters<typeof actualEntries>[0], c: Collection): Promise<void> {
  for (const [name, spec] of Object.entries(INDEXES)) {
    const where = 'where' in spec ? spec.where : undefined;
    expect({ name, entries: await actualEntries(db, c, name) }).toEqual({ name, entries: await expectedEntries(c, spec.fields, where) });
  }
}

function randomDoc(r: Random): JsonValue {
  const doc: Record<string, JsonValue> = {};
  if (r.chance(0.8)) doc.a = r.pick([1, 2, 2n ** 60n, 'x', null, [1, 2], { z: 1 }, true]);
  if (r.chance(0.7)) doc.b = r.chance(0.8) ? { c: r.int(4) } : [{ c: 1 }];
  if (r.chance(0.6)) doc.tags = Array.from({ length: r.int(4) }, () => r.pick(['red', 'blue', 'green', 7]));
  if (r.chance(0.6)) doc.items = Array.from({ length: r.int(3) }, () => ({ sku: r.pick(['s1', 's2', 's3']), qty: r.int(3) }));
  doc.other = r.int(100);
  return doc;
}

function randomSpecs(r: Random): MutateInSpec[] {
  switch (r.int(11)) {
    case 0:
      return [MutateInSpec.upsert('a', r.pick([1, 'y', null, [3]]))];
    case 1:
      return [MutateInSpec.upsert('b.c', r.int(5), { createPath: true })];
    case 2:
      return [MutateInSpec.arrayAppend('tags', r.pick(['red', 'pink']), { createPath: true })];
    case 3:
      return [MutateInSpec.arrayPrepend('tags', 'first', { createPath: true })];
    case 4:
      return [MutateInSpec.remove('tags[0]')];
    case 5:
      return [MutateInSpec.arrayInsert('items[0]', { sku: 's9', qty: 1 })];
    case 6:
      return [MutateInSpec.increment('items[0].qty', 1)];
    case 7:
      return [MutateInSpec.remove('a')];
    case 8:
      return [MutateInSpec.arrayAddUnique('tags', r.pick(['red', 'blue', 'new']))];
    case 9:
      return [MutateInSpec.replace('b', { c: r.int(5) })];
    default:
      return [MutateInSpec.upsert('other', r.int(100))];
  }
}

/** Every key an attempt read or wrote under `prefix`. */
function touchedUnder(attempts: readonly AttemptLog[], prefix: Buffer): Buffer[] {
  const under = (key: unknown) => Buffer.isBuffer(key) && key.length >= prefix.length && key.subarray(0, prefix.length).equals(prefix);
  return attempts.flatMap((a) => [
    ...a.gets.map((g) => g.key).filter(under),
    ...a.ranges.map((r) => r.begin).filter(under),
    ...a.sets.map((s) => s.key).filter(under),
    ...a.clears.filter(under),
    ...a.clearRanges.map((r) => r.begin).filter(under),
  ]) as Buffer[];
}

documentSuite('index maintenance', (ctx) => {
  it('keeps every index equal to what the documents give, through random writes of every kind', async () => {
    const seed = testSeed(1410);
    const r = new Random(seed);
    const { docs: db } = await ctx.open();
    const c = db.collection('random');
    await createAll(c);
    const ids = Array.from({ length: 12 }, (_, i) => `d${i}`);
    for (let step = 0; step < 120; step++) {
      const id = r.pick(ids);
      const op = r.int(6);
      try {
        if (op === 0) await c.insert(randomDoc(r), { id });
        else if (op === 1) await c.upsert(id, randomDoc(r));
        else if (op === 2) await c.replace(id, randomDoc(r));
        else if (op === 3) await c.remove(id);
        else if (op === 4) await c.mutateIn(id, randomSpecs(r), { storeSemantics: r.chance(0.2) ? 'upsert' : 'replace' });
        else await c.mutateIn(id, [MutateInSpec.remove('')]);
      } catch (err) {
        if (!(err as { code?: string }).code) throw err;
      }
    }
    await expectConsistent(db, c);
  });

  ctx.describeWithFaults('under injected faults (seeded)', () => {
    it('keeps every index exact when commits fail and are retried (not_committed, applied-then-unknown, too old)', async () => {
      const seed = testSeed(1411);
      const r = new Random(seed);
      const { docs: db } = await ctx.openWithFaults({ seed, notCommitted: 0.15, unknownResult: 0.1, tooOld: 0.1 });
      const c = db.collection('faults');
      await createAll(c);
      const ids = Array.from({ length: 10 }, (_, i) => `d${i}`);
      for (let step = 0; step < 80; step++) {
        const id = r.pick(ids);
        const op = r.int(4);
        try {
          if (op === 0) await c.upsert(id, randomDoc(r));
          else if (op === 1) await c.remove(id);
          else if (op === 2) await c.mutateIn(id, randomSpecs(r));
          else await c.insert(randomDoc(r), { id });
        } catch (err) {
          if (!(err as { code?: string }).code) throw err;
        }
      }
      await expectConsistent(db, c);
    });
  });

  it('maintains the indexes in the caller transaction, which sees its own entries', async () => {
    const { docs: db } = await ctx.open();
    const c = db.collection('own');
    await c.createIndex('byA', { fields: ['a'] });
    await db.transact(async (tr) => {
      await c.insert({ a: 5 }, { id: 'x', tr });
      const seen = [];
      for await (const e of c.indexAccess().scan(tr, 'byA', { equal: [5] })) seen.push(e.id);
      expect(seen).toEqual(['x']);
    });
  });

  it('a mutateIn of a path no index reads costs exactly what it costs without indexes, and touches no index key', async () => {
    const { docs: db, counter } = await ctx.open();
    const plain = db.collection('plain');
    const indexed = db.collection('indexed');
    const doc = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`f${i}`, i]));
    await plain.insert({ ...doc, other: 0 }, { id: 'd' });
    await indexed.insert({ ...doc, other: 0 }, { id: 'd' });
    for (let i = 0; i < 10; i++) await indexed.createIndex(`i${i}`, { fields: [`f${i}`] });
    // The index changes moved the metadata version: the first write to `plain` reads its catalog again.
    await plain.mutateIn('d', [MutateInSpec.upsert('other', 0)]);
    // And the first write to each collection reads whether it has ever had a document locked (lock-flags.ts).
    await indexed.mutateIn('d', [MutateInSpec.upsert('other', 0)]);
    const before = await counter.measure(() => plain.mutateIn('d', [MutateInSpec.upsert('other', 1)]));
    const after = await counter.measure(() => indexed.mutateIn('d', [MutateInSpec.upsert('other', 1)]));
    // The same calls: each write reads the metadata version, and neither reads its (cached) catalog.
    expect(after.counts).toEqual(before.counts);
    expect(after.counts.metadataVersionReads).toBe(1);
    const id = (await db.getCollectionId('_default.indexed')).collectionId;
    const catalog = Buffer.concat([db.layout.indexPrefix(id), Buffer.of(0x00)]);
    expect(after.attempts.flatMap((a) => a.gets).filter((g) => g.key.equals(catalog))).toEqual([]);
    const entries = Buffer.concat([db.layout.indexPrefix(id), Buffer.of(0x02)]);
    expect(touchedUnder(after.attempts, entries)).toEqual([]);
    // A write of an indexed path does touch its index.
    const touched = await counter.measure(() => indexed.mutateIn('d', [MutateInSpec.upsert('f3', 30)]));
    expect(touchedUnder(touched.attempts, entries).length).toBeGreaterThan(0);
  });

  it('non-unique: concurrent writers of different documents with the same values both commit', async () => {
    const { docs: db, kv } = await ctx.open();
    const c = db.collection('race');
    await c.createIndex('byA', { fields: ['a'] });
    await c.insert({ a: 0 }, { id: 'warm' });
    const tr1 = kv.createTransaction();
    const tr2 = kv.createTransaction();
    await c.upsert('one', { a: 1 }, { tr: tr1 });
    await c.upsert('two', { a: 1 }, { tr: tr2 });
    await tr1.commit();
    await tr2.commit();
    expect((await actualEntries(db, c, 'byA')).map(([id]) => id)).toEqual(['warm', 'one', 'two']);
  });

  it('unique: a second document with the value fails with UNIQUE_VIOLATION and changes nothing', async () => {
    const { docs: db } = await ctx.open();
    const c = db.collection('users');
    await c.createIndex('byEmail', { fields: ['email'], unique: true });
    await c.insert({ email: 'a@x' }, { id: 'u1' });
    await expect(c.insert({ email: 'a@x' }, { id: 'u2' })).rejects.toMatchObject({ code: 'UNIQUE_VIOLATION' });
    await c.insert({ email: 'b@x' }, { id: 'u2' });
    await expect(c.mutateIn('u2', [MutateInSpec.upsert('email', 'a@x')])).rejects.toMatchObject({ code: 'UNIQUE_VIOLATION' });
    expect((await c.get('u2')).content).toEqual({ email: 'b@x' });
    // The same document may keep its own value.
    await c.upsert('u1', { email: 'a@x', name: 'A' });
    await c.remove('u1');
    await c.upsert('u2', { email: 'a@x' });
    expect(await actualEntries(db, c, 'byEmail')).toEqual(await expectedEntries(c, ['email']));
  });

  it('unique: of two held-open transactions writing one value, the second to commit conflicts', async () => {
    const { docs: db, kv } = await ctx.open();
    const c = db.collection('users');
    await c.createIndex('byEmail', { fields: ['email'], unique: true });
    await c.insert({ email: 'z@x' }, { id: 'warm' });
    const tr1 = kv.createTransaction();
    const tr2 = kv.createTransaction();
    await c.insert({ email: 'same@x' }, { id: 'p', tr: tr1 });
    await c.insert({ email: 'same@x' }, { id: 'q', tr: tr2 });
    await tr1.commit();
    const second = await tr2.commit().then(
      () => 'committed',
      (err: unknown) => (isKvError(err, 'not_committed') ? 'conflict' : err),
    );
    expect(second).toBe('conflict');
    // Retried, the loser sees the winner's entry.
    await expect(c.insert({ email: 'same@x' }, { id: 'q' })).rejects.toMatchObject({ code: 'UNIQUE_VIOLATION' });
  });

  it('a writer in another layer, its catalog cached, does not miss an index created while its transaction was open', async () => {
    const { docs: db, kv } = await ctx.open();
    const c = db.collection('shared');
    await c.insert({ a: 0 }, { id: 'warm' });
    const other = await open({ database: kv });
    try {
      const theirs = other.collection('shared');
      // The other layer caches the collection's catalog (no index) with the metadata version.
      await theirs.upsert('warm', { a: 1 });
      const held = kv.createTransaction();
      await theirs.upsert('late', { a: 7 }, { tr: held });
      await c.createIndex('byA', { fields: ['a'] });
      const outcome = await held.commit().then(
        () => 'committed',
        (err: unknown) => (isKvError(err, 'not_committed') ? 'conflict' : err),
      );
      expect(outcome).toBe('conflict');
      // Retried, the write sees the new metadata version, reads the catalog and maintains the index.
      await theirs.upsert('late', { a: 7 });
      await theirs.upsert('warm', { a: 2 });
      expect(await actualEntries(db, c, 'byA')).toEqual(await expectedEntries(c, ['a']));
      expect((await actualEntries(db, c, 'byA')).length).toBe(2);
    } finally {
      await other.close();
    }
  });

  it('a write after createIndex in the same transaction maintains the new index', async () => {
    const { docs: db } = await ctx.open();
    const c = db.collection('together');
    await c.insert({ a: 0 }, { id: 'first' });
    await c.remove('first');
    await db.transact(async (tr) => {
      await c.createIndex('byA', { fields: ['a'] }, { tr });
      await c.createIndex('byB', { fields: ['b'] }, { tr });
      // The transaction cannot read the metadata version it bumped: it reads the catalog it wrote.
      await c.upsert('d', { a: 5 }, { tr });
      await c.insert({ a: 6, b: 1 }, { id: 'e', tr });
    });
    expect(await actualEntries(db, c, 'byA')).toEqual(await expectedEntries(c, ['a']));
    expect((await actualEntries(db, c, 'byA')).length).toBe(2);
    expect(await actualEntries(db, c, 'byB')).toEqual(await expectedEntries(c, ['b']));
  });

  it('caps the entries of one document, with an error naming it, and writes nothing', async () => {
    const { docs: db } = await ctx.open();
    const c = db.collection('multi');
    await c.createIndex('pairs', { fields: ['xs[*]', 'ys[*]'] });
    const many = Array.from({ length: 40 }, (_, i) => i);
    await expect(c.insert({ xs: many, ys: many }, { id: 'big' })).rejects.toMatchObject({ code: 'TOO_MANY_INDEX_ENTRIES', id: 'big' });
    expect(await c.exists('big')).toBe(false);
    await c.insert({ xs: many, ys: [1, 2] }, { id: 'ok' });
    expect((await actualEntries(db, c, 'pairs')).length).toBe(80);
  });

  it('skips entries of expired documents, and the purge removes them', async () => {
    const { docs: db, kv } = await ctx.open();
    const c = db.collection('ttl');
    await c.createIndex('byA', { fields: ['a'], include: ['b'] });
    await c.insert({ a: 1, b: 'kept' }, { id: 'live' });
    await c.insert({ a: 1, b: 'gone' }, { id: 'short', expiry: new Date(Date.now() + 30) });
    await new Promise((resolve) => setTimeout(resolve, 60));
    const seen = await db.transact(async (tr) => {
      const out = [];
      for await (const e of c.indexAccess().scan(tr, 'byA', { equal: [1] })) out.push([e.id, e.included.get('b')]);
      return out;
    });
    expect(seen).toEqual([['live', 'kept']]);
    const id = (await db.getCollectionId('_default.ttl')).collectionId;
    expect((await keysUnder(kv, db.layout.indexPrefix(id))).length).toBe(3);
    expect(await db.purgeExpired()).toBe(1);
    expect((await keysUnder(kv, db.layout.indexPrefix(id))).length).toBe(2);
  });

  it('rewrites the entries when a write of a non-indexed path changes the expiry they record', async () => {
    const { docs: db } = await ctx.open();
    const c = db.collection('ttl2');
    await c.createIndex('byA', { fields: ['a'] });
    const lapse = Date.now() + 500;
    await c.insert({ a: 1 }, { id: 'kept', expiry: new Date(lapse) });
    await c.insert({ a: 1 }, { id: 'lapses', expiry: new Date(lapse) });
    // As Couchbase: a mutateIn without an expiry option clears the document's expiry.
    await c.mutateIn('kept', [MutateInSpec.upsert('other', 1)]);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, lapse - Date.now()) + 20));
    expect(await actualEntries(db, c, 'byA')).toEqual(await expectedEntries(c, ['a']));
    expect((await actualEntries(db, c, 'byA')).map(([id]) => id)).toEqual(['kept']);
  });

  it('touch rewrites the entries with the new expiry, so they lapse with the document', async () => {
    const { docs: db } = await ctx.open();
    const c = db.collection('touched');
    await c.createIndex('byA', { fields: ['a'] });
    await c.insert({ a: 1 }, { id: 'soon' });
    await c.insert({ a: 2 }, { id: 'kept', expiry: new Date(Date.now() + 400) });
    await c.touch('soon', new Date(Date.now() + 400));
    await c.touch('kept', 0);
    await new Promise((resolve) => setTimeout(resolve, 450));
    expect((await actualEntries(db, c, 'byA')).map(([id]) => id)).toEqual(['kept']);
    expect(await actualEntries(db, c, 'byA')).toEqual(await expectedEntries(c, ['a']));
  });

  it('dropIndex clears the entries; dropCollection clears every index key', async () => {
    const { docs: db, kv } = await ctx.open();
    const c = db.collection('gone');
    await createAll(c);
    await c.insert({ a: 1, tags: ['x'] }, { id: 'd' });
    const id = (await db.getCollectionId('_default.gone')).collectionId;
    const prefix = db.layout.indexPrefix(id);
    const before = (await keysUnder(kv, prefix)).length;
    await c.dropIndex('byTag');
    expect((await keysUnder(kv, prefix)).length).toBe(before - 1);
    expect((await c.listIndexes()).map((d) => d.name)).toEqual(['byA', 'byBcDescA', 'bySkuQty', 'openByA']);
    await db.dropCollection('gone');
    expect(await keysUnder(kv, prefix)).toEqual([]);
  });

  it('a definition made by one layer is maintained by every other layer on the database', async () => {
    const { docs: first, kv } = await ctx.open();
    const { open } = await import('../../src');
    const second = await open({ database: kv });
    try {
      await first.collection('shared').insert({ a: 0 }, { id: 'warm' });
      await second.collection('shared').upsert('s', { a: 1 });
      await first.collection('shared').createIndex('byA', { fields: ['a'] });
      await second.collection('shared').upsert('s', { a: 2 });
      expect(await actualEntries(first, first.collection('shared'), 'byA')).toEqual(await expectedEntries(first.collection('shared'), ['a']));
    } finally {
      await second.close();
    }
  });
});
