/**
 * The values a dotted path reaches in a document, with MongoDB's array traversal (its
 * `BSONElementIterator`): what a filter on that path tests, one value at a time.
 *
 * - Through objects a component is a key; a path that runs into a scalar or an absent key reaches
 *   {@link MISSING} (once).
 * - At an array with components left, each element that is an object is searched for the rest of the
 *   path (from the same component); elements that are scalars or arrays are skipped. A component of
 *   digits (`a.0.b`) also selects the element at that index and continues inside it (an array element
 *   there is traversed in turn); both readings apply, so `{a: [{'0': 1}]}` reaches 1 through `a.0`
 *   by key, and `{a: [5]}` reaches 5 by index.
 * - At the end of the path an array is reached element by element and then as a whole (`expandLeaf`),
 *   which is how `{tags: 'x'}` matches `{tags: ['x', 'y']}` and `{tags: ['x', 'y']}` matches too.
 *   `$size` and `$elemMatch` look at the whole array only (`expandLeaf: false`). An element taken by
 *   index at the end of the path is reached as itself, never expanded.
 * - A path that goes through an array and finds nothing reaches nothing at all (so `{'a.b': null}`
 *   does not match `{a: [1, 2]}`, while it matches `{a: [{c: 1}]}`, whose element lacks `b`).
 */
import type { JsonValue } from '../document/types';
import { MISSING, type IndexValue } from './value-order';

/** Calls `visit` with each value `parts` reaches in `root`; stops early when `visit` returns true. */
export function someValueAt(root: JsonValue, parts: readonly string[], expandLeaf: boolean, visit: (value: IndexValue) => boolean): boolean {
  return fromValue(root, parts, 0, expandLeaf, visit);
}

/** All values `parts` reaches in `root`, in traversal order (for tests and covering reads). */
export function valuesAt(root: JsonValue, parts: readonly string[], expandLeaf = true): IndexValue[] {
  const out: IndexValue[] = [];
  someValueAt(root, parts, expandLeaf, (v) => {
    out.push(v);
    return false;
  });
  return out;
}

function fromValue(value: IndexValue, parts: readonly string[], i: number, expandLeaf: boolean, visit: (value: IndexValue) => boolean): boolean {
  // Walk down through objects; stop at an array, a scalar, a missing key or the end of the path.
  let at = value;
  while (i < parts.length && isObject(at)) {
    at = Object.prototype.hasOwnProperty.call(at, parts[i]) ? at[parts[i]] : MISSING;
    i++;
  }
  if (Array.isArray(at)) {
    if (i === parts.length) {
      if (expandLeaf) for (const e of at) if (visit(e)) return true;
      return visit(at);
    }
    return inArray(at, parts, i, expandLeaf, visit);
  }
  return visit(i === parts.length ? at : MISSING);
}

/** The rest of the path, `parts[i..]` (at least one component), looked for in the elements of `array`. */
function inArray(
  array: readonly JsonValue[],
  parts: readonly string[],
  i: number,
  expandLeaf: boolean,
  visit: (value: IndexValue) => boolean,
): boolean {
  const part = parts[i];
  const offset = arrayOffset(part);
  const last = i + 1 === parts.length;
  for (let k = 0; k < array.length; k++) {
    const e = array[k];
    if (isObject(e) && fromValue(e, parts, i, expandLeaf, visit)) return true;
    if (k !== offset) continue;
    if (last) {
      if (visit(e)) return true;
    } else if (isObject(e)) {
      if (fromValue(e, parts, i + 1, expandLeaf, visit)) return true;
    } else if (Array.isArray(e)) {
      if (inArray(e, parts, i + 1, expandLeaf, visit)) return true;
    }
  }
  return false;
}

/** The index a path component names when it is all digits (`'0'`, `'12'`, `'007'` names none), else -1. */
function arrayOffset(part: string): number {
  if (!/^[0-9]+$/.test(part)) return -1;
  const n = Number(part);
  return String(n) === part ? n : -1;
}

function isObject(v: IndexValue): v is { [key: string]: JsonValue } {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
