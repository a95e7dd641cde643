/**
 * Numbers read back exactly (README, "Numbers"): a JS number as the same number, bit for bit (`-0`,
 * subnormals and integral numbers beyond 2^53 included), a bigint as a bigint beyond ±(2^53−1) and as
 * a number inside it. Checked through every way a JSON value is written and read: whole documents,
 * mutateIn, lookupIn, and the structures that hold JSON values. fast-check runs from `testSeed`, so
 * `DOCLAYER_SEED=<seed>` replays a failure.
 */
import fc from 'fast-check';
import { LookupInSpec, MutateInSpec, type JsonValue } from '../../src';
import { testSeed } from '../support/random';
import { documentSuite } from './document-suite';

const SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** Numbers of every kind, the edges of each kind weighted up. */
const anyNumber: fc.Arbitrary<number> = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
  fc.maxSafeInteger(),
  fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }).map(Number),
  fc.constantFrom(
    0,
    -0,
    2 ** 53,
    2 ** 53 - 1,
    2 ** 53 + 2,
    -(2 ** 53),
    -(2 ** 53) + 1,
    1e21,
    -1e21,
    1e308,
    -1e308,
    Number.MAX_VALUE,
    -Number.MAX_VALUE,
    Number.MIN_VALUE,
    -Number.MIN_VALUE,
    2.2250738585072009e-308, // the largest subnormal
    Number.EPSILON,
    Number(1234567890123456789n), // a snowflake-style id, rounded to a double
    2 ** 63,
    2 ** 64,
  ),
);

/** Bigints inside and beyond the safe range, int64's edges and far beyond. */
const anyBigint: fc.Arbitrary<bigint> = fc.oneof(
  fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }),
  fc.constantFrom(0n, 5n, -5n, SAFE, -SAFE, SAFE + 1n, -SAFE - 1n, 2n ** 63n - 1n, -(2n ** 63n), 2n ** 64n, 1234567890123456789n, 2n ** 200n),
);

const anyNumeric: fc.Arbitrary<number | bigint> = fc.oneof(anyNumber, anyBigint);

/** What a number or bigint reads back as. */
function readBack(n: number | bigint): number | bigint {
  return typeof n === 'bigint' && n >= -SAFE && n <= SAFE ? Number(n) : n;
}

/** Asserts `got` is exactly what `written` reads back as: same type, same value, same sign of zero. */
function expectExact(got: JsonValue | undefined, written: number | bigint): void {
  const want = readBack(written);
  expect({ type: typeof got, value: got }).toEqual({ type: typeof want, value: want });
  if (typeof want === 'number') expect(Object.is(got, want)).toBe(true);
}

documentSuite('Numbers round-trip exactly', (ctx) => {
  it('reads 1e21, 2^53 and 1e308 written as numbers back as those numbers, which JSON.stringify takes', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    await c.upsert('n', { a: 1e21, b: 2 ** 53, c: 1e308, d: Number(1234567890123456789n) });
    const { content } = await c.get('n');
    expect(content).toEqual({ a: 1e21, b: 2 ** 53, c: 1e308, d: Number(1234567890123456789n) });
    expect(JSON.parse(JSON.stringify(content))).toEqual(content);
  });

  it('reads a bigint beyond 2^53 back as a bigint, and 5n as 5', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    await c.upsert('n', { big: 2n ** 60n, small: 5n, min: -(2n ** 63n) });
    expect((await c.get('n')).content).toEqual({ big: 2n ** 60n, min: -(2n ** 63n), small: 5 });
  });

  it('through upsert and get, mutateIn upsert, lookupIn and sub-document get', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    let i = 0;
    await fc.assert(
      fc.asyncProperty(anyNumeric, anyNumeric, async (whole, part) => {
        const id = `d${i++}`;
        await c.upsert(id, { n: whole, list: [whole] });
        const doc = (await c.get(id)).content as { n: JsonValue; list: JsonValue[] };
        expectExact(doc.n, whole);
        expectExact(doc.list[0], whole);
        await c.mutateIn(id, [MutateInSpec.upsert('m', part), MutateInSpec.arrayAppend('list', part)]);
        expectExact((await c.get(id, 'm')).content, part);
        const { entries } = await c.lookupIn(id, [LookupInSpec.get('n'), LookupInSpec.get('m'), LookupInSpec.get('list[1]')]);
        expectExact(entries[0].value, whole);
        expectExact(entries[1].value, part);
        expectExact(entries[2].value, part);
      }),
      { seed: testSeed(2301), numRuns: 150 },
    );
  });

  it('through list push, map set and queue push', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    const list = c.list<JsonValue>('list');
    const map = c.map<JsonValue>('map');
    const queue = c.queue<JsonValue>('queue');
    let i = 0;
    await fc.assert(
      fc.asyncProperty(anyNumeric, async (n) => {
        await list.push(n);
        expectExact(await list.get(-1), n);
        const key = `k${i++}`;
        await map.set(key, { n });
        expectExact(((await map.get(key)) as { n: JsonValue }).n, n);
        await queue.push([n]);
        expectExact(((await queue.pop()) as JsonValue[])[0], n);
      }),
      { seed: testSeed(2302), numRuns: 100 },
    );
  });

  it('counts on a number beyond 2^53, as it did when such numbers were stored as integers', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    await c.upsert('n', { big: 2 ** 60, huge: 1e21 });
    const { values } = await c.mutateIn('n', [MutateInSpec.increment('big', 1)]);
    expect(values[0]).toBe(2n ** 60n + 1n);
    const err = await c.mutateIn('n', [MutateInSpec.increment('huge', 1)]).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'NUMBER_TOO_BIG' });
    const map = c.map<number>('m');
    await map.set('x', 2 ** 60);
    await expect(map.increment('x')).rejects.toMatchObject({ code: 'NUMBER_TOO_BIG' });
  });

  it('arrayAddUnique finds a number beyond 2^53 already in the array, and the bigint of its value', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    await c.upsert('n', { tags: [2 ** 60, 1e21] });
    for (const value of [2 ** 60, 2n ** 60n, 1e21]) {
      await expect(c.mutateIn('n', [MutateInSpec.arrayAddUnique('tags', value)])).rejects.toMatchObject({ code: 'PATH_EXISTS' });
    }
    expect((await c.get('n', 'tags')).content).toEqual([2 ** 60, 1e21]);
  });
});
