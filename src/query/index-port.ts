/**
 * What the query layer needs of a collection's secondary indexes: the `IndexAccess` port that src/index
 * implements (the issue-14 contract: idx-core builds it, the Collection hands it over). Declared here as
 * the contract states it, so the planner is written and tested against the contract itself; src/index's
 * implementation satisfies these types structurally.
 */
import type { Transaction } from '../kv/contract/types';
import type { DocId } from '../document/types';
import type { Filter, IndexValue, ValueType } from '../filter';

export interface IndexFieldDescription {
  readonly path: string;
  readonly order: 'asc' | 'desc';
}

export interface IndexDescription {
  readonly name: string;
  readonly fields: readonly IndexFieldDescription[];
  readonly unique: boolean;
  readonly where?: Filter;
  /** Plain dotted paths stored in each entry. */
  readonly include: readonly string[];
  /** Only 'ready' indexes serve queries. */
  readonly state: 'building' | 'ready';
  readonly progress?: { readonly scanned: number; readonly done: boolean };
}

/** One interval of an index in terms of its field values, in VALUE order (the scan maps desc fields). */
export interface IndexInterval {
  /** Values of the first k fields (may be empty). */
  readonly equal: readonly IndexValue[];
  /** Bound on field k (the one after the equal prefix). */
  readonly lower?: IndexBound;
  readonly upper?: IndexBound;
}

export type IndexBound =
  | { readonly value: IndexValue; readonly inclusive: boolean }
  /** Before every value of that type. */
  | { readonly typeStart: ValueType }
  /** After every value of that type. */
  | { readonly typeEnd: ValueType };

export interface IndexEntry {
  readonly id: DocId;
  /** One per field. */
  readonly values: readonly IndexValue[];
  /** The `include` paths. */
  readonly included: ReadonlyMap<string, IndexValue>;
  /** Opaque position of this entry: a scan resumes strictly after it. */
  readonly cursor: Buffer;
}

export interface IndexScanOptions {
  readonly reverse?: boolean;
  readonly after?: Buffer;
  readonly limit?: number;
  readonly snapshot?: boolean;
}

/**
 * How the query layer reaches one collection's indexes. Entries come in key order: ascending by
 * (values in each field's order, then id); `reverse` flips it. `scan` reads only keys inside the
 * interval; an unknown index name is a typed error.
 */
export interface IndexAccess {
  list(tr: Transaction): Promise<IndexDescription[]>;
  scan(tr: Transaction, name: string, interval: IndexInterval, opts?: IndexScanOptions): AsyncIterable<IndexEntry>;
}
