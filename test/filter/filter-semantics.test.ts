/**
 * The filter language by hand: MongoDB's semantics at the edges (array traversal, null and missing,
 * type brackets, numeric path components), the places where the mingo reference model differs from
 * MongoDB, and the typed errors for filters that are not valid.
 */
import { compileFilter } from '../../src/filter';
import { valuesAt } from '../../src/filter/path-values';
import { MISSING } from '../../src/filter/value-order';
import { isDocumentError } from '../../src/document/errors';
import type { JsonValue } from '../../src/document/types';

type Case = [filter: Record<string, unknown>, doc: JsonValue, matches: boolean];

function check(cases: Case[]): void {
  for (const [filter, doc, expected] of cases) {
    const got = compileFilter(filter).matches(doc);
    if (got !== expected) throw new Error(`${JSON.stringify(filter)} on ${JSON.stringify(doc)}: expected ${expected}, got ${got}`);
  }
}

describe('paths and arrays', () => {
  it('reaches the elements of an array at the end of a path, and the array itself', () => {
    expect(valuesAt({ a: [1, [2]] }, ['a'])).toEqual([1, [2], [1, [2]]]);
    check([
      [{ tags: 'x' }, { tags: ['x', 'y'] }, true],
      [{ tags: ['x', 'y'] }, { tags: ['x', 'y'] }, true],
      [{ tags: ['y', 'x'] }, { tags: ['x', 'y'] }, false],
      [{ tags: [] }, { tags: [] }, true],
    ]);
  });

  it('searches objects inside arrays for the rest of the path', () => {
    check([
      [{ 'items.sku': 'b' }, { items: [{ sku: 'a' }, { sku: 'b' }] }, true],
      [{ 'items.sku': 'b' }, { items: [{ sku: ['a', 'b'] }] }, true],
      [{ 'a.b.c': 1 }, { a: [{ b: [{ c: 1 }] }] }, true],
      [{ 'a.b': 1 }, { a: [[{ b: 1 }]] }, false], // nested arrays are not searched
    ]);
  });

  it('does not descend into arrays nested in the array at the end of a path', () => {
    // MongoDB compares the inner array as one value; mingo flattens it on dotted paths.
    check([
      [{ a: 'x' }, { a: [['x']] }, false],
      [{ 'a.b': 'x' }, { a: { b: [['x']] } }, false], // mingo: true
      [{ a: ['x'] }, { a: [['x']] }, true],
      [{ a: { $gt: 1 } }, { a: [[5]] }, false],
    ]);
  });

  it('takes a numeric component as an array index and as an object key', () => {
    check([
      [{ 'a.1': 'y' }, { a: ['x', 'y'] }, true],
      [{ 'a.0': 'y' }, { a: ['x', 'y'] }, false],
      [{ 'a.0.b': 1 }, { a: [{ b: 1 }] }, true],
      [{ 'a.0': 1 }, { a: [{ '0': 1 }] }, true], // by key inside the element (mingo: false)
      [{ 'a.0.0': 1 }, { a: [[1]] }, true], // index into a nested array
      [{ 'a.0': 1 }, { a: [[1]] }, false], // the element at an index is taken whole
      [{ 'a.00': 1 }, { a: [1] }, false], // "00" names no index
      [{ 'a.1': 1 }, { a: { '1': 1 } }, true],
    ]);
  });

  it('treats a document that is an array as an object keyed by index', () => {
    check([
      [{ '0': 'x' }, ['x', 'y'], true],
      [{ '1.b': 2 }, [{}, { b: 2 }], true],
    ]);
  });
});

describe('null and missing', () => {
  it('matches a missing path with null in $eq, $in, $gte and $lte, never with other operators', () => {
    check([
      [{ a: null }, {}, true],
      [{ a: null }, { a: null }, true],
      [{ a: null }, { a: 0 }, false],
      [{ a: { $in: [null, 5] } }, {}, true],
      [{ a: { $gte: null } }, {}, true], // mingo: false
      [{ a: { $lte: null } }, { a: null }, true],
      [{ a: { $gt: null } }, { a: null }, false],
      [{ a: { $lt: null } }, {}, false],
      [{ a: { $ne: null } }, {}, false],
      [{ a: { $ne: null } }, { a: 1 }, true],
      [{ 'a.b': null }, { a: 5 }, true],
      [{ a: { $all: [null] } }, {}, true], // $all is the $and of equalities (mingo: false)
    ]);
  });

  it('sees a missing key in an object element of an array, and nothing at all through other elements', () => {
    // MongoDB's path iterator: an object element lacking the key yields "missing"; scalars, nested
    // arrays and indices past the end yield no value. mingo sees "missing" in all of these.
    check([
      [{ 'a.b': null }, { a: [{ c: 1 }] }, true], // mingo: false
      [{ 'a.b': null }, { a: [1, 2] }, false],
      [{ 'a.b': null }, { a: [] }, false],
      [{ 'a.1': null }, { a: [] }, false], // mingo: true
      [{ 'a.1.b': null }, { a: [1.5] }, false], // mingo: true
      [{ 'a.b': { $exists: false } }, { a: [1, 2] }, true],
      [{ 'a.c.1': { $exists: true } }, { a: [{}] }, false], // mingo: true
      [{ 'a.b': { $size: 0 } }, { a: [{}] }, false], // mingo: true
    ]);
  });

  it('tells $exists apart from null', () => {
    check([
      [{ a: { $exists: true } }, { a: null }, true],
      [{ a: { $exists: true } }, {}, false],
      [{ a: { $exists: false } }, {}, true],
      [{ a: { $exists: true } }, { a: [] }, true],
      [{ 'a.b': { $exists: true } }, { a: [{ b: 1 }, {}] }, true],
      [{ 'a.b': { $exists: false } }, { a: [{ b: 1 }, {}] }, false],
    ]);
  });
});

describe('comparisons', () => {
  it('compares only within one type bracket: $gt on a number never matches a string', () => {
    check([
      [{ a: { $gt: 5 } }, { a: '6' }, false],
      [{ a: { $gt: 5 } }, { a: 6 }, true],
      [{ a: { $lt: 'b' } }, { a: 1 }, false],
      [{ a: { $lt: 'b' } }, { a: 'a' }, true],
      [{ a: { $gte: false } }, { a: true }, true],
      [{ a: { $gt: 5 } }, { a: [1, 'z', 7] }, true],
      [{ a: { $gt: 5, $lt: 7 } }, { a: [4, 8] }, true], // each operator may be met by another element
      [{ a: { $elemMatch: { $gt: 5, $lt: 7 } } }, { a: [4, 8] }, false],
      [{ a: { $lt: [2] } }, { a: [1, 9] }, true], // [1, 9] < [2] as arrays (mingo: false)
      [{ a: { $lt: ['ab', true] } }, { a: [] }, true], // a proper prefix sorts first
    ]);
  });

  it('compares numbers exactly across representations', () => {
    const big = 2n ** 53n + 1n;
    check([
      [{ a: 1 }, { a: 1n }, true],
      [{ a: 0 }, { a: -0 }, true],
      [{ a: big }, { a: 2 ** 53 }, false],
      [{ a: { $gt: 2 ** 53 } }, { a: big }, true],
      [{ a: { $lt: big } }, { a: 2 ** 53 }, true],
      [{ a: { $in: [2n ** 64n] } }, { a: 2 ** 64 }, true],
    ]);
  });

  it('compares objects as sorted key/value pairs: a stored document keeps no key order (MongoDB keeps it)', () => {
    check([
      [{ a: { x: 1, y: 2 } }, { a: { x: 1, y: 2 } }, true],
      [{ a: { x: 1, y: 2 } }, { a: { y: 2, x: 1 } }, true],
      [{ a: { x: 1, y: 2 } }, { a: { y: 2, x: 1, z: 0 } }, false],
      [{ 'a.x': 1 }, { a: { y: 2, x: 1 } }, true],
    ]);
  });
});

describe('operators', () => {
  it('$in, $nin, $ne and $not negate over the whole path', () => {
    check([
      [{ a: { $in: [1, 'x'] } }, { a: ['y', 'x'] }, true],
      [{ a: { $in: [] } }, { a: 1 }, false],
      [{ a: { $nin: [1] } }, { a: [1, 2] }, false],
      [{ a: { $nin: [1] } }, {}, true],
      [{ a: { $ne: 1 } }, { a: [1, 2] }, false],
      [{ a: { $not: { $gt: 5 } } }, { a: 'x' }, true],
      [{ a: { $not: { $gt: 5 } } }, {}, true],
      [{ a: { $in: [[]] } }, { a: [] }, true],
    ]);
  });

  it('$and, $or and $nor combine filters', () => {
    check([
      [{ $or: [{ a: 1 }, { b: 1 }] }, { b: 1 }, true],
      [{ $nor: [{ a: 1 }, { b: 1 }] }, { b: 1 }, false],
      [{ $nor: [{ a: 1 }, { b: 1 }] }, {}, true],
      [{ $and: [{ a: { $gt: 1 } }, { a: { $lt: 3 } }] }, { a: 2 }, true],
      [{}, { anything: 1 }, true],
    ]);
  });

  it('$all is the $and of equalities, and takes $elemMatch items', () => {
    check([
      [{ a: { $all: ['x', 'y'] } }, { a: ['y', 'z', 'x'] }, true],
      [{ a: { $all: ['x', 'y'] } }, { a: ['x'] }, false],
      [{ a: { $all: [5] } }, { a: 5 }, true], // mingo: false
      [{ a: { $all: [] } }, { a: [] }, false],
      [{ a: { $all: [['x']] } }, { a: ['x'] }, true],
      [{ a: { $all: [{ $elemMatch: { b: 1 } }, { $elemMatch: { c: 2 } }] } }, { a: [{ b: 1 }, { c: 2 }] }, true],
      [{ a: { $all: [{ $elemMatch: { b: 1, c: 2 } }] } }, { a: [{ b: 1 }, { c: 2 }] }, false],
    ]);
  });

  it('$elemMatch tests elements as values or as documents', () => {
    check([
      [{ a: { $elemMatch: { b: 1, c: 2 } } }, { a: [{ b: 1 }, { c: 2 }] }, false],
      [{ a: { $elemMatch: { b: 1, c: 2 } } }, { a: [{ b: 1, c: 2 }] }, true],
      [{ 'a.b': 1, 'a.c': 2 }, { a: [{ b: 1 }, { c: 2 }] }, true],
      [{ a: { $elemMatch: { $gte: 2, $lt: 3 } } }, { a: [1, 2.5] }, true],
      [{ a: { $elemMatch: { $gt: 1 } } }, { a: 5 }, false],
      [{ a: { $elemMatch: { $gt: 1 } } }, { a: [[5]] }, false],
      [{ a: { $elemMatch: { '0': 5 } } }, { a: [[5]] }, true], // an array element seen as a document
      [{ a: { $elemMatch: { $or: [{ b: 1 }, { b: 2 }] } } }, { a: [{ b: 2 }] }, true],
      [{ a: { $elemMatch: { $not: { $gt: 1 } } } }, { a: [5, 0] }, true],
      [{ a: { $elemMatch: {} } }, { a: [1, {}] }, true],
      [{ a: { $elemMatch: {} } }, { a: [1] }, false],
    ]);
  });

  it('$size counts the elements of an array at the path', () => {
    check([
      [{ a: { $size: 2 } }, { a: [1, [2, 3]] }, true],
      [{ a: { $size: 0 } }, { a: [] }, true],
      [{ a: { $size: 1 } }, { a: 'x' }, false],
      [{ 'a.b': { $size: 1 } }, { a: [{ b: [9] }, { b: 'x' }] }, true],
      [{ a: { $size: 1 } }, { a: [[1, 2]] }, true],
    ]);
  });

  it('$prefix matches strings that start with the operand, elements included', () => {
    check([
      [{ name: { $prefix: 'Al' } }, { name: 'Alice' }, true],
      [{ name: { $prefix: 'Al' } }, { name: 'alice' }, false],
      [{ name: { $prefix: '' } }, { name: '' }, true],
      [{ name: { $prefix: '' } }, { name: 5 }, false],
      [{ name: { $prefix: 'b' } }, { name: ['a', 'bc'] }, true],
      [{ name: { $not: { $prefix: 'A' } } }, {}, true],
      [{ name: { $prefix: '\u{1f600}' } }, { name: '\u{1f600}!' }, true],
    ]);
  });
});

describe('invalid filters', () => {
  const rejects = (filter: unknown, code: 'INVALID_FILTER' | 'UNSUPPORTED_OPERATOR', text?: string): void => {
    let error: unknown;
    try {
      compileFilter(filter);
    } catch (err) {
      error = err;
    }
    if (!isDocumentError(error, code)) throw new Error(`${String(filter)}: expected ${code}, got ${String(error)}`);
    if (text !== undefined) expect(error.message).toContain(text);
  };

  it('names an unknown operator rather than ignoring it', () => {
    rejects({ a: { $regex: 'x' } }, 'UNSUPPORTED_OPERATOR', '$regex');
    rejects({ a: { $foo: 1 } }, 'UNSUPPORTED_OPERATOR', '$foo in "a"');
    rejects({ $where: 'this.a' }, 'UNSUPPORTED_OPERATOR', '$where');
    rejects({ $expr: {} }, 'UNSUPPORTED_OPERATOR');
    rejects({ a: { $elemMatch: { $type: 'string' } } }, 'UNSUPPORTED_OPERATOR', '$type');
    rejects({ a: { $not: { $mod: [2, 0] } } }, 'UNSUPPORTED_OPERATOR', '$mod');
    rejects({ a: /x/ }, 'UNSUPPORTED_OPERATOR', '$prefix');
  });

  it('rejects operands of the wrong type', () => {
    rejects({ a: { $in: 5 } }, 'INVALID_FILTER', '$in at "a" takes an array');
    rejects({ a: { $nin: 'x' } }, 'INVALID_FILTER');
    rejects({ a: { $all: {} } }, 'INVALID_FILTER');
    rejects({ a: { $size: -1 } }, 'INVALID_FILTER', 'non-negative integer');
    rejects({ a: { $size: 1.5 } }, 'INVALID_FILTER');
    rejects({ a: { $size: '1' } }, 'INVALID_FILTER');
    rejects({ a: { $exists: 'yes' } }, 'INVALID_FILTER');
    rejects({ a: { $prefix: 5 } }, 'INVALID_FILTER');
    rejects({ a: { $elemMatch: 5 } }, 'INVALID_FILTER');
    rejects({ a: { $not: 5 } }, 'INVALID_FILTER');
    rejects({ a: { $not: {} } }, 'INVALID_FILTER');
    rejects({ $and: [] }, 'INVALID_FILTER', 'non-empty array');
    rejects({ $or: {} }, 'INVALID_FILTER');
    rejects({ $nor: [5] }, 'INVALID_FILTER');
    rejects({ a: { $in: [{ $gt: 1 }] } }, 'INVALID_FILTER');
  });

  it('rejects values that are not JSON and filters that are not objects', () => {
    rejects({ a: undefined }, 'INVALID_FILTER');
    rejects({ a: { $gt: NaN } }, 'INVALID_FILTER');
    rejects({ a: new Date(0) }, 'INVALID_FILTER');
    rejects(null, 'INVALID_FILTER');
    rejects([{ a: 1 }], 'INVALID_FILTER');
    rejects('a = 1', 'INVALID_FILTER');
  });

  it('rejects malformed paths and objects that mix operators and keys', () => {
    rejects({ 'a..b': 1 }, 'INVALID_FILTER', 'not a valid path');
    rejects({ '': 1 }, 'INVALID_FILTER');
    rejects({ 'a.': 1 }, 'INVALID_FILTER');
    rejects({ 'a.$b': 1 }, 'INVALID_FILTER');
    rejects({ a: { $gt: 1, b: 2 } }, 'INVALID_FILTER', 'mixes operators and keys');
    rejects({ a: { b: 2, $gt: 1 } }, 'INVALID_FILTER');
  });

  it('compiles the empty filter to one that matches everything, missing values included', () => {
    expect(compileFilter({}).matches({})).toBe(true);
    expect(valuesAt({}, ['a'])).toEqual([MISSING]);
  });
});
