/**
 * Concurrent document calls on one collection without a caller's transaction share transactions
 * (src/document/collection/run-write.ts): writes run one after another in a shared transaction, reads
 * together in a shared read-only one. Each caller still gets exactly its own result, as in some serial
 * order; a failing call fails alone; a call with `{ tr }` stays in the caller's transaction.
 */
import { isDocumentError, open, type DocLayer, type MutationResult } from '../../src';
import { Layout } from '../../src/document/keys/layout';
import { CollectionRegistry } from '../../src/document/manifest/collection-registry';
import { testSeed } from '../support/random';
import { documentSuite } from './document-suite';

const CALLERS = 32;
const layout = new Layout(['doclayer']);

const range = (r: { begin: Buffer; end: Buffer }): [Buffer, Buffer] => [r.begin, r.end];

const ids = (n: number) => Array.from({ length: n }, (_, i) => `d${i}`);

/** The outcomes of `calls`, made together: each value, or the code of the DocumentError that failed it. */
async function outcomes<T>(calls: Promise<T>[]): Promise<(T | string)[]> {
  const settled = await Promise.allSettled(calls);
  return settled.map((s) => {
    if (s.status === 'fulfilled') return s.value;
    if (isDocumentError(s.reason)) return s.reason.code;
    throw s.reason;
  });
}

documentSuite('documents: concurrent calls combined', (ctx) => {
  it(`${CALLERS} concurrent upserts commit in 2 transactions, each caller with the CAS its document reads with`, async () => {
    const { docs, counter } = await ctx.open();
    const c = docs.collection();
    await c.upsert('first', {}); // creates the collection in a transaction of its own
    const before = counter.counts();
    const written = await Promise.all(ids(CALLERS).map((id, i) => c.upsert(id, { n: i })));
    const after = counter.counts();
    // The first call alone (a lone caller waits for nothing), the 31 that queued behind it together.
    expect({ commits: after.commits - before.commits, retries: after.retries - before.retries }).toEqual({ commits: 2, retries: 0 });
    const read = await Promise.all(ids(CALLERS).map((id) => c.get(id)));
    expect(read.map((r) => r.content)).toEqual(ids(CALLERS).map((_, i) => ({ n: i })));
    expect(read.map((r) => r.cas)).toEqual(written.map((w) => w.cas));
  });

  it(`a batch of ${CALLERS} small upserts asks its transaction's size 4 times, not before every call (each ask waits a turn)`, async () => {
    const { docs, counter } = await ctx.open();
    const c = docs.collection();
    await c.upsert('first', {});
    const before = counter.counts();
    await Promise.all(ids(CALLERS).map((id, i) => c.upsert(id, { n: i })));
    const after = counter.counts();
    // The first call alone; in the batch of 31, after its first call and then every 8 calls (calls 9, 17, 25).
    expect({ commits: after.commits - before.commits, sizeQueries: after.sizeQueries - before.sizeQueries }).toEqual({ commits: 2, sizeQueries: 4 });
  });

  it('callers that call again as soon as they have their results share the next batch, instead of one of them running alone', async () => {
    const { docs, counter } = await ctx.open();
    const c = docs.collection();
    await c.upsert('first', {});
    const before = counter.counts();
    await Promise.all(
      ids(CALLERS).map(async (id) => {
        for (let round = 0; round < 3; round++) await c.upsert(id, { round });
      }),
    );
    // One alone, then 3 batches: the first caller's second call waits for the others' second calls.
    expect(counter.counts().commits - before.commits).toBe(4);
    expect((await c.getMany(ids(CALLERS))).map((r) => r?.content)).toEqual(ids(CALLERS).map(() => ({ round: 2 })));
  });

  it(`${CALLERS} concurrent gets share one read-only transaction; a missing id fails alone`, async () => {
    const { docs, counter } = await ctx.open();
    const c = docs.collection();
    for (const [i, id] of ids(8).entries()) await c.upsert(id, { n: i });
    const wanted = Array.from({ length: CALLERS }, (_, i) => (i % 5 === 4 ? 'missing' : `d${i % 8}`));
    const { result, counts } = await counter.measure(() => outcomes(wanted.map((id) => c.get(id))));
    expect(result.map((r) => (typeof r === 'string' ? r : r.content))).toEqual(
      wanted.map((id) => (id === 'missing' ? 'DOCUMENT_NOT_FOUND' : { n: Number(id.slice(1)) })),
    );
    expect({ attempts: counts.attempts, keysWritten: counts.keysWritten }).toEqual({ attempts: 2, keysWritten: 0 });
  });

  it(`every get of a combined batch takes its known collection from the registry without a promise`, async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    for (const [i, id] of ids(8).entries()) await c.upsert(id, { n: i });
    const lookups = jest.spyOn(CollectionRegistry.prototype, 'readTarget');
    try {
      const wanted = Array.from({ length: CALLERS }, (_, i) => (i % 5 === 4 ? 'missing' : `d${i % 8}`));
      const result = await outcomes(wanted.map((id) => c.get(id)));
      expect(result.map((r) => (typeof r === 'string' ? r : r.content))).toEqual(
        wanted.map((id) => (id === 'missing' ? 'DOCUMENT_NOT_FOUND' : { n: Number(id.slice(1)) })),
      );
      // The first get alone, then the batch behind it: one lookup per get, none of them waited for.
      expect(lookups).toHaveBeenCalledTimes(CALLERS);
      expect(lookups.mock.results.filter((r) => r.value instanceof Promise)).toEqual([]);
    } finally {
      lookups.mockRestore();
    }
  });

  it('inserts of existing ids fail alone with DOCUMENT_EXISTS; the others commit with them in one transaction', async () => {
    const { docs, counter } = await ctx.open();
    const c = docs.collection();
    await c.upsert('d3', { old: true });
    await c.upsert('d7', { old: true });
    const before = counter.counts();
    const result = await outcomes(ids(12).map((id) => c.insert({ id }, { id })));
    expect(result.map((r) => (typeof r === 'string' ? r : r.id))).toEqual(ids(12).map((id) => (id === 'd3' || id === 'd7' ? 'DOCUMENT_EXISTS' : id)));
    expect(counter.counts().commits - before.commits).toBe(2);
    expect((await c.get('d3')).content).toEqual({ old: true });
    expect((await c.get('d11')).content).toEqual({ id: 'd11' });
  });

  it('a replace with a stale CAS fails alone with CAS_MISMATCH; removes and replaces around it land', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    const cas = await Promise.all(ids(6).map((id) => c.upsert(id, { v: 1 })));
    await c.upsert('d2', { v: 2 }); // d2's first CAS is stale now
    const result = await outcomes<MutationResult>([
      c.replace('d0', { v: 3 }, { cas: cas[0].cas }),
      c.remove('d1', { cas: cas[1].cas }),
      c.replace('d2', { v: 3 }, { cas: cas[2].cas }),
      c.remove('missing'),
      c.replace('d4', { v: 3 }),
    ]);
    expect(result.map((r) => (typeof r === 'string' ? r : 'ok'))).toEqual(['ok', 'ok', 'CAS_MISMATCH', 'DOCUMENT_NOT_FOUND', 'ok']);
    expect((await c.getMany(ids(6))).map((r) => r?.content)).toEqual([{ v: 3 }, undefined, { v: 2 }, { v: 1 }, { v: 3 }, { v: 1 }]);
  });

  it('two writes of one document never share a commit: each caller holds its own CAS, and the earlier one is stale', async () => {
    const { docs, counter } = await ctx.open();
    const c = docs.collection();
    await c.upsert('x', { v: 0 });
    const before = counter.counts();
    const [, first, other, second] = await Promise.all([c.upsert('y', {}), c.upsert('x', { v: 1 }), c.upsert('z', {}), c.upsert('x', { v: 2 })]);
    // y alone; then x and z together; the second write of x in a batch of its own.
    expect(counter.counts().commits - before.commits).toBe(3);
    expect(first.cas).not.toBe(second.cas);
    expect(first.cas).toBe(other.cas);
    expect((await c.get('x')).cas).toBe(second.cas);
    await expect(c.replace('x', { v: 3 }, { cas: first.cas })).rejects.toMatchObject({ code: 'CAS_MISMATCH' });
  });

  it('mutateIn and lookupIn combine too, each with its own outcome', async () => {
    const { docs, counter } = await ctx.open();
    const c = docs.collection();
    await c.upsert('n', { count: 0 });
    const before = counter.counts();
    const { MutateInSpec, LookupInSpec } = await import('../../src');
    const results = await Promise.all(Array.from({ length: 8 }, () => c.mutateIn('n', [MutateInSpec.increment('count', 1)])));
    expect(results.map((r) => r.values[0]).sort((a, b) => Number(a) - Number(b))).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    // One write of the document per commit: the 8 increments take 8 commits.
    expect(counter.counts().commits - before.commits).toBe(8);
    const looked = await outcomes([c.lookupIn('n', [LookupInSpec.get('count')]), c.lookupIn('none', [LookupInSpec.get('count')])]);
    expect(looked.map((r) => (typeof r === 'string' ? r : r.entries[0].value))).toEqual([8, 'DOCUMENT_NOT_FOUND']);
  });

  it('a call with { tr } is never combined: it commits with its own transaction, or not at all', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    await c.upsert('first', {});
    const failing = docs.transact(async (tr) => {
      await c.upsert('mine', { v: 1 }, { tr });
      await Promise.all(ids(8).map((id) => c.upsert(id, { v: 1 })));
      throw new Error('the caller gives up');
    });
    await expect(failing).rejects.toThrow('the caller gives up');
    expect(await c.exists('mine')).toBe(false);
    expect(await Promise.all(ids(8).map((id) => c.exists(id)))).toEqual(ids(8).map(() => true));
  });

  it('secondary indexes and the change feed see every write of a combined batch; a unique violation fails alone', async () => {
    const { docs } = await ctx.open();
    await docs.createCollection('app.users', { history: true });
    const c = docs.collection('app.users');
    await c.upsert('first', { email: 'first@x' });
    await c.createIndex('byEmail', { fields: ['email'], unique: true });
    const emails = ['a@x', 'b@x', 'a@x', 'c@x', 'first@x'];
    const result = await outcomes(emails.map((email, i) => c.upsert(`u${i}`, { email })));
    expect(result.map((r) => (typeof r === 'string' ? r : 'ok'))).toEqual(['ok', 'ok', 'UNIQUE_VIOLATION', 'ok', 'UNIQUE_VIOLATION']);
    const indexed = await docs.transact(async (tr) => {
      const found: string[] = [];
      for await (const e of c.indexAccess().scan(tr, 'byEmail', { equal: [] })) found.push(`${String(e.id)} ${JSON.stringify(e.values[0])}`);
      return found;
    });
    expect(indexed).toEqual(['u0 "a@x"', 'u1 "b@x"', 'u3 "c@x"', 'first "first@x"']);
    const changed: string[] = [];
    for await (const change of c.changes()) if (change.kind === 'upsert') changed.push(String(change.id));
    expect(changed.sort()).toEqual(['first', 'u0', 'u1', 'u3']);
  });

  it('a batch ends once its transaction is large: big documents commit over several transactions', async () => {
    const { docs, counter } = await ctx.open();
    const c = docs.collection();
    await c.upsert('first', {});
    const big = (i: number) => ({ i, text: Array.from({ length: 30 }, (_, j) => `${i}-${j}-`.padEnd(9_000, 'x')) });
    const before = counter.counts();
    await Promise.all(ids(9).map((id, i) => c.upsert(id, big(i))));
    // 270 kB each: the first alone, then batches of 2 that stay near the 500 kB budget.
    expect(counter.counts().commits - before.commits).toBe(5);
    expect((await c.getMany(ids(9))).map((r) => (r?.content as { i: number }).i)).toEqual(ids(9).map((_, i) => i));
  });

  describe('a failure after the call wrote', () => {
    const layers: DocLayer[] = [];
    afterEach(async () => {
      for (const layer of layers.splice(0)) await layer.close();
    });

    it('an insert that deleted an expired document and then fails makes its batch run alone: it writes nothing, the others commit', async () => {
      const { kv, counter } = await ctx.open();
      const clock = { now: Date.UTC(2030, 0, 1) };
      const docs = await open({ database: kv, now: () => clock.now });
      layers.push(docs);
      const c = docs.collection('app.users');
      await c.upsert('holder', { email: 'taken@x' });
      await c.createIndex('byEmail', { fields: ['email'], unique: true });
      await c.upsert('old', { email: 'old@x' }, { expiry: 10 });
      clock.now += 20_000;
      const expiryEntries = async () => (await kv.getRangeAll(...range(layout.system.range(['expiry'])))).length;
      expect(await expiryEntries()).toBe(1);
      const before = counter.counts();
      // The insert finds 'old' expired, deletes it, then meets the unique index: a failure after a write.
      const result = await outcomes([
        c.upsert('a', { email: 'a@x' }),
        c.insert({ email: 'taken@x' }, { id: 'old' }),
        c.upsert('b', { email: 'b@x' }),
      ]);
      expect(result.map((r) => (typeof r === 'string' ? r : 'ok'))).toEqual(['ok', 'UNIQUE_VIOLATION', 'ok']);
      // 'a' alone; the batch of the other two failed uncommitted, then each ran alone (the insert commits nothing).
      expect(counter.counts().commits - before.commits).toBe(2);
      expect(await expiryEntries()).toBe(1);
      expect(await c.exists('b')).toBe(true);
    });
  });

  ctx.describeWithFaults('with commit faults', () => {
    it('a combined transaction that fails to commit is retried whole: every caller gets its own result', async () => {
      const { docs, counter } = await ctx.openWithFaults({ seed: testSeed(1702), notCommitted: 0.4, tooOld: 0.1 });
      const c = docs.collection();
      for (let round = 0; round < 4; round++) {
        const result = await outcomes(ids(16).map((id, i) => (round % 2 === 0 ? c.upsert(id, { round, i }) : c.insert({ round, i }, { id }))));
        expect(result.map((r) => (typeof r === 'string' ? r : 'ok'))).toEqual(ids(16).map(() => (round % 2 === 0 ? 'ok' : 'DOCUMENT_EXISTS')));
        const read = await Promise.all(ids(16).map((id) => c.get(id)));
        expect(read.map((r) => r.content)).toEqual(ids(16).map((_, i) => ({ round: round - (round % 2), i })));
      }
      expect(counter.counts().retries).toBeGreaterThan(0);
    });
  });
});
