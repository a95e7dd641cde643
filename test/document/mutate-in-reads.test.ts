/**
 * mutateIn's reads on a cluster (`src/document/subdoc/read-ahead.ts`): the specs' reads are issued
 * together, with the expiry and lock reads (and with `cas` the version read), before the CAS check
 * and the specs run in order, so a call of specs on disjoint paths costs FoundationDB's floor for a
 * read-modify-write (read version, reads, commit) however many specs it has, with or without `cas`. Counted by an engine that charges round trips as a cluster client pays
 * them (`test/support/round-trip-engine.ts`, as `npm run bench:round-trips`).
 *
 * And what reading ahead must not change: specs that overlap see the writes of the specs before them,
 * a failing spec leaves nothing written, a retried commit reads afresh, and with `cas` the same error
 * wins as when the CAS check read on its own.
 */
import { LOCKED_CAS, MutateInSpec, open, type Collection, type DocLayer, type JsonValue, type MutateInSpec as Spec } from '../../src';
import type { Database } from '../../src/kv/contract/database';
import { dumpKeyspace, expectDocumentError } from '../support/document-assertions';
import type { RoundTrips } from '../support/round-trip-engine';
import { clocked, T0 } from './clocked';
import { documentSuite, type DocumentTestContext } from './document-suite';

/** FoundationDB's floor for a read-modify-write: read version, one round trip of reads, commit. */
const FLOOR = 3;

const DOC = {
  name: 'Ada',
  address: { city: 'London', zip: 'N1' },
  logins: 3,
  score: 10,
  tags: ['a', 'b'],
  queue: [1, 2, 3],
  stack: [1, 2, 3],
  log: ['x'],
  seen: ['p'],
  slots: [0, 1, 2],
  old: { x: 1 },
  gone: true,
  list: [{ id: 1 }, { id: 2 }],
};

/** One spec of every kind, each on its own path of {@link DOC}. */
const EVERY_KIND = [
  MutateInSpec.upsert('address.city', 'Paris'),
  MutateInSpec.insert('address.country', 'UK'),
  MutateInSpec.replace('name', 'Grace'),
  MutateInSpec.remove('gone'),
  MutateInSpec.increment('logins', 1),
  MutateInSpec.decrement('score', 2),
  MutateInSpec.arrayAppend('tags', 'c'),
  MutateInSpec.arrayPrepend('log', 'w'),
  MutateInSpec.arrayAddUnique('seen', 'q'),
  MutateInSpec.arrayInsert('slots[0]', -1),
  MutateInSpec.remove('queue[0]'),
  MutateInSpec.remove('stack[-1]'),
  MutateInSpec.upsert('old', { y: 2 }),
  MutateInSpec.insert('fresh', [1]),
  MutateInSpec.upsert('warm', false),
];

async function withRoundTrips(ctx: DocumentTestContext) {
  const { docs, kv, roundTrips } = await ctx.openWithRoundTrips();
  const c = docs.collection();
  await c.insert(DOC, { id: 'd' });
  // A running app has the collection's lock flag cached (lock-flags.ts): the first write reads it.
  await c.mutateIn('d', [MutateInSpec.upsert('warm', true)]);
  return { c, kv, roundTripsOf: sequentialRoundTrips(roundTrips) };
}

/** The sequential round trips of an action, as `roundTrips` counts them. */
function sequentialRoundTrips(roundTrips: RoundTrips): (action: () => Promise<unknown>) => Promise<number> {
  return async (action) => {
    const before = roundTrips.count;
    await action();
    return roundTrips.count - before;
  };
}

documentSuite('mutateIn round trips', (ctx) => {
  it('takes 3 round trips for two specs on disjoint paths (read version, reads, commit), as bench:round-trips', async () => {
    const { c, roundTripsOf } = await withRoundTrips(ctx);
    const specs = [MutateInSpec.upsert('address.city', 'Paris'), MutateInSpec.increment('logins', 1)];
    expect(await roundTripsOf(() => c.mutateIn('d', specs))).toBe(FLOOR);
    expect((await c.get('d')).content).toMatchObject({ address: { city: 'Paris', zip: 'N1' }, logins: 4 });
  });

  it('takes 3 round trips for 15 specs on disjoint paths, one of every kind', async () => {
    const { c, roundTripsOf } = await withRoundTrips(ctx);
    let values: (JsonValue | undefined)[] = [];
    expect(await roundTripsOf(async () => ({ values } = await c.mutateIn('d', EVERY_KIND)))).toBe(FLOOR);
    expect(values).toEqual([undefined, undefined, undefined, undefined, 4, 8, ...Array.from({ length: 9 }, () => undefined)]);
    expect((await c.get('d')).content).toEqual({
      name: 'Grace',
      address: { city: 'Paris', zip: 'N1', country: 'UK' },
      logins: 4,
      score: 8,
      tags: ['a', 'b', 'c'],
      queue: [2, 3],
      stack: [1, 2],
      log: ['w', 'x'],
      seen: ['p', 'q'],
      slots: [-1, 0, 1, 2],
      old: { y: 2 },
      list: [{ id: 1 }, { id: 2 }],
      fresh: [1],
      warm: false,
    });
  });

  it('takes one round trip more for a 16th spec whose missing parents createPath creates (read on the miss, as before)', async () => {
    const { c, roundTripsOf } = await withRoundTrips(ctx);
    const specs = [...EVERY_KIND, MutateInSpec.upsert('nested.deep.key', 1, { createPath: true })];
    expect(await roundTripsOf(() => c.mutateIn('d', specs))).toBe(FLOOR + 1);
    expect((await c.get('d', 'nested')).content).toEqual({ deep: { key: 1 } });
  });

  it('resolves an index in a path with one more round trip (its limit-1 read), the other specs read with it', async () => {
    const { c, roundTripsOf } = await withRoundTrips(ctx);
    const specs = [MutateInSpec.replace('list[-1].id', 7), MutateInSpec.increment('logins', 1), MutateInSpec.upsert('name', 'Grace')];
    expect(await roundTripsOf(() => c.mutateIn('d', specs))).toBe(FLOOR + 1);
    expect((await c.get('d', 'list')).content).toEqual([{ id: 1 }, { id: 7 }]);
  });

  it('issues the reads of a call inside a caller transaction together too', async () => {
    const { c, kv, roundTripsOf } = await withRoundTrips(ctx);
    const specs = [MutateInSpec.upsert('address.city', 'Paris'), MutateInSpec.increment('logins', 1), MutateInSpec.arrayAppend('tags', 'c')];
    expect(await roundTripsOf(() => kv.transact((tr) => c.mutateIn('d', specs, { tr })))).toBe(FLOOR);
  });
});

/** The document `d` holding `doc`, in a fresh layer. */
async function fixture(ctx: DocumentTestContext, doc: JsonValue) {
  const { docs, kv, counter } = await ctx.open();
  const c = docs.collection();
  await c.insert(doc, { id: 'd' });
  return { docs, c, kv, counter };
}

/** `specs` applied one call each, in order, to document `id`: what one call of them all must equal. */
async function oneByOne(c: Collection, id: string, specs: readonly Spec[]): Promise<{ values: (JsonValue | undefined)[]; content: JsonValue }> {
  const values: (JsonValue | undefined)[] = [];
  for (const spec of specs) values.push(...(await c.mutateIn(id, [spec])).values);
  return { values, content: (await c.get(id)).content };
}

documentSuite('mutateIn reads issued ahead', (ctx) => {
  const overlapping: [string, JsonValue, Spec[]][] = [
    ['a field, then a counter inside it', { n: 1 }, [MutateInSpec.upsert('a', { n: 1 }), MutateInSpec.increment('a.n', 2)]],
    ['a counter, twice', { n: 1 }, [MutateInSpec.increment('n', 1), MutateInSpec.increment('n', 5)]],
    [
      'parents created by one spec, read by the next',
      {},
      [MutateInSpec.upsert('p.q', 1, { createPath: true }), MutateInSpec.upsert('p.r', 2), MutateInSpec.increment('p.s.t', 1, { createPath: true })],
    ],
    [
      'an insert that moves the elements a later index names',
      { list: [1, 2, 3] },
      [MutateInSpec.arrayInsert('list[0]', 0), MutateInSpec.replace('list[1]', 'one')],
    ],
    ['a removal, then an insert at the same key', { a: { deep: [1] } }, [MutateInSpec.remove('a'), MutateInSpec.insert('a', 5)]],
    ['an append, then a removal of the last element', { list: [1] }, [MutateInSpec.arrayAppend('list', 2), MutateInSpec.remove('list[-1]')]],
    ['an element removed, then the array appended to', { list: [1, 2] }, [MutateInSpec.remove('list[0]'), MutateInSpec.arrayAppend('list', 3)]],
    [
      'a whole-document upsert, then a field',
      { x: 1 },
      [MutateInSpec.upsert('', { y: [1] }), MutateInSpec.arrayAppend('y', 2), MutateInSpec.upsert('z', 1)],
    ],
    [
      'an array created with createPath, then unique values added',
      {},
      [MutateInSpec.arrayAppend('t.tags', 'a', { createPath: true }), MutateInSpec.arrayAddUnique('t.tags', 'b')],
    ],
    ['an object replaced by an array, then appended to', { o: { k: 1 } }, [MutateInSpec.replace('o', []), MutateInSpec.arrayPrepend('o', 'x')]],
  ];
  for (const [what, doc, specs] of overlapping) {
    it(`gives specs that overlap the results of one call per spec in order: ${what}`, async () => {
      const { c } = await fixture(ctx, doc);
      await c.insert(doc, { id: 'reference' });
      const expected = await oneByOne(c, 'reference', specs);
      const { values } = await c.mutateIn('d', specs);
      expect({ values, content: (await c.get('d')).content }).toEqual(expected);
    });
  }

  const failing: [string, JsonValue, Spec[], { code: string; specIndex: number; path: string }][] = [
    [
      'a spec that an earlier one makes fail',
      { a: {} },
      [MutateInSpec.upsert('b', 1), MutateInSpec.remove('a'), MutateInSpec.increment('a.n', 1)],
      { code: 'PATH_NOT_FOUND', specIndex: 2, path: 'a.n' },
    ],
    [
      'a unique value an earlier spec added',
      { tags: [] },
      [MutateInSpec.arrayAddUnique('tags', 'x'), MutateInSpec.arrayAddUnique('tags', 'x')],
      { code: 'PATH_EXISTS', specIndex: 1, path: 'tags' },
    ],
    [
      'an insert where an earlier spec wrote',
      { a: 1 },
      [MutateInSpec.upsert('b', 1), MutateInSpec.insert('b', 2)],
      { code: 'PATH_EXISTS', specIndex: 1, path: 'b' },
    ],
    [
      'a mismatch an earlier spec made',
      { a: { b: 1 } },
      [MutateInSpec.upsert('a', [1]), MutateInSpec.upsert('a.b', 2)],
      { code: 'PATH_MISMATCH', specIndex: 1, path: 'a' },
    ],
    [
      'an index past the end after an earlier removal',
      { list: [1, 2] },
      [MutateInSpec.remove('list[1]'), MutateInSpec.replace('list[1]', 3)],
      { code: 'PATH_NOT_FOUND', specIndex: 1, path: 'list[1]' },
    ],
  ];
  for (const [what, doc, specs, error] of failing) {
    it(`names the spec that fails, with its code and path, when specs overlap: ${what}`, async () => {
      const { c, kv } = await fixture(ctx, doc);
      const before = await c.get('d');
      const dump = await dumpKeyspace(kv);
      const err = await expectDocumentError(c.mutateIn('d', specs), error.code, { specIndex: error.specIndex });
      expect(err.path).toBe(error.path);
      expect(await dumpKeyspace(kv)).toEqual(dump);
      expect(await c.get('d')).toEqual(before);
    });
  }

  it('writes nothing, even to a caller transaction that commits, when a spec in the middle fails after its reads were issued', async () => {
    const { docs, c, kv, counter } = await fixture(ctx, { a: 1, n: 1, list: [1] });
    const before = await c.get('d');
    const dump = await dumpKeyspace(kv);
    const specs = [
      MutateInSpec.upsert('a', 2),
      MutateInSpec.replace('missing.x', 1),
      MutateInSpec.increment('n', 1),
      MutateInSpec.arrayAppend('list', 2),
    ];
    const { counts } = await counter.measure(() =>
      docs.transact(async (tr) => {
        const err = await expectDocumentError(c.mutateIn('d', specs, { tr }), 'PATH_NOT_FOUND', { specIndex: 1 });
        expect(err.path).toBe('missing.x');
      }),
    );
    expect(counts.keysWritten + counts.clears + counts.clearRanges).toBe(0);
    expect(await dumpKeyspace(kv)).toEqual(dump);
    expect(await c.get('d')).toEqual(before);
  });

  it('reads afresh when the commit is retried: a concurrent write to a field read ahead is not lost', async () => {
    const { docs, c } = await fixture(ctx, { n: 1, other: 'x' });
    let attempts = 0;
    await docs.transact(async (tr) => {
      const { values } = await c.mutateIn('d', [MutateInSpec.increment('n', 10), MutateInSpec.upsert('other', 'y')], { tr });
      // The first attempt's reads are answered; another writer then changes n before it commits.
      if (attempts++ === 0) {
        expect(values).toEqual([11, undefined]);
        await c.mutateIn('d', [MutateInSpec.increment('n', 100)]);
      } else {
        expect(values).toEqual([111, undefined]);
      }
    });
    expect(attempts).toBe(2);
    expect((await c.get('d')).content).toEqual({ n: 111, other: 'y' });
  });

  const layer = clocked(ctx);
  it('reads afresh when an expired document is recreated: the specs do not see its old content', async () => {
    const { c, clock } = await layer();
    for (const id of ['u', 'i']) await c.insert({ n: 5, tags: ['x'] }, { id, expiry: 1 });
    clock.now = T0 + 1000;
    const specs = [MutateInSpec.increment('n', 1), MutateInSpec.arrayAddUnique('tags', 'x', { createPath: true })];
    expect((await c.mutateIn('u', specs, { storeSemantics: 'upsert' })).values).toEqual([1, undefined]);
    expect((await c.mutateIn('i', specs, { storeSemantics: 'insert' })).values).toEqual([1, undefined]);
    for (const id of ['u', 'i']) expect((await c.get(id)).content).toEqual({ n: 1, tags: ['x'] });
  });
});

/**
 * `d` holding {@link DOC} (inserted with `insertOptions`), with its cas and an older one, in a layer
 * whose clock the test sets, over an engine that charges round trips; `roundTripsOf` as in
 * {@link withRoundTrips}.
 */
function clockedWithRoundTrips(ctx: DocumentTestContext) {
  const layers: DocLayer[] = [];
  afterEach(async () => {
    for (const layer of layers.splice(0)) await layer.close();
  });
  return async (insertOptions: { expiry?: number } = {}) => {
    const { kv, roundTrips } = await ctx.openWithRoundTrips();
    const clock = { now: T0 };
    const docs = await open({ database: kv, now: () => clock.now });
    layers.push(docs);
    const c = docs.collection();
    const { cas: older } = await c.insert(DOC, { id: 'd', ...insertOptions });
    // As in withRoundTrips: the collection's lock flag cached.
    const { cas } = await c.mutateIn('d', [MutateInSpec.upsert('warm', true)], { preserveExpiry: true });
    return { docs, c, kv, clock, cas: cas as string, older: older as string, roundTripsOf: sequentialRoundTrips(roundTrips) };
  };
}

/** The round trips of `action`, which must fail with `code`. */
async function failingRoundTrips(
  roundTripsOf: (action: () => Promise<unknown>) => Promise<number>,
  action: () => Promise<unknown>,
  code: string,
): Promise<number> {
  return roundTripsOf(() => expectDocumentError(action(), code));
}

/**
 * getAndLock of `d`, in a collection whose lock flag (`lock-flags.ts`) a running app has cached: the
 * first lock of a collection sets it, and the first write after that reads it (1 round trip, once).
 */
async function lock(c: Collection) {
  await c.upsert('first-locked', {});
  await c.getAndLock('first-locked', 10);
  await c.mutateIn('d', [MutateInSpec.upsert('warm', true)], { preserveExpiry: true });
  return c.getAndLock('d', 10);
}

documentSuite('mutateIn with cas: round trips', (ctx) => {
  const layer = clockedWithRoundTrips(ctx);
  const specs = [MutateInSpec.upsert('address.city', 'Paris'), MutateInSpec.increment('logins', 1)];

  it('takes 3 round trips with the document cas: the version read goes with the specs', async () => {
    const { c, cas, roundTripsOf } = await layer();
    expect(await roundTripsOf(() => c.mutateIn('d', specs, { cas }))).toBe(FLOOR);
    expect((await c.get('d')).content).toMatchObject({ address: { city: 'Paris', zip: 'N1' }, logins: 4 });
  });

  it('takes 3 round trips with the document cas inside a caller transaction', async () => {
    const { docs, c, cas, roundTripsOf } = await layer();
    expect(await roundTripsOf(() => docs.transact((tr) => c.mutateIn('d', specs, { cas, tr })))).toBe(FLOOR);
  });

  it('fails with CAS_MISMATCH after 2 round trips (read version, reads), writing nothing', async () => {
    const { c, kv, older, roundTripsOf } = await layer();
    const dump = await dumpKeyspace(kv);
    expect(await failingRoundTrips(roundTripsOf, () => c.mutateIn('d', specs, { cas: older }), 'CAS_MISMATCH')).toBe(FLOOR - 1);
    expect(await dumpKeyspace(kv)).toEqual(dump);
  });

  it('fails a missing document with DOCUMENT_NOT_FOUND after 2 round trips', async () => {
    const { c, cas, roundTripsOf } = await layer();
    expect(await failingRoundTrips(roundTripsOf, () => c.mutateIn('other', specs, { cas }), 'DOCUMENT_NOT_FOUND')).toBe(FLOOR - 1);
  });

  it('takes 3 round trips with the cas of a getAndLock, and ends the lock', async () => {
    const { c, roundTripsOf } = await layer();
    const { cas } = await lock(c);
    expect(await roundTripsOf(() => c.mutateIn('d', specs, { cas: cas as string }))).toBe(FLOOR);
    expect((await c.get('d')).cas).not.toBe(LOCKED_CAS);
  });

  it('fails with DOCUMENT_LOCKED after 2 round trips on a locked document with another cas', async () => {
    const { c, cas, roundTripsOf } = await layer();
    await lock(c);
    expect(await failingRoundTrips(roundTripsOf, () => c.mutateIn('d', specs, { cas }), 'DOCUMENT_LOCKED')).toBe(FLOOR - 1);
  });

  it('takes 3 round trips with the cas of a document that has an expiry', async () => {
    const { c, cas, roundTripsOf } = await layer({ expiry: 60 });
    expect(await roundTripsOf(() => c.mutateIn('d', specs, { cas, preserveExpiry: true }))).toBe(FLOOR);
    expect((await c.get('d')).expiresAt).toEqual(new Date(T0 + 60_000));
  });

  it('fails an expired document with DOCUMENT_NOT_FOUND in as many round trips as before: 2, or 3 with upsert (its reads go again after the discard)', async () => {
    const { c, kv, clock, cas, roundTripsOf } = await layer({ expiry: 1 });
    clock.now = T0 + 1000;
    const dump = await dumpKeyspace(kv);
    expect(await failingRoundTrips(roundTripsOf, () => c.mutateIn('d', specs, { cas }), 'DOCUMENT_NOT_FOUND')).toBe(FLOOR - 1);
    expect(await failingRoundTrips(roundTripsOf, () => c.mutateIn('d', specs, { cas, storeSemantics: 'upsert' }), 'DOCUMENT_NOT_FOUND')).toBe(FLOOR);
    expect(await dumpKeyspace(kv)).toEqual(dump);
  });
});

documentSuite('mutateIn with cas: which error wins', (ctx) => {
  const layer = clocked(ctx);
  /** `d` holding `{ a: 1 }`, its cas, and an older cas of it. */
  const withDocument = async () => {
    const opened = await layer();
    const { cas: older } = await opened.c.insert({ a: 0 }, { id: 'd' });
    const { cas } = await opened.c.replace('d', { a: 1 });
    return { ...opened, cas: cas as string, older: older as string };
  };
  const failing = [MutateInSpec.upsert('b', 1), MutateInSpec.replace('missing.x', 1)];

  /** Asserts that `action` fails with `code` (and `details`) and changes nothing; returns the error. */
  const expectUnchanged = async (kv: Database, action: () => Promise<unknown>, code: string, details: { specIndex?: number } = {}) => {
    const dump = await dumpKeyspace(kv);
    const err = await expectDocumentError(action(), code, details);
    expect(await dumpKeyspace(kv)).toEqual(dump);
    return err;
  };

  it('CAS_MISMATCH over the error of a spec that would fail', async () => {
    const { c, kv, older } = await withDocument();
    const err = await expectUnchanged(kv, () => c.mutateIn('d', failing, { cas: older }), 'CAS_MISMATCH');
    expect(err.specIndex).toBeUndefined();
  });

  it('the failing spec with the document cas', async () => {
    const { c, kv, cas } = await withDocument();
    await expectUnchanged(kv, () => c.mutateIn('d', failing, { cas }), 'PATH_NOT_FOUND', { specIndex: 1 });
  });

  it('INVALID_ARGUMENT of a spec or a malformed cas over CAS_MISMATCH', async () => {
    const { c, kv, older } = await withDocument();
    const invalid = [MutateInSpec.upsert('b', 1), { op: 'upsert', path: 'c', value: 1, options: { multi: true } } as const];
    await expectUnchanged(kv, () => c.mutateIn('d', invalid, { cas: older }), 'INVALID_ARGUMENT', { specIndex: 1 });
    await expectUnchanged(kv, () => c.mutateIn('d', failing, { cas: 'not a cas' }), 'INVALID_ARGUMENT');
  });

  it('DOCUMENT_NOT_FOUND for a missing document, also with storeSemantics upsert (a cas is of an existing document)', async () => {
    const { c, kv, cas } = await withDocument();
    await expectUnchanged(kv, () => c.mutateIn('other', failing, { cas }), 'DOCUMENT_NOT_FOUND');
    await expectUnchanged(kv, () => c.mutateIn('other', [MutateInSpec.upsert('b', 1)], { cas, storeSemantics: 'upsert' }), 'DOCUMENT_NOT_FOUND');
  });

  it('DOCUMENT_NOT_FOUND for an expired document, with its own cas, whatever the specs', async () => {
    const { c, kv, clock } = await layer();
    const { cas } = await c.insert({ a: 1 }, { id: 'd', expiry: 1 });
    clock.now = T0 + 1000;
    await expectUnchanged(kv, () => c.mutateIn('d', failing, { cas: cas as string }), 'DOCUMENT_NOT_FOUND');
    await expectUnchanged(
      kv,
      () => c.mutateIn('d', [MutateInSpec.upsert('a.x', 1)], { cas: cas as string, storeSemantics: 'upsert' }),
      'DOCUMENT_NOT_FOUND',
    );
  });

  it('DOCUMENT_LOCKED for a locked document with another cas, over a failing spec; the failing spec with the lock cas, the lock kept', async () => {
    const { c, kv, cas } = await withDocument();
    const { cas: lockCas } = await c.getAndLock('d', 10);
    await expectUnchanged(kv, () => c.mutateIn('d', failing, { cas }), 'DOCUMENT_LOCKED');
    await expectUnchanged(kv, () => c.mutateIn('d', failing, { cas: lockCas as string }), 'PATH_NOT_FOUND', { specIndex: 1 });
    await expectDocumentError(c.upsert('d', { a: 2 }), 'DOCUMENT_LOCKED');
  });

  it('CAS_MISMATCH for a document written earlier in the same transaction (its version is not known yet)', async () => {
    const { docs, c, kv, cas } = await withDocument();
    const dump = await dumpKeyspace(kv);
    const rolledBack = docs.transact(async (tr) => {
      await c.mutateIn('d', [MutateInSpec.upsert('b', 1)], { tr });
      await expectDocumentError(c.mutateIn('d', [MutateInSpec.upsert('c', 1)], { cas, tr }), 'CAS_MISMATCH');
      throw new Error('rolled back');
    });
    await expect(rolledBack).rejects.toThrow('rolled back');
    expect(await dumpKeyspace(kv)).toEqual(dump);
  });

  it('reads the version afresh when the commit is retried: a concurrent write makes the retry CAS_MISMATCH', async () => {
    const { docs, c, cas } = await withDocument();
    let attempts = 0;
    await expectDocumentError(
      docs.transact(async (tr) => {
        const attempt = attempts++;
        await c.mutateIn('d', [MutateInSpec.upsert('b', 1)], { cas, tr });
        // The first attempt's cas check passed; another writer then changes the document before it commits.
        if (attempt === 0) await c.mutateIn('d', [MutateInSpec.upsert('a', 2)]);
      }),
      'CAS_MISMATCH',
    );
    expect(attempts).toBe(2);
    expect((await c.get('d')).content).toEqual({ a: 2 });
  });
});
