/**
 * compileFilter against an independent model: the `mingo` package, a MongoDB query implementation by
 * others, on seeded random documents and filters.
 *
 * The random domain is where mingo agrees with MongoDB; where it does not, MongoDB's semantics rule
 * and the cases are written out by hand in filter-semantics.test.ts:
 * - paths that pass through an array (`a.b` on `{a: [...]}`): mingo treats a path that finds nothing
 *   in an array as missing (so `{'a.1': null}` matches `{a: []}`), misses `null` for an element
 *   lacking the key, and descends into nested arrays; MongoDB does none of these.
 * - nested arrays at the end of a path: mingo flattens them, MongoDB compares the inner array whole.
 * - `$gte: null`/`$lte: null` (MongoDB: they match a missing path) and range operands that are
 *   arrays or objects;
 * - `$all`: mingo requires an array value, while MongoDB defines `$all` as the `$and` of equalities
 *   (so `{a: {$all: [5]}}` matches `{a: 5}`); the model is given that `$and`.
 * - an empty array inside `$in`.
 * `$prefix` (doclayer's own) is given to the model as the anchored regular expression it stands for.
 */
import { Query } from 'mingo';
import { compileFilter } from '../../src/filter';
import { Random, testSeed } from '../support/random';
import { crossesArray, filterPaths, forReference, randomDocument, randomFilter } from './filter-generators';

describe('compileFilter against the mingo reference model', () => {
  it('agrees on thousands of random documents and filters', () => {
    const seed = testSeed(1410);
    const r = new Random(seed);
    let compared = 0;
    let matched = 0;
    const disagreements: string[] = [];
    for (let i = 0; i < 6000; i++) {
      const doc = randomDocument(r);
      const filter = randomFilter(r, 2);
      if (filterPaths(filter).some((p) => crossesArray(doc, p))) continue;
      const ours = compileFilter(filter).matches(doc);
      const theirs = new Query(forReference(filter) as Record<string, unknown>).test(doc);
      compared++;
      if (ours) matched++;
      if (ours !== theirs && disagreements.length < 5) {
        disagreements.push(`ours=${ours} filter=${JSON.stringify(filter)} doc=${JSON.stringify(doc)}`);
      }
    }
    expect({ seed, disagreements }).toEqual({ seed, disagreements: [] });
    // The comparison means something only when both answers are common.
    expect(compared).toBeGreaterThan(4000);
    expect(matched).toBeGreaterThan(compared / 8);
    expect(matched).toBeLessThan(compared * 0.9);
  });
});
