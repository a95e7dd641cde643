/**
 * What operations cost in KV reads and writes (docs/documents.md), counted by the counting engine
 * (test/support/counting-engine.ts). The layout's promises, stated without knowing its bytes:
 * - a sub-document read costs the size of the subtree, never of the rest of the document;
 * - a field write writes the new value's entries and the version, clears one range, and reads
 *   neither the version key nor anything that grows with the document;
 * - appends and prepends, and reads of `[0]`/`[-1]`, cost O(1) whatever the array's length;
 * - inserting or removing inside an array moves only the shorter side.
 */
import { LookupInSpec, MutateInSpec, type Collection, type JsonValue } from '../../src';
import type { AttemptLog, CountingEngine, KvCounts as Counts } from '../../src/kv/counting-engine';
import { documentSuite, type DocumentTestContext } from './document-suite';

/** Entries a value occupies: one per container (its marker) and one per scalar (short strings only). */
function entries(value: JsonValue): number {
  if (Array.isArray(value)) return 1 + value.reduce<number>((n, e) => n + entries(e), 0);
  if (typeof value === 'object' && value !== null) return 1 + Object.values(value).reduce<number>((n, e) => n + entries(e), 0);
  return 1;
}

/** A document with a small subtree `target` and `leaves` other leaves, in an array and an object. */
function documentWith(leaves: number): JsonValue {
  const half = Math.floor(leaves / 2);
  return {
    before: { list: Array.from({ length: half }, (_, i) => i) },
    target: { x: 1, y: [1, 2], z: { deep: 'value' } },
    tail: Object.fromEntries(Array.from({ length: leaves - half }, (_, i) => [`k${i}`, `v${i}`])),
  };
}

const SUBTREE = { x: 1, y: [1, 2], z: { deep: 'value' } };

/** The cost figures that must not depend on the size of the rest of the document. */
function readCost(c: Counts): { gets: number; rangeReads: number; keysRead: number; getKeys: number } {
  return { gets: c.gets, rangeReads: c.rangeReads, keysRead: c.keysRead, getKeys: c.getKeys };
}

function writeCost(c: Counts): { sets: number; clears: number; clearRanges: number; atomicOps: number; versionstamped: number } {
  return { sets: c.sets, clears: c.clears, clearRanges: c.clearRanges, atomicOps: c.atomicOps, versionstamped: c.versionstamped };
}

async function measure<T>(counter: CountingEngine, action: () => Promise<T>): Promise<{ counts: Counts; attempts: AttemptLog[] }> {
  const { counts, attempts } = await counter.measure(action);
  // Every measured operation here runs alone: one attempt, no retry, so the counts are its own.
  expect(counts.retries).toBe(0);
  return { counts, attempts };
}

async function fixture(ctx: DocumentTestContext, docs: Record<string, JsonValue>) {
  const { docs: layer, counter } = await ctx.open();
  const c: Collection = layer.collection();
  for (const [id, doc] of Object.entries(docs)) await c.insert(doc, { id });
  return { c, counter };
}

documentSuite('costs', (ctx) => {
  it('a whole-document get is one range read', async () => {
    const { c, counter } = await fixture(ctx, { small: documentWith(10), big: documentWith(2000) });
    for (const id of ['small', 'big']) {
      const { counts } = await measure(counter, () => c.get(id));
      expect({ id, rangeReads: counts.rangeReads, gets: counts.gets }).toEqual({ id, rangeReads: 1, gets: 0 });
    }
  });

  it('getMany of n documents is n range reads, all issued before any is answered, whatever their sizes', async () => {
    const { docs: layer, counter } = await ctx.open();
    const c = layer.collection();
    for (const [id, doc] of Object.entries({ small: documentWith(10), big: documentWith(2000), other: { a: 1 } })) await c.insert(doc, { id });
    const ids = ['big', 'missing', 'small', 'other', 'small'];
    const { counts, attempts } = await measure(counter, () => c.getMany(ids));
    expect({ rangeReads: counts.rangeReads, gets: counts.gets, getKeys: counts.getKeys }).toEqual({ rangeReads: ids.length, gets: 0, getKeys: 0 });
    expect(attempts[0].ranges.every((r) => r.limit === undefined && !r.reverse)).toBe(true);
    // Issued together: a transaction that answers no range read until all have been asked for.
    await layer.transact(async (tr) => {
      let asked = 0;
      let release!: () => void;
      const all = new Promise<void>((resolve) => (release = resolve));
      const held = new Proxy(tr, {
        get(target, prop, receiver) {
          if (prop !== 'getRangeAll') {
            const value = Reflect.get(target, prop, receiver) as unknown;
            return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
          }
          return async (...args: Parameters<typeof tr.getRangeAll>) => {
            if (++asked === ids.length) release();
            await all;
            return target.getRangeAll(...args);
          };
        },
      });
      const found = await c.getMany(ids, { tr: held });
      expect(found.map((d) => d !== undefined)).toEqual([true, false, true, true, true]);
    });
  });

  it('get(id, path) of a small subtree reads the same keys whether the rest of the document has 10 or 10,000 leaves', async () => {
    const { c, counter } = await fixture(ctx, { small: documentWith(10), big: documentWith(10_000) });
    for (const path of ['target', 'target.z.deep', 'target.y[1]', 'target.y[-1]']) {
      const small = await measure(counter, () => c.get('small', path));
      const big = await measure(counter, () => c.get('big', path));
      expect({ path, ...readCost(big.counts) }).toEqual({ path, ...readCost(small.counts) });
      // Bounded by the subtree: its entries plus a few markers and the version.
      expect(big.counts.keysRead).toBeLessThanOrEqual(entries(SUBTREE) + 6);
      expect(big.counts.keysWritten + big.counts.clears + big.counts.clearRanges).toBe(0);
    }
  });

  it('lookupIn of small paths costs the same whatever the size of the document', async () => {
    const { c, counter } = await fixture(ctx, { small: documentWith(10), big: documentWith(10_000) });
    // Warms the layer's cache of the collection's lock flag (lock-flags.ts), as a running app has it.
    await c.mutateIn('small', [MutateInSpec.upsert('warm', true)]);
    const specs = [LookupInSpec.get('target.x'), LookupInSpec.exists('target.z'), LookupInSpec.count('target.y'), LookupInSpec.get('nope')];
    const small = await measure(counter, () => c.lookupIn('small', specs));
    const big = await measure(counter, () => c.lookupIn('big', specs));
    expect(readCost(big.counts)).toEqual(readCost(small.counts));
  });

  it('an element of a long array by index costs the same as of a short one', async () => {
    const { c, counter } = await fixture(ctx, {
      short: { list: Array.from({ length: 10 }, (_, i) => ({ i })) },
      long: { list: Array.from({ length: 5000 }, (_, i) => ({ i })) },
    });
    for (const path of ['list[0]', 'list[-1]', 'list[7]']) {
      const short = await measure(counter, () => c.get('short', path));
      const long = await measure(counter, () => c.get('long', path));
      expect({ path, ...readCost(long.counts) }).toEqual({ path, ...readCost(short.counts) });
    }
  });

  it('[0] and [-1] are found by one limit-1 range read (reverse for [-1]), whatever the length', async () => {
    const { c, counter } = await fixture(ctx, {
      short: { list: Array.from({ length: 10 }, (_, i) => i) },
      long: { list: Array.from({ length: 5000 }, (_, i) => i) },
    });
    for (const id of ['short', 'long']) {
      for (const [path, reverse] of [
        ['list[0]', false],
        ['list[-1]', true],
      ] as const) {
        const { attempts, counts } = await measure(counter, () => c.get(id, path));
        const ranges = attempts.flatMap((a) => a.ranges);
        const limited = ranges.filter((r) => r.limit === 1);
        expect({ id, path, limitOneReads: limited.map((r) => ({ reverse: r.reverse, keys: r.keys })) }).toEqual({
          id,
          path,
          limitOneReads: [{ reverse, keys: 1 }],
        });
        // Whatever else is read (the element itself, markers, the version) is a handful of keys.
        expect(counts.keysRead).toBeLessThanOrEqual(5);
      }
    }
  });

  it("a field upsert writes the new value's entries and the version, and clears one range", async () => {
    const { c, counter } = await fixture(ctx, { small: documentWith(10), big: documentWith(10_000) });
    const value: JsonValue = { a: 1, b: [1, 2, { c: 'x' }], e: {} };
    for (const id of ['small', 'big']) {
      for (const path of ['target.x', 'target.new', 'fresh']) {
        const { counts } = await measure(counter, () => c.mutateIn(id, [MutateInSpec.upsert(path, value)]));
        expect({ id, path, ...writeCost(counts) }).toEqual({
          id,
          path,
          sets: entries(value),
          clears: 0,
          clearRanges: 1,
          atomicOps: 0,
          versionstamped: 1,
        });
      }
    }
  });

  it('a field write reads the same whatever the size of the document, and never the version key', async () => {
    const { c, counter } = await fixture(ctx, { small: documentWith(10), big: documentWith(10_000) });
    // Warms the layer's cache of the collection's lock flag (lock-flags.ts), as a running app has it.
    await c.mutateIn('small', [MutateInSpec.upsert('warm', true)]);
    const specs = [
      [MutateInSpec.upsert('target.x', 2)],
      [MutateInSpec.increment('target.x', 1)],
      [MutateInSpec.insert('target.w', 'new')],
      [MutateInSpec.remove('target.z')],
      [MutateInSpec.arrayAppend('target.y', 3)],
    ];
    for (const spec of specs) {
      const small = await measure(counter, () => c.mutateIn('small', spec));
      const big = await measure(counter, () => c.mutateIn('big', spec));
      expect({ spec: spec[0].op, ...readCost(big.counts) }).toEqual({ spec: spec[0].op, ...readCost(small.counts) });
      expect({ spec: spec[0].op, ...writeCost(big.counts) }).toEqual({ spec: spec[0].op, ...writeCost(small.counts) });
      for (const attempt of big.attempts) {
        for (const versionKey of attempt.versionstamped) {
          expect(attempt.gets.some((g) => g.key.equals(versionKey))).toBe(false);
          for (const r of attempt.ranges) {
            if (!Buffer.isBuffer(r.begin) || !Buffer.isBuffer(r.end)) continue;
            expect(Buffer.compare(r.begin, versionKey) <= 0 && Buffer.compare(versionKey, r.end) < 0).toBe(false);
          }
        }
      }
    }
  });

  it('arrayAppend and arrayPrepend write O(1) keys besides the value, whatever the length of the array', async () => {
    const { c, counter } = await fixture(ctx, {
      short: { list: Array.from({ length: 10 }, (_, i) => i) },
      long: { list: Array.from({ length: 10_000 }, (_, i) => i) },
    });
    await c.mutateIn('short', [MutateInSpec.upsert('warm', true)]); // warms the lock-flag cache, as above
    const cases: [string, ReturnType<typeof MutateInSpec.arrayAppend>, number][] = [
      ['append one', MutateInSpec.arrayAppend('list', 'x'), 1],
      ['prepend one', MutateInSpec.arrayPrepend('list', 'x'), 1],
      ['append an object', MutateInSpec.arrayAppend('list', { a: [1, 2] }), 4],
      ['append three (multi)', MutateInSpec.arrayAppend('list', [1, 2, 3], { multi: true }), 3],
      ['prepend three (multi)', MutateInSpec.arrayPrepend('list', [1, 2, 3], { multi: true }), 3],
    ];
    for (const [what, spec, valueEntries] of cases) {
      const short = await measure(counter, () => c.mutateIn('short', [spec]));
      const long = await measure(counter, () => c.mutateIn('long', [spec]));
      expect({ what, sets: long.counts.sets, versionstamped: long.counts.versionstamped }).toEqual({ what, sets: valueEntries, versionstamped: 1 });
      expect({ what, ...readCost(long.counts) }).toEqual({ what, ...readCost(short.counts) });
      expect({ what, ...writeCost(long.counts) }).toEqual({ what, ...writeCost(short.counts) });
    }
  });

  it('inserting near the end of a 1,000-element array moves only the elements after it', async () => {
    const { c, counter } = await fixture(ctx, { d: { list: Array.from({ length: 1000 }, (_, i) => i) } });
    const { counts } = await measure(counter, () => c.mutateIn('d', [MutateInSpec.arrayInsert('list[990]', 'new')]));
    // 10 elements move up one position, and the new element is written.
    expect(writeCost(counts)).toMatchObject({ sets: 11, versionstamped: 1 });
    expect(counts.keysRead).toBeLessThanOrEqual(10 + 6);
    const list = (await c.get('d', 'list')).content as unknown[];
    expect(list).toHaveLength(1001);
    expect(list.slice(988, 993)).toEqual([988, 989, 'new', 990, 991]);
    expect(list[1000]).toBe(999);
  });

  it('inserting near the start of a 1,000-element array moves only the elements before it', async () => {
    const { c, counter } = await fixture(ctx, { d: { list: Array.from({ length: 1000 }, (_, i) => i) } });
    const { counts } = await measure(counter, () => c.mutateIn('d', [MutateInSpec.arrayInsert('list[10]', 'new')]));
    expect(writeCost(counts)).toMatchObject({ sets: 11, versionstamped: 1 });
    expect(counts.keysRead).toBeLessThanOrEqual(10 + 6);
    const list = (await c.get('d', 'list')).content as unknown[];
    expect(list.slice(8, 13)).toEqual([8, 9, 'new', 10, 11]);
  });

  it('removing near the end of a 1,000-element array moves only the elements after it', async () => {
    const { c, counter } = await fixture(ctx, { d: { list: Array.from({ length: 1000 }, (_, i) => i) } });
    const { counts } = await measure(counter, () => c.mutateIn('d', [MutateInSpec.remove('list[990]')]));
    // 9 elements move down one position; the position they leave is cleared.
    expect(counts.sets).toBe(9);
    expect(counts.clears + counts.clearRanges).toBeLessThanOrEqual(2);
    expect(counts.keysRead).toBeLessThanOrEqual(10 + 6);
    const list = (await c.get('d', 'list')).content as unknown[];
    expect(list).toHaveLength(999);
    expect(list.slice(988, 992)).toEqual([988, 989, 991, 992]);
  });

  it('removing [0] or [-1] moves nothing', async () => {
    const { c, counter } = await fixture(ctx, { d: { list: Array.from({ length: 1000 }, (_, i) => i) } });
    for (const path of ['list[0]', 'list[-1]']) {
      const { counts } = await measure(counter, () => c.mutateIn('d', [MutateInSpec.remove(path)]));
      expect({ path, sets: counts.sets }).toEqual({ path, sets: 0 });
      expect(counts.keysRead).toBeLessThanOrEqual(5);
    }
    expect((await c.get('d', 'list')).content).toEqual(Array.from({ length: 998 }, (_, i) => i + 1));
  });
});
