import type { Bytes, KeySelector } from './types';

/** The first key >= `key`. */
export function firstGreaterOrEqual(key: Bytes, offset = 0): KeySelector {
  return { key, orEqual: false, offset: offset + 1 };
}

/** The first key > `key`. */
export function firstGreaterThan(key: Bytes, offset = 0): KeySelector {
  return { key, orEqual: true, offset: offset + 1 };
}

/** The last key <= `key`. */
export function lastLessOrEqual(key: Bytes, offset = 0): KeySelector {
  return { key, orEqual: true, offset };
}

/** The last key < `key`. */
export function lastLessThan(key: Bytes, offset = 0): KeySelector {
  return { key, orEqual: false, offset };
}

export function isKeySelector(x: unknown): x is KeySelector {
  return typeof x === 'object' && x !== null && !(x instanceof Uint8Array) && 'orEqual' in x && 'offset' in x;
}
