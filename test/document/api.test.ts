/**
 * The Collection API's CRUD semantics, as a specification: ids, reads, writes, CAS, scans, invalid
 * values, limits, collections and composition with a caller's transaction.
 */
import { LookupInSpec, MutateInSpec, open, type Collection, type JsonValue } from '../../src';
import { pack } from '../../src/tuple';
import { dumpKeyspace, expectDocumentError } from '../support/document-assertions';
import { Random, testSeed } from '../support/random';
import { documentSuite } from './document-suite';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The Unix milliseconds in a UUIDv7's first 48 bits. */
function uuidV7Millis(id: string): number {
  return parseInt(id.replace(/-/g, '').slice(0, 12), 16);
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

documentSuite('Collection.insert', (ctx) => {
  it('generates an id that is a UUIDv7 string and stores the document under it', async () => {
    const { docs } = await ctx.open();
    const users = docs.collection('users');
    const before = Date.now();
    const { id, cas } = await users.insert({ name: 'Ada' });
    const after = Date.now();
    expect(typeof id).toBe('string');
    expect(id).toMatch(UUID_V7);
    expect(uuidV7Millis(id as string)).toBeGreaterThanOrEqual(before);
    expect(uuidV7Millis(id as string)).toBeLessThanOrEqual(after);
    expect(await users.get(id)).toEqual({ content: { name: 'Ada' }, cas });
  });

  it('generates unique ids that increase in insertion order, also within one millisecond', async () => {
    const { docs } = await ctx.open();
    const users = docs.collection('users');
    const ids: string[] = [];
    for (let i = 0; i < 300; i++) ids.push((await users.insert({ i })).id as string);
    expect(new Set(ids).size).toBe(ids.length);
    for (let i = 1; i < ids.length; i++) expect(ids[i] > ids[i - 1]).toBe(true);
    // Concurrent inserts in one transaction-free burst are unique too.
    const burst = await Promise.all(Array.from({ length: 100 }, (_, i) => users.insert({ burst: i })));
    expect(new Set(burst.map((r) => r.id)).size).toBe(100);
  });

  it('scans generated ids in insertion order', async () => {
    const { docs } = await ctx.open();
    const events = docs.collection('events');
    for (let i = 0; i < 50; i++) await events.insert({ seq: i });
    const seen = (await collect(events.scan())).map((item) => (item.content as { seq: number }).seq);
    expect(seen).toEqual(Array.from({ length: 50 }, (_, i) => i));
  });

  it('inserts under a given string, integer or bigint id and returns that id', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    for (const id of ['user::1', 42, -7, 0, 2n ** 70n, 'é\u{1f600}']) {
      const result = await c.insert({ id: String(id) }, { id });
      expect(result.id).toEqual(id);
      expect((await c.get(id)).content).toEqual({ id: String(id) });
    }
  });

  it('reads back a given id that is a canonical UUID as the same string', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    const id = '0190a7b2-3c4d-7e5f-8a6b-7c8d9e0f1a2b';
    await c.insert({ a: 1 }, { id });
    expect((await c.get(id)).content).toEqual({ a: 1 });
    expect((await collect(c.scan())).map((item) => item.id)).toEqual([id]);
  });

  it('fails with DOCUMENT_EXISTS for an existing id and leaves that document as it was', async () => {
    const { docs, kv } = await ctx.open();
    const c = docs.collection();
    const first = await c.insert({ v: 1 }, { id: 'k' });
    const dump = await dumpKeyspace(kv);
    await expectDocumentError(c.insert({ v: 2 }, { id: 'k' }), 'DOCUMENT_EXISTS');
    expect(await c.get('k')).toEqual({ content: { v: 1 }, cas: first.cas });
    expect(await dumpKeyspace(kv)).toEqual(dump);
  });

  it('rejects ids that are not non-empty strings or integers with INVALID_ARGUMENT', async () => {
    const { docs, kv } = await ctx.open();
    const c = docs.collection();
    await c.insert({}, { id: 'seed' });
    const dump = await dumpKeyspace(kv);
    for (const id of ['', 1.5, NaN, 2 ** 60, '\ud800'] as unknown[]) {
      await expectDocumentError(c.insert({ a: 1 }, { id: id as string }), 'INVALID_ARGUMENT');
    }
    expect(await dumpKeyspace(kv)).toEqual(dump);
  });
});

documentSuite('Collection.get and exists', (ctx) => {
  it('fails with DOCUMENT_NOT_FOUND for a missing document, and exists says false', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    await expectDocumentError(c.get('nope'), 'DOCUMENT_NOT_FOUND');
    await expectDocumentError(c.get('nope', 'a.b'), 'DOCUMENT_NOT_FOUND');
    expect(await c.exists('nope')).toBe(false);
    await c.insert({}, { id: 'yes' });
    expect(await c.exists('yes')).toBe(true);
  });

  it('returns every kind of JSON value as it was written, keeping {}, [], null and missing apart', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    const doc = {
      emptyObject: {},
      emptyArray: [],
      nothing: null,
      t: true,
      f: false,
      zero: 0,
      int: -123456789,
      double: 3.25,
      tiny: 5e-324,
      fraction: -0.1,
      str: 'hello\0world',
      emptyString: '',
      nested: { list: [1, [2, [3, [{}]]], { x: [] }], deeper: { a: { b: { c: 'd' } } } },
      arrayOfEmpties: [{}, [], null, '', 0],
    };
    await c.insert(doc, { id: 'all' });
    expect((await c.get('all')).content).toEqual(doc);
    expect((await c.get('all', 'emptyObject')).content).toEqual({});
    expect((await c.get('all', 'emptyArray')).content).toEqual([]);
    expect((await c.get('all', 'nothing')).content).toBeNull();
    await expectDocumentError(c.get('all', 'missing'), 'PATH_NOT_FOUND');
  });

  it('reads a document where a key extends a container-valued sibling key after a NUL', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    // The tuple encoding of 'a' (02 61 00) is a prefix of that of 'a\0' (02 61 00 ff 00).
    const cases: JsonValue[] = [{ a: [], 'a\0': 1 }, { '': {}, '\0': 2 }, { a: { x: 1 }, 'a\0b': [3] }, [{ '': [1], '\0': { y: 2 } }]];
    for (const [i, doc] of cases.entries()) {
      await c.insert(doc, { id: `nul${i}` });
      expect((await c.get(`nul${i}`)).content).toEqual(doc);
      expect((await c.getMany([`nul${i}`]))[0]?.content).toEqual(doc);
    }
    expect((await collect(c.scan())).map((item) => item.content)).toEqual(cases);
  });

  it('returns object keys sorted by the UTF-8 bytes of the key', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    // UTF-16 order puts '\u{10000}' (d800 dc00) before '\uffff'; UTF-8 order puts it after (f0.. > ef..).
    const keys = ['b', 'a', '\u{10000}', '\uffff', 'Z', '', 'é', 'aa', '\0'];
    await c.insert(Object.fromEntries(keys.map((k, i) => [k, i])), { id: 'keys' });
    const content = (await c.get('keys')).content as Record<string, number>;
    const expected = [...keys].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
    expect(Object.keys(content)).toEqual(expected);
  });

  it('round-trips integers beyond 2^53 as bigint, and safe integers as numbers', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    const doc = {
      safe: Number.MAX_SAFE_INTEGER,
      unsafe: 2n ** 53n,
      negative: -(2n ** 63n),
      big: 2n ** 64n + 1n,
      huge: 10n ** 40n,
      smallBigint: 5n,
    };
    await c.insert(doc, { id: 'n' });
    expect((await c.get('n')).content).toEqual({ ...doc, smallBigint: 5 });
    expect((await c.get('n', 'big')).content).toBe(2n ** 64n + 1n);
  });

  it('keeps -0 (stored as a double), and integral numbers beyond 2^53 come back as the same numbers', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    await c.insert({ z: -0, big: 2 ** 60, huge: 1e300, snowflake: Number(1234567890123456789n) }, { id: 'z' });
    expect(Object.is((await c.get('z', 'z')).content, -0)).toBe(true);
    const { content } = await c.get('z');
    expect(content).toEqual({ z: -0, big: 2 ** 60, huge: 1e300, snowflake: Number(1234567890123456789n) });
    expect(JSON.stringify(content)).toBe(JSON.stringify({ big: 2 ** 60, huge: 1e300, snowflake: Number(1234567890123456789n), z: 0 }));
  });

  it('reads a sub-document by string or array path, with the document cas', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    const { cas } = await c.insert({ a: { 'b.c': [10, { d: 'x' }] } }, { id: 'p' });
    expect(await c.get('p', 'a.`b.c`[1].d')).toEqual({ content: 'x', cas });
    expect(await c.get('p', ['a', 'b.c', 1, 'd'])).toEqual({ content: 'x', cas });
    expect(await c.get('p', 'a.`b.c`[-1]')).toEqual({ content: { d: 'x' }, cas });
    expect(await c.get('p', '')).toEqual({ content: { a: { 'b.c': [10, { d: 'x' }] } }, cas });
    expect(await c.get('p', [])).toEqual({ content: { a: { 'b.c': [10, { d: 'x' }] } }, cas });
  });

  it('stores documents whose root is an array', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    await c.insert([1, [2], { three: 3 }], { id: 'arr' });
    expect((await c.get('arr')).content).toEqual([1, [2], { three: 3 }]);
    expect((await c.get('arr', '[2].three')).content).toBe(3);
  });
});

documentSuite('Collection.replace, upsert and remove', (ctx) => {
  it('replace swaps the whole document: fields of the old one are gone', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    const first = await c.insert({ a: 1, b: { c: [1, 2, 3] } }, { id: 'r' });
    const second = await c.replace('r', { x: 'y' });
    expect(second.cas).not.toEqual(first.cas);
    expect(await c.get('r')).toEqual({ content: { x: 'y' }, cas: second.cas });
  });

  it('replace fails with DOCUMENT_NOT_FOUND for a missing document and creates nothing', async () => {
    const { docs, kv } = await ctx.open();
    const c = docs.collection();
    await c.insert({}, { id: 'other' });
    const dump = await dumpKeyspace(kv);
    await expectDocumentError(c.replace('r', { a: 1 }), 'DOCUMENT_NOT_FOUND');
    expect(await c.exists('r')).toBe(false);
    expect(await dumpKeyspace(kv)).toEqual(dump);
  });

  it('upsert creates a missing document and replaces an existing one', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    const created = await c.upsert('u', { v: 1, old: true });
    expect(await c.get('u')).toEqual({ content: { v: 1, old: true }, cas: created.cas });
    const replaced = await c.upsert('u', { v: 2 });
    expect(replaced.cas).not.toEqual(created.cas);
    expect(await c.get('u')).toEqual({ content: { v: 2 }, cas: replaced.cas });
  });

  it('remove deletes the document and every key it had', async () => {
    const { docs, kv } = await ctx.open();
    const c = docs.collection();
    await c.insert({ keep: true }, { id: 'keep' });
    const dump = await dumpKeyspace(kv);
    await c.insert({ a: [1, 2, { b: 'x'.repeat(150_000) }] }, { id: 'gone' });
    await c.remove('gone');
    await expectDocumentError(c.get('gone'), 'DOCUMENT_NOT_FOUND');
    expect(await c.exists('gone')).toBe(false);
    expect(await dumpKeyspace(kv)).toEqual(dump);
  });

  it('remove fails with DOCUMENT_NOT_FOUND for a missing document', async () => {
    const { docs } = await ctx.open();
    await expectDocumentError(docs.collection().remove('none'), 'DOCUMENT_NOT_FOUND');
  });

  it('a removed id can be inserted again', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    await c.insert({ v: 1 }, { id: 'again' });
    await c.remove('again');
    await c.insert({ v: 2 }, { id: 'again' });
    expect((await c.get('again')).content).toEqual({ v: 2 });
  });
});

documentSuite('CAS', (ctx) => {
  it('changes on every write, and get returns the latest', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    const seen = new Set<string | undefined>();
    const { cas: inserted } = await c.insert({ n: 0 }, { id: 'd' });
    seen.add(inserted);
    seen.add((await c.upsert('d', { n: 1 })).cas);
    seen.add((await c.replace('d', { n: 2 })).cas);
    const last = (await c.mutateIn('d', [MutateInSpec.increment('n', 1)])).cas;
    seen.add(last);
    expect(seen.size).toBe(4);
    expect([...seen].every((cas) => typeof cas === 'string' && cas.length > 0)).toBe(true);
    expect((await c.get('d')).cas).toBe(last);
    expect((await c.get('d', 'n')).cas).toBe(last);
  });

  it('is the same for reads that do not write', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    const { cas } = await c.insert({ a: 1 }, { id: 'd' });
    expect((await c.get('d')).cas).toBe(cas);
    expect((await c.lookupIn('d', [LookupInSpec.get('a')])).cas).toBe(cas);
    expect((await c.getMany(['d']))[0]?.cas).toBe(cas);
  });

  it('replace, remove and mutateIn with the current cas succeed', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    let { cas } = await c.insert({ n: 1 }, { id: 'd' });
    ({ cas } = await c.replace('d', { n: 2 }, { cas }));
    ({ cas } = await c.mutateIn('d', [MutateInSpec.upsert('m', 3)], { cas }));
    expect((await c.get('d')).content).toEqual({ n: 2, m: 3 });
    await c.remove('d', { cas });
    expect(await c.exists('d')).toBe(false);
  });

  it('a stale cas fails with CAS_MISMATCH and changes nothing, for replace, remove and mutateIn', async () => {
    const { docs, kv } = await ctx.open();
    const c = docs.collection();
    const { cas: stale } = await c.insert({ n: 1 }, { id: 'd' });
    const { cas: current } = await c.mutateIn('d', [MutateInSpec.upsert('n', 2)]);
    const dump = await dumpKeyspace(kv);
    await expectDocumentError(c.replace('d', { n: 9 }, { cas: stale }), 'CAS_MISMATCH');
    await expectDocumentError(c.remove('d', { cas: stale }), 'CAS_MISMATCH');
    await expectDocumentError(c.mutateIn('d', [MutateInSpec.upsert('n', 9)], { cas: stale }), 'CAS_MISMATCH');
    expect(await dumpKeyspace(kv)).toEqual(dump);
    expect(await c.get('d')).toEqual({ content: { n: 2 }, cas: current });
  });

  it('a cas of another document does not match', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    const { cas: other } = await c.insert({}, { id: 'other' });
    await c.insert({ n: 1 }, { id: 'd' });
    await expectDocumentError(c.replace('d', { n: 2 }, { cas: other }), 'CAS_MISMATCH');
  });

  it('a cas given for a missing document fails with DOCUMENT_NOT_FOUND', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    const { cas } = await c.insert({}, { id: 'd' });
    await c.remove('d');
    await expectDocumentError(c.replace('d', {}, { cas }), 'DOCUMENT_NOT_FOUND');
  });

  it('is undefined for a write joining a caller transaction, and is the hex of its versionstamp', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    let versionstamp: Promise<Buffer> | undefined;
    await docs.transact(async (tr) => {
      const result = await c.insert({ a: 1 }, { id: 'd', tr });
      expect(result.cas).toBeUndefined();
      const read = await c.get('d', { tr });
      expect(read).toEqual({ content: { a: 1 }, cas: undefined });
      versionstamp = tr.getVersionstamp();
    });
    const hex = (await versionstamp!).toString('hex');
    expect((await c.get('d')).cas).toBe(hex);
  });
});

documentSuite('Collection.getMany', (ctx) => {
  it('returns results in the order of the ids, undefined for missing ones', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    const a = await c.insert({ name: 'a' }, { id: 'a' });
    const b = await c.insert({ name: 'b' }, { id: 'b' });
    const results = await c.getMany(['b', 'missing', 'a', 'b']);
    expect(results).toEqual([
      { content: { name: 'b' }, cas: b.cas },
      undefined,
      { content: { name: 'a' }, cas: a.cas },
      { content: { name: 'b' }, cas: b.cas },
    ]);
    expect(await c.getMany([])).toEqual([]);
  });

  it("sees the transaction's own writes: written documents without a cas, removed ones missing", async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    const kept = await c.insert({ n: 1 }, { id: 'kept' });
    await c.insert({ n: 2 }, { id: 'removed' });
    await docs.transact(async (tr) => {
      await c.upsert('new', { n: 3 }, { tr });
      await c.remove('removed', { tr });
      expect(await c.getMany(['new', 'kept', 'removed', 7], { tr })).toEqual([
        { content: { n: 3 }, cas: undefined },
        { content: { n: 1 }, cas: kept.cas },
        undefined,
        undefined,
      ]);
    });
  });
});

documentSuite('Collection.scan', (ctx) => {
  async function seeded(c: Collection, ids: readonly (string | number)[]): Promise<void> {
    const random = new Random(testSeed(11));
    const shuffled = [...ids];
    for (let i = shuffled.length - 1; i > 0; i--) {
      const j = random.int(i + 1);
      [shuffled[i], shuffled[j]] = [shuffled[j], shuffled[i]];
    }
    for (const id of shuffled) await c.insert({ id }, { id });
  }

  const ids = Array.from({ length: 25 }, (_, i) => `doc-${String(i).padStart(2, '0')}`);

  it('returns every document in id order with its content and cas', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    await seeded(c, ids);
    const items = await collect(c.scan());
    expect(items.map((item) => item.id)).toEqual(ids);
    for (const item of items) {
      expect(item.content).toEqual({ id: item.id });
      expect(item.cas).toBe((await c.get(item.id)).cas);
    }
  });

  it('orders integer ids numerically', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    await seeded(c, [100, -5, 2, 10, 0, -100]);
    expect((await collect(c.scan())).map((item) => item.id)).toEqual([-100, -5, 0, 2, 10, 100]);
  });

  it('returns the same documents whatever the page size, pageSize 1 included', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    await seeded(c, ids);
    for (const pageSize of [1, 2, 7, 24, 25, 26, 1000]) {
      expect((await collect(c.scan({ pageSize }))).map((item) => item.id)).toEqual(ids);
    }
  });

  it('reads each page in its own transaction', async () => {
    const { docs, counter } = await ctx.open();
    const c = docs.collection();
    await seeded(c, ids);
    const { attempts } = await counter.measure(() => collect(c.scan({ pageSize: 5 })));
    const transactionsThatRead = attempts.filter((a) => a.ranges.length + a.gets.length > 0);
    expect(transactionsThatRead.length).toBeGreaterThanOrEqual(5);
  });

  it('scans from start (inclusive) to end (exclusive)', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    await seeded(c, ids);
    const scanIds = async (opts: Parameters<Collection['scan']>[0]) => (await collect(c.scan(opts))).map((item) => item.id);
    expect(await scanIds({ start: 'doc-05', end: 'doc-09' })).toEqual(ids.slice(5, 9));
    expect(await scanIds({ start: 'doc-05', end: 'doc-09', pageSize: 1 })).toEqual(ids.slice(5, 9));
    expect(await scanIds({ start: 'doc-20' })).toEqual(ids.slice(20));
    expect(await scanIds({ end: 'doc-03' })).toEqual(ids.slice(0, 3));
    expect(await scanIds({ start: 'doc-04x', end: 'doc-07' })).toEqual(ids.slice(5, 7));
    expect(await scanIds({ start: 'doc-07', end: 'doc-07' })).toEqual([]);
  });

  it('stops after limit documents, across pages', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    await seeded(c, ids);
    const scanIds = async (opts: Parameters<Collection['scan']>[0]) => (await collect(c.scan(opts))).map((item) => item.id);
    expect(await scanIds({ limit: 3 })).toEqual(ids.slice(0, 3));
    expect(await scanIds({ limit: 5, pageSize: 2 })).toEqual(ids.slice(0, 5));
    expect(await scanIds({ limit: 1, pageSize: 1 })).toEqual(ids.slice(0, 1));
    expect(await scanIds({ limit: 100 })).toEqual(ids);
    expect(await scanIds({ limit: 4, start: 'doc-10', pageSize: 3 })).toEqual(ids.slice(10, 14));
  });

  it('returns nothing for an empty collection', async () => {
    const { docs } = await ctx.open();
    expect(await collect(docs.collection('empty').scan())).toEqual([]);
  });

  it('does not return a document split by a page boundary twice or partly', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    const big = { list: Array.from({ length: 300 }, (_, i) => ({ i })) };
    await c.insert(big, { id: 'a' });
    await c.insert(big, { id: 'b' });
    const items = await collect(c.scan({ pageSize: 1 }));
    expect(items.map((item) => item.id)).toEqual(['a', 'b']);
    expect(items.map((item) => item.content)).toEqual([big, big]);
  });

  it("inside a caller transaction sees that transaction's own writes", async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    await c.insert({ v: 'a' }, { id: 'a' });
    await docs.transact(async (tr) => {
      await c.insert({ v: 'b' }, { id: 'b', tr });
      await c.remove('a', { tr });
      const items = await collect(c.scan({ tr, pageSize: 1 }));
      expect(items.map((item) => [item.id, item.content])).toEqual([['b', { v: 'b' }]]);
    });
  });
});

documentSuite('invalid values', (ctx) => {
  const cycle: Record<string, unknown> = { a: 1 };
  cycle.self = cycle;
  const arrayCycle: unknown[] = [1];
  arrayCycle.push({ inner: arrayCycle });
  const invalid: [string, unknown][] = [
    ['undefined', undefined],
    ['a nested undefined', { a: { b: undefined } }],
    ['undefined in an array', [1, undefined]],
    ['a function', { f: () => 1 }],
    ['a symbol', { s: Symbol('s') }],
    ['a cycle through an object', cycle],
    ['a cycle through an array', { list: arrayCycle }],
    ['NaN', { n: NaN }],
    ['Infinity', { n: Infinity }],
    ['-Infinity', [-Infinity]],
    ['a Date', { d: new Date(0) }],
    ['a Map', { m: new Map() }],
    ['a Buffer', { b: Buffer.from('x') }],
    // eslint-disable-next-line no-sparse-arrays -- the hole is the value under test.
    ['an array with a hole', { a: [1, , 3] }],
    ['a lone surrogate', { s: 'a\ud800b' }],
    ['a key with a lone surrogate', { ['\udc00']: 1 }],
  ];

  it.each(invalid)('%s fails with INVALID_VALUE in every write, and the store is untouched', async (_what, value) => {
    const { docs, kv } = await ctx.open();
    const c = docs.collection();
    await c.insert({ a: [1, 2], keep: 'me' }, { id: 'existing' });
    const dump = await dumpKeyspace(kv);
    const v = value as JsonValue;
    await expectDocumentError(c.insert(v, { id: 'new' }), 'INVALID_VALUE');
    await expectDocumentError(c.insert(v), 'INVALID_VALUE');
    await expectDocumentError(c.upsert('new', v), 'INVALID_VALUE');
    await expectDocumentError(c.upsert('existing', v), 'INVALID_VALUE');
    await expectDocumentError(c.replace('existing', v), 'INVALID_VALUE');
    await expectDocumentError(c.mutateIn('existing', [MutateInSpec.upsert('x', v)]), 'INVALID_VALUE', { specIndex: 0 });
    await expectDocumentError(c.mutateIn('existing', [MutateInSpec.upsert('ok', 1), MutateInSpec.arrayAppend('a', v)]), 'INVALID_VALUE', {
      specIndex: 1,
    });
    expect(await dumpKeyspace(kv)).toEqual(dump);
  });

  it('accepts the same object twice in a document (it is not a cycle)', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    const shared = { x: 1 };
    await c.insert({ a: shared, b: [shared, shared] }, { id: 'd' });
    expect((await c.get('d')).content).toEqual({ a: { x: 1 }, b: [{ x: 1 }, { x: 1 }] });
  });
});

documentSuite('limits', (ctx) => {
  it('fails with DOCUMENT_TOO_LARGE for a document over 10 MB before writing anything', async () => {
    const { docs, kv, counter } = await ctx.open();
    const c = docs.collection();
    await c.insert({ small: true }, { id: 'small' });
    const dump = await dumpKeyspace(kv);
    const big = { chunks: Array.from({ length: 110 }, (_, i) => `${i}`.padEnd(99_000, 'x')) };
    const { attempts } = await counter.measure(async () => {
      await expectDocumentError(c.insert(big, { id: 'big' }), 'DOCUMENT_TOO_LARGE');
      await expectDocumentError(c.upsert('small', big), 'DOCUMENT_TOO_LARGE');
    });
    expect(attempts.flatMap((a) => [...a.sets, ...a.clearRanges, ...a.clears, ...a.versionstamped])).toEqual([]);
    expect(await dumpKeyspace(kv)).toEqual(dump);
  });

  it('fails with DOCUMENT_TOO_LARGE when a mutateIn would grow a document past the limit, changing nothing', async () => {
    const { docs, kv } = await ctx.open();
    const c = docs.collection();
    const half = Array.from({ length: 50 }, (_, i) => `${i}`.padEnd(99_000, 'y'));
    await c.insert({ a: half }, { id: 'd' });
    const dump = await dumpKeyspace(kv);
    await expectDocumentError(c.mutateIn('d', [MutateInSpec.upsert('b', half)]), 'DOCUMENT_TOO_LARGE');
    expect(await dumpKeyspace(kv)).toEqual(dump);
  });

  it('stores a document of several megabytes', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    const doc = { parts: Array.from({ length: 40 }, (_, i) => `${i}`.padEnd(99_000, 'z')) };
    await c.insert(doc, { id: 'd' });
    expect((await c.get('d')).content).toEqual(doc);
  });

  it('round-trips a 1 MB string, stored in chunks, whole and by path', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    const random = new Random(testSeed(12));
    // Multi-byte characters, so that chunk boundaries fall inside characters.
    const alphabet = ['a', 'é', '\u20ac', '\u{1f600}', '\0'];
    const parts: string[] = [];
    for (let bytes = 0; bytes < 1_000_000;) {
      const part = alphabet[random.int(alphabet.length)].repeat(random.between(1, 50));
      parts.push(part);
      bytes += Buffer.byteLength(part);
    }
    const s = parts.join('');
    const doc = { a: 'before', s, t: 'after', list: [s, 'x'] };
    await c.insert(doc, { id: 'long' });
    expect((await c.get('long')).content).toEqual(doc);
    expect((await c.get('long', 's')).content).toBe(s);
    expect((await c.get('long', 'list[0]')).content).toBe(s);
    expect((await c.get('long', 't')).content).toBe('after');
    expect((await c.get('long', 'list[1]')).content).toBe('x');
    const shorter = Array.from(s).slice(0, 123_457).join('');
    await c.mutateIn('long', [MutateInSpec.replace('s', shorter)]);
    expect((await c.get('long')).content).toEqual({ ...doc, s: shorter });
  });

  it('fails with KEY_TOO_LARGE for a key over 10,000 bytes, writing nothing', async () => {
    const { docs, kv } = await ctx.open();
    const c = docs.collection();
    await c.insert({ ok: 1 }, { id: 'd' });
    const dump = await dumpKeyspace(kv);
    const longKey = 'k'.repeat(10_001);
    await expectDocumentError(c.insert({ [longKey]: 1 }, { id: 'e' }), 'KEY_TOO_LARGE');
    await expectDocumentError(c.insert({ a: 1 }, { id: longKey }), 'KEY_TOO_LARGE');
    await expectDocumentError(c.mutateIn('d', [MutateInSpec.upsert([longKey], 1)]), 'KEY_TOO_LARGE');
    expect(await dumpKeyspace(kv)).toEqual(dump);
  });

  it('accepts a document 32 levels deep and fails with VALUE_TOO_DEEP at 33', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    const nest = (levels: number): JsonValue => (levels === 1 ? 1 : { n: nest(levels - 1) });
    await c.insert(nest(32), { id: 'deep' });
    expect((await c.get('deep')).content).toEqual(nest(32));
    await expectDocumentError(c.insert(nest(33), { id: 'deeper' }), 'VALUE_TOO_DEEP');
    expect(await c.exists('deeper')).toBe(false);
  });
});

documentSuite('collections', (ctx) => {
  it('two collections with the same id do not see each other', async () => {
    const { docs } = await ctx.open();
    const users = docs.collection('users');
    const orders = docs.collection('orders');
    await users.insert({ kind: 'user' }, { id: 'x' });
    await expectDocumentError(orders.get('x'), 'DOCUMENT_NOT_FOUND');
    await orders.insert({ kind: 'order' }, { id: 'x' });
    expect((await users.get('x')).content).toEqual({ kind: 'user' });
    expect((await orders.get('x')).content).toEqual({ kind: 'order' });
    expect((await collect(users.scan())).map((item) => item.content)).toEqual([{ kind: 'user' }]);
    await orders.remove('x');
    expect((await users.get('x')).content).toEqual({ kind: 'user' });
    expect(await collect(orders.scan())).toEqual([]);
  });

  it('the default collection is the same whichever handle reaches it', async () => {
    const { docs } = await ctx.open();
    await docs.collection().insert({ a: 1 }, { id: 'd' });
    expect((await docs.collection().get('d')).content).toEqual({ a: 1 });
    await expectDocumentError(docs.collection('other').get('d'), 'DOCUMENT_NOT_FOUND');
  });

  it('a collection keeps its documents across layers opened on the same database', async () => {
    const { docs, kv } = await ctx.open();
    await docs.collection('users').insert({ a: 1 }, { id: 'd' });
    await docs.collection('orders').insert({ b: 2 }, { id: 'd' });
    const again = await open({ database: kv });
    expect((await again.collection('orders').get('d')).content).toEqual({ b: 2 });
    expect((await again.collection('users').get('d')).content).toEqual({ a: 1 });
  });

  it('layers with different prefixes on one database do not see each other, and keep to their prefix', async () => {
    const { kv } = await ctx.open();
    const keysNow = async () => {
      const tr = kv.createTransaction();
      const pairs = await tr.getRangeAll(Buffer.alloc(0), Buffer.from([0xff]));
      tr.cancel();
      return pairs.map((pair) => pair.key.toString('hex'));
    };
    const before = new Set(await keysNow());
    const left = await open({ database: kv, prefix: ['left'] });
    const right = await open({ database: kv, prefix: Buffer.from('right/') });
    await left.collection().insert({ side: 'left' }, { id: 'd' });
    await right.collection().insert({ side: 'right' }, { id: 'd' });
    expect((await left.collection().get('d')).content).toEqual({ side: 'left' });
    expect((await right.collection().get('d')).content).toEqual({ side: 'right' });
    await left.collection().remove('d');
    expect((await right.collection().get('d')).content).toEqual({ side: 'right' });
    const added = (await keysNow()).filter((key) => !before.has(key));
    expect(added.length).toBeGreaterThan(0);
    const prefixes = [pack(['left']).toString('hex'), Buffer.from('right/').toString('hex')];
    for (const key of added) expect(prefixes.some((prefix) => key.startsWith(prefix))).toBe(true);
  });
});

documentSuite('composition with a caller transaction', (ctx) => {
  it('operations joined to one transaction commit together', async () => {
    const { docs, kv } = await ctx.open();
    const c = docs.collection();
    await c.insert({ n: 1, list: [] }, { id: 'existing' });
    await kv.transact(async (tr) => {
      await c.insert({ a: 1 }, { id: 'a', tr });
      await c.upsert('b', { b: 2 }, { tr });
      await c.mutateIn('existing', [MutateInSpec.increment('n', 1), MutateInSpec.arrayAppend('list', 'x')], { tr });
      await c.replace('a', { a: 'replaced' }, { tr });
    });
    expect((await c.get('a')).content).toEqual({ a: 'replaced' });
    expect((await c.get('b')).content).toEqual({ b: 2 });
    expect((await c.get('existing')).content).toEqual({ n: 2, list: ['x'] });
  });

  it('nothing is visible when the caller throws after the operations', async () => {
    const { docs, kv } = await ctx.open();
    const c = docs.collection();
    await c.insert({ n: 1 }, { id: 'existing' });
    await c.insert({ n: 1 }, { id: 'doomed' });
    const dump = await dumpKeyspace(kv);
    const boom = new Error('caller changed its mind');
    await expect(
      kv.transact(async (tr) => {
        await c.insert({ a: 1 }, { id: 'a', tr });
        await c.upsert('b', { b: 2 }, { tr });
        await c.mutateIn('existing', [MutateInSpec.upsert('x', 1)], { tr });
        await c.remove('doomed', { tr });
        expect((await c.get('a', { tr })).content).toEqual({ a: 1 });
        throw boom;
      }),
    ).rejects.toBe(boom);
    expect(await dumpKeyspace(kv)).toEqual(dump);
    expect(await c.exists('a')).toBe(false);
    expect((await c.get('doomed')).content).toEqual({ n: 1 });
  });

  it('DocLayer.transact composes the same way, also in collections the transaction uses first', async () => {
    const { docs } = await ctx.open();
    const users = docs.collection('users');
    const audit = docs.collection('audit');
    await expect(
      docs.transact(async (tr) => {
        await users.insert({ a: 1 }, { id: 'u', tr });
        await audit.insert({ created: 'u' }, { id: 1, tr });
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    expect(await users.exists('u')).toBe(false);
    expect(await collect(users.scan())).toEqual([]);
    expect(await collect(audit.scan())).toEqual([]);
    await docs.transact(async (tr) => {
      await users.insert({ a: 1 }, { id: 'u', tr });
      await audit.insert({ created: 'u' }, { id: 1, tr });
    });
    expect((await audit.get(1)).content).toEqual({ created: 'u' });
    expect((await users.get('u')).content).toEqual({ a: 1 });
  });

  it('a failed mutateIn inside a caller transaction leaves none of its specs behind when the caller commits', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    await c.insert({ n: 1, s: 'text' }, { id: 'd' });
    await docs.transact(async (tr) => {
      await expectDocumentError(
        c.mutateIn('d', [MutateInSpec.upsert('added', true), MutateInSpec.increment('n', 5), MutateInSpec.increment('s', 1)], { tr }),
        'PATH_MISMATCH',
        { specIndex: 2 },
      );
      await expectDocumentError(c.insert({ n: 2 }, { id: 'd', tr }), 'DOCUMENT_EXISTS');
      await c.upsert('other', { ok: true }, { tr });
    });
    expect((await c.get('d')).content).toEqual({ n: 1, s: 'text' });
    expect((await c.get('other')).content).toEqual({ ok: true });
  });

  it('reads inside the transaction see its writes; reads outside do not until it commits', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    const tr = docs.kv.createTransaction();
    await c.insert({ v: 1 }, { id: 'd', tr });
    expect((await c.get('d', { tr })).content).toEqual({ v: 1 });
    expect(await c.exists('d', { tr })).toBe(true);
    expect(await c.exists('d')).toBe(false);
    await tr.commit();
    expect((await c.get('d')).content).toEqual({ v: 1 });
  });
});
