/**
 * Collection.find / findOne / count / explain, planned over the indexes the tests create (the index
 * layer's `IndexAccess`, kept in the writers' transactions). The results of every plan
 * must be exactly the documents the filter matches (compileFilter, itself tested against a reference
 * model), each once, in sort order, and must page through continuation tokens across transactions.
 */
import { open, type Collection, type DocLayer } from '../../src';
import type { Database } from '../../src/kv/contract/database';
import { isDocumentError } from '../../src/document/errors';
import type { DocId, JsonValue } from '../../src/document/types';
import { compileFilter } from '../../src/filter';
import type { FindOptions } from '../../src/query';
import { compareOrderKeys, orderKeyOf, parseSort } from '../../src/query/order-key';
import type { IndexSpec } from '../../src/index';
import { documentEngines } from '../support/document-engines';
import { Random, testSeed } from '../support/random';
import { randomDocument, randomFilter } from '../filter/filter-generators';

for (const engine of documentEngines) {
  const layers: { docs: DocLayer; kv: Database }[] = [];
  afterEach(async () => {
    for (const layer of layers.splice(0)) {
      await layer.docs.close();
      await layer.kv.close();
    }
  });
  afterAll(async () => engine.cleanup?.());

  async function collectionWith(docs: readonly JsonValue[]): Promise<Collection> {
    const kv = await engine.open();
    const layer = await open({ database: kv });
    layers.push({ docs: layer, kv });
    const c = layer.collection('things');
    for (let i = 0; i < docs.length; i++) await c.upsert(`d${String(i).padStart(4, '0')}`, docs[i]);
    return c;
  }

  interface NamedIndex extends IndexSpec {
    readonly name: string;
  }

  /** `c` with these indexes created (and built over its documents). */
  async function withIndexes(c: Collection, specs: readonly NamedIndex[]): Promise<{ q: Collection }> {
    for (const { name, ...spec } of specs) await c.createIndex(name, spec);
    return { q: c };
  }

  /**
   * `ids` as the test compares them: sorted when there is no sort; otherwise each id replaced by its
   * sort key, then the ids sorted (documents with equal sort keys may come in either id order: by id
   * ascending, or descending when the index is read backwards).
   */
  function comparable(docs: readonly JsonValue[], ids: readonly DocId[], sort?: FindOptions['sort']): unknown {
    const fields = parseSort(sort);
    if (fields.length === 0) return [...ids].sort();
    const byId = new Map(docs.map((d, i) => [`d${String(i).padStart(4, '0')}` as DocId, d]));
    const keys = ids.map((id) =>
      JSON.stringify(orderKeyOf(fields, id, byId.get(id) ?? null).values, (_k, v: unknown) =>
        typeof v === 'symbol' ? '<missing>' : typeof v === 'bigint' ? `${v}n` : v,
      ),
    );
    return { keys, ids: [...ids].sort() };
  }

  function expected(docs: readonly JsonValue[], filter: unknown, sort?: FindOptions['sort']): DocId[] {
    const f = compileFilter(filter);
    const ids = docs.map((d, i) => ({ id: `d${String(i).padStart(4, '0')}` as DocId, d })).filter((x) => f.matches(x.d));
    const fields = parseSort(sort);
    if (fields.length > 0) {
      const dirs = fields.map((s) => s.direction);
      ids.sort((a, b) => compareOrderKeys(orderKeyOf(fields, a.id, a.d), orderKeyOf(fields, b.id, b.d), dirs, 1));
    }
    return ids.map((x) => x.id);
  }

  const ORDERS: JsonValue[] = [
    { customer: { city: 'Paris' }, total: 120, status: 'open', tags: ['a', 'b'] },
    { customer: { city: 'Paris' }, total: 80, status: 'shipped', tags: ['b'] },
    { customer: { city: 'Lyon' }, total: 200, status: 'open', tags: [] },
    { customer: { city: 'Paris' }, total: [50, 300], status: 'open' },
    { customer: [{ city: 'Paris' }, { city: 'Nice' }], total: 90, status: 'open', tags: ['c'] },
    { customer: { city: 'Nice' }, total: '100', status: 'open', tags: 'a' },
    { total: 10, status: null },
    { customer: { city: 'Paris' }, total: 120, status: 'open', tags: [['a']] },
  ];

  describe(`Collection.find [${engine.name}]`, () => {
    it('fails with NO_INDEX naming an index that would serve the query, and scans only with allowScan', async () => {
      const c = await collectionWith(ORDERS);
      let error: unknown;
      try {
        await c.find({ 'customer.city': 'Paris', total: { $gt: 100 } }).toArray();
      } catch (err) {
        error = err;
      }
      expect(isDocumentError(error, 'NO_INDEX')).toBe(true);
      expect((error as Error).message).toContain('["customer.city","total"]');
      const found = await c.find({ 'customer.city': 'Paris', total: { $gt: 100 } }, { allowScan: true }).toArray();
      expect(found.map((f) => f.id)).toEqual(expected(ORDERS, { 'customer.city': 'Paris', total: { $gt: 100 } }));
    });

    it('serves an equality prefix and a range from an index, array values included through the array section', async () => {
      const c = await collectionWith(ORDERS);
      const { q } = await withIndexes(c, [{ name: 'city_total', fields: ['customer.city', 'total'] }]);
      const filter = { 'customer.city': 'Paris', total: { $gte: 100 } };
      const found = await q.find(filter).toArray();
      expect(found.map((f) => f.id).sort()).toEqual(expected(ORDERS, filter).sort());
      const plan = await q.explain(filter);
      expect(plan).toMatchObject({ plan: 'index', index: 'city_total', covering: false });
      expect(plan.intervals).toEqual([
        'customer.city = "Paris", total in [100, end of number]',
        'all entries (array values)'.replace('all entries', 'customer.city in [start of array, end of array]'),
        'customer.city = "Paris", total in [start of array, end of array] (array values)',
      ]);
    });

    it('returns each document once from a union of $in and $or intervals, multikey indexes included', async () => {
      const c = await collectionWith(ORDERS);
      const { q } = await withIndexes(c, [
        { name: 'tags', fields: ['tags[*]'] },
        { name: 'status', fields: ['status'] },
      ]);
      for (const filter of [
        { tags: { $in: ['a', 'b'] } },
        { $or: [{ tags: 'a' }, { tags: 'b' }, { tags: ['a'] }] },
        { status: { $in: ['open', null] } },
        { tags: { $all: ['a', 'b'] } },
      ]) {
        const found = await q.find(filter).toArray();
        expect(found.map((f) => f.id).sort()).toEqual(expected(ORDERS, filter).sort());
        expect((await q.explain(filter)).plan).toBe('index');
      }
    });

    it('gives the sort from the index order without sorting in memory, forwards and backwards', async () => {
      const c = await collectionWith(ORDERS);
      const { q } = await withIndexes(c, [{ name: 'status_total', fields: ['status', { path: 'total', order: 'desc' }] }]);
      for (const sort of [{ total: -1 }, { total: 1 }] as const) {
        const filter = { status: 'open' };
        const found = await q.find(filter, { sort }).toArray();
        expect(
          comparable(
            ORDERS,
            found.map((f) => f.id),
            sort,
          ),
        ).toEqual(comparable(ORDERS, expected(ORDERS, filter, sort), sort));
        expect(await q.explain(filter, { sort })).toMatchObject({ ordered: true, inMemorySort: false, reverse: sort.total === 1 });
      }
      // requireIndex refuses a plan that would sort in memory.
      await expect(q.find({ status: 'open' }, { sort: { status: 1, 'customer.city': 1 }, requireIndex: true }).toArray()).rejects.toMatchObject({
        code: 'NO_INDEX',
      });
    });

    it('covers a query from index entries when include holds every path it reads', async () => {
      const c = await collectionWith(ORDERS);
      const { q } = await withIndexes(c, [{ name: 'status_inc', fields: ['status'], include: ['total'] }]);
      const filter = { status: 'shipped' };
      const found = await q.find(filter, { projection: ['status', 'total'] }).toArray();
      expect(found).toEqual([{ id: 'd0001', content: { status: 'shipped', total: 80 } }]);
      expect(await q.explain(filter, { projection: ['total'] })).toMatchObject({ covering: true, documentsRead: 0 });
      expect(await q.count({ status: 'open' })).toBe(expected(ORDERS, { status: 'open' }).length);
    });

    it('reads only the entries and documents it returns, whatever the size of the collection', async () => {
      const docs = Array.from({ length: 300 }, (_, i) => ({ group: i % 30, n: i }));
      const c = await collectionWith(docs);
      const { q } = await withIndexes(c, [{ name: 'group', fields: ['group'] }]);
      expect(await q.explain({ group: 7 })).toMatchObject({ plan: 'index', keysRead: 10, documentsRead: 10, returned: 10, transactions: 1 });
      // A union reads its intervals together (one round trip), each up to the page's size and one entry
      // more (which shows whether more follow); only the documents of the entries it consumes are read.
      expect(await q.explain({ group: { $in: [1, 2] } }, { limit: 5 })).toMatchObject({ keysRead: 12, documentsRead: 5, returned: 5 });
      // A page that takes the last entries knows it is the last: 100 results of 100 in one transaction.
      const hundred = await collectionWith(Array.from({ length: 100 }, () => ({ group: 1 })));
      await hundred.createIndex('group', { fields: ['group'] });
      expect(await hundred.explain({ group: 1 })).toMatchObject({ keysRead: 100, documentsRead: 100, returned: 100, transactions: 1 });
      const page = await hundred.find({ group: 1 }, { limit: 100 }).page();
      expect({ items: page.items.length, after: page.after }).toEqual({ items: 100, after: undefined });
      expect(await q.explain({ n: { $lt: 3 } }, { allowScan: true })).toMatchObject({ plan: 'scan', documentsRead: 300, returned: 3 });
      // Sorted in memory: iterating makes one pass for all 300 results, not one per page of 100.
      expect(await q.explain({ n: { $gte: 0 } }, { allowScan: true, sort: { n: -1 } })).toMatchObject({
        inMemorySort: true,
        documentsRead: 300,
        returned: 300,
      });
    });

    it('uses a partial index only for filters that imply its where', async () => {
      const c = await collectionWith(ORDERS);
      const { q } = await withIndexes(c, [{ name: 'open_total', fields: ['total'], where: { status: 'open' } }]);
      const served = { status: 'open', total: { $gte: 100 } };
      expect(await q.explain(served)).toMatchObject({ plan: 'index', index: 'open_total' });
      expect((await q.find(served).toArray()).map((f) => f.id).sort()).toEqual(expected(ORDERS, served).sort());
      await expect(q.find({ total: { $gte: 100 } }).toArray()).rejects.toMatchObject({ code: 'NO_INDEX' });
      await expect(q.find({ total: { $gte: 100 } }, { hint: 'open_total' }).toArray()).rejects.toMatchObject({ code: 'INVALID_QUERY' });
    });

    it('sees the writes of the caller transaction with { tr }', async () => {
      const c = await collectionWith(ORDERS);
      const { q } = await withIndexes(c, [{ name: 'status', fields: ['status'] }]);
      const kv = c.structureAccess().kv;
      const inside = await kv.transact(async (tr) => {
        await c.upsert('new', { status: 'lost' }, { tr });
        return q.find({ status: 'lost' }, { tr }).toArray();
      });
      expect(inside.map((f) => f.id)).toEqual(['new']);
      expect(await q.findOne({ status: 'lost' })).toMatchObject({ id: 'new' });
    });

    it('rejects bad options and foreign tokens with typed errors', async () => {
      const c = await collectionWith(ORDERS);
      const { q } = await withIndexes(c, [{ name: 'status', fields: ['status'] }]);
      const page = await q.find({ status: 'open' }, { limit: 1 }).page();
      expect(page.after).toBeDefined();
      await expect(q.find({ status: 'shipped' }, { after: page.after }).toArray()).rejects.toMatchObject({ code: 'INVALID_QUERY' });
      await expect(q.find({ status: 'open' }, { after: 'garbage' }).toArray()).rejects.toMatchObject({ code: 'INVALID_QUERY' });
      expect(() => q.find({}, { limit: -1 })).toThrow(expect.objectContaining({ code: 'INVALID_QUERY' }) as Error);
      await expect(q.find({ status: { $where: 1 } }).toArray()).rejects.toMatchObject({ code: 'UNSUPPORTED_OPERATOR' });
      await expect(q.find({ status: 'open' }, { hint: 'nope' }).toArray()).rejects.toMatchObject({ code: 'INVALID_QUERY' });
    });
  });

  describe(`Collection.find on random documents and filters [${engine.name}]`, () => {
    const specs: NamedIndex[] = [
      { name: 'a', fields: ['a'] },
      { name: 'a_b', fields: ['a', { path: 'b', order: 'desc' }] },
      { name: 'a_elems', fields: ['a[*]'] },
      { name: 'ab_elems', fields: ['a[*].b'], include: ['c'] },
      { name: 'b_c', fields: ['b', 'c'], include: ['a'] },
    ];

    it('returns exactly the matching documents, each once, in order, page by page', async () => {
      const seed = testSeed(1420);
      const r = new Random(seed);
      const written = Array.from({ length: 60 }, () => randomDocument(r));
      const c = await collectionWith(written);
      // Expectations use the documents as stored: object keys come back in UTF-8 order, which the
      // canonical order of objects sees.
      const docs = (await c.getMany(written.map((_d, n) => `d${String(n).padStart(4, '0')}`))).map((g) => g?.content ?? null);
      const { q } = await withIndexes(c, specs);
      let indexed = 0;
      // The memory engine runs the most cases; the others the same kinds, fewer of them.
      const cases = engine.name === 'memory' ? 150 : 40;
      for (let i = 0; i < cases; i++) {
        const filter = randomFilter(r, 1);
        const sort = r.chance(0.4) ? ({ [r.pick(['a', 'b', 'c'])]: r.pick([1, -1] as const) } as const) : undefined;
        const want = expected(docs, filter, sort);
        const plan = await q.find(filter, { sort, allowScan: true }).plan();
        if (plan.kind === 'index') indexed++;
        const all = await q.find(filter, { sort, allowScan: true }).toArray();
        const got = comparable(
          docs,
          all.map((f) => f.id),
          sort,
        );
        expect({ seed, i, filter, sort, got }).toEqual({ seed, i, filter, sort, got: comparable(docs, want, sort) });
        // The same query in pages of 7, each page its own transaction, resumed from its token.
        const paged: DocId[] = [];
        let after: string | undefined;
        do {
          const page = await q.find(filter, { sort, allowScan: true, limit: 7, after }).page();
          paged.push(...page.items.map((f) => f.id));
          after = page.after;
        } while (after !== undefined);
        expect({ seed, i, paged: comparable(docs, paged, sort) }).toEqual({ seed, i, paged: comparable(docs, want, sort) });
      }
      expect(indexed).toBeGreaterThan(cases / 8);
    });
  });

  describe(`Collection.find pagination [${engine.name}]`, () => {
    it('resumes in a later transaction without repeating or skipping documents that did not change', async () => {
      const docs = Array.from({ length: 40 }, (_, i) => ({ n: i % 10, tag: i % 3 === 0 ? 'x' : 'y' }));
      const c = await collectionWith(docs);
      const { q } = await withIndexes(c, [{ name: 'n', fields: ['n'] }]);
      const filter = { n: { $gte: 2 } };
      const seen: DocId[] = [];
      let after: string | undefined;
      let round = 0;
      do {
        const page = await q.find(filter, { sort: { n: 1 }, limit: 5, after }).page();
        seen.push(...page.items.map((f) => f.id));
        after = page.after;
        // Between pages, other documents change: one moves out of the range, new ones appear.
        if (round++ === 2) {
          await c.upsert('d0039', { n: 0 });
          await c.upsert('late', { n: 9 });
        }
      } while (after !== undefined);
      const unchanged = expected(docs, filter, { n: 1 }).filter((id) => id !== 'd0039');
      expect(seen.filter((id) => id !== 'late' && id !== 'd0039')).toEqual(unchanged);
      expect(new Set(seen).size).toBe(seen.length);
    });
  });
}
