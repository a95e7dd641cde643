/**
 * Seeded random documents and filters over a small vocabulary, so that paths often hit, values often
 * collide across types, and arrays of objects and numeric path components are common (arrays directly
 * inside arrays are left out: there the reference model departs from MongoDB).
 */
import type { JsonValue } from '../../src/document/types';
import type { Random } from '../support/random';

const KEYS = ['a', 'b', 'c', '0', '1'];
const SCALARS: JsonValue[] = [null, true, false, 0, 1, 2, -1, 1.5, 'x', 'xy', 'y', '', 'ab'];

export function randomValue(r: Random, depth: number, inArray = false): JsonValue {
  const roll = r.int(10);
  if (depth <= 0 || roll < 5) return r.pick(SCALARS);
  // No array directly inside an array: there the reference model departs from MongoDB.
  if (roll < 7 || inArray) return randomObject(r, depth - 1);
  return Array.from({ length: r.int(4) }, () => randomValue(r, depth - 1, true));
}

export function randomObject(r: Random, depth: number): { [key: string]: JsonValue } {
  const out: { [key: string]: JsonValue } = {};
  const n = r.int(4);
  for (let i = 0; i < n; i++) out[r.pick(KEYS.slice(0, 3))] = randomValue(r, depth);
  return out;
}

export function randomDocument(r: Random): { [key: string]: JsonValue } {
  const doc = randomObject(r, 3);
  if (r.chance(0.7)) doc.a = randomValue(r, 3);
  return doc;
}

function randomPath(r: Random): string {
  const n = 1 + r.int(3);
  const parts = [r.pick(['a', 'a', 'b'])];
  for (let i = 1; i < n; i++) parts.push(r.pick(KEYS));
  return parts.join('.');
}

function operand(r: Random, depth: number): JsonValue {
  return r.chance(0.8) ? r.pick(SCALARS) : randomValue(r, depth);
}

/** Operators on one path; `inElemMatch` leaves out what needs a path of its own. */
export function randomOperators(r: Random, depth: number, topLevel = false): { [op: string]: unknown } {
  const out: { [op: string]: unknown } = {};
  const n = r.chance(0.25) ? 2 : 1;
  const ops = ['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin', '$exists', '$size', '$elemMatch', '$not', '$prefix'];
  for (let i = 0; i < n; i++) {
    const op = r.pick(topLevel ? [...ops, '$all'] : ops);
    switch (op) {
      case '$in':
      case '$nin':
        // No empty array among them: the reference model never finds [] in a list (MongoDB does).
        out[op] = Array.from({ length: r.int(3) }, () => operand(r, 1)).filter((x) => !(Array.isArray(x) && x.length === 0));
        break;
      case '$exists':
        out[op] = r.chance(0.5);
        break;
      case '$size':
        out[op] = r.int(3);
        break;
      case '$all':
        out[op] = Array.from({ length: r.int(3) }, () => operand(r, 1));
        break;
      case '$prefix':
        out[op] = r.pick(['', 'x', 'a', 'xy']);
        break;
      case '$elemMatch':
        out[op] = depth > 0 && r.chance(0.5) ? randomFilter(r, depth - 1) : randomOperators(r, 0);
        break;
      case '$not':
        out[op] = randomOperators(r, 0);
        break;
      case '$gt':
      case '$gte':
      case '$lt':
      case '$lte':
        out[op] = r.pick(SCALARS.slice(1));
        break;
      default:
        out[op] = operand(r, 1);
    }
  }
  return out;
}

export function randomFilter(r: Random, depth: number): { [key: string]: unknown } {
  const out: { [key: string]: unknown } = {};
  const n = r.chance(0.25) ? 2 : 1;
  for (let i = 0; i < n; i++) {
    const roll = r.int(10);
    if (depth > 0 && roll === 0) {
      out[r.pick(['$and', '$or', '$nor'])] = Array.from({ length: 1 + r.int(2) }, () => randomFilter(r, depth - 1));
    } else if (roll < 4) {
      out[randomPath(r)] = operand(r, 1);
    } else {
      out[randomPath(r)] = randomOperators(r, depth, true);
    }
  }
  return out;
}

/** Every dotted path `filter` names, `$elemMatch` sub-filters as `path.sub`. */
export function filterPaths(filter: unknown, prefix = ''): string[] {
  if (typeof filter !== 'object' || filter === null) return [];
  const out: string[] = [];
  for (const [k, v] of Object.entries(filter as Record<string, unknown>)) {
    if (k === '$and' || k === '$or' || k === '$nor') {
      for (const f of v as unknown[]) out.push(...filterPaths(f, prefix));
    } else if (!k.startsWith('$')) {
      const path = prefix + k;
      out.push(path);
      if (typeof v === 'object' && v !== null && !Array.isArray(v)) {
        for (const [op, x] of Object.entries(v as Record<string, unknown>)) if (op === '$elemMatch') out.push(...filterPaths(x, `${path}.`));
      }
    }
  }
  return out;
}

/** True when following `path` in `doc` meets an array before its last component. */
export function crossesArray(doc: JsonValue, path: string): boolean {
  const parts = path.split('.');
  let at: JsonValue | undefined = doc;
  for (let i = 0; i < parts.length - 1; i++) {
    if (Array.isArray(at)) return true;
    if (typeof at !== 'object' || at === null) return false;
    at = at[parts[i]];
  }
  return Array.isArray(at) && parts.length > 1;
}

/**
 * `filter` in the form the reference model is given: `$all` (top-level operators only) as the `$and`
 * of equalities that MongoDB defines it as, and `$prefix` as the anchored regular expression it
 * stands for.
 */
export function forReference(filter: unknown): unknown {
  if (Array.isArray(filter)) return filter.map(forReference);
  if (typeof filter !== 'object' || filter === null) return filter;
  const out: { [key: string]: unknown } = {};
  const and: unknown[] = [];
  for (const [k, v] of Object.entries(filter)) {
    if (k.startsWith('$')) {
      out[k] = forReference(v);
    } else if (isOperators(v)) {
      const ops: { [op: string]: unknown } = {};
      for (const [op, x] of Object.entries(v)) {
        // `$all: []` matches nothing, as `$in: []` does.
        if (op === '$all') and.push(...((x as unknown[]).length === 0 ? [{ [k]: { $in: [] } }] : (x as unknown[]).map((item) => ({ [k]: item }))));
        else Object.assign(ops, referenceOperators({ [op]: x }));
      }
      if (Object.keys(ops).length > 0) out[k] = ops;
    } else {
      out[k] = v;
    }
  }
  return and.length > 0 ? { $and: [out, ...and] } : out;
}

function isOperators(v: unknown): v is { [op: string]: unknown } {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const first = Object.keys(v)[0];
  return first !== undefined && first.startsWith('$') && !['$and', '$or', '$nor'].includes(first);
}

function referenceOperators(ops: { [op: string]: unknown }): { [op: string]: unknown } {
  const out: { [op: string]: unknown } = {};
  for (const [op, x] of Object.entries(ops)) {
    if (op === '$prefix') out.$regex = new RegExp(`^${(x as string).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`);
    else if (op === '$not') out.$not = referenceOperators(x as { [op: string]: unknown });
    else if (op === '$elemMatch') out.$elemMatch = isOperators(x) ? referenceOperators(x) : forReference(x);
    else out[op] = x;
  }
  return out;
}
