/**
 * IndexAccess.scan as the query layer uses it: an interval in value order (equal prefix, then a lower
 * and upper bound by value or by type), on asc and desc fields, forward and reverse, resumable
 * strictly after a cursor, limited, reading only keys inside the interval. IndexAccess.read returns
 * the same entries as one array, in one range read unless expired entries left it short.
 */
import { open, type Collection, type DocLayer, type IndexEntry, type IndexInterval, type IndexScanOptions, type JsonValue } from '../../src';
import { MISSING } from '../../src/filter/value-order';
import { documentSuite } from '../document/document-suite';

const DOCS: Record<string, JsonValue> = {
  a: { city: 'Lyon', total: 5 },
  b: { city: 'Lyon', total: 20 },
  c: { city: 'Paris', total: 7 },
  d: { city: 'Paris', total: 7.5 },
  e: { city: 'Paris', total: 2n ** 60n },
  f: { city: 'Paris', total: 'n/a' },
  g: { city: 'Paris' },
  h: { city: 'Paris', total: null },
  i: { total: 1 },
};

async function setup(db: DocLayer): Promise<Collection> {
  const c = db.collection('orders');
  await c.createIndex('cityTotal', { fields: ['city', 'total'], include: ['total'] });
  await c.createIndex('cityTotalDesc', { fields: ['city', { path: 'total', order: 'desc' }] });
  for (const [id, doc] of Object.entries(DOCS)) await c.insert(doc, { id });
  return c;
}

async function ids(db: DocLayer, c: Collection, name: string, interval: IndexInterval, opts?: IndexScanOptions): Promise<string[]> {
  return db.transact(async (tr) => {
    const out: string[] = [];
    for await (const e of c.indexAccess().scan(tr, name, interval, opts)) out.push(String(e.id));
    return out;
  });
}

documentSuite('IndexAccess.scan', (ctx) => {
  it('orders entries by values then id, missing first and types in the canonical order', async () => {
    const { docs: db } = await ctx.open();
    const c = await setup(db);
    expect(await ids(db, c, 'cityTotal', { equal: [] })).toEqual(['i', 'a', 'b', 'g', 'h', 'c', 'd', 'e', 'f']);
    expect(await ids(db, c, 'cityTotal', { equal: [MISSING] })).toEqual(['i']);
  });

  it('serves an equality prefix and a range by value, inclusive or not, on asc and desc fields', async () => {
    const { docs: db } = await ctx.open();
    const c = await setup(db);
    const range: IndexInterval = { equal: ['Paris'], lower: { value: 7, inclusive: false }, upper: { value: 2n ** 60n, inclusive: true } };
    expect(await ids(db, c, 'cityTotal', range)).toEqual(['d', 'e']);
    expect(await ids(db, c, 'cityTotalDesc', range)).toEqual(['e', 'd']);
    const closed: IndexInterval = { equal: ['Paris'], lower: { value: 7, inclusive: true }, upper: { value: 7.5, inclusive: false } };
    expect(await ids(db, c, 'cityTotal', closed)).toEqual(['c']);
    expect(await ids(db, c, 'cityTotalDesc', closed)).toEqual(['c']);
  });

  it('bounds by type: every number, and everything after the numbers', async () => {
    const { docs: db } = await ctx.open();
    const c = await setup(db);
    const numbers: IndexInterval = { equal: ['Paris'], lower: { typeStart: 'number' }, upper: { typeEnd: 'number' } };
    expect(await ids(db, c, 'cityTotal', numbers)).toEqual(['c', 'd', 'e']);
    expect(await ids(db, c, 'cityTotalDesc', numbers)).toEqual(['e', 'd', 'c']);
    expect(await ids(db, c, 'cityTotal', { equal: ['Paris'], lower: { typeEnd: 'number' } })).toEqual(['f']);
    expect(await ids(db, c, 'cityTotalDesc', { equal: ['Paris'], upper: { typeStart: 'number' } })).toEqual(['h', 'g']);
  });

  it('runs in reverse, resumes strictly after a cursor in either direction, and stops at the limit', async () => {
    const { docs: db } = await ctx.open();
    const c = await setup(db);
    const all: IndexInterval = { equal: ['Paris'] };
    expect(await ids(db, c, 'cityTotal', all, { reverse: true })).toEqual(['f', 'e', 'd', 'c', 'h', 'g']);
    const page = await db.transact(async (tr) => {
      const out = [];
      for await (const e of c.indexAccess().scan(tr, 'cityTotal', all, { limit: 2 })) out.push(e);
      return out;
    });
    expect(page.map((e) => e.id)).toEqual(['g', 'h']);
    expect(page[1].included.get('total')).toBeNull();
    expect(await ids(db, c, 'cityTotal', all, { after: page[1].cursor })).toEqual(['c', 'd', 'e', 'f']);
    expect(await ids(db, c, 'cityTotal', all, { after: page[1].cursor, reverse: true })).toEqual(['g']);
  });

  it('returns the values and included paths of each entry, numbers exact', async () => {
    const { docs: db } = await ctx.open();
    const c = await setup(db);
    const entries = await db.transact(async (tr) => {
      const out = [];
      for await (const e of c.indexAccess().scan(tr, 'cityTotal', { equal: ['Paris', 2n ** 60n] })) out.push(e);
      return out;
    });
    expect(entries.map((e) => [e.id, e.values, e.included.get('total')])).toEqual([['e', ['Paris', 2 ** 60], 2 ** 60]]);
  });
});

/** An entry as toEqual compares them (the included values as pairs). */
function shape(e: IndexEntry): unknown {
  return { id: e.id, values: e.values, included: [...e.included], cursor: e.cursor.toString('hex') };
}

documentSuite('IndexAccess.read', (ctx) => {
  it('returns what scan yields, for every interval, direction, cursor and limit', async () => {
    const { docs: db } = await ctx.open();
    const c = await setup(db);
    const intervals: IndexInterval[] = [
      { equal: [] },
      { equal: ['Paris'] },
      { equal: ['Paris'], lower: { value: 7, inclusive: false }, upper: { value: 2n ** 60n, inclusive: true } },
      { equal: ['Paris'], lower: { typeStart: 'number' }, upper: { typeEnd: 'number' } },
      { equal: ['Nowhere'] },
    ];
    const access = c.indexAccess();
    await db.transact(async (tr) => {
      for (const name of ['cityTotal', 'cityTotalDesc']) {
        for (const interval of intervals) {
          const all = await access.read(tr, name, interval);
          const cursors = [undefined, ...all.map((e) => e.cursor)];
          for (const reverse of [false, true]) {
            for (const after of cursors) {
              for (const limit of [undefined, 0, 1, 2, 100]) {
                const opts: IndexScanOptions = { reverse, after, limit };
                const scanned = [];
                for await (const e of access.scan(tr, name, interval, opts)) scanned.push(shape(e));
                expect({ name, interval, opts, entries: (await access.read(tr, name, interval, opts)).map(shape) }).toEqual({
                  name,
                  interval,
                  opts,
                  entries: scanned,
                });
              }
            }
          }
        }
      }
    });
  });

  it('is one range read of at most limit entries, and reads on past entries of expired documents to fill the limit', async () => {
    const { kv, counter } = await ctx.open();
    const clock = { now: Date.now() };
    const timed = await open({ database: kv, now: () => clock.now });
    try {
      const c = timed.collection('orders');
      await c.createIndex('byCity', { fields: ['city'] });
      for (let i = 0; i < 6; i++) {
        // d0, d1 and d2 expire first: they sort before the live ones.
        const expiry = i < 3 ? new Date(clock.now + 1000) : undefined;
        await c.insert({ city: 'Paris' }, { id: `d${i}`, ...(expiry === undefined ? {} : { expiry }) });
      }
      const read = (limit: number) =>
        timed.transact(async (tr) => (await c.indexAccess().read(tr, 'byCity', { equal: ['Paris'] }, { limit })).map((e) => e.id));
      const before = await counter.measure(() => read(2));
      expect(before.result).toEqual(['d0', 'd1']);
      expect(before.counts.rangeReads).toBe(1);
      clock.now += 2000;
      const after = await counter.measure(() => read(2));
      expect(after.result).toEqual(['d3', 'd4']);
      // The first read's 2 entries expired, and so did the first of the next 2.
      expect(after.counts.rangeReads).toBe(3);
    } finally {
      await timed.close();
    }
  });
});
