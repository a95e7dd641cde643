import fc from 'fast-check';
import { isDocumentError } from '../../src/document/errors';
import { countChildren, flatten, flattenChecked, MAX_DOCUMENT_BYTES, unflatten, type Entries } from '../../src/document/values/flatten';
import { assertJsonValue } from '../../src/document/values/json-value';
import { childKey } from '../../src/document/keys/layout';
import { ARRAY_VALUE, decodeScalar, encodeScalar, isLongString, MAX_LEAF_BYTES, OBJECT_VALUE } from '../../src/document/values/leaf';
import type { JsonValue } from '../../src/document/types';
import { Limits } from '../../src/kv/contract/limits';
import type { KeyValue } from '../../src/kv/contract/types';
import { Double, pack } from '../../src/tuple';
import { jsonValue, longString, roundTripped } from '../support/json-arbitrary';
import { testSeed } from '../support/random';
import { documentErrorCode } from '../support/document-assertions';

/** What a range read returns: the entries in key order. */
function sorted(entries: Entries): KeyValue[] {
  return entries.keys.map((key, i) => ({ key, value: entries.values[i] })).sort((a, b) => Buffer.compare(a.key, b.key));
}

const BASE = Buffer.from('base');

function roundTrip(value: JsonValue, base: Buffer = BASE): JsonValue {
  const entries = sorted(flatten(value, base, Limits.maxKeyBytes));
  return unflatten(entries, 0, entries.length, base.length);
}

describe('flatten', () => {
  it('writes a marker for every container and a packed leaf for every scalar, at tuple paths', () => {
    const entries = flatten({ a: [1, { b: null }], c: {}, d: [] }, BASE, Limits.maxKeyBytes);
    const expected: [Buffer, Buffer][] = [
      [BASE, OBJECT_VALUE],
      [pack(['a']), ARRAY_VALUE],
      [pack(['a', 0]), pack([1])],
      [pack(['a', 1]), OBJECT_VALUE],
      [pack(['a', 1, 'b']), pack([null])],
      [pack(['c']), OBJECT_VALUE],
      [pack(['d']), ARRAY_VALUE],
    ].map(([path, value]) => [path === BASE ? BASE : Buffer.concat([BASE, path]), value]);
    expect(entries.keys).toEqual(expected.map(([key]) => key));
    expect(entries.values).toEqual(expected.map(([, value]) => value));
    // Keys count three times: the mutation and its write conflict range (the key and the key after it).
    expect(entries.bytes).toBe(expected.reduce((n, [key, value]) => n + 3 * key.length + 1 + value.length, 0));
  });

  it('keeps {}, [], null and "" apart', () => {
    const values: JsonValue[] = [{}, [], null, '', 0, false, { x: {} }, { x: [] }, { x: null }, [[]], [{}]];
    for (const value of values) {
      expect(roundTrip(value)).toEqual(value);
    }
    expect(roundTrip({ x: {} })).not.toEqual({ x: [] });
  });

  it('stores safe integers and bigints as tuple integers and other numbers, integral ones beyond 2^53 too, as doubles', () => {
    expect(encodeScalar(5)).toEqual(pack([5]));
    expect(encodeScalar(5n)).toEqual(pack([5]));
    expect(encodeScalar(Number.MAX_SAFE_INTEGER)).toEqual(pack([Number.MAX_SAFE_INTEGER]));
    expect(encodeScalar(2n ** 70n)).toEqual(pack([2n ** 70n]));
    expect(encodeScalar(1.5)[0]).toBe(0x21);
    expect(encodeScalar(-0)[0]).toBe(0x21);
    expect(encodeScalar(2 ** 53)).toEqual(pack([new Double(2 ** 53)]));
    expect(encodeScalar(1e300)).toEqual(pack([new Double(1e300)]));
  });

  it('packs short strings and small integers as the tuple encoder does, at the edges of their short forms', () => {
    const ascii = Array.from({ length: 127 }, (_, i) => String.fromCharCode(i + 1)).join('');
    const strings = [
      '',
      'a',
      'user7@example.com',
      ascii,
      'x'.repeat(64),
      'x'.repeat(65),
      'a\0b',
      '\0',
      'caf\u00e9',
      '\u{1f600}',
      'x'.repeat(63) + '\u00e9',
    ];
    for (const s of strings) expect(encodeScalar(s)).toEqual(pack([s]));
    const integers = [1, -1, 127, 128, 255, 256, -255, -256, -257, 0xffff, -0xffff, 0x10000, -0x10000, 0, 4_294_967_296];
    for (const n of integers) expect(encodeScalar(n)).toEqual(pack([n]));
    expect(() => encodeScalar('a\ud800')).toThrow();
  });

  it('reads back short strings and small integers as the tuple decoder does, at the edges of their short forms', () => {
    const ascii = Array.from({ length: 127 }, (_, i) => String.fromCharCode(i + 1)).join('');
    const strings = ['', 'a', 'x'.repeat(12), 'x'.repeat(13), 'user7@example.com', ascii.slice(0, 64), ascii, 'a\0b', 'caf\u00e9', '\u{1f600}'];
    for (const s of strings) expect(decodeScalar(pack([s]))).toBe(s);
    const integers = [0, 1, -1, 127, 128, 255, 256, -255, -256, 0xffff, -0xffff, 0x10000, -0x10000];
    for (const n of integers) expect(decodeScalar(pack([n]))).toBe(n);
    // Bytes after the element are ignored, as the decoder ignores them.
    expect(decodeScalar(Buffer.concat([pack([5]), Buffer.of(0)]))).toBe(5);
    expect(decodeScalar(Buffer.concat([pack(['ab']), Buffer.of(0x41, 0)]))).toBe('ab');
    expect(() => decodeScalar(Buffer.of(0x02, 0x41))).toThrow();
  });

  it('reads back numbers as the same numbers, -0 included, and bigints as numbers when safe and bigints beyond', () => {
    expect(roundTrip({ a: 5n, b: 2n ** 53n, c: -(2n ** 64n), d: 2 ** 60, e: Number.MAX_SAFE_INTEGER, f: 1e21 })).toEqual({
      a: 5,
      b: 2n ** 53n,
      c: -(2n ** 64n),
      d: 2 ** 60,
      e: Number.MAX_SAFE_INTEGER,
      f: 1e21,
    });
    expect(Object.is(roundTrip(-0), -0)).toBe(true);
    expect(roundTrip([5e-324, 1.5, -2.25, 1.5e-300])).toEqual([5e-324, 1.5, -2.25, 1.5e-300]);
    expect(roundTrip(Number.MAX_VALUE)).toBe(Number.MAX_VALUE);
  });

  it('reads integers stored beyond 2^53 before numbers were stored as doubles as bigints, as before', () => {
    expect(decodeScalar(pack([2n ** 60n]))).toBe(2n ** 60n);
    expect(decodeScalar(pack([BigInt(1e21)]))).toBe(BigInt(1e21));
  });

  it('decodes doubles other clients wrote as the Double wrapper (integral values) as plain numbers', () => {
    expect(decodeScalar(pack([new Double(2)]))).toBe(2);
    expect(Object.is(decodeScalar(pack([new Double(-0)])), -0)).toBe(true);
    expect(decodeScalar(pack([0.1]))).toBe(0.1);
  });

  it('round-trips keys that are empty, hold NULs, dots, brackets, backticks or astral characters', () => {
    const doc: JsonValue = { '': 1, '\0': 2, 'a\0b': 3, 'a.b': 4, '[0]': 5, '`': 6, '\u{1f600}': 7, é: 8, nested: { '': { '': [] } } };
    expect(roundTrip(doc)).toEqual(doc);
  });

  it('reads a key that extends a container key with a NUL as a sibling, not a child', () => {
    for (const doc of [
      { '\0': -0, '': [] },
      { a: {}, 'a\0': 1, 'a\0\0': { b: [] } },
      { '': { '': 1 }, '\0': { '\0': 2 } },
    ] as JsonValue[]) {
      expect(roundTrip(doc)).toEqual(doc);
    }
  });

  it('round-trips a "__proto__" key as a key, not as the prototype', () => {
    const doc = JSON.parse('{"__proto__": {"x": 1}, "a": [{"__proto__": null}]}') as JsonValue;
    const back = roundTrip(doc) as Record<string, unknown>;
    expect(Object.getPrototypeOf(back)).toBe(Object.prototype);
    expect(Object.keys(back)).toEqual(['__proto__', 'a']);
    expect(Object.getOwnPropertyDescriptor(back, '__proto__')?.value).toEqual({ x: 1 });
  });

  it('returns object keys in stored order: sorted by UTF-8 bytes', () => {
    const keys = ['b', 'a', '\u{10000}', '\uffff', 'Z', '', 'aa', '\0'];
    const back = roundTrip(Object.fromEntries(keys.map((k, i) => [k, i]))) as Record<string, number>;
    expect(Object.keys(back)).toEqual([...keys].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y))));
  });

  it('gives the entries in key order, whatever the order of the fields, so the engine need not sort them', () => {
    const inKeyOrder = (entries: Entries) => entries.keys.every((key, i) => i === 0 || Buffer.compare(entries.keys[i - 1], key) < 0);
    const keys = ['b', 'a', '\u{10000}', '\uffff', '\ue000', 'Z', '', 'aa', 'a\0', 'a\0b', 'a\u0001', '\0'];
    const doc = { z: Object.fromEntries(keys.map((k, i) => [k, { y: i, x: [i, { q: 1, p: 'x'.repeat(MAX_LEAF_BYTES) }] }])), a: 1 };
    expect(inKeyOrder(flatten(doc, BASE, Limits.maxKeyBytes))).toBe(true);
    // The same shape again (the sorted names are reused), then another one at the same depths.
    expect(inKeyOrder(flatten(doc, BASE, Limits.maxKeyBytes))).toBe(true);
    expect(inKeyOrder(flatten({ z: { b: 1, a: 2 }, a: { d: 1, c: 2 } }, BASE, Limits.maxKeyBytes))).toBe(true);
    fc.assert(
      fc.property(jsonValue({ maxDepth: 6 }), (value) => {
        expect(inKeyOrder(flatten(value, BASE, Limits.maxKeyBytes))).toBe(true);
      }),
      { seed: testSeed(103), numRuns: 300 },
    );
  });

  it('round-trips any JSON value exactly, at any base key', () => {
    fc.assert(
      fc.property(jsonValue({ maxDepth: 6 }), fc.uint8Array({ maxLength: 12 }), (value, base) => {
        expect(roundTrip(value, Buffer.from(base))).toEqual(roundTripped(value));
      }),
      { seed: testSeed(101), numRuns: 300 },
    );
  });

  it('round-trips values nested to the depth limit', () => {
    let deep: JsonValue = 'leaf';
    for (let i = 1; i < 32; i++) deep = i % 2 ? { k: deep } : [deep];
    expect(roundTrip(deep)).toEqual(deep);
  });

  it('decodes the same key names for sibling objects of one shape, and different ones when they differ', () => {
    const rows = Array.from({ length: 20 }, (_, i): JsonValue => (i % 3 === 0 ? { id: i, name: `n${i}` } : { id: i, other: i, zz: [i] }));
    expect(roundTrip(rows)).toEqual(rows);
    const tricky: JsonValue = [{ 'a\0': 1 }, { a: 2 }, { 'a\0b': 3 }, { a: 4 }];
    expect(roundTrip(tricky)).toEqual(tricky);
  });

  it('decodes the key names of each document when documents of other shapes were read just before', () => {
    const docs: JsonValue[] = [{ a: 1, b: 2 }, { 'a\0': 1, b: 2 }, { ab: 1, b: { a: 3 } }, { a: { 'a\0b': 1 } }, { a: 1, b: 2 }, { b: 1 }];
    // Bases of different lengths, as documents with ids of different lengths have.
    const bases = ['x', 'longer base', ''].map((b) => Buffer.from(b));
    for (let round = 0; round < 3; round++) {
      docs.forEach((doc, i) => expect(roundTrip(doc, bases[(i + round) % bases.length])).toEqual(doc));
    }
  });

  it('gives array elements positions 0..n-1', () => {
    const entries = flatten(['x', 'y', 'z'], BASE, Limits.maxKeyBytes);
    expect(entries.keys.slice(1)).toEqual([0, 1, 2].map((i) => childKey(BASE, i)));
  });
});

describe('flatten: long strings', () => {
  /** A string whose packed leaf is exactly `bytes` bytes (type code and terminator included). */
  const packedOf = (bytes: number) => 'x'.repeat(bytes - 2);

  it('keeps a string whose packed leaf is exactly 100,000 bytes in one value', () => {
    const s = packedOf(MAX_LEAF_BYTES);
    expect(isLongString(s)).toBe(false);
    const entries = flatten({ s }, BASE, Limits.maxKeyBytes);
    expect(entries.keys).toHaveLength(2);
    expect(entries.values[1]).toHaveLength(MAX_LEAF_BYTES);
    expect(roundTrip({ s })).toEqual({ s });
  });

  it('chunks a string one byte longer: a header, then chunks right after it and before any sibling', () => {
    const s = packedOf(MAX_LEAF_BYTES + 1);
    expect(isLongString(s)).toBe(true);
    const entries = sorted(flatten({ s, t: 'after', r: 'before' }, BASE, Limits.maxKeyBytes));
    const keyOfS = Buffer.concat([BASE, pack(['s'])]);
    const sIndex = entries.findIndex((e) => e.key.equals(keyOfS));
    expect(entries[sIndex].value[0]).toBe(0x7e);
    expect(entries[sIndex + 1].key).toEqual(Buffer.concat([keyOfS, pack([null, 0])]));
    expect(entries[sIndex + 1].value.length).toBe(Buffer.byteLength(s));
    expect(entries[sIndex + 2].key).toEqual(Buffer.concat([BASE, pack(['t'])]));
    expect(entries[sIndex - 1].key).toEqual(Buffer.concat([BASE, pack(['r'])]));
    expect(unflatten(entries, 0, entries.length, BASE.length)).toEqual({ r: 'before', s, t: 'after' });
  });

  it('counts escaped NULs towards the packed size', () => {
    const s = '\0'.repeat(49_999);
    expect(isLongString(s)).toBe(false);
    expect(isLongString(s + '\0')).toBe(true);
    expect(roundTrip([s + '\0'])).toEqual([s + '\0']);
  });

  it('splits chunks of at most 100,000 bytes inside multi-byte characters and joins them back', () => {
    const s = '\u{1f600}'.repeat(60_001) + 'é';
    const entries = flatten(s, BASE, Limits.maxKeyBytes);
    expect(entries.keys).toHaveLength(1 + Math.ceil(Buffer.byteLength(s) / 100_000));
    for (const value of entries.values.slice(1)) expect(value.length).toBeLessThanOrEqual(100_000);
    expect(roundTrip(s)).toBe(s);
  });

  it('round-trips long strings anywhere in a value', () => {
    fc.assert(
      fc.property(longString, longString, (a, b) => {
        const doc = { list: [a, 'x', { b }], a };
        expect(roundTrip(doc)).toEqual(doc);
      }),
      { seed: testSeed(102), numRuns: 5 },
    );
  });
});

describe('flatten: limits', () => {
  it('fails with KEY_TOO_LARGE for a key over 10,000 bytes, naming the path', () => {
    expect(documentErrorCode(() => flatten({ ['k'.repeat(9_990)]: 1 }, BASE, Limits.maxKeyBytes))).toBeUndefined();
    expect(documentErrorCode(() => flatten({ ok: { ['k'.repeat(10_000)]: 1 } }, BASE, Limits.maxKeyBytes))).toBe('KEY_TOO_LARGE');
    expect(documentErrorCode(() => flatten(1, Buffer.alloc(10_001), Limits.maxKeyBytes))).toBe('KEY_TOO_LARGE');
  });

  it('counts keys as a transaction does: three times (the mutation and its write conflict range)', () => {
    const doc = { ['k'.repeat(20)]: Array.from({ length: 255 }, () => true) };
    // root: key 4, marker 1; "kkk...": key 4 + 22, marker 1; [0]: key 26 + 1, [1..254]: key 26 + 2;
    // `true` is 1 byte.
    const expected = 3 * 4 + 1 + 1 + (3 * 26 + 1 + 1) + (3 * 27 + 1 + 1) + 254 * (3 * 28 + 1 + 1);
    expect(flatten(doc, BASE, Limits.maxKeyBytes).bytes).toBe(expected);
    expect(documentErrorCode(() => flatten(doc, BASE, Limits.maxKeyBytes, undefined, expected))).toBeUndefined();
    expect(documentErrorCode(() => flatten(doc, BASE, Limits.maxKeyBytes, undefined, expected - 1))).toBe('DOCUMENT_TOO_LARGE');
  });

  it('fails with DOCUMENT_TOO_LARGE once the entries exceed 9,000,000 bytes', () => {
    const chunk = 'x'.repeat(99_000);
    expect(MAX_DOCUMENT_BYTES).toBe(9_000_000);
    expect(
      documentErrorCode(() =>
        flatten(
          Array.from({ length: 91 }, () => chunk),
          BASE,
          Limits.maxKeyBytes,
        ),
      ),
    ).toBe('DOCUMENT_TOO_LARGE');
    expect(
      documentErrorCode(() =>
        flatten(
          Array.from({ length: 90 }, () => chunk),
          BASE,
          Limits.maxKeyBytes,
        ),
      ),
    ).toBeUndefined();
  });
});

describe('unflatten', () => {
  const entriesOf = (value: JsonValue) => sorted(flatten(value, BASE, Limits.maxKeyBytes));

  it('reads a subtree out of the middle of a larger range', () => {
    const all = entriesOf({ a: 1, b: { c: [1, 2] }, d: 'x' });
    const bKey = Buffer.concat([BASE, pack(['b'])]);
    const from = all.findIndex((e) => e.key.equals(bKey));
    expect(unflatten(all, from, from + 4, bKey.length)).toEqual({ c: [1, 2] });
  });

  it('rejects entries no document could have: a missing root entry, a child without its parent', () => {
    const entries = entriesOf({ a: { b: 1 } });
    expect(() => unflatten(entries, 1, entries.length, BASE.length)).toThrow(/corrupt/);
    const withoutA = entries.filter((_, i) => i !== 1);
    expect(() => unflatten(withoutA, 0, withoutA.length, BASE.length)).toThrow(/corrupt/);
    const scalarWithChild = [
      { key: BASE, value: pack([1]) },
      { key: Buffer.concat([BASE, pack(['x'])]), value: pack([2]) },
    ];
    expect(() => unflatten(scalarWithChild, 0, 2, BASE.length)).toThrow(/corrupt/);
  });

  it('countChildren counts direct children only', () => {
    const entries = entriesOf({ a: { x: 1, y: [1, 2] }, b: 'x'.repeat(150_000), c: [] });
    expect(countChildren(entries, 0, entries.length, BASE.length)).toBe(3);
  });
});

describe('flattenChecked', () => {
  const messageOf = (fn: () => unknown): string | undefined => {
    try {
      fn();
    } catch (err) {
      if (isDocumentError(err)) return err.message;
      throw err;
    }
    return undefined;
  };

  it('throws what assertJsonValue throws, with its message and path, for what is not JSON', () => {
    const cycle: Record<string, unknown> = { a: 1 };
    cycle.self = { again: cycle };
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    const invalid: unknown[] = [
      { z: 1, a: [1, undefined] },
      cycle,
      deep,
      { n: NaN },
      { d: new Date(0) },
      // eslint-disable-next-line no-sparse-arrays -- the hole is the value under test.
      { h: [1, , 3] },
      { ['\udc00']: 1 },
      { s: 'x\ud800' },
      () => 1,
    ];
    for (const value of invalid) {
      const expected = messageOf(() => assertJsonValue(value, 'the document'));
      expect(expected).toBeDefined();
      expect(messageOf(() => flattenChecked(value, BASE, Limits.maxKeyBytes, 'the document'))).toBe(expected);
    }
  });

  it('refuses a lone surrogate in a long string, and in a name each time an object of that shape comes', () => {
    const invalid: unknown[] = [
      { s: `${'x'.repeat(MAX_LEAF_BYTES)}\ud800` },
      { k: 1, ['\udc00']: 2 },
      { k: 1, ['\udc00']: 2 },
      [{ ['\udc00']: 1 }, { ['\udc00']: 1 }],
    ];
    for (const value of invalid) {
      const expected = messageOf(() => assertJsonValue(value, 'the document'));
      expect(expected).toBeDefined();
      expect(messageOf(() => flattenChecked(value, BASE, Limits.maxKeyBytes, 'the document'))).toBe(expected);
    }
  });

  it('gives each document of a repeated shape the keys of its own names at every depth', () => {
    const keysOf = (value: JsonValue) => flattenChecked(value, BASE, Limits.maxKeyBytes, 'the document').keys;
    const paths = (...list: (string | number)[][]) => list.map((path) => (path.length === 0 ? BASE : Buffer.concat([BASE, pack(path)])));
    const shapes: [JsonValue, Buffer[]][] = [
      [{ b: 1, a: { y: 1, x: 2 } }, paths([], ['a'], ['a', 'x'], ['a', 'y'], ['b'])],
      [{ b: 2, a: { y: 3, x: 4 } }, paths([], ['a'], ['a', 'x'], ['a', 'y'], ['b'])],
      [{ b: 2, a: { y: 3, x: 4 } }, paths([], ['a'], ['a', 'x'], ['a', 'y'], ['b'])],
      [{ b: 2, a: { 'y\0': 3, x: 4 } }, paths([], ['a'], ['a', 'x'], ['a', 'y\0'], ['b'])],
      [[{ é: 1 }, { é: 2 }, { e: 3 }, { e: 4 }], paths([], [0], [0, 'é'], [1], [1, 'é'], [2], [2, 'e'], [3], [3, 'e'])],
    ];
    for (const [value, expected] of shapes) expect(keysOf(value)).toEqual(expected);
  });

  it('gives the entries flatten gives for every JSON value, symbol-keyed objects that are JSON included', () => {
    const hidden = { a: 1 };
    Object.defineProperty(hidden, Symbol('s'), { value: 1, enumerable: false });
    expect(flattenChecked({ hidden }, BASE, Limits.maxKeyBytes, 'the document')).toEqual(flatten({ hidden }, BASE, Limits.maxKeyBytes));
    fc.assert(
      fc.property(jsonValue({ maxDepth: 6 }), (value) => {
        expect(flattenChecked(value, BASE, Limits.maxKeyBytes, 'the document')).toEqual(flatten(value, BASE, Limits.maxKeyBytes));
      }),
      { seed: testSeed(104), numRuns: 100 },
    );
  });
});
