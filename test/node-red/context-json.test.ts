/**
 * toContextJson stores what Node-RED's localfilesystem store would write and read back: the value
 * through json-stringify-safe (circular references dropped) and JSON.parse.
 */
import fc from 'fast-check';
import { fromStoredJson, toContextJson } from '../../src/node-red/context-json';
import { testSeed } from '../support/random';

const safeStringify = require('json-stringify-safe') as (
  value: unknown,
  replacer: null,
  spaces: null,
  cycleReplacer: () => undefined,
) => string | undefined;

/** What the localfilesystem store keeps for `value` once written and read back. */
function asFileStoreKeepsIt(value: unknown): unknown {
  const json = safeStringify(value, null, null, () => undefined);
  return json === undefined ? undefined : JSON.parse(json);
}

describe('toContextJson', () => {
  it('keeps what the localfilesystem store keeps, for random values', () => {
    const value = fc.anything({
      withBoxedValues: true,
      withDate: true,
      withMap: true,
      withSet: true,
      withTypedArray: true,
      withSparseArray: true,
      withNullPrototype: true,
      withObjectString: true,
    });
    fc.assert(
      fc.property(value, (v) => {
        expect(toContextJson(v)).toEqual(asFileStoreKeepsIt(v));
      }),
      { seed: testSeed(5301), numRuns: 2000 },
    );
  });

  it.each<[string, unknown]>([
    ['a Buffer', Buffer.from('hi')],
    ['a Date', new Date(0)],
    ['undefined inside objects and arrays', { a: undefined, b: [undefined, () => 1] }],
    ['NaN, Infinity and -0', [NaN, -Infinity, -0]],
    ['a function', () => 1],
    ['a Map', new Map([['a', 1]])],
    ['an object with toJSON', { toJSON: () => ({ replaced: true }) }],
  ])('keeps %s as the localfilesystem store does', (_, value) => {
    expect(toContextJson(value)).toEqual(asFileStoreKeepsIt(value));
  });

  it('leaves circular references out', () => {
    const parent: Record<string, unknown> = { name: 'p' };
    parent.self = parent;
    parent.list = [parent, 1];
    const shared = { x: 1 };
    parent.twice = [shared, shared];
    expect(toContextJson(parent)).toEqual({ name: 'p', list: [null, 1], twice: [{ x: 1 }, { x: 1 }] });
    expect(toContextJson(parent)).toEqual(asFileStoreKeepsIt(parent));
  });

  it('refuses a bigint as JSON.stringify does', () => {
    expect(() => toContextJson({ n: 1n })).toThrow(new TypeError('Do not know how to serialize a BigInt'));
  });

  it('keeps a __proto__ key as an ordinary key, as JSON.parse does', () => {
    const value = JSON.parse('{"__proto__": {"polluted": true}}') as unknown;
    const stored = toContextJson(value) as Record<string, unknown>;
    expect(Object.keys(stored)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('fromStoredJson', () => {
  it('reads integers the document layer returns as bigint back as numbers', () => {
    expect(fromStoredJson({ big: 100000000000000000000n, list: [2n ** 60n] })).toEqual({ big: 1e20, list: [2 ** 60] });
  });
});
