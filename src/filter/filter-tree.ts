/**
 * The checked form of a filter: what `compileFilter` parses a MongoDB-style filter document into, what
 * the matcher evaluates and what the query planner reads to choose index ranges.
 *
 * Negations (`$ne`, `$nin`, `$not`, `$nor`, `$exists: false`) are `not` nodes over the positive test,
 * as MongoDB defines them: `{a: {$ne: 1}}` is "no value at `a` equals 1", so it also matches documents
 * without `a`.
 */
import type { JsonValue } from '../document/types';

/** A filter as users write it: `{ 'customer.city': 'Paris', total: { $gte: 100 } }`. */
export type Filter = { readonly [key: string]: unknown };

/** A test of one value found at a path (MongoDB's "matchesSingleElement"). */
export type ValueTest =
  | { readonly op: '$eq'; readonly value: JsonValue }
  | { readonly op: '$gt' | '$gte' | '$lt' | '$lte'; readonly value: JsonValue }
  | { readonly op: '$in'; readonly values: readonly JsonValue[] }
  | { readonly op: '$exists' }
  | { readonly op: '$prefix'; readonly prefix: string }
  | { readonly op: '$size'; readonly size: number }
  | { readonly op: '$elemMatch'; readonly element: ElementMatch };

/** What `$elemMatch` asks of one array element. */
export type ElementMatch =
  /** `{$elemMatch: {$gt: 1, $lt: 5}}`: every test holds for the element itself. */
  | { readonly kind: 'value'; readonly test: ElementTest }
  /** `{$elemMatch: {b: 1, c: 2}}`: the element, as a document, matches the filter. */
  | { readonly kind: 'document'; readonly filter: FilterNode };

/** Tests of a single element inside `$elemMatch` value mode: no array traversal at the element. */
export type ElementTest =
  | { readonly kind: 'test'; readonly test: ValueTest }
  | { readonly kind: 'and'; readonly children: readonly ElementTest[] }
  | { readonly kind: 'not'; readonly child: ElementTest };

/** One node of a checked filter. */
export type FilterNode =
  | { readonly kind: 'true' }
  | { readonly kind: 'false' }
  | { readonly kind: 'and'; readonly children: readonly FilterNode[] }
  | { readonly kind: 'or'; readonly children: readonly FilterNode[] }
  | { readonly kind: 'not'; readonly child: FilterNode }
  /** Some value found at `path` (MongoDB's array traversal, see path-values.ts) passes `test`. */
  | { readonly kind: 'path'; readonly path: string; readonly parts: readonly string[]; readonly test: ValueTest };
