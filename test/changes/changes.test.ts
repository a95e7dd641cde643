/**
 * The change feed (docs/changes.md): what `collection.changes()` delivers for every write path, in
 * which order, how readers resume, follow and stop, what compaction keeps, and the typed errors of
 * bad input. Every test runs on every engine (memory, lmdb, fdb over the shim).
 */
import { isChangeFeedError, MutateInSpec, open, type ChangeEvent, type ChangeFeedErrorCode, type DocLayer } from '../../src';
import type { Database } from '../../src/kv/contract/database';
import { Layout } from '../../src/document/keys/layout';
import { documentSuite } from '../document/document-suite';

const T0 = Date.UTC(2030, 0, 1);
const layout = new Layout(['doclayer']);

export async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/** `kind id` of each change: what most tests compare. */
function summary(changes: readonly ChangeEvent[]): string[] {
  return changes.map((change) => (change.kind === 'drop' ? `drop ${change.collection}` : `${change.kind} ${String(change.id)}`));
}

async function expectFeedError(promise: Promise<unknown>, code: ChangeFeedErrorCode): Promise<void> {
  const err: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isChangeFeedError(err, code)) throw new Error(`expected ChangeFeedError ${code}, got ${String(err)}`);
}

/** Keys of the change feed of collection `id` (entries and records). */
async function feedKeys(kv: Database, collectionId: number, part: 'e' | 'd' | 't'): Promise<number> {
  const { begin, end } = layout.system.range(['changes', collectionId, part]);
  return (await kv.getRangeAll(begin, end)).length;
}

documentSuite('Collection.changes', (ctx) => {
  const clocked: DocLayer[] = [];
  afterEach(async () => {
    for (const layer of clocked.splice(0)) await layer.close();
  });

  /** A layer on a clock the test moves, with collection `app.items` keeping a feed. */
  async function withFeed() {
    const { kv, counter } = await ctx.open();
    const clock = { now: T0 };
    const docs = await open({ database: kv, now: () => clock.now, changeRetentionMs: 60_000 });
    clocked.push(docs);
    const { collectionId } = await docs.createCollection('app.items', { history: true });
    return { docs, kv, counter, clock, collectionId, c: docs.collection('app.items') };
  }

  it('delivers the latest change of each document written by every write path, in commit order', async () => {
    const { docs, c, clock } = await withFeed();
    await c.insert({ v: 1 }, { id: 'a' });
    await c.upsert('b', { v: 1 });
    await c.replace('a', { v: 2 });
    await c.mutateIn('b', [MutateInSpec.upsert('w', 2)]);
    await c.set('s').add(1);
    await c.remove('a');
    await c.upsert('e', { v: 1 }, { expiry: 1 });
    await c.list('l').push('x');
    await c.list('l').clear();
    clock.now += 2000;
    expect(await docs.purgeExpired()).toBe(1);

    const changes = await collect(c.changes({ includeDocs: true }));
    expect(summary(changes)).toEqual(['upsert b', 'upsert s', 'remove a', 'remove l', 'expire e']);
    expect(changes[0]).toMatchObject({ doc: { v: 1, w: 2 } });
    expect(changes[1]).toMatchObject({ doc: [1] });
    expect((await c.get('b')).cas).toBe(changes[0].cas);
    // Tokens and CASes follow commit order.
    const tokens = changes.map((change) => change.token);
    expect([...tokens].sort()).toEqual(tokens);
  });

  it('gives each document of one transaction its own token, and resumes exactly after a token', async () => {
    const { docs, c } = await withFeed();
    await docs.transact(async (tr) => {
      for (const id of ['x', 'y', 'z']) await c.upsert(id, { id }, { tr });
    });
    await c.upsert('after', {});
    const first = await collect(c.changes({ limit: 2 }));
    expect(summary(first)).toEqual(['upsert x', 'upsert y']);
    expect(new Set(first.map((change) => change.cas)).size).toBe(1);
    const rest = await collect(c.changes({ since: first[1].token }));
    expect(summary(rest)).toEqual(['upsert z', 'upsert after']);
    // At least once: a reader resuming from an older token gets what followed it again.
    expect(summary(await collect(c.changes({ since: first[0].token, pageSize: 1 })))).toEqual(['upsert y', 'upsert z', 'upsert after']);
  });

  it('delivers a document changed again after a reader passed it again, with its new CAS', async () => {
    const { c } = await withFeed();
    await c.upsert('a', { v: 1 });
    const [seen] = await collect(c.changes());
    await c.upsert('a', { v: 2 });
    const next = await collect(c.changes({ since: seen.token, includeDocs: true }));
    expect(next).toEqual([expect.objectContaining({ kind: 'upsert', id: 'a', doc: { v: 2 }, cas: (await c.get('a')).cas })]);
  });

  it('writes nothing for a collection without history, whose feed cannot be read', async () => {
    const { docs, kv } = await withFeed();
    const plain = docs.collection('app.plain');
    await plain.upsert('a', { v: 1 });
    const { collectionId } = await docs.getCollectionId('app.plain');
    expect(await feedKeys(kv, collectionId, 'e')).toBe(0);
    await expectFeedError(collect(plain.changes()), 'CHANGES_DISABLED');
  });

  it('adds one entry per document and one signal per transaction to a write, and no read', async () => {
    const { docs, c, counter } = await withFeed();
    const plain = docs.collection('app.plain');
    // Warm up: the first writes create app.plain and reload the cached manifest.
    for (const each of [c, plain, c, plain]) await each.upsert('warm', {});
    const cost = async (each: typeof c, id: string) => {
      const { counts } = await counter.measure(() => each.upsert(id, { v: 1 }));
      return counts;
    };
    const [fed, without] = [await cost(c, 'a'), await cost(plain, 'a')];
    expect(fed).toEqual({ ...without, versionstamped: without.versionstamped + 2, keysWritten: without.keysWritten + 2 });
  });

  it('keeps writers of different fields of one document free of conflicts', async () => {
    const { docs, c } = await withFeed();
    await c.upsert('doc', { a: 0, b: 0 });
    const one = docs.kv.createTransaction();
    const two = docs.kv.createTransaction();
    await c.mutateIn('doc', [MutateInSpec.upsert('a', 1)], { tr: one });
    await c.mutateIn('doc', [MutateInSpec.upsert('b', 1)], { tr: two });
    await one.commit();
    await expect(two.commit()).resolves.toBeUndefined();
    const changes = await collect(c.changes({ includeDocs: true }));
    expect(changes).toEqual([expect.objectContaining({ id: 'doc', doc: { a: 1, b: 1 } })]);
  });

  it('follows: wakes when a change commits, and returns when the signal aborts', async () => {
    const { c } = await withFeed();
    await c.upsert('a', {});
    const abort = new AbortController();
    const seen: string[] = [];
    const following = (async () => {
      for await (const change of c.changes({ follow: true, signal: abort.signal })) {
        seen.push(summary([change])[0]);
        if (seen.length === 2) abort.abort();
      }
    })();
    await c.upsert('b', {});
    await following;
    expect(seen).toEqual(['upsert a', 'upsert b']);
  });

  it('follows a collection that does not exist yet, woken by the manifest update that creates it', async () => {
    const { docs } = await withFeed();
    const later = docs.collection('app.later');
    const abort = new AbortController();
    const following = (async () => {
      for await (const change of later.changes({ follow: true, signal: abort.signal })) {
        abort.abort();
        return summary([change]);
      }
      return [];
    })();
    await docs.createCollection('app.later', { history: true });
    await later.upsert('first', {});
    expect(await following).toEqual(['upsert first']);
  });

  it('ends with one drop event when the collection is dropped, for readers holding an earlier token', async () => {
    const { docs, c, kv, collectionId } = await withFeed();
    await c.upsert('a', {});
    await c.upsert('b', {});
    const [first] = await collect(c.changes());
    await docs.dropCollection('app.items');
    expect(await feedKeys(kv, collectionId, 'e')).toBe(1);
    const rest = await collect(c.changes({ since: first.token }));
    expect(summary(rest)).toEqual(['drop app.items']);
    // A collection created again under the name is another one: its feed starts afresh.
    await docs.createCollection('app.items', { history: true });
    await c.upsert('new', {});
    expect(summary(await collect(c.changes()))).toEqual(['upsert new']);
    // The drop's own token was the end of the old feed: nothing follows it.
    expect(await collect(c.changes({ since: rest[0].token }))).toEqual([]);
  });

  it('compacts to one entry per document, and tombstones older than the retention go with a horizon', async () => {
    const { docs, c, kv, clock, collectionId } = await withFeed();
    for (let round = 0; round < 3; round++) for (const id of ['a', 'b', 'c']) await c.upsert(id, { round });
    await c.remove('c');
    const [early] = await collect(c.changes({ limit: 1 }));
    expect(await feedKeys(kv, collectionId, 'e')).toBe(10);
    expect(await c.compactChanges()).toEqual({ superseded: 7, tombstonesDiscarded: 0 });
    expect(await feedKeys(kv, collectionId, 'e')).toBe(3);
    expect(summary(await collect(c.changes({ since: early.token })))).toEqual(['upsert b', 'remove c']);

    clock.now += 120_000;
    expect(await docs.compactChanges()).toEqual({ superseded: 0, tombstonesDiscarded: 1 });
    expect([await feedKeys(kv, collectionId, 'e'), await feedKeys(kv, collectionId, 'd'), await feedKeys(kv, collectionId, 't')]).toEqual([2, 2, 0]);
    // A reader that might not have seen the removal must resync; a fresh reader starts clean.
    await expectFeedError(collect(c.changes({ since: early.token })), 'HISTORY_EXPIRED');
    expect(summary(await collect(c.changes()))).toEqual(['upsert a', 'upsert b']);
  });

  it("is compacted by the layer's sweeper", async () => {
    const { docs, c, kv, collectionId } = await withFeed();
    for (let round = 0; round < 3; round++) await c.upsert('a', { round });
    docs.startExpirySweeper(5);
    const deadline = Date.now() + 10_000;
    while ((await feedKeys(kv, collectionId, 'e')) > 1 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    await docs.stopExpirySweeper();
    expect(await feedKeys(kv, collectionId, 'e')).toBe(1);
  });

  it('switching history off discards the feed; switching it on again expires earlier tokens', async () => {
    const { docs, c } = await withFeed();
    await c.upsert('a', {});
    const [old] = await collect(c.changes());
    await docs.setCollectionHistory('app.items', false);
    await c.upsert('b', {});
    await expectFeedError(collect(c.changes()), 'CHANGES_DISABLED');
    await docs.setCollectionHistory('app.items', true);
    await c.upsert('c', {});
    await expectFeedError(collect(c.changes({ since: old.token })), 'HISTORY_EXPIRED');
    expect(summary(await collect(c.changes()))).toEqual(['upsert c']);
  });

  it('rejects a malformed token, a token of another collection and bad options, before reading', async () => {
    const { docs, c } = await withFeed();
    await docs.createCollection('app.other', { history: true });
    const other = docs.collection('app.other');
    await other.upsert('o', {});
    const [foreign] = await collect(other.changes());
    await expectFeedError(collect(c.changes({ since: 'not a token' })), 'INVALID_TOKEN');
    await expectFeedError(collect(c.changes({ since: 42 as unknown as string })), 'INVALID_TOKEN');
    await expectFeedError(collect(c.changes({ since: foreign.token })), 'WRONG_COLLECTION');
    await expectFeedError(collect(c.changes({ limit: 0 })), 'INVALID_ARGUMENT');
    await expectFeedError(collect(c.changes({ follow: 'yes' as unknown as boolean })), 'INVALID_ARGUMENT');
    await expectFeedError(
      Promise.resolve().then(() => c.consumer(7 as unknown as string)),
      'INVALID_ARGUMENT',
    );
    await expect(docs.createCollection('app.bad', { history: 'on' as unknown as boolean })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });
});

documentSuite('ChangeConsumer.process', (ctx) => {
  async function withFeed() {
    const { docs, kv } = await ctx.open();
    await docs.createCollection('app.items', { history: true });
    return { docs, kv, c: docs.collection('app.items'), out: docs.collection('app.out') };
  }

  it("hands each change over once, in batches, in the transaction that stores the consumer's position", async () => {
    const { c, out } = await withFeed();
    for (let i = 0; i < 7; i++) await c.upsert(`d${i}`, { i });
    const batches: number[] = [];
    const consumer = c.consumer('copier');
    const handled = await consumer.process(
      async (changes, { tr }) => {
        batches.push(changes.length);
        for (const change of changes) if (change.kind === 'upsert') await out.upsert(change.id, change.doc ?? null, { tr });
      },
      { batchSize: 3, includeDocs: true },
    );
    expect(handled).toBe(7);
    expect(batches).toEqual([3, 3, 1]);
    expect((await out.get('d6')).content).toEqual({ i: 6 });
    expect(await consumer.process(() => undefined)).toBe(0);
    await c.upsert('d0', { i: 100 });
    expect(await consumer.process(async (changes, { tr }) => out.upsert('last', summary(changes), { tr }))).toBe(1);
    expect((await out.get('last')).content).toEqual(['upsert d0']);
    expect(await consumer.position()).toBe((await collect(c.changes())).at(-1)?.token);
  });

  it('commits nothing of a batch whose handler throws: the batch comes again', async () => {
    const { c, out } = await withFeed();
    await c.upsert('a', {});
    const consumer = c.consumer('failing');
    await expect(
      consumer.process(async (_changes, { tr }) => {
        await out.upsert('partial', {}, { tr });
        throw new Error('handler failed');
      }),
    ).rejects.toThrow('handler failed');
    expect(await out.exists('partial')).toBe(false);
    expect(await consumer.process(() => undefined)).toBe(1);
  });

  it('never hands one change to two runners of the same consumer', async () => {
    const { c, out } = await withFeed();
    for (let i = 0; i < 30; i++) await c.upsert(`d${i}`, { i });
    // An insert per change: a change handled twice would fail with DOCUMENT_EXISTS.
    const run = () =>
      c.consumer('shared').process(
        async (changes, { tr }) => {
          for (const change of changes) await out.insert({ id: change.kind === 'drop' ? null : String(change.id) }, { id: change.token, tr });
        },
        { batchSize: 4 },
      );
    const counts = await Promise.all([run(), run(), run()]);
    expect(counts.reduce((a, b) => a + b, 0)).toBe(30);
    expect((await collect(out.scan())).length).toBe(30);
  });

  ctx.describeWithFaults('under injected faults', () => {
    it('processes each change exactly once across not_committed and commit_unknown_result', async () => {
      const { docs } = await ctx.openWithFaults({ seed: 15, notCommitted: 0.2, unknownResult: 0.3 });
      // A commit_unknown_result that was applied makes the retry find the collection.
      await docs.createCollection('app.items', { history: true }).catch((err: unknown) => {
        if (!/already exists/.test(String(err))) throw err;
      });
      const c = docs.collection('app.items');
      const out = docs.collection('app.out');
      for (let i = 0; i < 20; i++) await c.upsert(`d${i % 12}`, { i });
      for (let round = 0; round < 3; round++) {
        await c.consumer('exact').process(
          async (changes, { tr }) => {
            for (const change of changes) {
              await out.insert({ id: change.kind === 'drop' ? null : String(change.id) }, { id: change.token, tr });
              await out.counter('total').add(1, { tr });
            }
          },
          { batchSize: 5 },
        );
      }
      // One record per change handled, and the counter agrees: no batch was applied twice. (The count
      // process() returns leaves out batches whose commit reported commit_unknown_result.)
      const seen = (await collect(out.scan())).filter((item) => item.id !== 'total');
      expect(seen.length).toBe(12);
      expect((await out.get('total')).content).toBe(12);
      expect(new Set(seen.map((item) => (item.content as { id: string }).id))).toEqual(new Set(Array.from({ length: 12 }, (_, i) => `d${i}`)));
    });
  });
});
