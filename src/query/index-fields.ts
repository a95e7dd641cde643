/**
 * Index field paths as the query layer reads them: which query path a field serves, and the entries
 * a document has in an index (the contract's rules, recomputed from a document the query read, so that
 * a plan over several intervals can tell whether an earlier interval already produced the document).
 *
 * Contract rules (issue 14): a plain path never traverses arrays; its value is the value at the path,
 * MISSING when absent, and the whole array when an intermediate component (or the end) is an array.
 * A `[*]` component fans out over the array's elements, a non-array counting as a one-element array;
 * a document has one entry per distinct tuple of field values.
 */
import type { JsonValue } from '../document/types';
import { parsePath } from '../document/values/path';
import { compareValues, MISSING, type IndexValue } from '../filter';

/** The `[*]` component. */
export const STAR: unique symbol = Symbol('[*]');
export type IndexPathElement = string | number | typeof STAR;

/** The elements of an index field path: the document API's path syntax plus `[*]`. */
export function parseIndexPath(path: string): IndexPathElement[] {
  const out: IndexPathElement[] = [];
  const pieces = path.split('[*]');
  pieces.forEach((piece, i) => {
    const text = i > 0 && piece.startsWith('.') ? piece.slice(1) : piece;
    if (text !== '') out.push(...parsePath(text));
    if (i < pieces.length - 1) out.push(STAR);
  });
  return out;
}

/**
 * The MongoDB-style dotted path a field serves (`items[*].sku` serves `items.sku`), or `undefined`
 * when it serves none: a field with an array index, or a key that a dotted path cannot spell.
 */
export function queryPathOf(elements: readonly IndexPathElement[]): string | undefined {
  const parts: string[] = [];
  for (const e of elements) {
    if (e === STAR) continue;
    if (typeof e === 'number' || e === '' || e.includes('.') || e.startsWith('$')) return undefined;
    parts.push(e);
  }
  return parts.length === 0 ? undefined : parts.join('.');
}

export function isMultikey(elements: readonly IndexPathElement[]): boolean {
  return elements.includes(STAR);
}

/** The values a field has in `doc` (several for a `[*]` field, none for an empty array there). */
export function fieldValues(doc: JsonValue, elements: readonly IndexPathElement[]): IndexValue[] {
  const out: IndexValue[] = [];
  collect(doc, elements, 0, out);
  return out;
}

function collect(value: IndexValue, elements: readonly IndexPathElement[], i: number, out: IndexValue[]): void {
  let at = value;
  for (; i < elements.length; i++) {
    const e = elements[i];
    if (e === STAR) {
      const items: readonly IndexValue[] = Array.isArray(at) ? at : [at];
      for (const item of items) collect(item, elements, i + 1, out);
      return;
    }
    if (Array.isArray(at)) {
      if (typeof e !== 'number') break;
      at = e < at.length ? at[e] : MISSING;
    } else if (typeof at === 'object' && at !== null && typeof e === 'string') {
      at = Object.prototype.hasOwnProperty.call(at, e) ? at[e] : MISSING;
    } else {
      at = MISSING;
    }
  }
  out.push(at);
}

/** The distinct value tuples `doc` has as entries of an index with these fields. */
export function entryTuples(fields: readonly (readonly IndexPathElement[])[], doc: JsonValue): IndexValue[][] {
  let tuples: IndexValue[][] = [[]];
  for (const elements of fields) {
    const values = distinct(fieldValues(doc, elements));
    const next: IndexValue[][] = [];
    for (const t of tuples) for (const v of values) next.push([...t, v]);
    tuples = next;
  }
  return tuples;
}

function distinct(values: IndexValue[]): IndexValue[] {
  const sorted = [...values].sort(compareValues);
  return sorted.filter((v, i) => i === 0 || compareValues(sorted[i - 1], v) !== 0);
}

/** The value at a plain dotted path (no `[*]`, no array traversal): what projections and sorts use. */
export function plainValueAt(doc: JsonValue, parts: readonly string[]): IndexValue {
  let at: IndexValue = doc;
  for (const part of parts) {
    if (Array.isArray(at)) return at;
    if (typeof at !== 'object' || at === null) return MISSING;
    at = Object.prototype.hasOwnProperty.call(at, part) ? at[part] : MISSING;
  }
  return at;
}
