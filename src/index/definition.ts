import { Buffer } from 'node:buffer';
import { corruptData, DocumentError } from '../document/errors';
import { compileFilter, type Filter } from '../filter';
import { parseIndexPath, type IndexPath } from './index-path';

/**
 * Index definitions: what `createIndex` takes, checked, and the catalog of one collection's indexes
 * as stored (one JSON value, see index-keys.ts).
 */

/** A field of an index as `createIndex` takes it: a path (ascending) or a path with its order. */
export type IndexFieldSpec = string | { readonly path: string; readonly order?: 'asc' | 'desc' };

/** What `createIndex` takes. */
export interface IndexSpec {
  /** The indexed paths, most significant first (at most {@link MAX_FIELDS}). */
  readonly fields: readonly IndexFieldSpec[];
  /** At most one document per tuple of values (MongoDB's rule: a missing field counts as a value). */
  readonly unique?: boolean;
  /** Plain paths whose values each entry also stores, for queries that need nothing else (covering reads). */
  readonly include?: readonly string[];
  /** A partial index: only documents matching this filter (the query filter language) have entries. */
  readonly where?: Filter;
}

export interface IndexFieldDescription {
  readonly path: string;
  readonly order: 'asc' | 'desc';
}

/** One index as the catalog stores it. */
export interface StoredIndex {
  /** Names its entries' keys: never reused in the collection, so a dropped index's keys cannot come back. */
  readonly id: number;
  readonly name: string;
  readonly fields: readonly IndexFieldDescription[];
  readonly unique: boolean;
  readonly include: readonly string[];
  readonly where?: Filter;
  readonly state: 'building' | 'ready';
}

/** The indexes of one collection, as stored. */
export interface Catalog {
  /** The id the next index gets. */
  readonly nextId: number;
  readonly indexes: readonly StoredIndex[];
}

export const EMPTY_CATALOG: Catalog = { nextId: 1, indexes: [] };

/** Most fields of one index. */
export const MAX_FIELDS = 16;
/** Most `include` paths of one index. */
export const MAX_INCLUDE = 16;
/** Most indexes of one collection (the catalog stays one small value). */
export const MAX_INDEXES = 64;
const NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}$/;
const SPEC_OPTIONS: ReadonlySet<string> = new Set(['fields', 'unique', 'include', 'where']);

/** An index spec, checked: the definition it makes (without id and state) and its parsed paths. */
export interface CheckedSpec {
  readonly name: string;
  readonly fields: readonly IndexFieldDescription[];
  readonly unique: boolean;
  readonly include: readonly string[];
  readonly where?: Filter;
}

/**
 * Checks a `createIndex` call's name and spec.
 *
 * @throws DocumentError INVALID_INDEX naming what is wrong: the name, an unknown option, no fields or
 *   more than {@link MAX_FIELDS}, an invalid path, an order other than 'asc'/'desc', a repeated path,
 *   a bad `unique` or `include`, `where` (partial indexes are not in this build).
 */
export function checkSpec(name: unknown, spec: unknown): CheckedSpec {
  if (typeof name !== 'string' || !NAME.test(name)) {
    throw new DocumentError(
      'INVALID_INDEX',
      `an index name is 1-100 characters of A-Z a-z 0-9 _ . - not starting with . or -, got ${JSON.stringify(name) ?? typeof name}`,
    );
  }
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) {
    throw new DocumentError('INVALID_INDEX', `index ${name}: the spec is an object { fields, unique?, include? }`);
  }
  for (const key of Object.keys(spec)) {
    if (!SPEC_OPTIONS.has(key)) throw new DocumentError('INVALID_INDEX', `index ${name}: unknown option ${JSON.stringify(key)}`);
  }
  const { fields, unique, include, where } = spec as { fields?: unknown; unique?: unknown; include?: unknown; where?: unknown };
  if (!Array.isArray(fields) || fields.length === 0) throw new DocumentError('INVALID_INDEX', `index ${name}: fields is a non-empty array`);
  if (fields.length > MAX_FIELDS) {
    throw new DocumentError('INVALID_INDEX', `index ${name}: ${fields.length} fields, over the limit of ${MAX_FIELDS}`);
  }
  const checked = fields.map((field: unknown, i): IndexFieldDescription => {
    const what = `index ${name}, field ${i}`;
    if (typeof field === 'string') return { path: parseIndexPath(field, what).text, order: 'asc' };
    if (typeof field !== 'object' || field === null || Array.isArray(field)) {
      throw new DocumentError('INVALID_INDEX', `${what}: a field is a path or { path, order }`);
    }
    for (const key of Object.keys(field)) {
      if (key !== 'path' && key !== 'order') throw new DocumentError('INVALID_INDEX', `${what}: unknown option ${JSON.stringify(key)}`);
    }
    const { path, order } = field as { path?: unknown; order?: unknown };
    if (order !== undefined && order !== 'asc' && order !== 'desc') {
      throw new DocumentError('INVALID_INDEX', `${what}: order is 'asc' or 'desc', got ${JSON.stringify(order) ?? typeof order}`);
    }
    return { path: parseIndexPath(path, what).text, order: order ?? 'asc' };
  });
  const seen = new Set<string>();
  for (const field of checked) {
    if (seen.has(field.path)) throw new DocumentError('INVALID_INDEX', `index ${name}: the path ${field.path} is indexed twice`);
    seen.add(field.path);
  }
  if (unique !== undefined && typeof unique !== 'boolean') throw new DocumentError('INVALID_INDEX', `index ${name}: unique is a boolean`);
  if (include !== undefined && !Array.isArray(include)) throw new DocumentError('INVALID_INDEX', `index ${name}: include is an array of paths`);
  const includes = (include ?? []) as unknown[];
  if (includes.length > MAX_INCLUDE) {
    throw new DocumentError('INVALID_INDEX', `index ${name}: ${includes.length} include paths, over the limit of ${MAX_INCLUDE}`);
  }
  const included = includes.map((path, i) => parseIndexPath(path, `index ${name}, include ${i}`, false).text);
  if (new Set(included).size !== included.length) throw new DocumentError('INVALID_INDEX', `index ${name}: an include path is repeated`);
  // INVALID_FILTER or UNSUPPORTED_OPERATOR for a bad partial filter.
  if (where !== undefined) compileFilter(where);
  const base = { name, fields: checked, unique: unique === true, include: included };
  return where === undefined ? base : { ...base, where: where as Filter };
}

/** True when a stored index was made from the same checked spec. */
export function sameDefinition(stored: StoredIndex, spec: CheckedSpec): boolean {
  const text = (d: CheckedSpec | StoredIndex) => JSON.stringify([d.fields, d.unique, d.include, d.where ?? null], bigints);
  return text(stored) === text(spec);
}

/** Bigints (in a partial filter) as `{ [BIGINT]: digits }` in the catalog's JSON. */
const BIGINT = '$doclayer.bigint';

function bigints(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? { [BIGINT]: value.toString() } : value;
}

function revive(_key: string, value: unknown): unknown {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const digits = (value as Record<string, unknown>)[BIGINT];
    if (typeof digits === 'string' && Object.keys(value).length === 1) return BigInt(digits);
  }
  return value;
}

export function encodeCatalog(catalog: Catalog): Buffer {
  return Buffer.from(JSON.stringify(catalog, bigints), 'utf8');
}

/** @throws DocumentError CORRUPT_DATA when the bytes are not a catalog. */
export function decodeCatalog(bytes: Uint8Array | undefined): Catalog {
  if (bytes === undefined) return EMPTY_CATALOG;
  try {
    const parsed = JSON.parse(Buffer.from(bytes).toString('utf8'), revive) as Catalog;
    const indexes: readonly StoredIndex[] = parsed.indexes;
    if (!Number.isSafeInteger(parsed.nextId) || !isArray(indexes)) throw new Error('not a catalog');
    for (const index of indexes) checkSpec(index.name, { fields: index.fields, unique: index.unique, include: index.include, where: index.where });
    return parsed;
  } catch (err) {
    throw corruptData('index catalog', err);
  }
}

/** `Array.isArray` without narrowing to `any[]`. */
function isArray(value: unknown): boolean {
  return Array.isArray(value);
}

/** The parsed paths of a stored index's fields and includes. */
export function parsedPaths(index: StoredIndex): { fields: IndexPath[]; include: IndexPath[] } {
  return {
    fields: index.fields.map((f) => parseIndexPath(f.path, index.name)),
    include: index.include.map((p) => parseIndexPath(p, index.name, false)),
  };
}
