/**
 * readProperty and writeProperty give a key the meaning Node-RED's getObjectProperty and
 * setObjectProperty give it, checked against @node-red/util on random data and random keys: the same
 * value read, the same return value, the same error thrown, and the same data afterwards (holes in
 * arrays included).
 */
import fc from 'fast-check';
import { readProperty, writeProperty } from '../../src/node-red/object-property';
import { parsePropertyExpression } from '../../src/node-red/property-expression';
import { testSeed } from '../support/random';
import { nodeRedUtil } from './support/node-red-reference';

const keyName = fc.constantFrom('a', 'b', '0', '1', 'length');

const data: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom(null, true, 0, 7, 'xyz', ''),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(keyName, tie('value'), { maxKeys: 3 }),
  ),
})).value;

/** Keys as users write them: a root, then `.name`, `[n]` or `["name"]` segments. */
const expression = fc
  .tuple(
    fc.constantFrom('a', 'b', '0'),
    fc.array(
      fc.oneof(
        keyName.map((k) => `.${k}`),
        fc.integer({ min: 0, max: 3 }).map((n) => `[${n}]`),
        keyName.map((k) => `["${k}"]`),
      ),
      { maxLength: 4 },
    ),
  )
  .map(([root, segments]) => root + segments.join(''));

const newValue = fc.constantFrom(undefined, 1, 'v', null, { n: 1 }, [2]);

function outcome(run: () => unknown): { value?: unknown; threw?: string } {
  try {
    return { value: run() };
  } catch (err) {
    return { threw: (err as Error).constructor.name };
  }
}

function parts(text: string): (string | number)[] {
  const parsed = parsePropertyExpression(text);
  expect(parsed.error).toBeUndefined();
  return parsed.parts as (string | number)[];
}

describe('readProperty', () => {
  it('reads what getObjectProperty reads, and throws where it throws', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom('a', 'b', '0'), data), expression, (scope, text) => {
        expect(outcome(() => readProperty(scope, parts(text)))).toEqual(outcome(() => nodeRedUtil.getObjectProperty(scope, text)));
      }),
      { seed: testSeed(5201), numRuns: 1500 },
    );
  });

  it('reads JavaScript properties of arrays and strings, as Node-RED does', () => {
    const scope = { list: [1, 2, 3], text: 'héllo' };
    expect(readProperty(scope, parts('list.length'))).toBe(3);
    expect(readProperty(scope, parts('text[1]'))).toBe('é');
    expect(() => readProperty(scope, parts('missing.x'))).toThrow(TypeError);
  });
});

describe('writeProperty', () => {
  it('changes the data as setObjectProperty does, returns what it returns and throws where it throws', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom('a', 'b', '0'), data), expression, newValue, (scope, text, value) => {
        const reference = structuredClone(scope);
        const subject = structuredClone(scope);
        const expected = outcome(() => nodeRedUtil.setObjectProperty(reference, text, value));
        const actual = outcome(() => writeProperty(subject, parts(text), value));
        expect(actual).toEqual(expected);
        expect(subject).toStrictEqual(reference);
      }),
      { seed: testSeed(5202), numRuns: 2500 },
    );
  });

  it('creates missing parents as arrays before a number part and as objects otherwise', () => {
    const scope = {};
    expect(writeProperty(scope, parts('a.b[1].c'), 5)).toBe(true);
    const expected: unknown[] = [];
    expected[1] = { c: 5 };
    expect(scope).toStrictEqual({ a: { b: expected } });
  });

  it('does nothing under a string, number or null, and splices a deleted array element', () => {
    const scope: Record<string, unknown> = { s: 'text', n: null, list: [1, 2, 3] };
    expect(writeProperty(scope, parts('s.x'), 1)).toBe(false);
    expect(writeProperty(scope, parts('n.x'), 1)).toBe(false);
    expect(writeProperty(scope, parts('list[1]'), undefined)).toBe(true);
    expect(scope).toEqual({ s: 'text', n: null, list: [1, 3] });
  });
});
