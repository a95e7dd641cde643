/**
 * Stored bytes no doclayer write produces (damage, or another program writing into the subspace) are
 * reported as DocumentError CORRUPT_DATA when read, never as a plain Error or a wrong value.
 */
import { DocumentKeys, Layout, META_EXPIRY } from '../../src/document/keys/layout';
import { pack } from '../../src/tuple';
import { expectDocumentError } from '../support/document-assertions';
import { documentSuite } from './document-suite';

const layout = new Layout(['doclayer']);
const DEFAULT_COLLECTION = 0;
const keysOf = (id: string) => new DocumentKeys(layout.collectionPrefix(DEFAULT_COLLECTION), id);

documentSuite('reading damaged stored bytes', (ctx) => {
  it('is CORRUPT_DATA for an entry whose parent container has no entry', async () => {
    const { docs, kv } = await ctx.open();
    const c = docs.collection();
    await c.upsert('d', { a: { b: 1 } });
    await kv.clear(keysOf('d').dataKey(['a']));
    await expectDocumentError(c.get('d'), 'CORRUPT_DATA');
  });

  it('is CORRUPT_DATA for a long string with a chunk missing', async () => {
    const { docs, kv } = await ctx.open();
    const c = docs.collection();
    await c.upsert('d', { s: 'x'.repeat(250_000) });
    await kv.clear(Buffer.concat([keysOf('d').dataKey(['s']), pack([null, 1])]));
    await expectDocumentError(c.get('d'), 'CORRUPT_DATA');
  });

  it('is CORRUPT_DATA for a long string header that is not one', async () => {
    const { docs, kv } = await ctx.open();
    const c = docs.collection();
    await c.upsert('d', { s: 'x'.repeat(250_000) });
    await kv.set(keysOf('d').dataKey(['s']), Buffer.of(0x7e, 0x03));
    await expectDocumentError(c.get('d'), 'CORRUPT_DATA');
  });

  it('is CORRUPT_DATA for an expiry that is not an integer', async () => {
    const { docs, kv } = await ctx.open();
    const c = docs.collection();
    await c.upsert('d', { a: 1 });
    await kv.set(keysOf('d').meta(META_EXPIRY), pack(['soon']));
    await expectDocumentError(c.get('d'), 'CORRUPT_DATA');
  });

  it('is CORRUPT_DATA for a collections manifest that is not valid JSON', async () => {
    const { docs, kv } = await ctx.open();
    await kv.set(layout.system.pack(['manifest', 0]), '{"uid":');
    const err = await expectDocumentError(docs.getManifest(), 'CORRUPT_DATA');
    expect(err.cause).toBeInstanceOf(Error);
  });

  it('is CORRUPT_DATA for a list body with children that are not elements', async () => {
    const { docs, kv } = await ctx.open();
    const list = docs.collection().list<number>('l');
    await list.push(1);
    await kv.set(Buffer.concat([keysOf('l').root, pack([null, 'stray'])]), pack([2]));
    await expectDocumentError(list.size(), 'CORRUPT_DATA');
  });
});
