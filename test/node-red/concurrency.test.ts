/**
 * Several Node-RED processes on one store, as two store instances on one database: each instance
 * orders its own calls, so only transactions of different instances overlap, as across processes.
 * Where a test needs an overlap, the engine holds the first two commits until both transactions have
 * done their reads (so each read before the other wrote), instead of hoping the scheduler does it.
 */
import { Database } from '../../src/kv/contract/database';
import { MemoryEngine } from '../../src/kv/memory/memory-engine';
import type { Engine, Transaction } from '../../src/kv/contract/types';
import { Collection } from '../../src';
import type { DoclayerContextStore } from '../../src/node-red/context-store';
import { Barrier } from '../support/barrier';
import { CountingEngine } from '../../src/kv/counting-engine';
import { closeStores, get, keys, openStore, result, set } from './support/store-fixture';

/** An engine whose next `parties` commits wait for each other once armed. */
class CommitTogether implements Engine {
  readonly name = 'commit-together';
  private barrier: Barrier | undefined;
  private waiting = 0;

  constructor(private readonly inner: Engine) {}

  arm(parties: number): void {
    this.barrier = new Barrier(parties);
    this.waiting = parties;
  }

  createTransaction(): Transaction {
    const tr = this.inner.createTransaction();
    const commit = async () => {
      if (this.barrier !== undefined && this.waiting > 0) {
        this.waiting--;
        await this.barrier.arrive();
      }
      return tr.commit();
    };
    return new Proxy(tr, {
      get: (target, prop, receiver) => (prop === 'commit' ? commit : (Reflect.get(target, prop, receiver) as unknown)),
    });
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

let counting: CountingEngine;
let together: CommitTogether;
let first: DoclayerContextStore;
let second: DoclayerContextStore;

beforeEach(async () => {
  counting = new CountingEngine(new MemoryEngine());
  together = new CommitTogether(counting);
  const database = new Database(together);
  first = await openStore({ database });
  second = await openStore({ database });
  // The first use of a document layer looks its collection up in a transaction of its own: not
  // one of the transactions a test holds at the barrier.
  await Promise.all([get(first, 'global', 'warm-up'), get(second, 'global', 'warm-up')]);
});

afterEach(closeStores);

/** Commit failures since the last call, by KV error code (1020: not_committed, a conflict). */
function conflicts(): number {
  const { commitErrors } = counting.counts();
  counting.attempts = [];
  return commitErrors.get(1020) ?? 0;
}

async function overlapping(a: () => Promise<unknown>, b: () => Promise<unknown>): Promise<number> {
  conflicts();
  together.arm(2);
  await Promise.all([a(), b()]);
  return conflicts();
}

describe('the context layout: one document per root key, sub-document writes', () => {
  it('a nested set of a.b.c does not conflict with a concurrent set of a.d', async () => {
    await set(first, 'global', 'a', { b: {}, d: 0 });
    const conflicted = await overlapping(
      () => set(first, 'global', 'a.b.c', 1),
      () => set(second, 'global', 'a.d', 2),
    );
    expect(conflicted).toBe(0);
    expect(await get(first, 'global', 'a')).toEqual({ b: { c: 1 }, d: 2 });
  });

  it('increments of a.x and a.y do not conflict', async () => {
    await set(first, 'global', 'a', { x: 1, y: 1 });
    const conflicted = await overlapping(
      () => result((cb) => first.incr('global', 'a.x', 1, cb)),
      () => result((cb) => second.incr('global', 'a.y', 1, cb)),
    );
    expect(conflicted).toBe(0);
    expect(await get(first, 'global', 'a')).toEqual({ x: 2, y: 2 });
  });

  it('increments of one key conflict, and the retry makes both count', async () => {
    await set(first, 'global', 'a', { x: 1 });
    const conflicted = await overlapping(
      () => result((cb) => first.incr('global', 'a.x', 1, cb)),
      () => result((cb) => second.incr('global', 'a.x', 1, cb)),
    );
    expect(conflicted).toBe(1);
    expect(await get(first, 'global', 'a.x')).toBe(3);
  });

  it('two sets of one existing key do not conflict: the last to commit wins', async () => {
    await set(first, 'global', 'k', 0);
    const conflicted = await overlapping(
      () => set(first, 'global', 'k', 1),
      () => set(second, 'global', 'k', 2),
    );
    expect(conflicted).toBe(0);
    expect([1, 2]).toContain(await get(first, 'global', 'k'));
  });

  it('a set racing the deletion of its key leaves the key listed exactly when it exists', async () => {
    await set(first, 'global', 'a', { x: 1 });
    await overlapping(
      () => set(first, 'global', 'a', undefined),
      () => set(second, 'global', 'a.y', 2),
    );
    // Either order is serializable: set then delete (nothing left), or delete then set ({ y: 2 }).
    const value = await get(first, 'global', 'a');
    expect([undefined, { y: 2 }]).toContainEqual(value);
    expect(await keys(first, 'global')).toEqual(value === undefined ? [] : ['a']);
  });

  it('get then set in two instances loses an update: the pattern the atomic API replaces', async () => {
    await set(first, 'global', 'count', 0);
    const readAddWrite = async (store: DoclayerContextStore) => {
      const count = (await get(store, 'global', 'count')) as number;
      await set(store, 'global', 'count', count + 1);
    };
    await Promise.all([readAddWrite(first), readAddWrite(second)]);
    expect(await get(first, 'global', 'count')).toBe(1);
  });
});

describe('atomic operations across instances', () => {
  it('lose no increment: 200 from each of two instances, each value handed out once', async () => {
    const incr = (store: DoclayerContextStore, amount: number) => result<number>((cb) => store.incr('global', 'hits', amount, cb));
    const results = await Promise.all([...Array.from({ length: 200 }, () => incr(first, 1)), ...Array.from({ length: 200 }, () => incr(second, 1))]);
    expect(await get(first, 'global', 'hits')).toBe(400);
    expect([...results].sort((a, b) => a - b)).toEqual(Array.from({ length: 400 }, (_, i) => i + 1));
  });

  it('lose no float increment on a nested path', async () => {
    const incr = (store: DoclayerContextStore) => result<number>((cb) => store.incr('global', 'm.total', 0.5, cb));
    await Promise.all([...Array.from({ length: 100 }, () => incr(first)), ...Array.from({ length: 100 }, () => incr(second))]);
    expect(await get(first, 'global', 'm.total')).toBe(100);
  });

  it('lose no push, and pop each element once', async () => {
    const push = (store: DoclayerContextStore, i: number) => result<number>((cb) => store.push('global', 'jobs.queue', i, cb));
    await Promise.all(Array.from({ length: 100 }, (_, i) => push(i % 2 === 0 ? first : second, i)));
    const popped = await Promise.all(
      Array.from({ length: 100 }, (_, i) => result<unknown>((cb) => (i % 2 === 0 ? first : second).pop('global', 'jobs.queue', cb))),
    );
    expect([...(popped as number[])].sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    expect(await get(first, 'global', 'jobs.queue')).toEqual([]);
  });
});

describe('incr', () => {
  afterEach(() => jest.restoreAllMocks());

  /** The ops of the sub-document specs the store runs during `action`. */
  async function specsOf(action: () => Promise<unknown>): Promise<string[]> {
    const mutateIn = jest.spyOn(Collection.prototype, 'mutateIn');
    mutateIn.mockClear();
    await action();
    return mutateIn.mock.calls.flatMap(([, specs]) => specs.map((spec) => spec.op));
  }

  it("by an integer on a nested path is the document layer's increment (with createPath)", async () => {
    await set(first, 'global', 'a', { n: 1 });
    expect(await specsOf(() => result((cb) => first.incr('global', 'a.n', 2, cb)))).toEqual(['increment']);
    expect(await specsOf(() => result((cb) => first.incr('global', 'a.new.n', 2, cb)))).toEqual(['increment']);
    expect(await get(first, 'global', 'a')).toEqual({ n: 3, new: { n: 2 } });
  });

  it('by a float is a read and a write of the sum in the same transaction', async () => {
    await set(first, 'global', 'a', { n: 1 });
    counting.attempts = [];
    expect(await specsOf(() => result((cb) => first.incr('global', 'a.n', 0.5, cb)))).toEqual(['upsert']);
    expect(counting.counts()).toMatchObject({ attempts: 1, commits: 1 });
    expect(await get(first, 'global', 'a.n')).toBe(1.5);
  });
});
