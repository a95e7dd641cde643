import { JsonSyntaxError, parseJson, stringifyJson } from '../../src/cli/json-text';
import type { JsonValue } from '../../src/document/types';

function syntaxError(text: string): JsonSyntaxError {
  try {
    parseJson(text);
  } catch (err) {
    if (err instanceof JsonSyntaxError) return err;
    throw err;
  }
  throw new Error(`${JSON.stringify(text)} parsed`);
}

describe('parseJson', () => {
  it('parses what JSON.parse parses, the same way', () => {
    for (const text of ['{"a":[1,2.5,-3e2,true,false,null,"x\\u00e9\\n"],"b":{}}', '[]', '"s"', ' 0 ', '-0', '1e400']) {
      expect(parseJson(text)).toEqual(JSON.parse(text));
    }
  });

  it('keeps integers beyond 2^53 exact, as bigint', () => {
    expect(parseJson('{"big": 123456789012345678901234567890, "safe": 9007199254740991, "float": 1234567890123456789.5}')).toEqual({
      big: 123456789012345678901234567890n,
      safe: 9007199254740991,
      float: Number('1234567890123456789.5'),
    });
    expect(parseJson('[-9007199254740993]')).toEqual([-9007199254740993n]);
  });

  it('makes __proto__ an own property, as JSON.parse does', () => {
    const parsed = parseJson('{"__proto__": {"x": 1}, "n": 12345678901234567890}') as Record<string, unknown>;
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
    expect(Object.keys(parsed)).toEqual(['__proto__', 'n']);
  });

  it('gives the offset of the offending character', () => {
    expect(syntaxError('{"a": }')).toMatchObject({ offset: 6, reason: 'expected a JSON value, found "}"' });
    expect(syntaxError('{"a": 1,}')).toMatchObject({ offset: 8, reason: 'expected a property name in double quotes, found "}"' });
    expect(syntaxError('[1 2]')).toMatchObject({ offset: 3, reason: "expected ',' or ']' after an array element, found \"2\"" });
    expect(syntaxError('{"a": 1')).toMatchObject({ offset: 7, reason: "expected ',' or '}' after a property value, found the end of the text" });
    expect(syntaxError('"abc')).toMatchObject({ offset: 0, reason: 'unterminated string' });
    expect(syntaxError('01')).toMatchObject({ offset: 1, reason: 'unexpected text after the JSON value' });
    expect(syntaxError('"a\\x"')).toMatchObject({ offset: 2, reason: 'bad escape in a string' });
    expect(syntaxError('')).toMatchObject({ offset: 0 });
    expect(syntaxError('[1, 12345678901234567890,]')).toMatchObject({ offset: 25 });
  });
});

describe('stringifyJson', () => {
  it('writes what JSON.stringify writes, at any indent', () => {
    const value: JsonValue = { a: [1, { b: 'x"y' }, [], {}], c: null, d: -0.5 };
    expect(stringifyJson(value)).toBe(JSON.stringify(value));
    expect(stringifyJson(value, 2)).toBe(JSON.stringify(value, null, 2));
  });

  it('writes bigints as integer literals, in the same layout', () => {
    const value: JsonValue = { a: [1n, { b: 123456789012345678901234567890n }, [], {}], c: 'x' };
    const asNumbers = { a: [1, { b: 7 }, [], {}], c: 'x' };
    expect(stringifyJson(value)).toBe('{"a":[1,{"b":123456789012345678901234567890},[],{}],"c":"x"}');
    expect(stringifyJson(value, 2)).toBe(JSON.stringify(asNumbers, null, 2).replace('7', '123456789012345678901234567890'));
    // JSON.stringify indents by at most 10 spaces.
    expect(stringifyJson(value, 12)).toBe(JSON.stringify(asNumbers, null, 12).replace('7', '123456789012345678901234567890'));
    // A bigint in the safe range reads back as a number, as the document layer returns it.
    expect(parseJson(stringifyJson(value))).toEqual({ a: [1, { b: 123456789012345678901234567890n }, [], {}], c: 'x' });
  });
});

describe('stringifyJson then parseJson', () => {
  it('keeps -0 (JSON.stringify writes 0)', () => {
    expect(stringifyJson({ a: -0, b: [0, -0] })).toBe('{"a":-0,"b":[0,-0]}');
    expect(stringifyJson(-0)).toBe('-0');
    expect(Object.is(parseJson(stringifyJson(-0)), -0)).toBe(true);
    expect(stringifyJson({ a: -0 }, 2)).toBe('{\n  "a": -0\n}');
  });

  it('keeps an integral number beyond 2^53 a number, and a bigint a bigint', () => {
    const value: JsonValue = [2 ** 53, -(2 ** 60), 2n ** 53n, 1e21, 123.5];
    expect(stringifyJson(value)).toBe('[9007199254740992.0,-1152921504606847000.0,9007199254740992,1e+21,123.5]');
    expect(parseJson(stringifyJson(value))).toEqual(value);
  });
});
