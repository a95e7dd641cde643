/**
 * A key too long for the engine is `DocumentError KEY_TOO_LARGE` on every engine, checked against the
 * engine's own limit (`Database.maxKeyBytes`: LMDB stores keys of at most 4,025 bytes, FoundationDB
 * 10,000) before anything is written, so the store is unchanged after the failure.
 */
import { MutateInSpec } from '../../src';
import type { OpenedLayer } from './document-suite';
import { documentSuite } from './document-suite';
import { dumpKeyspace, expectDocumentError } from '../support/document-assertions';

/** The length of the data root key of a document whose id is one ASCII character, and of its field `a`. */
async function probeLengths({ docs, counter }: OpenedLayer): Promise<{ root: number; field: number }> {
  const { attempts } = await counter.measure(() => docs.collection().upsert('p', { a: 1 }));
  const lengths = attempts.flatMap((a) => a.sets.map((s) => s.key.length)).sort((x, y) => x - y);
  return { root: lengths[0], field: lengths[lengths.length - 1] };
}

documentSuite('Keys at the engine key limit', (ctx) => {
  it("exposes the engine's key limit on the database", async () => {
    const { kv } = await ctx.open();
    expect(kv.maxKeyBytes).toBe(ctx.engine.name === 'lmdb' ? 4025 : 10_000);
  });

  it('writes a field whose key is exactly at the limit and refuses one a byte over, changing nothing', async () => {
    const layer = await ctx.open();
    const { docs, kv } = layer;
    const c = docs.collection();
    const { root, field } = await probeLengths(layer);
    expect(field).toBe(root + 3);
    // A field's key is the root key, the tuple string's code, the name's bytes and a terminator.
    const longest = 'k'.repeat(kv.maxKeyBytes - root - 2);
    await c.upsert('d', { [longest]: 1 });
    expect((await c.get('d', [longest])).content).toBe(1);
    const before = await dumpKeyspace(kv);
    const over = longest + 'k';
    await expectDocumentError(c.upsert('e', { [over]: 1 }), 'KEY_TOO_LARGE');
    await expectDocumentError(c.insert({ nested: { [over.slice(8)]: 1 } }, { id: 'f' }), 'KEY_TOO_LARGE');
    await expectDocumentError(c.mutateIn('d', [MutateInSpec.upsert([over], 1)]), 'KEY_TOO_LARGE', { specIndex: 0 });
    await expectDocumentError(c.mutateIn('d', [MutateInSpec.increment([over], 1)]), 'KEY_TOO_LARGE', { specIndex: 0 });
    await expectDocumentError(c.mutateIn('d', [MutateInSpec.upsert([over, 'x'], 1, { createPath: true })]), 'KEY_TOO_LARGE', {
      specIndex: 0,
    });
    expect(await dumpKeyspace(kv)).toEqual(before);
  });

  it('writes a document whose id is as long as its keys allow and refuses a longer one, changing nothing', async () => {
    const layer = await ctx.open();
    const { docs, kv } = layer;
    const c = docs.collection();
    const { root } = await probeLengths(layer);
    // Every write also writes the version key, one byte longer than the root key.
    const longest = 'i'.repeat(kv.maxKeyBytes - root);
    await c.upsert(longest, 'scalar');
    expect((await c.get(longest)).content).toBe('scalar');
    await expectDocumentError(c.upsert(longest, { a: 1 }), 'KEY_TOO_LARGE');
    const before = await dumpKeyspace(kv);
    const over = longest + 'i';
    await expectDocumentError(c.upsert(over, {}), 'KEY_TOO_LARGE');
    await expectDocumentError(c.insert(1, { id: over }), 'KEY_TOO_LARGE');
    await expectDocumentError(c.mutateIn(over, [MutateInSpec.upsert('a', 1)], { storeSemantics: 'upsert' }), 'KEY_TOO_LARGE');
    await expectDocumentError(c.list(over).push(1), 'KEY_TOO_LARGE');
    expect(await dumpKeyspace(kv)).toEqual(before);
  });

  it("refuses an expiry whose index entry would be over the limit, before writing anything, even with the caller's transaction", async () => {
    const layer = await ctx.open();
    const { docs, kv } = layer;
    const c = docs.collection();
    const { root } = await probeLengths(layer);
    const longest = 'i'.repeat(kv.maxKeyBytes - root);
    await c.upsert(longest, 'scalar');
    // The index entry holds the id after the expiry time and the collection: a shorter id fits.
    const shorter = longest.slice(40);
    await c.upsert(shorter, 'expiring', { expiry: 60 });
    expect((await c.get(shorter)).expiresAt).toBeDefined();
    const before = await dumpKeyspace(kv);
    await expectDocumentError(c.upsert(longest, 'scalar', { expiry: 60 }), 'KEY_TOO_LARGE');
    await expectDocumentError(c.insert('new', { id: longest.slice(1), expiry: 60 }), 'KEY_TOO_LARGE');
    await expectDocumentError(c.replace(longest, 'other', { expiry: new Date(Date.now() + 60_000) }), 'KEY_TOO_LARGE');
    await expectDocumentError(c.mutateIn(longest, [MutateInSpec.replace('', 'other')], { expiry: 60 }), 'KEY_TOO_LARGE');
    // Inside the caller's transaction the refusal comes before the document's first write.
    await expectDocumentError(
      kv.transact(async (tr) => {
        await c.upsert(longest, 'scalar', { expiry: 60, tr });
        tr.set('after', 'unreachable');
      }),
      'KEY_TOO_LARGE',
    );
    expect(await dumpKeyspace(kv)).toEqual(before);
  });

  it('refuses a queue whose item or token keys would be over the limit, and a dedupeId too long, changing nothing', async () => {
    const layer = await ctx.open();
    const { docs, kv } = layer;
    const c = docs.collection();
    const { root } = await probeLengths(layer);
    const longest = 'q'.repeat(kv.maxKeyBytes - root);
    // A queue's item keys hold a time and a 16-byte id after the body: a shorter id fits.
    const shorter = longest.slice(40);
    await c.queue(shorter).push(1, { delayMs: 60_000 });
    await c.queue('short').push(1, { dedupeId: 'd' });
    const before = await dumpKeyspace(kv);
    await expectDocumentError(c.queue(longest).push(1), 'KEY_TOO_LARGE');
    await expectDocumentError(c.queue(longest.slice(20)).pushMany([1, 2], { delayMs: 1000 }), 'KEY_TOO_LARGE');
    await expectDocumentError(c.queue('short').push(2, { dedupeId: 'd'.repeat(kv.maxKeyBytes) }), 'KEY_TOO_LARGE');
    expect(await dumpKeyspace(kv)).toEqual(before);
  });

  it('refuses an array insert or removal that would move an element to a longer key than the limit, changing nothing', async () => {
    const layer = await ctx.open();
    const { docs, kv, counter } = layer;
    const c = docs.collection();
    // The deepest key of element 0 of list 'l', { a: 1 }; position 0 takes a byte less than -1 or 1.
    const { attempts } = await counter.measure(() => c.list('p').push({ a: 1 }));
    const fieldKey = Math.max(...attempts.flatMap((a) => a.sets.map((s) => s.key.length)));
    const name = 'n'.repeat(kv.maxKeyBytes - fieldKey + 1);
    const list = c.list<unknown>('l');
    await list.push({ [name]: 1 });
    for (const small of ['a', 'b', 'c']) await list.push(small);
    const probe = await counter.measure(() => c.upsert('e', { arr: [{ a: 1 }] }));
    const docFieldKey = Math.max(...probe.attempts.flatMap((a) => a.sets.map((s) => s.key.length)));
    await c.upsert('d', { arr: [{ ['n'.repeat(kv.maxKeyBytes - docFieldKey + 1)]: 1 }, 'a', 'b', 'c'] });
    const before = await dumpKeyspace(kv);
    // Inserting at 1 moves the shorter side, element 0, to position -1: its key grows by a byte.
    await expectDocumentError(list.insert(1, 'x'), 'KEY_TOO_LARGE');
    await expectDocumentError(c.mutateIn('d', [MutateInSpec.arrayInsert(['arr', 1], 'x')]), 'KEY_TOO_LARGE', { specIndex: 0 });
    expect(await dumpKeyspace(kv)).toEqual(before);
    // Removing element 1 moves element 0 up to position 1: the same.
    await expectDocumentError(list.removeAt(1), 'KEY_TOO_LARGE');
    expect(await dumpKeyspace(kv)).toEqual(before);
    // Moves that keep the key's length work.
    await list.removeAt(2);
    expect(await list.toArray()).toEqual([{ [name]: 1 }, 'a', 'c']);
  });

  it('refuses map keys, set members and list elements over the limit, changing nothing', async () => {
    const { docs, kv } = await ctx.open();
    const c = docs.collection();
    await c.map('m').set('small', 1);
    await c.set('s').add('small');
    const before = await dumpKeyspace(kv);
    const huge = 'x'.repeat(kv.maxKeyBytes);
    await expectDocumentError(c.map('m').set(huge, 1), 'KEY_TOO_LARGE');
    await expectDocumentError(c.map('m').increment(huge), 'KEY_TOO_LARGE');
    await expectDocumentError(c.set('s').add(huge), 'KEY_TOO_LARGE');
    await expectDocumentError(c.list('l').push({ [huge]: 1 }), 'KEY_TOO_LARGE');
    expect(await dumpKeyspace(kv)).toEqual(before);
  });
});
