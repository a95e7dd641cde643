/**
 * On the memory and LMDB engines a transaction knows its size at once (`approximateSizeNow`,
 * src/kv/client/hand-over.ts): a write batch checks its size before every call and `mutateIn` checks
 * the document's growth without waiting a turn of the event loop for `getApproximateSize`. Through
 * any other transaction (a wrapper, FoundationDB's), they ask `getApproximateSize`
 * (test/document/combining.test.ts runs the batch budget through a counting wrapper).
 */
import { MutateInSpec, open, type DocLayer } from '../../src';
import { approximateSizeNow } from '../../src/kv/client/hand-over';
import { ClientTransaction } from '../../src/kv/client/client-transaction';
import { StagedTransaction } from '../../src/kv/client/staged-transaction';
import { MemoryTransaction } from '../../src/kv/memory/memory-transaction';
import { openMemoryDatabase } from '../../src/kv';

const ids = (n: number) => Array.from({ length: n }, (_, i) => `d${i}`);

describe('size checks without a turn of the event loop', () => {
  let docs: DocLayer;
  beforeEach(async () => {
    docs = await open();
  });
  afterEach(async () => {
    await docs.close();
    jest.restoreAllMocks();
  });

  it('a transaction and a stage of it answer what getApproximateSize resolves to; a wrapper gets undefined', async () => {
    const kv = openMemoryDatabase();
    await kv.transact(async (tr) => {
      tr.set('key', 'value');
      expect(approximateSizeNow(tr)).toBe(await tr.getApproximateSize());
      const stage = new StagedTransaction(tr);
      stage.set('other', 'a longer value');
      expect(approximateSizeNow(stage)).toBe(await stage.getApproximateSize());
      expect(approximateSizeNow(stage)).toBeGreaterThan(approximateSizeNow(tr)!);
      const wrapper = { getApproximateSize: () => tr.getApproximateSize() } as unknown as typeof tr;
      expect(approximateSizeNow(wrapper)).toBeUndefined();
    });
  });

  it('a write batch ends once its transaction is large, asking no getApproximateSize', async () => {
    const c = docs.collection();
    await c.upsert('first', {});
    const asked = jest.spyOn(ClientTransaction.prototype, 'getApproximateSize');
    const commits = jest.spyOn(MemoryTransaction.prototype, 'commit');
    const big = (i: number) => ({ i, text: Array.from({ length: 30 }, (_, j) => `${i}-${j}-`.padEnd(9_000, 'x')) });
    await Promise.all(ids(9).map((id, i) => c.upsert(id, big(i))));
    // 270 kB each: the first alone, then batches of 2 (a third would pass the 500 kB budget).
    expect(commits).toHaveBeenCalledTimes(5);
    expect(asked).not.toHaveBeenCalled();
    expect((await c.getMany(ids(9))).map((r) => (r?.content as { i: number }).i)).toEqual(ids(9).map((_, i) => i));
  });

  it('mutateIn checks a document that grew by a megabyte or more, asking no getApproximateSize', async () => {
    const c = docs.collection();
    const part = (n: number, fill: string) => Array.from({ length: n }, (_, i) => `${i}`.padEnd(99_000, fill));
    await c.insert({ a: part(50, 'y') }, { id: 'd' });
    const asked = jest.spyOn(ClientTransaction.prototype, 'getApproximateSize');
    // About 5 MB more: past the 9 MB limit, so nothing is written.
    await expect(c.mutateIn('d', [MutateInSpec.upsert('b', part(50, 'z'))])).rejects.toMatchObject({ code: 'DOCUMENT_TOO_LARGE' });
    // About 2 MB more: checked, and within it.
    await c.mutateIn('d', [MutateInSpec.upsert('c', part(20, 'z'))]);
    await c.mutateIn('d', [MutateInSpec.upsert('e', 1)]);
    expect(asked).not.toHaveBeenCalled();
    const content = (await c.get('d'))?.content as Record<string, unknown>;
    expect(Object.keys(content)).toEqual(['a', 'c', 'e']);
  });
});
