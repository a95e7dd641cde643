/**
 * The order results come in: by sort paths (plain values, compared in the canonical value order,
 * each ascending or descending), then by document id in the order the collection's keys hold ids.
 * The id makes it a total order, so a continuation token can say "strictly after this key".
 */
import { Buffer } from 'node:buffer';
import type { DocId, JsonValue } from '../document/types';
import { DocumentError } from '../document/errors';
import { docIdElement } from '../document/keys/ids';
import { pack } from '../tuple';
import { compareValues, type IndexValue } from '../filter';
import { plainValueAt } from './index-fields';

/** `{ total: -1, name: 1 }` (MongoDB's form; key order is significant) or `[['total', 'desc'], ...]`. */
export type SortSpec = { readonly [path: string]: 1 | -1 | 'asc' | 'desc' } | readonly (readonly [string, 1 | -1 | 'asc' | 'desc'])[];

export interface SortField {
  readonly path: string;
  readonly parts: readonly string[];
  /** 1 ascending, -1 descending. */
  readonly direction: 1 | -1;
}

/** @throws DocumentError INVALID_QUERY for a malformed sort. */
export function parseSort(sort: SortSpec | undefined): SortField[] {
  if (sort === undefined) return [];
  const pairs: [string, unknown][] = Array.isArray(sort)
    ? (sort as readonly (readonly [string, unknown])[]).map((p) => {
        if (!Array.isArray(p) || p.length !== 2) throw invalidSort(sort);
        return [p[0], p[1]] as [string, unknown];
      })
    : typeof sort === 'object' && sort !== null
      ? Object.entries(sort as Record<string, unknown>)
      : (() => {
          throw invalidSort(sort);
        })();
  return pairs.map(([path, dir]) => {
    if (typeof path !== 'string' || path === '' || path.split('.').some((p) => p === '')) throw invalidSort(sort);
    const direction = dir === 1 || dir === 'asc' ? 1 : dir === -1 || dir === 'desc' ? -1 : undefined;
    if (direction === undefined) {
      throw new DocumentError('INVALID_QUERY', `sort direction of "${path}" is 1, -1, 'asc' or 'desc', got ${String(dir)}`);
    }
    return { path, parts: path.split('.'), direction };
  });
}

function invalidSort(sort: unknown): DocumentError {
  return new DocumentError('INVALID_QUERY', `sort is an object such as { total: -1 } or an array of [path, direction] pairs, got ${typeof sort}`);
}

/** A position in result order: the values it is ordered by and the id. */
export interface OrderKey {
  readonly values: readonly IndexValue[];
  readonly id: DocId;
}

/** The order key of a document under `fields`. */
export function orderKeyOf(fields: readonly SortField[], id: DocId, doc: JsonValue): OrderKey {
  return { values: fields.map((f) => plainValueAt(doc, f.parts)), id };
}

/** Compares order keys; `directions[i]` applies to `values[i]`, `idDirection` to the ids. */
export function compareOrderKeys(a: OrderKey, b: OrderKey, directions: readonly (1 | -1)[], idDirection: 1 | -1): number {
  for (let i = 0; i < directions.length; i++) {
    const c = compareValues(a.values[i], b.values[i]);
    if (c !== 0) return c * directions[i];
  }
  return compareIds(a.id, b.id) * idDirection;
}

/** Ids in the order the collection's (and its indexes') keys hold them: by their tuple encoding. */
export function compareIds(a: DocId, b: DocId): number {
  if (a === b) return 0;
  return Buffer.compare(pack([docIdElement(a)]), pack([docIdElement(b)]));
}
