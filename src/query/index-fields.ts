/**
 * Index field paths as the query layer reads them: which query path a field serves, and the entries
 * a document has in an index, recomputed from a document the query read (with src/index's own path
 * rules), so that a plan over several intervals can tell whether an earlier interval already
 * produced the document.
 */
import type { JsonValue } from '../document/types';
import { compareValues, type IndexValue } from '../filter';
import { parseIndexPath as parseIndexFieldPath, STAR, valuesAt, type IndexPathComponent } from '../index/index-path';

export { STAR };
export type IndexPathElement = IndexPathComponent;

/** The components of an index field path (`items[*].sku` is `items`, `[*]`, `sku`). */
export function parseIndexPath(path: string): IndexPathElement[] {
  return [...parseIndexFieldPath(path, 'index field').components];
}

/**
 * The MongoDB-style dotted path a field serves (`items[*].sku` serves `items.sku`), or `undefined`
 * when it serves none: a key that a dotted path cannot spell.
 */
export function queryPathOf(elements: readonly IndexPathElement[]): string | undefined {
  const parts: string[] = [];
  for (const e of elements) {
    if (e === STAR) continue;
    if (e === '' || e.includes('.') || e.startsWith('$')) return undefined;
    parts.push(e);
  }
  return parts.length === 0 ? undefined : parts.join('.');
}

export function isMultikey(elements: readonly IndexPathElement[]): boolean {
  return elements.includes(STAR);
}

/** The values a field has in `doc`, as src/index computes them (several for a `[*]` field). */
export function fieldValues(doc: JsonValue, elements: readonly IndexPathElement[]): IndexValue[] {
  return valuesAt(doc, { text: '', components: elements, multikey: isMultikey(elements) });
}

/** The distinct value tuples `doc` has as entries of an index with these fields. */
export function entryTuples(fields: readonly (readonly IndexPathElement[])[], doc: JsonValue): IndexValue[][] {
  let tuples: IndexValue[][] = [[]];
  for (const elements of fields) {
    const values = distinct(fieldValues(doc, elements));
    tuples = tuples.flatMap((t) => values.map((v) => [...t, v]));
  }
  return tuples;
}

function distinct(values: IndexValue[]): IndexValue[] {
  const sorted = [...values].sort(compareValues);
  return sorted.filter((v, i) => i === 0 || compareValues(sorted[i - 1], v) !== 0);
}

/** The value at a plain dotted path (no array traversal: it stops at an array): what sorts use. */
export function plainValueAt(doc: JsonValue, parts: readonly string[]): IndexValue {
  return valuesAt(doc, { text: '', components: parts, multikey: false })[0];
}
