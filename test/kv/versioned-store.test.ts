import { compareBytes, int64LE } from '../../src/kv/contract/bytes';
import { applyAtomicOp } from '../../src/kv/client/atomic-ops';
import type { Mutation } from '../../src/kv/client/mutation';
import { VersionedStore } from '../../src/kv/memory/versioned-store';
import { Random, testSeed } from '../support/random';

const NO_STAMP = (): Buffer => {
  throw new Error('no versionstamp expected');
};

/** The store's pairs as `key=value` strings, in key order. */
function contents(store: VersionedStore): string[] {
  const out: string[] = [];
  store.snapshot().forEachPair((key, value) => {
    out.push(`${key.toString()}=${value.toString('hex')}`);
  });
  return out;
}

function modelContents(model: Map<string, Buffer>): string[] {
  return [...model.entries()]
    .sort(([a], [b]) => compareBytes(Buffer.from(a), Buffer.from(b)))
    .map(([key, value]) => `${key}=${value.toString('hex')}`);
}

/**
 * The memory engine's committed data: commits overwrite stored keys in place when no reader holds the
 * nodes on their path, and copy those nodes when a snapshot a transaction reads shares them.
 */
describe('VersionedStore.apply', () => {
  const seed = testSeed();

  it(`leaves every snapshot a reader holds as it was, while later commits overwrite, add to and clear its keys (seed ${seed})`, () => {
    const rnd = new Random(seed);
    const store = new VersionedStore(1n);
    const model = new Map<string, Buffer>();
    // Snapshots taken with a reader (commits then write to a clone), and what each held when taken.
    const held: { data: ReturnType<VersionedStore['snapshot']>; expected: string[] }[] = [];
    const key = () => `k${String(rnd.int(600)).padStart(4, '0')}`;
    let version = 1n;
    for (let commit = 0; commit < 400; commit++) {
      const read = rnd.chance(0.2);
      if (read) held.push({ data: store.snapshot(), expected: contents(store) });
      const mutations: Mutation[] = [];
      for (let n = 1 + rnd.int(12); n > 0; n--) {
        const k = key();
        const choice = rnd.int(10);
        if (choice < 6) {
          const value = Buffer.from([rnd.int(256), rnd.int(256)]);
          mutations.push({ type: 'set', key: Buffer.from(k), value });
          model.set(k, value);
        } else if (choice < 8) {
          const operand = int64LE(1 + rnd.int(5));
          mutations.push({ type: 'atomic', op: 'add', key: Buffer.from(k), operand });
          model.set(k, applyAtomicOp('add', model.get(k), operand)!);
        } else {
          mutations.push({ type: 'clear', key: Buffer.from(k) });
          model.delete(k);
        }
      }
      version++;
      store.apply(mutations, version, NO_STAMP, read);
      expect(contents(store)).toEqual(modelContents(model));
    }
    for (const { data, expected } of held) {
      const now: string[] = [];
      data.forEachPair((k, v) => {
        now.push(`${k.toString()}=${v.toString('hex')}`);
      });
      expect(now).toEqual(expected);
    }
    expect(held.length).toBeGreaterThan(40);
  });
});
