import { RememberedReads } from '../../src/kv/client/remembered-reads';
import { stage } from '../../src/kv/client/staged-transaction';
import { CountingEngine } from '../../src/kv/counting-engine';
import { Database } from '../../src/kv/contract/database';
import { firstGreaterOrEqual } from '../../src/kv/contract/key-selector';
import { MemoryEngine } from '../../src/kv/memory/memory-engine';
import { printablePairs } from '../support/printable';

/** A counted database holding `pairs`, committed, and a fresh transaction on it. */
async function transactionOver(pairs: Record<string, string>) {
  const counter = new CountingEngine(new MemoryEngine());
  const db = new Database(counter);
  await db.transact((tr) => {
    for (const [key, value] of Object.entries(pairs)) tr.set(key, value);
  });
  counter.take();
  return { tr: db.createTransaction(), counter };
}

describe('RememberedReads', () => {
  it('answers a point read or a range read asked for before without asking the transaction again', async () => {
    const { tr, counter } = await transactionOver({ a: '1', b: '2', c: '3' });
    const reads = new RememberedReads(tr);
    const [first, range] = await Promise.all([reads.get('a'), reads.getRangeAll('a', 'c', { limit: 1, reverse: true })]);
    expect(await reads.get(Buffer.from('a'))).toBe(first);
    expect(await reads.getRangeAll('a', 'c', { limit: 1, reverse: true })).toBe(range);
    expect(printablePairs(range)).toEqual(["'b'='2'"]);
    expect(counter.counts()).toMatchObject({ gets: 1, rangeReads: 1 });
  });

  it('asks the transaction for a read that differs in its bounds, limit or direction, and not for no limit against limit 0', async () => {
    const { tr, counter } = await transactionOver({ a: '1', b: '2', c: '3' });
    const reads = new RememberedReads(tr);
    await reads.getRangeAll('a', 'c');
    await reads.getRangeAll('a', 'c', { limit: 0, reverse: false });
    await reads.getRangeAll('a', 'c', { limit: 1 });
    await reads.getRangeAll('a', 'c', { reverse: true });
    await reads.getRangeAll('b', 'c');
    expect(counter.counts().rangeReads).toBe(4);
  });

  it('passes key selectors to the transaction', async () => {
    const { tr, counter } = await transactionOver({ a: '1', b: '2' });
    const reads = new RememberedReads(tr);
    for (let i = 0; i < 2; i++) expect(printablePairs(await reads.getRangeAll(firstGreaterOrEqual('a'), 'c'))).toEqual(["'a'='1'", "'b'='2'"]);
    expect(counter.counts().rangeReads).toBe(2);
  });

  it('under a stage, still shows the stage its own writes over the remembered answers', async () => {
    const { tr } = await transactionOver({ a: '1', b: '2' });
    const reads = new RememberedReads(tr);
    await Promise.all([reads.get('a'), reads.getRangeAll('a', 'z')]);
    const st = stage(tr, reads);
    st.set('a', 'staged');
    st.clear('b');
    st.set('c', '3');
    expect((await st.get('a'))?.toString()).toBe('staged');
    expect(printablePairs(await st.getRangeAll('a', 'z'))).toEqual(["'a'='staged'", "'c'='3'"]);
    st.apply();
    expect(printablePairs(await tr.getRangeAll('a', 'z'))).toEqual(["'a'='staged'", "'c'='3'"]);
  });
});
