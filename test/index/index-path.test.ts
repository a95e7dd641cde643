/**
 * What an index path gives for a document (docs/indexes.md, "Paths"), and which writes may change it.
 */
import { MISSING } from '../../src/filter/value-order';
import { parseIndexPath, pathTouches, valuesAt } from '../../src/index/index-path';

const at = (path: string, doc: unknown) => valuesAt(doc as never, parseIndexPath(path, 'test'));

describe('index paths', () => {
  it('parse dotted keys, backticks and [*], and give their canonical text', () => {
    expect(parseIndexPath('customer.city', 't').text).toBe('customer.city');
    expect(parseIndexPath('items[*].sku', 't').text).toBe('items[*].sku');
    expect(parseIndexPath('`a.b`.c', 't').components).toEqual(['a.b', 'c']);
    expect(parseIndexPath('m[*][*]', 't').multikey).toBe(true);
  });

  it.each(['', 'a[0]', 'a..b', '[*]', 'a[*]b', 'a.'])('reject %j with INVALID_INDEX', (path) => {
    expect(() => parseIndexPath(path, 't')).toThrow(expect.objectContaining({ code: 'INVALID_INDEX' }) as Error);
  });

  it('give the value at a plain path, MISSING when absent or below a scalar', () => {
    expect(at('a.b', { a: { b: 1 } })).toEqual([1]);
    expect(at('a.b', { a: { c: 1 } })).toEqual([MISSING]);
    expect(at('a.b', { a: 5 })).toEqual([MISSING]);
    expect(at('a.b', { a: { b: null } })).toEqual([null]);
  });

  it('never traverse arrays on a plain path: an array on the way is the value', () => {
    expect(at('a.b', { a: [{ b: 1 }, { b: 2 }] })).toEqual([[{ b: 1 }, { b: 2 }]]);
    expect(at('a', { a: [1, 2] })).toEqual([[1, 2]]);
  });

  it('fan out at [*], an empty array giving [] and a non-array counting as one element', () => {
    expect(at('items[*].sku', { items: [{ sku: 'x' }, { sku: 'y' }, {}] })).toEqual(['x', 'y', MISSING]);
    expect(at('tags[*]', { tags: [] })).toEqual([[]]);
    expect(at('items[*].sku', { items: { sku: 'only' } })).toEqual(['only']);
    expect(at('m[*][*]', { m: [[1, 2], [3]] })).toEqual([1, 2, 3]);
    expect(at('tags[*]', {})).toEqual([MISSING]);
  });

  it('count a write as touching unless it provably parts from the path at two keys of one object', () => {
    const p = parseIndexPath('customer.city', 't');
    expect(pathTouches(p, ['customer', 'city'])).toBe(true);
    expect(pathTouches(p, ['customer'])).toBe(true);
    expect(pathTouches(p, [])).toBe(true);
    expect(pathTouches(p, ['customer', 'city', 'x'])).toBe(true);
    expect(pathTouches(p, ['customer', 'name'])).toBe(false);
    expect(pathTouches(p, ['total'])).toBe(false);
    // customer is an array: the path's value is that whole array.
    expect(pathTouches(p, ['customer', 0, 'name'])).toBe(true);
    const multi = parseIndexPath('items[*].sku', 't');
    expect(pathTouches(multi, ['items', 3, 'sku'])).toBe(true);
    expect(pathTouches(multi, ['items', 3, 'qty'])).toBe(false);
    expect(pathTouches(multi, ['other'])).toBe(false);
  });
});
