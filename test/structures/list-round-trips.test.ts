/**
 * DocList's sequential round trips on a cluster, counted as `npm run bench:round-trips` counts them
 * (bench/round-trips.ts: the read version, each read, the commit of a transaction that writes; reads
 * issued together once): the bounds its TSDoc states, for lists of scalars, of nested values, and
 * empty ones. FoundationDB's floor is 2 for a read and 3 for a read-modify-write.
 */
import { open, type DocLayer, type JsonValue } from '../../src';
import { Database } from '../../src/kv/contract/database';
import { MemoryEngine } from '../../src/kv/memory/memory-engine';
import { roundTripEngine, RoundTrips } from '../support/round-trip-engine';
import type { DocList } from '../../src/structures/list';

interface Case {
  /** What the list holds before the operation (pushed in order). */
  readonly list: readonly JsonValue[];
  readonly run: (l: DocList) => Promise<unknown>;
  /** The operation's result, or the code of the error it throws. */
  readonly result: unknown;
  readonly trips: number;
}

const scalars = Array.from({ length: 30 }, (_, i) => i);
const nested = { a: [1, { b: 'c' }] };

describe('DocList round trips on a cluster', () => {
  let docs: DocLayer;
  let trips: RoundTrips;
  let lists = 0;

  beforeEach(async () => {
    trips = new RoundTrips();
    docs = await open({ database: new Database(roundTripEngine(new MemoryEngine(), trips)) });
    await docs.collection().upsert('warm-up', {}); // creates the collection, so that no case pays for that
  });

  afterEach(() => docs.close());

  /** Each case on a list of its own: `[name, result, round trips]`, as measured and as expected. */
  async function measure(cases: Record<string, Case>): Promise<[[string, unknown, number][], [string, unknown, number][]]> {
    const actual: [string, unknown, number][] = [];
    for (const [name, { list, run }] of Object.entries(cases)) {
      const l = docs.collection().list(`l${lists++}`);
      await l.push(0); // exists, whatever `list` holds
      await l.pop();
      for (const value of list) await l.push(value);
      const before = trips.count;
      const result = await run(l).catch((err: unknown) => (err as { code?: string }).code);
      actual.push([name, result, trips.count - before]);
    }
    return [actual, Object.entries(cases).map(([name, { result, trips: expected }]) => [name, result, expected])];
  }

  it('get(0) and get(-1) of a scalar read it with the kind key: 2, the floor', async () => {
    const [actual, expected] = await measure({
      'get(0)': { list: [1, 2, 3], run: (l) => l.get(0), result: 1, trips: 2 },
      'get(-1)': { list: [1, 2, 3], run: (l) => l.get(-1), result: 3, trips: 2 },
      'get(-1) of an empty array, one key': { list: [1, []], run: (l) => l.get(-1), result: [], trips: 2 },
      'get(0) of a long string': { list: ['x'.repeat(250_000)], run: (l) => l.get(0), result: 'x'.repeat(250_000), trips: 3 },
      'get(0) of an object': { list: [nested, 2], run: (l) => l.get(0), result: nested, trips: 3 },
      'get(-1) of an object': { list: [1, nested], run: (l) => l.get(-1), result: nested, trips: 3 },
      'get(0) of an empty list': { list: [], run: (l) => l.get(0), result: 'OUT_OF_RANGE', trips: 2 },
      'get(-1) of an empty list': { list: [], run: (l) => l.get(-1), result: 'OUT_OF_RANGE', trips: 2 },
    });
    expect(actual).toEqual(expected);
  });

  it('get(i) within 8 of an end reads the scalars on the way with the kind key: 2; further in, or past a nested value, 3', async () => {
    const [actual, expected] = await measure({
      'get(1)': { list: [1, 2, 3], run: (l) => l.get(1), result: 2, trips: 2 },
      'get(7)': { list: scalars, run: (l) => l.get(7), result: 7, trips: 2 },
      'get(-8)': { list: scalars, run: (l) => l.get(-8), result: 22, trips: 2 },
      'get(1) of an object': { list: [1, nested, 3], run: (l) => l.get(1), result: nested, trips: 3 },
      'get(2) past an object': { list: [nested, 2, 3], run: (l) => l.get(2), result: 3, trips: 3 },
      'get(-3) past an object': { list: [1, 2, nested], run: (l) => l.get(-3), result: 1, trips: 3 },
      'get(8)': { list: scalars, run: (l) => l.get(8), result: 8, trips: 3 },
      'get(-9)': { list: scalars, run: (l) => l.get(-9), result: 21, trips: 3 },
      'get(3) of 3': { list: [1, 2, 3], run: (l) => l.get(3), result: 'OUT_OF_RANGE', trips: 2 },
      'get(-4) of 3': { list: [1, 2, 3], run: (l) => l.get(-4), result: 'OUT_OF_RANGE', trips: 2 },
      'get(3) of 3, an object first': { list: [nested, 2, 3], run: (l) => l.get(3), result: 'OUT_OF_RANGE', trips: 3 },
    });
    expect(actual).toEqual(expected);
  });

  it('pop and shift of a scalar read it with the kind key: 3, the floor; of a nested value, 4', async () => {
    const [actual, expected] = await measure({
      pop: { list: [1, 2], run: (l) => l.pop(), result: 2, trips: 3 },
      shift: { list: [1, 2], run: (l) => l.shift(), result: 1, trips: 3 },
      'pop of an object': { list: [1, nested], run: (l) => l.pop(), result: nested, trips: 4 },
      'shift of an array': { list: [[nested], 2], run: (l) => l.shift(), result: [nested], trips: 4 },
      'pop of an empty list (writes nothing)': { list: [], run: (l) => l.pop(), result: undefined, trips: 2 },
      'shift of an empty list (writes nothing)': { list: [], run: (l) => l.shift(), result: undefined, trips: 2 },
    });
    expect(actual).toEqual(expected);
  });

  it("set(i) reads the element's entry with the kind key when the read from its end reaches it: 3, the floor; else 4", async () => {
    const [actual, expected] = await measure({
      'set(0)': { list: [1, 2], run: (l) => l.set(0, 5), result: undefined, trips: 3 },
      'set(0) of an object': { list: [nested, 2], run: (l) => l.set(0, 5), result: undefined, trips: 3 },
      'set(-1)': { list: [1, 2], run: (l) => l.set(-1, 5), result: undefined, trips: 3 },
      'set(-1) of an object': { list: [1, nested], run: (l) => l.set(-1, 5), result: undefined, trips: 4 },
      'set(20)': { list: scalars, run: (l) => l.set(20, 5), result: undefined, trips: 4 },
      'set(0) of an empty list': { list: [], run: (l) => l.set(0, 5), result: 'OUT_OF_RANGE', trips: 2 },
    });
    expect(actual).toEqual(expected);
  });

  it('slice within 8 of an end reads the scalars with the kind key and the other end: 2, the floor', async () => {
    const [actual, expected] = await measure({
      'slice(0, 2)': { list: [1, 2, 3], run: (l) => l.slice(0, 2), result: [1, 2], trips: 2 },
      'slice(0, 5) of 3': { list: [1, 2, 3], run: (l) => l.slice(0, 5), result: [1, 2, 3], trips: 2 },
      'slice(2, 6)': { list: scalars, run: (l) => l.slice(2, 6), result: [2, 3, 4, 5], trips: 2 },
      'slice(0, 8)': { list: scalars, run: (l) => l.slice(0, 8), result: scalars.slice(0, 8), trips: 2 },
      'slice(-3)': { list: scalars, run: (l) => l.slice(-3), result: [27, 28, 29], trips: 2 },
      'slice(-5, -1)': { list: scalars, run: (l) => l.slice(-5, -1), result: [25, 26, 27, 28], trips: 2 },
      'slice(-8)': { list: scalars, run: (l) => l.slice(-8), result: scalars.slice(-8), trips: 2 },
      'slice(-5) of 3': { list: [1, 2, 3], run: (l) => l.slice(-5), result: [1, 2, 3], trips: 2 },
      'slice(-3, 29), within the last 3': { list: scalars, run: (l) => l.slice(-3, 29), result: [27, 28], trips: 2 },
      'slice(0, 2) before an object': { list: [1, 2, nested], run: (l) => l.slice(0, 2), result: [1, 2], trips: 2 },
      'slice(-2) after an object': { list: [nested, 2, 3], run: (l) => l.slice(-2), result: [2, 3], trips: 2 },
      'slice(0, 3) past an empty array': { list: [1, [], 3], run: (l) => l.slice(0, 3), result: [1, [], 3], trips: 2 },
      'slice(0, 5) of 3 ending at an empty array': { list: [1, 2, []], run: (l) => l.slice(0, 5), result: [1, 2, []], trips: 2 },
      'slice(3, 1)': { list: [1, 2, 3], run: (l) => l.slice(3, 1), result: [], trips: 2 },
      'slice(0, 5) of an empty list': { list: [], run: (l) => l.slice(0, 5), result: [], trips: 2 },
      'slice of an empty list': { list: [], run: (l) => l.slice(), result: [], trips: 2 },
    });
    expect(actual).toEqual(expected);
  });

  it('slice further in, past a nested value, or bounded by neither end reads the bounds with the kind key, then the elements: 3', async () => {
    const [actual, expected] = await measure({
      'slice(-2) of objects': { list: [1, nested, nested], run: (l) => l.slice(-2), result: [nested, nested], trips: 3 },
      'slice(0, 2) of an object': { list: [nested, 2, 3], run: (l) => l.slice(0, 2), result: [nested, 2], trips: 3 },
      'slice(1, 3) past an object': { list: [nested, 2, 3, 4], run: (l) => l.slice(1, 3), result: [2, 3], trips: 3 },
      'slice(-3, -1) past an object': { list: [1, 2, 3, nested], run: (l) => l.slice(-3, -1), result: [2, 3], trips: 3 },
      'slice(0, 2) ending at an empty array, the read full': { list: [1, [], 3], run: (l) => l.slice(0, 2), result: [1, []], trips: 3 },
      'slice(0, 1) of a long string': { list: ['x'.repeat(250_000)], run: (l) => l.slice(0, 1), result: ['x'.repeat(250_000)], trips: 3 },
      'slice(0, 9)': { list: scalars, run: (l) => l.slice(0, 9), result: scalars.slice(0, 9), trips: 3 },
      'slice(-9)': { list: scalars, run: (l) => l.slice(-9), result: scalars.slice(-9), trips: 3 },
      'slice(2)': { list: [1, 2, 3], run: (l) => l.slice(2), result: [3], trips: 3 },
      'slice(1, -1)': { list: [1, 2, 3], run: (l) => l.slice(1, -1), result: [2], trips: 3 },
    });
    expect(actual).toEqual(expected);
  });

  it('indexOf reads the bounds with the kind key, then the elements: 3', async () => {
    const [actual, expected] = await measure({
      'indexOf(3)': { list: [1, 2, 3], run: (l) => l.indexOf(3), result: 2, trips: 3 },
    });
    expect(actual).toEqual(expected);
  });

  it('insert(i) and removeAt(i) within 8 of an end read the side they move with the kind key and the other end: 3, the floor', async () => {
    const [actual, expected] = await measure({
      'insert(1)': { list: [1, 2, 3], run: (l) => l.insert(1, 7), result: undefined, trips: 3 },
      'insert(1) before an object': { list: [1, nested], run: (l) => l.insert(1, 7), result: undefined, trips: 3 },
      'insert(2) of 3 (the side the read holds, not the shorter)': { list: [1, 2, 3], run: (l) => l.insert(2, 7), result: undefined, trips: 3 },
      'insert(7)': { list: scalars, run: (l) => l.insert(7, 7), result: undefined, trips: 3 },
      'insert(-1)': { list: scalars, run: (l) => l.insert(-1, 7), result: undefined, trips: 3 },
      'insert(-8)': { list: scalars, run: (l) => l.insert(-8, 7), result: undefined, trips: 3 },
      'insert(-2) of 4 (the side the read holds, not the shorter)': { list: [1, 2, 3, 4], run: (l) => l.insert(-2, 7), result: undefined, trips: 3 },
      'insert(0) (moves nothing)': { list: scalars, run: (l) => l.insert(0, 7), result: undefined, trips: 3 },
      'insert(3) of 3 (moves nothing)': { list: [1, 2, 3], run: (l) => l.insert(3, 7), result: undefined, trips: 3 },
      'insert(30) of 30 (moves nothing)': { list: scalars, run: (l) => l.insert(30, 7), result: undefined, trips: 3 },
      'insert(0) into an empty list (moves nothing)': { list: [], run: (l) => l.insert(0, 7), result: undefined, trips: 3 },
      'removeAt(1)': { list: [1, 2, 3], run: (l) => l.removeAt(1), result: undefined, trips: 3 },
      'removeAt(1) of an object (cleared, not read)': { list: [1, nested, 3], run: (l) => l.removeAt(1), result: undefined, trips: 3 },
      'removeAt(7)': { list: scalars, run: (l) => l.removeAt(7), result: undefined, trips: 3 },
      'removeAt(-2)': { list: scalars, run: (l) => l.removeAt(-2), result: undefined, trips: 3 },
      'removeAt(-8)': { list: scalars, run: (l) => l.removeAt(-8), result: undefined, trips: 3 },
      'removeAt(0) (moves nothing)': { list: [nested, 2], run: (l) => l.removeAt(0), result: undefined, trips: 3 },
      'removeAt(-1) (moves nothing)': { list: [1, nested], run: (l) => l.removeAt(-1), result: undefined, trips: 3 },
      'insert(4) of 3': { list: [1, 2, 3], run: (l) => l.insert(4, 7), result: 'OUT_OF_RANGE', trips: 2 },
      'removeAt(0) of an empty list': { list: [], run: (l) => l.removeAt(0), result: 'OUT_OF_RANGE', trips: 2 },
    });
    expect(actual).toEqual(expected);
  });

  it('insert(i) and removeAt(i) further in, or past a nested value, read the bounds with the kind key, then the side they move: 4', async () => {
    const [actual, expected] = await measure({
      'insert(1) after an object': { list: [nested, 2, 3], run: (l) => l.insert(1, 7), result: undefined, trips: 4 },
      'insert(1) between objects': { list: [nested, nested], run: (l) => l.insert(1, 7), result: undefined, trips: 4 },
      'insert(-1) before an object': { list: [1, 2, nested], run: (l) => l.insert(-1, 7), result: undefined, trips: 4 },
      'insert(8)': { list: scalars, run: (l) => l.insert(8, 7), result: undefined, trips: 4 },
      'insert(-9)': { list: scalars, run: (l) => l.insert(-9, 7), result: undefined, trips: 4 },
      'removeAt(1) after an object': { list: [nested, 2, 3], run: (l) => l.removeAt(1), result: undefined, trips: 4 },
      'removeAt(-2) before an object': { list: [1, 2, nested], run: (l) => l.removeAt(-2), result: undefined, trips: 4 },
      'removeAt(8)': { list: scalars, run: (l) => l.removeAt(8), result: undefined, trips: 4 },
      'removeAt(-9)': { list: scalars, run: (l) => l.removeAt(-9), result: undefined, trips: 4 },
    });
    expect(actual).toEqual(expected);
  });
});
