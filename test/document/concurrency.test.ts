/**
 * Concurrency: what serializable transactions and the key layout promise when clients work on one
 * document at once, with and without injected commit faults.
 *
 * commit_unknown_result (1021) is FDB's ambiguous outcome: the commit may have been applied, and the
 * retry loop runs the operation again. An operation whose second run changes nothing more (upsert of a
 * field or a document, remove of a field, replace) ends exactly right. increment/decrement are not
 * idempotent: each 1021 whose commit was applied adds the delta once more, and insert can report
 * DOCUMENT_EXISTS for the document it inserted itself. The memory engine's `unknownResult` fault
 * always applies the commit before reporting 1021 (the harmful case), so the tests below can state the
 * exact outcome: the counter ends at N plus the number of 1021s.
 */
import { MutateInSpec, type Collection, type DocLayer } from '../../src';
import type { Transaction } from '../../src/kv/contract/types';
import type { DocumentError } from '../../src/document/errors';
import { Barrier } from '../support/barrier';
import { testSeed } from '../support/random';
import { documentSuite, type DocumentTestContext } from './document-suite';

const UNKNOWN_RESULT = 1021;

/** Runs functions in `docs.transact`, counting how many times the retry loops ran them. */
function counted(docs: DocLayer) {
  let attempts = 0;
  return {
    run: (fn: (tr: Transaction) => Promise<void>) =>
      docs.transact(async (tr) => {
        attempts++;
        await fn(tr);
      }),
    attempts: () => attempts,
  };
}

/**
 * A barrier for `parties` transactions that may be retried: the first `parties` arrivals wait for each
 * other (so every first attempt has read before any commits), later arrivals (retries) pass.
 */
function firstAttemptsBarrier(parties: number): () => Promise<void> {
  const barrier = new Barrier(parties);
  let arrivals = 0;
  return async () => {
    if (arrivals++ < parties) await barrier.arrive();
  };
}

async function increments(c: Collection, n: number): Promise<unknown[]> {
  return Promise.all(Array.from({ length: n }, async () => (await c.mutateIn('d', [MutateInSpec.increment('n', 1)])).values[0]));
}

/** Tests whose outcome must be exact whatever commit faults the database injects. */
function concurrencyTests(open: () => ReturnType<DocumentTestContext['open']>, label: string): void {
  it(`many concurrent increments of one field sum exactly, each seeing a distinct value (${label})`, async () => {
    const { docs } = await open();
    const c = docs.collection();
    await c.upsert('d', { n: 0, other: 'x' });
    const N = 30;
    const values = await increments(c, N);
    expect((await c.get('d')).content).toEqual({ n: N, other: 'x' });
    // Serializable: the values returned are 1..N, each once.
    expect([...values].sort((a, b) => (a as number) - (b as number))).toEqual(Array.from({ length: N }, (_, i) => i + 1));
  });

  it(`concurrent increments inside caller transactions, retried by transact, sum exactly (${label})`, async () => {
    const { docs } = await open();
    const c = docs.collection();
    await c.upsert('d', { n: 0 });
    const N = 20;
    await Promise.all(
      Array.from({ length: N }, () =>
        docs.transact(async (tr) => {
          await c.mutateIn('d', [MutateInSpec.increment('n', 2)], { tr });
          await c.mutateIn('d', [MutateInSpec.decrement('n', 1)], { tr });
        }),
      ),
    );
    expect((await c.get('d', 'n')).content).toBe(N);
  });

  it(`concurrent appends to one array all land, each exactly once (${label})`, async () => {
    const { docs } = await open();
    const c = docs.collection();
    await c.upsert('d', { list: [] });
    const N = 20;
    await Promise.all(Array.from({ length: N }, (_, i) => c.mutateIn('d', [MutateInSpec.arrayAppend('list', i)])));
    const list = (await c.get('d', 'list')).content as number[];
    expect([...list].sort((a, b) => a - b)).toEqual(Array.from({ length: N }, (_, i) => i));
  });

  it(`writers of different fields of one document all land (${label})`, async () => {
    const { docs } = await open();
    const c = docs.collection();
    await c.upsert('d', { fields: {}, counters: {} });
    const N = 20;
    await Promise.all(
      Array.from({ length: N }, (_, i) =>
        c.mutateIn('d', [MutateInSpec.upsert(`fields.f${i}`, { i }), MutateInSpec.increment(`counters.c${i}`, i + 1)]),
      ),
    );
    const expected = {
      fields: Object.fromEntries(Array.from({ length: N }, (_, i) => [`f${i}`, { i }])),
      counters: Object.fromEntries(Array.from({ length: N }, (_, i) => [`c${i}`, i + 1])),
    };
    expect((await c.get('d')).content).toEqual(expected);
  });
}

documentSuite('concurrency', (ctx) => {
  concurrencyTests(() => ctx.open(), 'no faults');

  it('writers of different fields of one document never conflict, even when all read before any commits', async () => {
    const { docs, counter } = await ctx.open();
    const c = docs.collection();
    await c.upsert('d', { fields: {}, counters: {}, lists: {} });
    counter.take();
    const N = 12;
    const allRead = firstAttemptsBarrier(N);
    const tx = counted(docs);
    await Promise.all(
      Array.from({ length: N }, (_, i) =>
        tx.run(async (tr) => {
          const spec =
            i % 3 === 0
              ? MutateInSpec.upsert(`fields.f${i}`, { by: i })
              : i % 3 === 1
                ? MutateInSpec.increment(`counters.c${i}`, 1)
                : MutateInSpec.arrayAppend(`lists.l${i}`, i, { createPath: true });
          await c.mutateIn('d', [spec], { tr });
          await allRead();
        }),
      ),
    );
    expect(tx.attempts()).toBe(N);
    expect(counter.take().retries).toBe(0);
    expect((await c.get('d')).content).toEqual({
      fields: { f0: { by: 0 }, f3: { by: 3 }, f6: { by: 6 }, f9: { by: 9 } },
      counters: { c1: 1, c4: 1, c7: 1, c10: 1 },
      lists: { l2: [2], l5: [5], l8: [8], l11: [11] },
    });
  });

  it('writers of different existing fields, and appenders to different arrays, never conflict', async () => {
    const { docs, counter } = await ctx.open();
    const c = docs.collection();
    const N = 8;
    const names = Array.from({ length: N }, (_, i) => `k${i}`);
    await c.upsert('d', Object.fromEntries(names.map((k) => [k, { value: 0, list: [1, 2, 3] }])));
    counter.take();
    const allRead = firstAttemptsBarrier(N);
    const tx = counted(docs);
    await Promise.all(
      names.map((k, i) =>
        tx.run(async (tr) => {
          await c.mutateIn(
            'd',
            [
              MutateInSpec.replace(`${k}.value`, i),
              MutateInSpec.arrayAppend(`${k}.list`, 4),
              MutateInSpec.arrayPrepend(`${k}.list`, 0),
              MutateInSpec.remove(`${k}.list[2]`),
            ],
            { tr },
          );
          await allRead();
        }),
      ),
    );
    expect(tx.attempts()).toBe(N);
    expect(counter.take().retries).toBe(0);
    expect((await c.get('d')).content).toEqual(Object.fromEntries(names.map((k, i) => [k, { value: i, list: [0, 1, 3, 4] }])));
  });

  it('field writes do not conflict with concurrent reads of other fields', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    await c.upsert('d', { a: 1, b: 2 });
    const bothRead = firstAttemptsBarrier(2);
    const tx = counted(docs);
    await Promise.all([
      tx.run(async (tr) => {
        await c.mutateIn('d', [MutateInSpec.upsert('a', 10)], { tr });
        await bothRead();
      }),
      tx.run(async (tr) => {
        expect((await c.get('d', 'b', { tr })).content).toBe(2);
        await c.mutateIn('d', [MutateInSpec.upsert('c', 3)], { tr });
        await bothRead();
      }),
    ]);
    expect(tx.attempts()).toBe(2);
    expect((await c.get('d')).content).toEqual({ a: 10, b: 2, c: 3 });
  });

  it('a whole-document replace and a concurrent field write serialize: the result is one of the two orders', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    await c.upsert('d', { a: 1 });
    const bothRead = firstAttemptsBarrier(2);
    await Promise.all([
      docs.transact(async (tr) => {
        await c.replace('d', { whole: true }, { tr });
        await bothRead();
      }),
      docs.transact(async (tr) => {
        await c.mutateIn('d', [MutateInSpec.upsert('field', true)], { tr });
        await bothRead();
      }),
    ]);
    expect([{ whole: true }, { whole: true, field: true }]).toContainEqual((await c.get('d')).content);
  });

  it('a field write and a concurrent remove of the document serialize: the document is gone either way', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    await c.upsert('d', { a: 1 });
    const [removed, written] = await Promise.allSettled([c.remove('d'), c.mutateIn('d', [MutateInSpec.upsert('b', 2)])]);
    expect(removed.status).toBe('fulfilled');
    if (written.status === 'rejected') expect((written.reason as DocumentError).code).toBe('DOCUMENT_NOT_FOUND');
    expect(await c.exists('d')).toBe(false);
  });

  it('a stale cas loses to a concurrent writer: exactly one of two CAS updates succeeds', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    const { cas } = await c.upsert('d', { v: 0 });
    const results = await Promise.allSettled([c.replace('d', { v: 1 }, { cas }), c.replace('d', { v: 2 }, { cas })]);
    const ok = results.filter((r) => r.status === 'fulfilled');
    expect(ok).toHaveLength(1);
    const failed = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect((failed.reason as DocumentError).code).toBe('CAS_MISMATCH');
  });

  ctx.describeWithFaults('under injected faults (seeded)', () => {
    describe('not_committed on 30% of commits', () => {
      concurrencyTests(() => ctx.openWithFaults({ seed: testSeed(3001), notCommitted: 0.3 }), 'notCommitted 0.3');
    });
    describe('transaction_too_old on 20% of commits', () => {
      concurrencyTests(() => ctx.openWithFaults({ seed: testSeed(3002), tooOld: 0.2 }), 'tooOld 0.2');
    });

    it('under commit_unknown_result, increments are repeated once per 1021: the counter ends at N + 1021s', async () => {
      const { docs, counter } = await ctx.openWithFaults({ seed: testSeed(3003), unknownResult: 0.3 });
      const c = docs.collection();
      await c.upsert('d', { n: 0 });
      counter.take();
      const N = 30;
      await increments(c, N);
      const unknown = counter.take().commitErrors.get(UNKNOWN_RESULT) ?? 0;
      expect(unknown).toBeGreaterThan(0);
      expect((await c.get('d', 'n')).content).toBe(N + unknown);
    });

    it('under commit_unknown_result, idempotent writes (field and document upserts) end exactly right', async () => {
      const { docs, counter } = await ctx.openWithFaults({ seed: testSeed(3004), unknownResult: 0.4 });
      const c = docs.collection();
      await c.upsert('d', { fields: {}, gone: { a: 1, b: 2 } });
      counter.take();
      const N = 20;
      await Promise.all([
        ...Array.from({ length: N }, (_, i) => c.mutateIn('d', [MutateInSpec.upsert(`fields.f${i}`, i)])),
        c.mutateIn('d', [MutateInSpec.upsert('gone', 'replaced')]),
        ...Array.from({ length: 5 }, (_, i) => c.upsert(`doc${i}`, { i })),
      ]);
      expect(counter.take().commitErrors.get(UNKNOWN_RESULT) ?? 0).toBeGreaterThan(0);
      expect((await c.get('d')).content).toEqual({
        fields: Object.fromEntries(Array.from({ length: N }, (_, i) => [`f${i}`, i])),
        gone: 'replaced',
      });
      for (let i = 0; i < 5; i++) expect((await c.get(`doc${i}`)).content).toEqual({ i });
    });

    it('under commit_unknown_result, a field remove ends right but may report PATH_NOT_FOUND for the field it removed', async () => {
      const { docs } = await ctx.openWithFaults({ seed: testSeed(3006), unknownResult: 0.5 });
      const c = docs.collection();
      const N = 20;
      await c.upsert('d', { ...Object.fromEntries(Array.from({ length: N }, (_, i) => [`f${i}`, i])), kept: true });
      const outcomes = await Promise.allSettled(Array.from({ length: N }, (_, i) => c.mutateIn('d', [MutateInSpec.remove(`f${i}`)])));
      const reported = outcomes.filter((o) => o.status === 'rejected').map((o) => (o.reason as DocumentError).code);
      expect(reported.every((code) => code === 'PATH_NOT_FOUND')).toBe(true);
      expect(reported.length).toBeGreaterThan(0);
      expect((await c.get('d')).content).toEqual({ kept: true });
    });

    it('under commit_unknown_result, insert either succeeds or reports DOCUMENT_EXISTS for its own document', async () => {
      const { docs } = await ctx.openWithFaults({ seed: testSeed(3005), unknownResult: 0.5 });
      const c = docs.collection();
      const outcomes = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => c.insert({ i }, { id: `doc${i}` })));
      let existed = 0;
      for (const [i, outcome] of outcomes.entries()) {
        if (outcome.status === 'rejected') {
          expect((outcome.reason as DocumentError).code).toBe('DOCUMENT_EXISTS');
          existed++;
        }
        expect((await c.get(`doc${i}`)).content).toEqual({ i });
      }
      expect(existed).toBeGreaterThan(0);
    });
  });
});
