import type { JsonValue, LookupInSpec as LookupInSpecType, MutateInSpec as MutateInSpecType, MutateInSpecOptions, Path } from '../types';

/**
 * Builders of lookupIn and mutateIn specs, named as Couchbase's SDKs name them. Each value shares its
 * name with the spec's type (`LookupInSpec.get('a')` is a `LookupInSpec`). The builders only record
 * their arguments; `lookupIn`/`mutateIn` check them.
 */

export type LookupInSpec = LookupInSpecType;
export type MutateInSpec = MutateInSpecType;

export const LookupInSpec = {
  /** The value at `path`; `''` is the whole document. */
  get(path: Path): LookupInSpec {
    return { op: 'get', path };
  },
  /** Whether `path` exists: `false` for PATH_NOT_FOUND, other path errors are the entry's error. */
  exists(path: Path): LookupInSpec {
    return { op: 'exists', path };
  },
  /** The number of children of the object or array at `path` (`''`: the document's root). */
  count(path: Path): LookupInSpec {
    return { op: 'count', path };
  },
};

/** Options of insert and upsert specs. */
export interface CreatePathOption {
  /** Create missing parent objects (never array elements). */
  createPath?: boolean;
}

export const MutateInSpec = {
  /** Adds `value` at `path`, a key that must not exist (PATH_EXISTS). */
  insert(path: Path, value: JsonValue, options?: CreatePathOption): MutateInSpec {
    return { op: 'insert', path, value, options };
  },
  /** Sets `path` to `value`, whether or not it exists; `''` replaces the whole document. */
  upsert(path: Path, value: JsonValue, options?: CreatePathOption): MutateInSpec {
    return { op: 'upsert', path, value, options };
  },
  /** Replaces the existing value at `path` (a key or an array index). */
  replace(path: Path, value: JsonValue): MutateInSpec {
    return { op: 'replace', path, value };
  },
  /** Removes the value at `path`; array elements after it move down. `''` removes the document. */
  remove(path: Path): MutateInSpec {
    return { op: 'remove', path };
  },
  /** Appends `value` (each element of it, with `multi`) to the array at `path`. */
  arrayAppend(path: Path, value: JsonValue, options?: MutateInSpecOptions): MutateInSpec {
    return { op: 'arrayAppend', path, value, options };
  },
  /** Prepends `value` (the elements of it, in order, with `multi`) to the array at `path`. */
  arrayPrepend(path: Path, value: JsonValue, options?: MutateInSpecOptions): MutateInSpec {
    return { op: 'arrayPrepend', path, value, options };
  },
  /** Inserts before the element at the index `path` ends with (`length` appends). */
  arrayInsert(path: Path, value: JsonValue, options?: MutateInSpecOptions): MutateInSpec {
    return { op: 'arrayInsert', path, value, options };
  },
  /** Appends the primitive `value` unless the array holds it already (PATH_EXISTS). */
  arrayAddUnique(path: Path, value: JsonValue, options?: MutateInSpecOptions): MutateInSpec {
    return { op: 'arrayAddUnique', path, value, options };
  },
  /** Adds `delta` to the integer at `path` (creating it as `delta` if missing); returns the result. */
  increment(path: Path, delta: number | bigint, options?: CreatePathOption): MutateInSpec {
    return { op: 'increment', path, delta, options };
  },
  /** Subtracts `delta` from the integer at `path` (creating it as `-delta` if missing); returns the result. */
  decrement(path: Path, delta: number | bigint, options?: CreatePathOption): MutateInSpec {
    return { op: 'decrement', path, delta, options };
  },
};
