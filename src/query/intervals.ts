/**
 * Value ranges on one index field, as a filter's conditions give them, and the index intervals a plan
 * scans. Ranges stay inside the type bracket of their operand (`$gt: 5` is `(5, end of numbers]`),
 * as MongoDB's comparisons do; `null` in an equality also covers MISSING.
 */
import type { JsonValue } from '../document/types';
import { compareValues, typeOf, typeRank, type IndexValue, type ValueTest } from '../filter';
import type { IndexBound, IndexInterval } from '../index/index';

/** A range of values on one field; a point has equal inclusive bounds. */
export interface FieldRange {
  readonly lower?: IndexBound;
  readonly upper?: IndexBound;
}

export function pointRange(value: IndexValue): FieldRange {
  return { lower: { value, inclusive: true }, upper: { value, inclusive: true } };
}

/** The point value of a range that is one point, else `undefined` (MISSING counts as a value). */
export function pointOf(range: FieldRange): { value: IndexValue } | undefined {
  const { lower, upper } = range;
  if (lower === undefined || upper === undefined || !('value' in lower) || !('value' in upper)) return undefined;
  if (!lower.inclusive || !upper.inclusive || compareValues(lower.value, upper.value) !== 0) return undefined;
  return { value: lower.value };
}

/** `null` equality: MISSING and null, as `$eq: null` matches both. */
const NULL_OR_MISSING: FieldRange = { lower: { typeStart: 'missing' }, upper: { typeEnd: 'null' } };

/** The whole array section of a field: where a plain path's array values sort. */
export const ARRAY_SECTION: FieldRange = { lower: { typeStart: 'array' }, upper: { typeEnd: 'array' } };

/**
 * The ranges (a union, sorted, disjoint) a value test confines a single value to, or `undefined` when
 * the test gives no usable range (`$exists`, `$size`, `$elemMatch`).
 */
export function rangesOf(test: ValueTest): FieldRange[] | undefined {
  switch (test.op) {
    case '$eq':
      return [equalityRange(test.value)];
    case '$in':
      return unionOf(test.values.map(equalityRange));
    case '$gt':
    case '$gte':
    case '$lt':
    case '$lte': {
      const v = test.value;
      if (v === null) return test.op === '$gte' || test.op === '$lte' ? [NULL_OR_MISSING] : [];
      const t = typeOf(v);
      if (test.op === '$gt' || test.op === '$gte') return [{ lower: { value: v, inclusive: test.op === '$gte' }, upper: { typeEnd: t } }];
      return [{ lower: { typeStart: t }, upper: { value: v, inclusive: test.op === '$lte' } }];
    }
    case '$prefix': {
      const next = prefixSuccessor(test.prefix);
      return [
        { lower: { value: test.prefix, inclusive: true }, upper: next === undefined ? { typeEnd: 'string' } : { value: next, inclusive: false } },
      ];
    }
    default:
      return undefined;
  }
}

function equalityRange(value: JsonValue): FieldRange {
  return value === null ? NULL_OR_MISSING : pointRange(value);
}

/** The least string greater than every string starting with `prefix`, or `undefined` when none is. */
export function prefixSuccessor(prefix: string): string | undefined {
  const points = [...prefix].map((c) => c.codePointAt(0) as number);
  while (points.length > 0) {
    let last = (points.pop() as number) + 1;
    if (last === 0xd800) last = 0xe000;
    if (last <= 0x10ffff) return String.fromCodePoint(...points, last);
  }
  return undefined;
}

/** The intersection of two ranges on a single-valued field (possibly empty). */
export function intersect(a: FieldRange, b: FieldRange): FieldRange {
  const lower = a.lower === undefined ? b.lower : b.lower === undefined ? a.lower : compareBound(a.lower, b.lower, 'lower') >= 0 ? a.lower : b.lower;
  const upper = a.upper === undefined ? b.upper : b.upper === undefined ? a.upper : compareBound(a.upper, b.upper, 'upper') <= 0 ? a.upper : b.upper;
  return { lower, upper };
}

/** Sorts ranges and merges overlapping ones, so that a union scans each entry once. */
export function unionOf(ranges: readonly FieldRange[]): FieldRange[] {
  const sorted = [...ranges].sort((x, y) => compareBound(x.lower, y.lower, 'lower'));
  const out: FieldRange[] = [];
  for (const r of sorted) {
    const last = out[out.length - 1];
    if (last !== undefined && overlapsOrTouches(last, r)) {
      out[out.length - 1] = { lower: last.lower, upper: compareBound(last.upper, r.upper, 'upper') >= 0 ? last.upper : r.upper };
    } else {
      out.push(r);
    }
  }
  return out;
}

function overlapsOrTouches(a: FieldRange, b: FieldRange): boolean {
  if (a.upper === undefined || b.lower === undefined) return true;
  const [ua, lb] = [boundPosition(a.upper, 'upper'), boundPosition(b.lower, 'lower')];
  const c = comparePositions(ua, lb);
  // Touching points (`[1,1]` and `[1,1]`) merge; `(.., 1)` and `(1, ..)` do not.
  return c > 0 || (c === 0 && ua.side === 0 && lb.side === 0);
}

/** True when `v` lies in `range`. */
export function inRange(v: IndexValue, range: FieldRange): boolean {
  const p: Position = { rank: typeRank(typeOf(v)), value: v, side: 0 };
  if (range.lower !== undefined && comparePositions(p, boundPosition(range.lower, 'lower')) < 0) return false;
  if (range.upper !== undefined && comparePositions(p, boundPosition(range.upper, 'upper')) > 0) return false;
  return true;
}

/** True when an entry with `values` lies in `interval`. */
export function inInterval(values: readonly IndexValue[], interval: IndexInterval): boolean {
  for (let i = 0; i < interval.equal.length; i++) if (compareValues(values[i], interval.equal[i]) !== 0) return false;
  const k = interval.equal.length;
  if (k >= values.length) return true;
  return inRange(values[k], { lower: interval.lower, upper: interval.upper });
}

/** A bound as a point of the value line: type bracket, value (absent at a bracket's edge), side. */
interface Position {
  readonly rank: number;
  /** Absent: the start (side -1) or end (side 1) of the bracket. */
  readonly value?: IndexValue;
  /** -1 just before `value`, 0 at it, 1 just after it. */
  readonly side: -1 | 0 | 1;
}

function boundPosition(bound: IndexBound, role: 'lower' | 'upper'): Position {
  if ('typeStart' in bound) return { rank: typeRank(bound.typeStart), side: -1 };
  if ('typeEnd' in bound) return { rank: typeRank(bound.typeEnd), side: 1 };
  const side = bound.inclusive ? 0 : role === 'lower' ? 1 : -1;
  return { rank: typeRank(typeOf(bound.value)), value: bound.value, side };
}

function comparePositions(a: Position, b: Position): number {
  if (a.rank !== b.rank) return a.rank - b.rank;
  const av = 'value' in a;
  const bv = 'value' in b;
  if (!av || !bv) {
    if (!av && !bv) return a.side - b.side;
    return av ? -b.side : a.side;
  }
  const c = compareValues(a.value as IndexValue, b.value as IndexValue);
  return c !== 0 ? c : a.side - b.side;
}

/** Orders bounds of one role; an absent bound is the open end. */
function compareBound(a: IndexBound | undefined, b: IndexBound | undefined, role: 'lower' | 'upper'): number {
  if (a === undefined || b === undefined) {
    if (a === b) return 0;
    const open = role === 'lower' ? -1 : 1;
    return a === undefined ? open : -open;
  }
  return comparePositions(boundPosition(a, role), boundPosition(b, role));
}
