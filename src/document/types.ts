import type { Transaction } from '../kv/contract/types';

/** A JSON value as stored: integers beyond 2^53 may be given and are returned as `bigint`. */
export type JsonValue = null | boolean | number | bigint | string | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/** A document id: a string (a UUIDv7 string when generated) or an integer. */
export type DocId = string | number | bigint;

/** One step of a path: an object key, or an array index (`-1` is the last element). */
export type PathElement = string | number;

/**
 * A path: Couchbase's string syntax (`a.b[2].c`, `` `key.with.dots` ``, `[-1]`; `''` is the whole
 * document) or an array of elements (`['a', 'b', 2, 'c']`; `[]` is the whole document).
 */
export type Path = string | readonly PathElement[];

/**
 * The version of a document, changed by every write: the hex of the 10-byte versionstamp of the
 * transaction that last wrote it. Opaque; compare for equality only.
 */
export type Cas = string;

/** Every operation accepts a transaction to join; without one it runs in its own retry loop. */
export interface TransactionOption {
  tr?: Transaction;
}

export interface GetResult<T = JsonValue> {
  content: T;
  /** The document's version; `undefined` when it was written earlier in the same (uncommitted) transaction. */
  cas: Cas | undefined;
  /** When the document expires; absent when it does not. */
  expiresAt?: Date;
}

/**
 * When a document expires: a number of seconds from now (0: never; fractions round up to the
 * millisecond), or an absolute time. A number is always relative (no 30-day rule, unlike Couchbase's
 * protocol). The collection's maxTTL caps it. An expired document reads as missing at once.
 */
export type Expiry = number | Date;

export interface ExpiryOptions {
  /**
   * The document's expiry (see {@link Expiry}). Absent: none, as in Couchbase, a write clears the
   * expiry the document had, unless `preserveExpiry`; in a collection with a maxTTL, a write without
   * an expiry gets `maxTTL` seconds from now.
   */
  expiry?: Expiry;
  /** Keep the expiry the document has (Couchbase's preserveExpiry); excludes `expiry`. */
  preserveExpiry?: boolean;
}

export interface MutationResult {
  /**
   * The version this write gave the document. Known once the transaction commits: `undefined` when the
   * operation joined a caller's transaction (read it with `tr.getVersionstamp()` after commit).
   */
  cas: Cas | undefined;
}

export interface InsertResult extends MutationResult {
  id: DocId;
}

export interface InsertOptions extends TransactionOption {
  /** The id to insert under; a UUIDv7 string is generated when absent. */
  id?: DocId;
  /** The document's expiry (see {@link Expiry}); absent: none, or the collection's maxTTL. */
  expiry?: Expiry;
}

export interface UpsertOptions extends TransactionOption, ExpiryOptions {}

export interface CasOptions extends TransactionOption {
  /** Fail with CAS_MISMATCH (and change nothing) unless the document's version is this one. */
  cas?: Cas;
}

export interface ReplaceOptions extends CasOptions, ExpiryOptions {}

export interface ScanOptions extends TransactionOption {
  /** Documents fetched per range read (default 100). Each page is its own transaction unless `tr` is given. */
  pageSize?: number;
  /** Ids from `start` (inclusive) to `end` (exclusive), in id order. */
  start?: DocId;
  end?: DocId;
  limit?: number;
}

export interface ScanItem<T = JsonValue> {
  id: DocId;
  content: T;
  cas: Cas | undefined;
  /** When the document expires; absent when it does not. */
  expiresAt?: Date;
}

/** lookupIn specs, as Couchbase's `LookupInSpec`. */
export type LookupInSpec = { op: 'get'; path: Path } | { op: 'exists'; path: Path } | { op: 'count'; path: Path };

/** The result of one lookup spec: a value or that spec's own error (the call itself succeeds). */
export interface LookupInEntry {
  /** The value for `get`, `true`/`false` for `exists`, the number of children for `count`. */
  value?: JsonValue;
  error?: Error;
}

export interface LookupInResult {
  entries: LookupInEntry[];
  cas: Cas | undefined;
}

export interface MutateInSpecOptions {
  /** Create missing parent objects (never array elements). */
  createPath?: boolean;
  /** For array specs: the value is an array of elements to add, not one element. */
  multi?: boolean;
}

/** mutateIn specs, as Couchbase's `MutateInSpec`. */
export type MutateInSpec =
  | { op: 'insert' | 'upsert' | 'replace'; path: Path; value: JsonValue; options?: MutateInSpecOptions }
  | { op: 'remove'; path: Path; options?: MutateInSpecOptions }
  | { op: 'arrayAppend' | 'arrayPrepend' | 'arrayInsert' | 'arrayAddUnique'; path: Path; value: JsonValue; options?: MutateInSpecOptions }
  | { op: 'increment' | 'decrement'; path: Path; delta: number | bigint; options?: MutateInSpecOptions };

export interface MutateInOptions extends CasOptions, ExpiryOptions {
  /** 'replace' (default): the document must exist; 'upsert': create it if missing; 'insert': it must not exist. */
  storeSemantics?: 'replace' | 'upsert' | 'insert';
}

export interface MutateInResult extends MutationResult {
  /** Per spec: the new value for increment/decrement, otherwise undefined. */
  values: (JsonValue | undefined)[];
}
