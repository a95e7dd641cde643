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
