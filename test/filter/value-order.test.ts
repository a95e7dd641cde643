/**
 * The canonical value order (src/filter/value-order.ts): the order filters compare by and index keys
 * encode. missing < null < numbers < strings < objects < arrays < booleans.
 */
import fc from 'fast-check';
import { compareValues, MISSING, typeOf, type IndexValue } from '../../src/filter/value-order';
import type { JsonValue } from '../../src/document/types';
import { jsonInteger, jsonDouble, jsonString, jsonValue } from '../support/json-arbitrary';
import { testSeed } from '../support/random';

const wellFormed = (s: string): boolean => Buffer.from(s).toString() === s;
const sign = (n: number): number => (n < 0 ? -1 : n > 0 ? 1 : 0) + 0;
const indexValue: fc.Arbitrary<IndexValue> = fc.oneof(
  { weight: 1, arbitrary: fc.constant<IndexValue>(MISSING) },
  { weight: 9, arbitrary: jsonValue({ maxDepth: 3 }) },
);

describe('typeOf', () => {
  it('names the type bracket of each kind of value', () => {
    expect([MISSING, null, 1, 2n, 'a', {}, [], false].map(typeOf)).toEqual([
      'missing',
      'null',
      'number',
      'number',
      'string',
      'object',
      'array',
      'boolean',
    ]);
  });
});

describe('compareValues', () => {
  it('orders the type brackets missing < null < numbers < strings < objects < arrays < booleans', () => {
    const ladder: IndexValue[] = [MISSING, null, -1e300, 2n ** 80n, '', 'zzz', {}, { z: [] }, [], [true], false, true];
    for (let i = 0; i < ladder.length; i++) {
      for (let j = 0; j < ladder.length; j++) expect(sign(compareValues(ladder[i], ladder[j]))).toBe(sign(i - j));
    }
  });

  it('treats 1, 1.0 and 1n as one value, and -0 as 0', () => {
    expect(compareValues(1, 1n)).toBe(0);
    expect(compareValues(1.0, 1)).toBe(0);
    expect(compareValues(-0, 0)).toBe(0);
    expect(compareValues(-0, 0n)).toBe(0);
    expect(compareValues([1, { a: 2n }], [1n, { a: 2 }])).toBe(0);
  });

  it('keeps bigints beyond 2^53 exact against doubles', () => {
    expect(compareValues(2n ** 53n + 1n, 2 ** 53)).toBeGreaterThan(0);
    expect(compareValues(2n ** 53n + 1n, 2n ** 53n + 2n)).toBeLessThan(0);
    expect(compareValues(2n ** 53n + 1n, 2 ** 53 + 2)).toBeLessThan(0);
    expect(compareValues(2 ** 53 + 2, 2n ** 53n + 2n)).toBe(0);
    expect(compareValues(-(2n ** 60n) - 1n, -(2 ** 60))).toBeLessThan(0);
    expect(compareValues(0.5, 0n)).toBeGreaterThan(0);
    expect(compareValues(-0.5, 0n)).toBeLessThan(0);
    expect(compareValues(-0.5, -1n)).toBeGreaterThan(0);
    expect(compareValues(1e300, 2n ** 1000n)).toBeLessThan(0);
  });

  it('agrees with exact rational comparison for any double and integer', () => {
    fc.assert(
      fc.property(jsonDouble, jsonInteger, (d, n) => {
        const big = BigInt(n);
        // An exact reference: scale by 2^1100, beyond which every finite double is an integer.
        const scaled = (x: number): bigint => {
          if (x === 0) return 0n;
          let m = x;
          let e = 0n;
          while (!Number.isInteger(m)) {
            m *= 2;
            e += 1n;
          }
          return BigInt(m) * 2n ** (1100n - e);
        };
        const diff = scaled(d) - big * 2n ** 1100n;
        const expected = diff > 0n ? 1 : diff < 0n ? -1 : 0;
        expect(sign(compareValues(d, n))).toBe(expected);
        expect(sign(compareValues(n, d))).toBe(0 - expected);
      }),
      { seed: testSeed(1401), numRuns: 2000 },
    );
  });

  it('orders strings by code point, as their UTF-8 bytes order', () => {
    expect(compareValues('\u{10000}', '\uffff')).toBeGreaterThan(0);
    expect(compareValues('\ue000', '\u{1f600}')).toBeLessThan(0);
    expect(compareValues('a', 'ab')).toBeLessThan(0);
    fc.assert(
      fc.property(jsonString, jsonString, (a, b) => {
        fc.pre(wellFormed(a) && wellFormed(b));
        expect(sign(compareValues(a, b))).toBe(sign(Buffer.compare(Buffer.from(a), Buffer.from(b))));
      }),
      { seed: testSeed(1402), numRuns: 2000 },
    );
  });

  it('compares objects pair by pair with their keys sorted, and arrays element by element, a proper prefix first', () => {
    expect(compareValues({ a: 1 }, { a: 1, b: 0 })).toBeLessThan(0);
    expect(compareValues({ a: 2 }, { b: 1 })).toBeLessThan(0);
    expect(compareValues({ b: 1 }, { a: 2 })).toBeGreaterThan(0);
    // A stored document keeps no key order, so key order never tells two objects apart.
    expect(compareValues({ a: 1, b: 2 }, { b: 2, a: 1 })).toBe(0);
    expect(compareValues({ b: 1, z: 0 }, { a: 9, c: 0 })).toBeGreaterThan(0);
    expect(compareValues({ 10: 'x' }, { 9: 'x' })).toBeLessThan(0);
    expect(compareValues({ a: null }, { a: 0 })).toBeLessThan(0);
    expect(compareValues([1, 2], [1, 2, 0])).toBeLessThan(0);
    expect(compareValues([2], [1, 9])).toBeGreaterThan(0);
    expect(compareValues([[]], [null])).toBeGreaterThan(0);
  });

  it('is a total order: reflexive, antisymmetric and transitive on random values', () => {
    fc.assert(
      fc.property(indexValue, indexValue, indexValue, (a, b, c) => {
        expect(compareValues(a, a)).toBe(0);
        expect(sign(compareValues(a, b))).toBe(0 - sign(compareValues(b, a)));
        const sorted: IndexValue[] = [a, b, c];
        sorted.sort(compareValues);
        expect(compareValues(sorted[0], sorted[1])).toBeLessThanOrEqual(0);
        expect(compareValues(sorted[1], sorted[2])).toBeLessThanOrEqual(0);
        expect(compareValues(sorted[0], sorted[2])).toBeLessThanOrEqual(0);
      }),
      { seed: testSeed(1403), numRuns: 1000 },
    );
  });

  it('finds a value equal to its copy with every integer in the other representation', () => {
    const flip = (v: JsonValue): JsonValue => {
      if (typeof v === 'bigint') return Number.isSafeInteger(Number(v)) ? Number(v) : v;
      if (typeof v === 'number') return Number.isInteger(v) && Number.isSafeInteger(v) ? BigInt(v) : v;
      if (Array.isArray(v)) return v.map(flip);
      if (v !== null && typeof v === 'object') {
        const out: Record<string, JsonValue> = {};
        for (const [k, x] of Object.entries(v)) Object.defineProperty(out, k, { value: flip(x), enumerable: true });
        return out;
      }
      return v;
    };
    fc.assert(
      fc.property(jsonValue({ maxDepth: 4 }), (v) => {
        expect(compareValues(v, flip(v))).toBe(0);
      }),
      { seed: testSeed(1404), numRuns: 500 },
    );
  });
});
