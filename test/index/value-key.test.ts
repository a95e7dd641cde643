/**
 * The index key encoding agrees with the canonical value order byte for byte: for any two values the
 * encodings compare as `compareValues` does, equal values encode alike, every encoding decodes to a
 * value equal to the one encoded, and inverted bytes (a desc field) sort in reverse.
 */
import fc from 'fast-check';
import { compareValues, MISSING, type IndexValue } from '../../src/filter/value-order';
import { decodeValue, encodeValue } from '../../src/index/value-key';
import { invert } from '../../src/index/value-key';
import { jsonValue } from '../support/json-arbitrary';
import { testSeed } from '../support/random';

const sign = (n: number) => (n < 0 ? -1 : n > 0 ? 1 : 0);
const indexValue: fc.Arbitrary<IndexValue> = fc.oneof(
  { weight: 1, arbitrary: fc.constant(MISSING) },
  { weight: 12, arbitrary: jsonValue({ maxDepth: 3 }) },
);
/** Numbers near each other in every representation, where an inexact encoding would slip. */
const number: fc.Arbitrary<IndexValue> = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer({ min: -5, max: 5 }).map((d) => 2 ** 53 + d),
  fc.integer({ min: -5, max: 5 }).map((d) => 2n ** 53n + BigInt(d)),
  fc.integer({ min: -5, max: 5 }).map((d) => -(2n ** 64n) + BigInt(d)),
  fc.constantFrom(0, -0, 0n, 1, 1n, 0.5, -0.5, Number.MIN_VALUE, -Number.MIN_VALUE, Number.MAX_VALUE, 2n ** 1100n, -(2n ** 1100n)),
);

describe('index key encoding', () => {
  it('sorts as compareValues, for random values of every type', () => {
    fc.assert(
      fc.property(indexValue, indexValue, (a, b) => {
        expect(sign(Buffer.compare(encodeValue(a), encodeValue(b)))).toBe(sign(compareValues(a, b)));
      }),
      { seed: testSeed(1401), numRuns: 1500 },
    );
  });

  it('sorts numbers exactly, across doubles and bigints', () => {
    fc.assert(
      fc.property(number, number, (a, b) => {
        expect(sign(Buffer.compare(encodeValue(a), encodeValue(b)))).toBe(sign(compareValues(a, b)));
      }),
      { seed: testSeed(1402), numRuns: 1500 },
    );
  });

  it('decodes every encoding to an equal value that encodes to the same bytes', () => {
    fc.assert(
      fc.property(fc.oneof(indexValue, number), (v) => {
        const bytes = encodeValue(v);
        const back = decodeValue(bytes);
        expect(compareValues(back, v)).toBe(0);
        expect(encodeValue(back).equals(bytes)).toBe(true);
      }),
      { seed: testSeed(1403), numRuns: 1000 },
    );
  });

  it('gives one value one encoding: 1, 1.0 and 1n; -0 and 0', () => {
    expect(encodeValue(1)).toEqual(encodeValue(1n));
    expect(encodeValue(1.0)).toEqual(encodeValue(1n));
    expect(encodeValue(-0)).toEqual(encodeValue(0));
    expect(encodeValue(2 ** 60)).toEqual(encodeValue(2n ** 60n));
  });

  it('keeps bigints beyond 2^53 exact: 2^53 < 2^53+1 (bigint) < 2^53+2', () => {
    const order = [2 ** 53, 2n ** 53n + 1n, 2 ** 53 + 2].map((v) => encodeValue(v));
    expect(Buffer.compare(order[0], order[1])).toBe(-1);
    expect(Buffer.compare(order[1], order[2])).toBe(-1);
    expect(decodeValue(order[1])).toBe(2n ** 53n + 1n);
  });

  it('orders the types: missing < null < numbers < strings < objects < arrays < booleans', () => {
    const values: IndexValue[] = [MISSING, null, -1e300, 0, 7, '', 'a', {}, { a: 1 }, [], [0], false, true];
    const encoded = values.map((v) => encodeValue(v));
    for (let i = 1; i < encoded.length; i++) expect(Buffer.compare(encoded[i - 1], encoded[i])).toBe(-1);
  });

  it('orders strings by code point, not by UTF-16 unit', () => {
    // U+FF61 is one UTF-16 unit above the surrogates of U+1F600, but a lower code point.
    expect(Buffer.compare(encodeValue('\uff61'), encodeValue('\u{1f600}'))).toBe(-1);
    expect(Buffer.compare(encodeValue('a'), encodeValue('a\0'))).toBe(-1);
    expect(Buffer.compare(encodeValue('a\0'), encodeValue('a\x01'))).toBe(-1);
  });

  it('reverses the order of inverted (desc) encodings, which never prefix one another', () => {
    fc.assert(
      fc.property(indexValue, indexValue, (a, b) => {
        const c = sign(compareValues(a, b));
        expect(sign(Buffer.compare(invert(encodeValue(a)), invert(encodeValue(b))))).toBe(c === 0 ? 0 : -c);
      }),
      { seed: testSeed(1404), numRuns: 1000 },
    );
  });

  it('decodes numbers exactly on both sides of the short-number path (7 groups, exponent within ±1000)', () => {
    const values: (number | bigint)[] = [];
    for (const e of [-1001, -1000, -999, -1, 0, 1, 52, 53, 999, 1000, 1001]) {
      for (const bits of [0, 1, 48, 49, 50, 52]) {
        const n = (1 + (bits === 0 ? 0 : (2 ** bits - 1) / 2 ** bits)) * 2 ** e;
        values.push(n, -n);
      }
    }
    values.push(2n ** 60n + 1n, -(2n ** 60n) - 1n, 2n ** 1001n + 1n, Number.MIN_VALUE, -Number.MAX_VALUE);
    for (const v of values) {
      // Doubles come back as the same double; these bigints have no double form and stay bigints.
      expect({ v, back: decodeValue(encodeValue(v)) }).toEqual({ v, back: v });
    }
    expect(decodeValue(encodeValue('a\0b'))).toBe('a\0b');
  });
});
