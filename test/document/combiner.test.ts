/**
 * The combiner on its own (src/document/combiner.ts), with a stand-in transaction runner: which
 * body a call of a merged operation runs, and when that body is made.
 */
import { Combiner, combinerFor, IDLE_COMBINERS_KEPT, type MergedOperation, type Settled } from '../../src/document/combiner';
import type { Transaction } from '../../src/kv/contract/types';

/** A runner that runs each body once, a turn later, in a fake transaction; counts the transactions. */
function runner(): { run: <T>(fn: (tr: Transaction) => Promise<T>) => Promise<T>; transactions: () => number } {
  let transactions = 0;
  return {
    run: async (fn) => {
      transactions++;
      await new Promise<void>((resolve) => setImmediate(resolve));
      return fn({} as Transaction);
    },
    transactions: () => transactions,
  };
}

/** Doubling numbers: merged, or one alone; records which bodies were made and which steps ran. */
function doubling(failMerged = false): MergedOperation<number, number> & { made: number[]; merged: number[][] } {
  const made: number[] = [];
  const merged: number[][] = [];
  return {
    operation: {},
    made,
    merged,
    runMany: async (_tr, args): Promise<Settled<number>[]> => {
      merged.push([...args]);
      if (failMerged) throw new Error('the merged step fails');
      return args.map((n) => ({ ok: true, value: 2 * n }));
    },
    alone: (arg) => {
      made.push(arg);
      return async () => 2 * arg;
    },
  };
}

describe('Combiner.submitMerged', () => {
  it('makes the body of a call that finds nothing running, and none for the calls merged behind it', async () => {
    const { run, transactions } = runner();
    const combiner = new Combiner(run, () => undefined);
    const double = doubling();
    const results = await Promise.all([1, 2, 3, 4, 5].map((n) => combiner.submitMerged(double, n)));
    expect(results).toEqual([2, 4, 6, 8, 10]);
    expect(double.made).toEqual([1]);
    expect(double.merged).toEqual([[2, 3, 4, 5]]);
    expect(transactions()).toBe(2);
  });

  it('makes the body of a queued call that runs alone: a batch of one, or a call with no neighbour of its operation', async () => {
    const { run } = runner();
    const combiner = new Combiner(run, () => undefined);
    const double = doubling();
    const other = doubling();
    const results = await Promise.all([
      combiner.submitMerged(double, 1),
      combiner.submitMerged(double, 2),
      combiner.submitMerged(other, 3),
      combiner.submitMerged(double, 4),
    ]);
    expect(results).toEqual([2, 4, 6, 8]);
    expect({ double: double.made, other: other.made }).toEqual({ double: [1, 2, 4], other: [3] });
    expect(double.merged).toEqual([]);
  });

  it('makes the bodies of a failed merged batch, whose calls then run alone', async () => {
    const { run } = runner();
    const combiner = new Combiner(run, () => undefined);
    const double = doubling(true);
    const results = await Promise.all([1, 2, 3].map((n) => combiner.submitMerged(double, n)));
    expect(results).toEqual([2, 4, 6]);
    expect(double.merged).toEqual([[2, 3]]);
    expect(double.made).toEqual([1, 2, 3]);
  });
});

describe('combinerFor', () => {
  it('keeps an idle combiner for the next call on the same thing, and forgets the idle ones past its bound', async () => {
    const { run } = runner();
    const owner = {};
    const first = combinerFor(owner, 'a', run);
    await first.submit(async () => 1, undefined);
    expect(first.idle).toBe(true);
    // A lone caller's next call finds the same combiner: none is made per call.
    expect(combinerFor(owner, 'a', run)).toBe(first);
    // Many other things, each used once: once more than the bound are registered, the idle ones go.
    for (let i = 0; i < IDLE_COMBINERS_KEPT; i++) await combinerFor(owner, `other ${i}`, run).submit(async () => i, undefined);
    expect(combinerFor(owner, 'a', run)).not.toBe(first);
  });

  it('keeps a busy combiner through a sweep: calls queued on it still share its batch', async () => {
    const { run, transactions } = runner();
    const owner = {};
    const busy = combinerFor(owner, 'busy', run);
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const calls = [1, 2, 3].map((n) =>
      busy.submit(async () => {
        await held;
        return n;
      }, undefined),
    );
    for (let i = 0; i < IDLE_COMBINERS_KEPT + 1; i++) await combinerFor(owner, `other ${i}`, run).submit(async () => i, undefined);
    expect(busy.idle).toBe(false);
    expect(combinerFor(owner, 'busy', run)).toBe(busy);
    // A call made now queues behind the held ones, on the same combiner.
    calls.push(combinerFor(owner, 'busy', run).submit(async () => 4, undefined));
    release();
    expect(await Promise.all(calls)).toEqual([1, 2, 3, 4]);
    // The first call ran alone, the three queued behind it in one batch; and one transaction per other call.
    expect(transactions()).toBe(2 + IDLE_COMBINERS_KEPT + 1);
  });
});
