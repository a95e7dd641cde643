/**
 * fast-check arbitraries for JSON documents as the document layer stores them, and the form a value
 * is read back in. They aim at the layout's edges: keys that are empty or look like path syntax
 * (`.`, `[`, backticks) or hold NUL and astral characters, keys such as `__proto__` that naive object
 * building mishandles, empty containers at every level, integers on both sides of 2^53, doubles of
 * every size, and occasionally a string long enough to be chunked, with multi-byte characters across
 * the chunk boundaries.
 */
import fc from 'fast-check';
import type { JsonObject, JsonValue } from '../../src/document/types';

const SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** Object keys: any Unicode (no lone surrogates, which UTF-8 cannot hold), path syntax, NUL, `""`. */
export const jsonKey: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 8 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 8 }) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '',
      '.',
      '[',
      ']',
      '`',
      '``',
      '\0',
      'a\0b',
      'a.b',
      '[0]',
      '0',
      '-1',
      '__proto__',
      'constructor',
      'é',
      '\uffff',
      '\u{10ffff}',
      ' ',
    ),
  },
);

/** Strings a leaf holds: short, any Unicode, with NUL (the tuple layer's escape byte). */
export const jsonString: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.string({ unit: fc.constantFrom('\0', '\xff', 'a', 'é', '\u0800', '\uffff', '\u{10000}', '\u{10ffff}'), maxLength: 12 }),
);

/**
 * A string of 100,001 to 250,000 UTF-8 bytes: more than one value can hold, so it is chunked, made of
 * a character of 1 to 4 bytes so that chunk boundaries fall inside characters.
 */
export const longString: fc.Arbitrary<string> = fc
  .record({
    unit: fc.constantFrom('a', 'é', '\u20ac', '\u{1f600}'),
    bytes: fc.integer({ min: 100_001, max: 250_000 }),
    tail: fc.string({ unit: 'binary', maxLength: 5 }),
  })
  .map(({ unit, bytes, tail }) => unit.repeat(Math.ceil(bytes / Buffer.byteLength(unit))) + tail);

/** Integers: small, near 2^53 on both sides (as numbers when safe), and bigints far beyond. */
export const jsonInteger: fc.Arbitrary<number | bigint> = fc.oneof(
  fc.integer({ min: -1000, max: 1000 }),
  fc.maxSafeInteger(),
  fc.constantFrom(0, 1, -1, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, 2 ** 31, -(2 ** 31), 2 ** 32),
  fc.oneof(fc.bigInt({ min: SAFE + 1n, max: 2n ** 64n + 5n }), fc.bigInt({ min: -(2n ** 64n) - 5n, max: -SAFE - 1n })),
  fc.constantFrom(2n ** 53n, -(2n ** 53n), 2n ** 63n - 1n, -(2n ** 63n), 2n ** 64n, 2n ** 200n, -(2n ** 200n)),
);

/** Doubles: any finite number, `-0` and integral ones beyond 2^53 included. */
export const jsonDouble: fc.Arbitrary<number> = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(-0, 0.5, -1.5, 2 ** 53 + 2, 1e300, Number.MAX_VALUE, Number.MIN_VALUE, Number.EPSILON),
);

export const jsonScalar: fc.Arbitrary<JsonValue> = fc.oneof(fc.constant(null), fc.boolean(), jsonInteger, jsonDouble, jsonString);

export interface JsonArbitraryOptions {
  /** Deepest nesting of containers below the root (the root is depth 1). Default 5. */
  maxDepth?: number;
  /** Most children per container. Default 5. */
  maxChildren?: number;
  /** Chance, among scalars, of a string long enough to be chunked. Default 0: long strings cost time. */
  longStrings?: boolean;
}

/** Any JSON value, scalars included. */
export function jsonValue(options: JsonArbitraryOptions = {}): fc.Arbitrary<JsonValue> {
  const maxChildren = options.maxChildren ?? 5;
  const scalar: fc.Arbitrary<JsonValue> = options.longStrings
    ? fc.oneof({ weight: 30, arbitrary: jsonScalar }, { weight: 1, arbitrary: longString })
    : jsonScalar;
  const { value } = fc.letrec<{ value: JsonValue; array: JsonValue[]; object: JsonObject }>((tie) => ({
    value: fc.oneof({ maxDepth: options.maxDepth ?? 5, depthSize: 'small' }, scalar, tie('array'), tie('object')),
    array: fc.array(tie('value'), { maxLength: maxChildren }),
    object: fc.dictionary(jsonKey, tie('value'), { maxKeys: maxChildren, noNullPrototype: true }),
  }));
  return value;
}

/** A document: an object at the root (the usual case) or an array. */
export function jsonDocument(options: JsonArbitraryOptions = {}): fc.Arbitrary<JsonValue> {
  const maxChildren = options.maxChildren ?? 5;
  const child = jsonValue({ ...options, maxDepth: (options.maxDepth ?? 5) - 1 });
  return fc.oneof(
    { weight: 4, arbitrary: fc.dictionary(jsonKey, child, { maxKeys: maxChildren, noNullPrototype: true }) },
    { weight: 1, arbitrary: fc.array(child, { maxLength: maxChildren }) },
  );
}

/**
 * What the layer returns for a stored value, the decisions of the issue made explicit:
 * - a number comes back as the same number, `-0` and integral numbers beyond 2^53 included (`leaf.ts`
 *   stores them as doubles; JSON text would lose the sign of `-0`);
 * - a bigint comes back as a number inside the safe range and as a bigint beyond it;
 * - object keys come back sorted by UTF-8 bytes, which `toEqual` does not see.
 */
export function roundTripped(value: JsonValue): JsonValue {
  if (typeof value === 'bigint') return decodedInteger(value);
  if (Array.isArray(value)) return value.map(roundTripped);
  if (value !== null && typeof value === 'object') {
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(value)) {
      // defineProperty, so that a `__proto__` key is a key and not the prototype.
      Object.defineProperty(out, k, { value: roundTripped(v), enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  return value;
}

function decodedInteger(n: bigint): number | bigint {
  return n >= -SAFE && n <= SAFE ? Number(n) : n;
}
