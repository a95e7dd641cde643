/**
 * Projections: the parts of a document a query returns. A path is followed through objects; where it
 * meets an array (or its end) the whole value there is kept, so the result holds everything MongoDB's
 * projection of that path would, and possibly more of an array's elements.
 */
import { DocumentError } from '../document/errors';
import type { JsonValue } from '../document/types';
import { MISSING, type IndexValue } from '../filter';

/** @throws DocumentError INVALID_QUERY for a projection that is not a list of dotted paths. */
export function parseProjection(projection: unknown): string[] | undefined {
  if (projection === undefined) return undefined;
  const paths = Array.isArray(projection)
    ? projection
    : typeof projection === 'object' && projection !== null
      ? Object.entries(projection as Record<string, unknown>).map(([path, on]) => {
          if (on !== 1 && on !== true)
            throw new DocumentError('INVALID_QUERY', `projection: only inclusion (1 or true) is supported, got ${String(on)} for "${path}"`);
          return path;
        })
      : undefined;
  if (paths === undefined || paths.some((p) => typeof p !== 'string' || p === '' || p.split('.').some((c) => c === ''))) {
    throw new DocumentError('INVALID_QUERY', 'projection is a list of dotted paths, e.g. ["name", "address.city"], or { name: 1 }');
  }
  return paths as string[];
}

/** The parts of `doc` at `paths` (a document that is not an object is returned whole). */
export function project(doc: JsonValue, paths: readonly string[]): JsonValue {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return doc;
  const out: { [key: string]: JsonValue } = {};
  for (const path of paths) copyPath(doc, path.split('.'), out);
  return out;
}

function copyPath(from: { [key: string]: JsonValue }, parts: readonly string[], to: { [key: string]: JsonValue }): void {
  let src: { [key: string]: JsonValue } = from;
  let dst = to;
  for (let i = 0; i < parts.length; i++) {
    const key = parts[i];
    if (!Object.prototype.hasOwnProperty.call(src, key)) return;
    const value = src[key];
    const last = i === parts.length - 1;
    if (last || typeof value !== 'object' || value === null || Array.isArray(value)) {
      if (last || Array.isArray(value)) define(dst, key, value);
      return;
    }
    const existing = Object.prototype.hasOwnProperty.call(dst, key) ? dst[key] : undefined;
    if (existing === undefined) define(dst, key, {});
    const next = dst[key];
    if (typeof next !== 'object' || next === null || Array.isArray(next)) return;
    dst = next;
    src = value;
  }
}

/** A partial document holding `values` at their plain dotted paths (MISSING ones left out). */
export function documentFrom(values: ReadonlyMap<string, IndexValue>): JsonValue {
  const out: { [key: string]: JsonValue } = {};
  for (const [path, value] of values) {
    if (value === MISSING) continue;
    const parts = path.split('.');
    let at = out;
    for (let i = 0; i < parts.length - 1; i++) {
      const existing = Object.prototype.hasOwnProperty.call(at, parts[i]) ? at[parts[i]] : undefined;
      if (typeof existing !== 'object' || existing === null || Array.isArray(existing)) define(at, parts[i], {});
      at = at[parts[i]] as { [key: string]: JsonValue };
    }
    define(at, parts[parts.length - 1], value);
  }
  return out;
}

function define(target: { [key: string]: JsonValue }, key: string, value: JsonValue): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}
