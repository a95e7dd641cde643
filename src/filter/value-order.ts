/**
 * The canonical order of JSON values: the one order that filters compare by, that index keys encode
 * (src/index agrees with {@link compareValues} byte for byte) and that query results are sorted in.
 *
 * missing < null < numbers < strings < objects < arrays < booleans (false < true).
 *
 * - Numbers compare as numbers whatever their representation: `1`, `1.0` and `1n` are one value, `-0`
 *   equals `0`, and bigints beyond 2^53 stay exact (`2n ** 53n + 1n` sorts after `2 ** 53` and before
 *   `2n ** 53n + 2n`).
 * - Strings compare by Unicode code point, not by UTF-16 code unit (so the order equals the order of
 *   their UTF-8 bytes).
 * - Objects compare as sequences of (key, value) pairs with their keys sorted by code point, pair by
 *   pair (key, then value); a proper prefix sorts first. Sorted, not in insertion order: a stored
 *   document keeps no key order (its keys are tuple-encoded, so they read back sorted by their bytes,
 *   and JavaScript lists integer-like keys first in any case), so `{b:1, a:2}` and `{a:2, b:1}` are one
 *   value. MongoDB compares objects in field order instead. Arrays compare element by element; a proper
 *   prefix sorts first.
 *
 * Pure functions over JSON values; no KV access.
 */
import type { JsonValue } from '../document/types';

/** The value of an absent path: sorts before every value, `null` included. */
export const MISSING: unique symbol = Symbol('doclayer.missing');

/** A value as an index entry or a filter sees it: a JSON value, or {@link MISSING} for an absent path. */
export type IndexValue = JsonValue | typeof MISSING;

/** The type brackets of the canonical order, lowest first in {@link TYPE_ORDER}. */
export type ValueType = 'missing' | 'null' | 'number' | 'string' | 'object' | 'array' | 'boolean';

/** Every {@link ValueType} in the canonical order. */
export const TYPE_ORDER: readonly ValueType[] = ['missing', 'null', 'number', 'string', 'object', 'array', 'boolean'];

const RANK: Readonly<Record<ValueType, number>> = {
  missing: 0,
  null: 1,
  number: 2,
  string: 3,
  object: 4,
  array: 5,
  boolean: 6,
};

/** The type bracket `v` sorts in. */
export function typeOf(v: IndexValue): ValueType {
  if (v === MISSING) return 'missing';
  if (v === null) return 'null';
  switch (typeof v) {
    case 'number':
    case 'bigint':
      return 'number';
    case 'string':
      return 'string';
    case 'boolean':
      return 'boolean';
    default:
      return Array.isArray(v) ? 'array' : 'object';
  }
}

/** The position of a type bracket in the canonical order (0 for missing). */
export function typeRank(t: ValueType): number {
  return RANK[t];
}

/** Negative, zero or positive as `a` sorts before, with, or after `b` in the canonical order. */
export function compareValues(a: IndexValue, b: IndexValue): number {
  const ta = typeOf(a);
  const tb = typeOf(b);
  if (ta !== tb) return RANK[ta] - RANK[tb];
  switch (ta) {
    case 'missing':
    case 'null':
      return 0;
    case 'number':
      return compareNumbers(a as number | bigint, b as number | bigint);
    case 'string':
      return compareStrings(a as string, b as string);
    case 'boolean':
      return (a === true ? 1 : 0) - (b === true ? 1 : 0);
    case 'array':
      return compareArrays(a as JsonValue[], b as JsonValue[]);
    case 'object':
      return compareObjects(a as Record<string, JsonValue>, b as Record<string, JsonValue>);
  }
}

/** True when `a` and `b` are one value in the canonical order (`1` and `1n`, `-0` and `0`, ...). */
export function valuesEqual(a: IndexValue, b: IndexValue): boolean {
  return compareValues(a, b) === 0;
}

/** Numbers by value, exactly: a double and a bigint are compared without rounding either. */
export function compareNumbers(a: number | bigint, b: number | bigint): number {
  if (typeof a === 'number' && typeof b === 'number') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'bigint' && typeof b === 'bigint') return a < b ? -1 : a > b ? 1 : 0;
  return typeof a === 'number' ? compareDoubleToBigint(a, b as bigint) : -compareDoubleToBigint(b as number, a);
}

function compareDoubleToBigint(d: number, n: bigint): number {
  // A finite double's floor is an exact integer; a non-integral d lies strictly between floor(d) and
  // floor(d) + 1, so it is below n exactly when its floor is.
  const floor = BigInt(Math.floor(d));
  if (floor < n) return -1;
  if (floor > n) return 1;
  return Number.isInteger(d) ? 0 : 1;
}

/**
 * Strings by code point. JavaScript's `<` compares UTF-16 code units, which puts astral characters
 * (surrogate pairs, D800–DFFF) before U+E000–U+FFFF; at the first differing unit, moving surrogates
 * above that block restores code point order.
 */
export function compareStrings(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

function codePointRank(unit: number): number {
  if (unit < 0xd800) return unit;
  return unit <= 0xdfff ? unit + 0x2000 : unit - 0x800;
}

function compareArrays(a: readonly JsonValue[], b: readonly JsonValue[]): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const c = compareValues(a[i], b[i]);
    if (c !== 0) return c;
  }
  return a.length - b.length;
}

function compareObjects(a: Record<string, JsonValue>, b: Record<string, JsonValue>): number {
  const ka = Object.keys(a).sort(compareStrings);
  const kb = Object.keys(b).sort(compareStrings);
  const n = Math.min(ka.length, kb.length);
  for (let i = 0; i < n; i++) {
    const k = compareStrings(ka[i], kb[i]);
    if (k !== 0) return k;
    const v = compareValues(a[ka[i]], b[kb[i]]);
    if (v !== 0) return v;
  }
  return ka.length - kb.length;
}
