import fc from 'fast-check';
import { isDeepStrictEqual } from 'node:util';
import { type DocumentError, isDocumentError } from '../../src/document/errors';
import { formatPath, MAX_PATH_COMPONENTS, parsePath } from '../../src/document/values/path';
import type { Path, PathElement } from '../../src/document/types';

/** The DocumentError `fn` throws (failing the test when it throws nothing or something else). */
function thrown(fn: () => unknown): DocumentError {
  try {
    fn();
  } catch (err) {
    if (isDocumentError(err)) return err;
    throw err;
  }
  throw new Error('expected a DocumentError, nothing was thrown');
}

function expectInvalid(path: Path, position: number, fragment?: string): void {
  const err = thrown(() => parsePath(path));
  expect(err.code).toBe('INVALID_PATH');
  expect(err.position).toBe(position);
  if (fragment !== undefined) expect(err.message).toContain(fragment);
}

describe('parsePath: the string syntax', () => {
  it.each<[string, PathElement[]]>([
    ['', []],
    ['a', ['a']],
    ['a.b.c', ['a', 'b', 'c']],
    ['a[0]', ['a', 0]],
    ['a[0][1]', ['a', 0, 1]],
    ['a[0].b', ['a', 0, 'b']],
    ['a[12].b[3][-1]', ['a', 12, 'b', 3, -1]],
    ['[1][2]', [1, 2]],
    ['[0]', [0]],
    ['[-1]', [-1]],
    ['[-1][-1]', [-1, -1]],
    ['[0].a', [0, 'a']],
    ['[-1].[-1]', [-1, -1]],
    ['a[0].[1].b', ['a', 0, 1, 'b']],
    ['a[9007199254740991]', ['a', Number.MAX_SAFE_INTEGER]],
  ])('parses %j', (path, expected) => {
    expect(parsePath(path)).toEqual(expected);
  });

  it('treats every component outside brackets as a string key, even when it looks like a number', () => {
    expect(parsePath('1.-1.0x10')).toEqual(['1', '-1', '0x10']);
  });

  it.each<[string, PathElement[]]>([
    ['`dot.ted`', ['dot.ted']],
    ['`dot.ted`.sub', ['dot.ted', 'sub']],
    ['`a[0]`[1]', ['a[0]', 1]],
    ['`back``tick`', ['back`tick']],
    ['````', ['`']],
    ['``', ['']],
    ['a.``.b', ['a', '', 'b']],
    ['pre`.mid.`post', ['pre.mid.post']],
    ['`]`', [']']],
  ])('backticks quote %j', (path, expected) => {
    expect(parsePath(path)).toEqual(expected);
  });

  it('matches keys as decoded strings: quotes, backslashes, NUL and any unicode need no escaping', () => {
    expect(parsePath('say "hi".back\\slash')).toEqual(['say "hi"', 'back\\slash']);
    expect(parsePath('nul\u0000key.tab\there')).toEqual(['nul\u0000key', 'tab\there']);
    expect(parsePath('日本.😀[0]')).toEqual(['日本', '😀', 0]);
    expect(parsePath('` `. ')).toEqual([' ', ' ']);
  });

  it('accepts 31 components and rejects 32, naming the limit', () => {
    const keys = Array.from({ length: MAX_PATH_COMPONENTS }, (_, i) => `k${i}`);
    expect(parsePath(keys.join('.'))).toEqual(keys);
    expect(parsePath('a' + '[0]'.repeat(30))).toHaveLength(31);
    const tooMany = [...keys, 'x'].join('.');
    expectInvalid(tooMany, tooMany.length - 1, `more than ${MAX_PATH_COMPONENTS} components`);
    expectInvalid('a' + '[0]'.repeat(31), 1 + 3 * 30, 'limit');
  });
});

describe('parsePath: invalid strings fail with INVALID_PATH at the offending character', () => {
  it.each<[string, number, string]>([
    // Empty components.
    ['a..b', 2, 'empty component'],
    ['.a', 0, 'empty component'],
    ['a.', 1, "cannot end with '.'"],
    ['a[0].', 4, "cannot end with '.'"],
    ['a.[0]', 2, 'empty component'],
    ['.', 0, 'empty component'],
    // Brackets in unquoted keys.
    ['a.b]c', 3, "unexpected ']'"],
    ['a]', 1, "unexpected ']'"],
    [']', 0, "unexpected ']'"],
    // Indices.
    ['a[]', 2, 'empty index'],
    ['a[x]', 2, "unexpected 'x'"],
    ['a[1x]', 3, "unexpected 'x'"],
    ['a[ 1]', 2, "unexpected ' '"],
    ['a[+1]', 2, "unexpected '+'"],
    ['a[1.5]', 3, "unexpected '.'"],
    ['a[-2]', 2, 'the only negative index is [-1]'],
    ['a[-10]', 2, 'the only negative index is [-1]'],
    ['a[-0]', 2, 'the only negative index is [-1]'],
    ['a[-]', 2, 'the only negative index is [-1]'],
    ['a[01]', 2, 'leading zeros'],
    ['a[00]', 2, 'leading zeros'],
    ['a[1', 3, 'unterminated index'],
    ['a[-1', 4, 'unterminated index'],
    ['a[', 2, 'unterminated index'],
    ['a[9007199254740992]', 2, 'too large'],
    ['a[12345678901234567]', 18, 'too large'],
    // What may follow ']'.
    ['hello[0]world', 8, "after ']'"],
    ['a[0]`b`', 4, "after ']'"],
    // Backticks.
    ['`abc', 0, 'unbalanced backtick'],
    ['a.`b``', 2, 'unbalanced backtick'],
    ['a.b`c', 3, 'unbalanced backtick'],
    // Lone surrogates have no UTF-8 form.
    ['a\ud800b', 1, 'surrogate'],
    ['`\udc00`', 1, 'surrogate'],
  ])('%j at position %i', (path, position, fragment) => {
    expectInvalid(path, position, fragment);
  });

  it('says what is wrong, where, and in which path', () => {
    expect(thrown(() => parsePath('a.b]c')).message).toBe(`INVALID_PATH: unexpected ']' outside backticks at position 3 in "a.b]c"`);
  });

  it('shortens very long paths in messages', () => {
    const err = thrown(() => parsePath('x'.repeat(10_000) + ']'));
    expect(err.position).toBe(10_000);
    expect(err.message.length).toBeLessThan(400);
  });
});

describe('parsePath: the array form', () => {
  it('takes strings as keys (any string) and numbers as indices', () => {
    expect(parsePath([])).toEqual([]);
    expect(parsePath(['a', 0, 'b.c', '', '[1]', '`', -1])).toEqual(['a', 0, 'b.c', '', '[1]', '`', -1]);
    expect(parsePath(['1', 1])).toEqual(['1', 1]);
  });

  it('returns a new array', () => {
    const input: PathElement[] = ['a', 1];
    const out = parsePath(input);
    expect(out).not.toBe(input);
    out.push('b');
    expect(input).toEqual(['a', 1]);
  });

  it('takes -0 as index 0', () => {
    expect(Object.is(parsePath([-0])[0], 0)).toBe(true);
  });

  it.each<[string, unknown[], number]>([
    ['a negative index other than -1', ['a', -2], 1],
    ['a fraction', [1.5], 0],
    ['NaN', ['a', 'b', NaN], 2],
    ['Infinity', [Infinity], 0],
    ['an unsafe integer', [2 ** 53], 0],
    ['a bigint', [1n], 0],
    ['null', ['a', null], 1],
    ['undefined', [undefined], 0],
    ['an object', [{}], 0],
    ['a nested array', [['a']], 0],
    ['a boolean', [true], 0],
    ['a key with a lone surrogate', ['ok', 'x\udbff'], 1],
  ])('rejects %s, with position = the element index', (_, path, position) => {
    expectInvalid(path as PathElement[], position);
  });

  it(`rejects more than ${MAX_PATH_COMPONENTS} elements`, () => {
    expect(parsePath(new Array<PathElement>(31).fill('a'))).toHaveLength(31);
    expectInvalid(new Array<PathElement>(32).fill('a'), 31, 'limit of 31');
  });

  it('rejects what is neither a string nor an array', () => {
    expectInvalid(42 as unknown as Path, 0, 'a path is a string or an array');
    expectInvalid(undefined as unknown as Path, 0);
  });
});

describe('formatPath', () => {
  it.each<[PathElement[], string]>([
    [[], ''],
    [['a', 'b'], 'a.b'],
    [['a', 0, 'b', -1], 'a[0].b[-1]'],
    [[0, 1], '[0][1]'],
    [[0, 'a'], '[0].a'],
    [['dot.ted'], '`dot.ted`'],
    [['back`tick'], '`back``tick`'],
    [[''], '``'],
    [['a[0]', ']'], '`a[0]`.`]`'],
    [['1'], '1'],
    [['say "hi"'], 'say "hi"'],
  ])('formats %j as %j', (path, expected) => {
    expect(formatPath(path)).toBe(expected);
  });

  it('formats paths longer than the parse limit (for messages)', () => {
    expect(formatPath(new Array<PathElement>(40).fill(0))).toBe('[0]'.repeat(40));
  });

  it('rejects an index parsePath would reject, naming the element', () => {
    const err = thrown(() => formatPath(['a', -2]));
    expect(err.code).toBe('INVALID_PATH');
    expect(err.position).toBe(1);
  });

  it('round-trips: parsePath(formatPath(p)) deep-equals p for random paths', () => {
    const key = fc.oneof(
      fc.string({ unit: fc.constantFrom('a', '.', '[', ']', '`', '"', '\\', ' ', '\u0000', '0', '-'), maxLength: 6 }),
      fc.string({ unit: 'grapheme', maxLength: 4 }),
    );
    const index = fc.oneof(fc.constant(-1), fc.nat(1000), fc.constant(Number.MAX_SAFE_INTEGER));
    const path = fc.array(fc.oneof(key, index), { maxLength: MAX_PATH_COMPONENTS });
    fc.assert(
      fc.property(path, (p) => isDeepStrictEqual(parsePath(formatPath(p)), p)),
      { seed: 42, numRuns: 1000 },
    );
  });

  it('is the canonical form: formatting what a string parses to gives back a string that parses the same', () => {
    for (const path of ['a.`b`', 'pre`.mid.`post', '`x`[0]', '[1][2].c']) {
      const elements = parsePath(path);
      expect(parsePath(formatPath(elements))).toEqual(elements);
    }
    expect(formatPath(parsePath('a.`b`'))).toBe('a.b');
  });
});
