import type { ReadTransaction } from '../kv/contract/types';
import { unpack, type Subspace, type TupleItem } from '../tuple';
import { corruptData } from './errors';
import { fromTuple } from './values/leaf';
import type { JsonValue, PathElement } from './types';

/**
 * A reader for documents written by FoundationDB's hierarchical-documents recipe, so data stored that
 * way stays readable. Its layout: one key per leaf, `subspace.pack([docId, ...path])`, holding
 * `pack([leaf])`; object keys are tuple strings and array elements their 0-based index; an empty object
 * is the element pair `-2, null` and an empty array `-1, null` (the last element in the value); there
 * are no container markers. Object keys come back in key order, as the recipe's own reader returns
 * them.
 */

const EMPTY_OBJECT = -2;
const EMPTY_ARRAY = -1;

/**
 * The value of document `docId` at `path` (object keys and 0-based array indices), or `undefined` when
 * there is none: one point read (a leaf at exactly that path) and, if none, one range read of the
 * subtree, as the recipe's `get_doc` does.
 */
export async function readRecipeDocument(
  tr: ReadTransaction,
  subspace: Subspace,
  docId: TupleItem,
  path: readonly PathElement[] = [],
): Promise<JsonValue | undefined> {
  const prefix = [docId, ...path];
  const leaf = await tr.get(subspace.pack(prefix));
  if (leaf !== undefined) return leafOf(leaf);
  const { begin, end } = subspace.range(prefix);
  const pairs = await tr.getRangeAll(begin, end);
  if (pairs.length === 0) return undefined;
  const rows = pairs.map(({ key, value }): TupleItem[] => {
    const elements = subspace.unpack(key);
    elements.push(unpackLeaf(value));
    return elements.slice(prefix.length);
  });
  return fromRows(rows, 0, rows.length, 0);
}

function unpackLeaf(value: Buffer): TupleItem {
  const items = unpack(value);
  if (items.length !== 1) throw corruptData('recipe data: a leaf that is not a one-element tuple');
  return items[0];
}

function leafOf(value: Buffer): JsonValue {
  return fromTuple(unpackLeaf(value));
}

/**
 * The value of rows `[from, to)` at element `depth`: each row is the path below the read prefix
 * followed by the leaf. The recipe's `_from_tuples`: a row of one element is a leaf; an empty-object
 * or empty-array marker pair is that empty container; otherwise rows are grouped by their element at
 * `depth`, an array when the first is the integer 0, else an object.
 */
function fromRows(rows: readonly TupleItem[][], from: number, to: number, depth: number): JsonValue {
  const first = rows[from];
  const remaining = first.length - depth;
  if (remaining === 1) return fromTuple(first[depth]);
  const head = first[depth];
  if (remaining === 2 && first[depth + 1] === null && (head === EMPTY_OBJECT || head === EMPTY_ARRAY)) {
    return head === EMPTY_OBJECT ? {} : [];
  }
  const isArray = head === 0;
  const array: JsonValue[] = [];
  const object: { [key: string]: JsonValue } = {};
  let groupStart = from;
  for (let i = from + 1; i <= to; i++) {
    if (i < to && rows[i][depth] === rows[groupStart][depth]) continue;
    const element = rows[groupStart][depth];
    const value = fromRows(rows, groupStart, i, depth + 1);
    if (isArray) {
      array.push(value);
    } else {
      if (typeof element !== 'string') throw corruptData('recipe data: an object key that is not a string');
      Object.defineProperty(object, element, { value, writable: true, enumerable: true, configurable: true });
    }
    groupStart = i;
  }
  return isArray ? array : object;
}
