import { type DocumentError, isDocumentError } from '../../src/document/errors';
import { assertJsonValue, MAX_DEPTH, valueDepth } from '../../src/document/values/json-value';
import type { JsonValue } from '../../src/document/types';

function thrown(fn: () => unknown): DocumentError {
  try {
    fn();
  } catch (err) {
    if (isDocumentError(err)) return err;
    throw err;
  }
  throw new Error('expected a DocumentError, nothing was thrown');
}

/** `leaf` wrapped in `levels` arrays: depth `levels + 1`. */
function nested(levels: number, leaf: unknown = 0): unknown {
  let value = leaf;
  for (let i = 0; i < levels; i++) value = [value];
  return value;
}

class Point {
  constructor(
    readonly x: number,
    readonly y: number,
  ) {}
}

describe('assertJsonValue: accepted values', () => {
  const shared = { a: 1 };
  it.each<[string, unknown]>([
    ['null', null],
    ['booleans', [true, false]],
    ['strings, including empty, NUL and astral characters', ['', 'a\u0000b', '😀', '日本']],
    ['finite numbers', [0, 1.5, -3, Number.MAX_VALUE, Number.MIN_VALUE]],
    ['bigints beyond 2^53', [2n ** 64n, -(2n ** 70n)]],
    ['-0 (kept as it is)', -0],
    ['empty containers', [{}, []]],
    ['objects with any string keys', { '': 1, 'a.b': 2, '[0]': 3, '`': 4, '\u0000': 5 }],
    ['objects without a prototype', Object.assign(Object.create(null) as object, { a: 1 })],
    ['the same object twice (not a cycle)', [shared, { b: shared }]],
  ])('accepts %s', (_, value) => {
    expect(() => assertJsonValue(value)).not.toThrow();
  });

  it('leaves -0 as -0', () => {
    const value: unknown = { z: -0 };
    assertJsonValue(value);
    expect(Object.is((value as { z: number }).z, -0)).toBe(true);
  });

  it('accepts an own "__proto__" key, as JSON.parse creates it', () => {
    expect(() => assertJsonValue(JSON.parse('{"__proto__": {"a": 1}}'))).not.toThrow();
  });

  it('ignores non-enumerable properties and named properties of arrays, as JSON.stringify does', () => {
    const object = {};
    Object.defineProperty(object, 'hidden', { value: undefined, enumerable: false });
    const array = Object.assign([1, 2], { extra: undefined });
    expect(() => assertJsonValue([object, array])).not.toThrow();
  });

  it('narrows the type', () => {
    const value: unknown = { a: [1] };
    assertJsonValue(value);
    const typed: JsonValue = value;
    expect(typed).toEqual({ a: [1] });
  });
});

describe('assertJsonValue: rejected values fail with INVALID_VALUE naming the path', () => {
  const cyclic: Record<string, unknown> = { a: { b: [] } };
  ((cyclic.a as Record<string, unknown>).b as unknown[]).push(cyclic);
  const selfArray: unknown[] = [];
  selfArray.push(selfArray);
  const symbolKeyed = { a: 1, [Symbol('s')]: 2 };
  // eslint-disable-next-line no-sparse-arrays -- the hole is the value under test.
  const holey = [1, , 3];

  it.each<[string, unknown, string, string]>([
    ['undefined at the root', undefined, '', 'undefined at the root'],
    ['undefined in an object', { a: { b: [0, 1, undefined] } }, 'a.b[2]', 'undefined at a.b[2]'],
    ['a function', { f: () => 1 }, 'f', 'a function at f'],
    ['a symbol', [Symbol('x')], '[0]', 'a symbol at [0]'],
    ['NaN', { n: NaN }, 'n', 'NaN at n'],
    ['Infinity', [Infinity], '[0]', 'Infinity at [0]'],
    ['-Infinity', [-Infinity], '[0]', '-Infinity at [0]'],
    ['a cycle through an object', cyclic, 'a.b[0]', 'a cycle'],
    ['an array containing itself', selfArray, '[0]', 'a cycle'],
    ['a Date (JSON.stringify would turn it into a string)', { at: new Date(0) }, 'at', 'class Date'],
    ['a Map', { m: new Map() }, 'm', 'class Map'],
    ['a Set', [new Set()], '[0]', 'class Set'],
    ['a RegExp', /x/, '', 'class RegExp'],
    ['a Buffer', { b: Buffer.from('x') }, 'b', 'class Buffer'],
    ['a typed array', { t: new Uint8Array(2) }, 't', 'class Uint8Array'],
    ['a boxed primitive', [new String('s')], '[0]', 'class String'],
    ['a class instance', { p: new Point(1, 2) }, 'p', 'class Point'],
    ['an array with a hole', { h: holey }, 'h[1]', 'hole'],
    ['an object with a symbol key', { o: symbolKeyed }, 'o', 'symbol key'],
    ['a string with a lone surrogate', { s: 'a\ud800' }, 's', 'lone UTF-16 surrogate'],
    ['a key with a lone surrogate', { ['k\udc00']: 1 }, '', 'lone UTF-16 surrogate'],
    ['a key that needs quoting in the path', { 'a.b': [undefined] }, '`a.b`[0]', 'undefined at `a.b`[0]'],
  ])('rejects %s', (_, value, path, fragment) => {
    const err = thrown(() => assertJsonValue(value));
    expect(err.code).toBe('INVALID_VALUE');
    expect(err.path).toBe(path);
    expect(err.message).toContain(fragment);
  });

  it('says what is wrong and where', () => {
    expect(thrown(() => assertJsonValue({ a: { b: [0, 1, undefined] } })).message).toBe('INVALID_VALUE: undefined at a.b[2]');
  });

  it('names the value when told what it is', () => {
    expect(thrown(() => assertJsonValue([NaN], 'the value of spec 2')).message).toBe('INVALID_VALUE: NaN at [0] in the value of spec 2');
  });

  it('reports the first problem in document order', () => {
    expect(thrown(() => assertJsonValue({ a: [1, {}], b: undefined, c: NaN })).path).toBe('b');
  });
});

describe('assertJsonValue: depth', () => {
  it(`accepts a value of depth ${MAX_DEPTH} and rejects ${MAX_DEPTH + 1} with VALUE_TOO_DEEP`, () => {
    expect(() => assertJsonValue(nested(MAX_DEPTH - 1))).not.toThrow();
    expect(() => assertJsonValue(nested(MAX_DEPTH - 1, {}))).not.toThrow();
    const err = thrown(() => assertJsonValue(nested(MAX_DEPTH)));
    expect(err.code).toBe('VALUE_TOO_DEEP');
    expect(err.message).toContain(`deeper than ${MAX_DEPTH} levels`);
    expect(err.path).toBe('[0]'.repeat(MAX_DEPTH));
  });

  it('counts an empty container as a level, like a scalar', () => {
    expect(thrown(() => assertJsonValue(nested(MAX_DEPTH, []))).code).toBe('VALUE_TOO_DEEP');
  });

  it('fails with VALUE_TOO_DEEP, not a stack overflow, for a 100,000-deep value', () => {
    expect(thrown(() => assertJsonValue(nested(100_000))).code).toBe('VALUE_TOO_DEEP');
    let object: unknown = null;
    for (let i = 0; i < 100_000; i++) object = { o: object };
    expect(thrown(() => assertJsonValue(object)).code).toBe('VALUE_TOO_DEEP');
  });

  it('validates wide values', () => {
    const wide = Array.from({ length: 20_000 }, (_, i) => ({ i, s: String(i) }));
    expect(() => assertJsonValue(wide)).not.toThrow();
  });
});

describe('valueDepth', () => {
  it.each<[string, JsonValue, number]>([
    ['a scalar', 5, 1],
    ['null', null, 1],
    ['an empty object', {}, 1],
    ['an empty array', [], 1],
    ['a flat array', [3, 4], 2],
    ['a nested array', [[5]], 3],
    ['an array holding an empty one', [[]], 2],
    ['the deepest branch of an uneven value', { a: 1, b: { c: [1, [2]] }, d: [] }, 5],
  ])('is 1 for a scalar or empty container, plus 1 per level: %s', (_, value, depth) => {
    expect(valueDepth(value)).toBe(depth);
  });

  it('measures values deeper than MAX_DEPTH, without recursion', () => {
    expect(valueDepth(nested(50_000) as JsonValue)).toBe(50_001);
  });

  it('rejects what is not JSON with INVALID_VALUE rather than looping on a cycle', () => {
    const cyclic: JsonValue[] = [];
    cyclic.push(cyclic);
    expect(thrown(() => valueDepth(cyclic)).code).toBe('INVALID_VALUE');
  });
});
