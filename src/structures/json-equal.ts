import type { JsonValue } from '../document/types';

/**
 * Whether two JSON values are equal by value and type, as stored values compare: `1` and `"1"` differ,
 * an integer number and a bigint of the same value are equal (stored integers read back as bigints
 * beyond ±(2^53−1)), objects are equal when they have the same keys with equal values (in any order),
 * arrays when their elements are equal in order.
 */
export function jsonEqual(a: JsonValue, b: JsonValue): boolean {
  if (a === b) return true;
  const ta = typeof a;
  const tb = typeof b;
  if ((ta === 'number' || ta === 'bigint') && (tb === 'number' || tb === 'bigint')) {
    // Compare exactly: only integral numbers can equal a bigint.
    if (ta === 'number') return Number.isInteger(a) && BigInt(a as number) === b;
    return Number.isInteger(b) && BigInt(b as number) === a;
  }
  if (ta !== 'object' || tb !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) {
    if (!Object.prototype.hasOwnProperty.call(b, k) || !jsonEqual((a as Record<string, JsonValue>)[k], (b as Record<string, JsonValue>)[k]))
      return false;
  }
  return true;
}
