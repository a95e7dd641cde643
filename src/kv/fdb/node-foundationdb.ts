/**
 * The part of the `foundationdb` npm package (node-foundationdb 2.x) that the adapter calls, declared
 * structurally so that doclayer compiles without the package or its types. Everything here is the
 * package's public JavaScript API (`Database` and `Transaction` methods), never its native module, so
 * anything that implements these methods — the real package, or the package's JS layer over another
 * store — plugs into the adapter.
 *
 * Keys and values cross this boundary as Buffers; the adapter installs identity encoders (see
 * {@link FdbDatabaseLike.withKeyEncoding}) so that node-foundationdb passes them through unchanged.
 */

/** node-foundationdb's key/value encoder. The adapter only ever installs the identity. */
export interface FdbTransformer {
  pack(value: Buffer): Buffer;
  unpack(buf: Buffer): Buffer;
}

/**
 * node-foundationdb's key selector object. `_isKeySelector` is how its `keySelector.from` tells a
 * selector from a key; without it a selector object would be taken for a key.
 */
export interface FdbKeySelector {
  key: Buffer;
  orEqual: boolean;
  offset: number;
  _isKeySelector: true;
}

/** node-foundationdb's range options (`streamingMode` and `targetBytes` are left to their defaults). */
export interface FdbRangeOptions {
  limit?: number;
  reverse?: boolean;
}

/** The `{promise, cancel}` object node-foundationdb's `watch` returns. */
export interface FdbWatch {
  promise: Promise<boolean>;
  cancel(): void;
}

/** The subset of node-foundationdb's `Transaction` the adapter calls. */
export interface FdbTransactionLike {
  /** A view of the same native transaction whose reads are snapshot reads. */
  snapshot(): FdbTransactionLike;

  get(key: Buffer): Promise<Buffer | undefined>;
  /** Resolves `undefined` when the selector resolves to the empty key (or outside the subspace). */
  getKey(selector: FdbKeySelector): Promise<Buffer | undefined>;
  /** Without `end`, node-foundationdb treats `begin` as a prefix; the adapter always passes both. */
  getRange(begin: FdbKeySelector, end: FdbKeySelector, options?: FdbRangeOptions): AsyncIterable<[Buffer, Buffer]>;
  getRangeAll(begin: FdbKeySelector, end: FdbKeySelector, options?: FdbRangeOptions): Promise<Array<[Buffer, Buffer]>>;
  /** The read version as 8 big-endian bytes. */
  getReadVersion(): Promise<Buffer>;
  /** `fdb_transaction_set_read_version`, the version as 8 big-endian bytes. */
  setReadVersion(version: Buffer): void;
  /** `fdb_transaction_set_option`: an {@link FdbTransactionOption} code and its parameter, if any. */
  setOption(code: number, param?: number | string | Buffer | null): void;

  set(key: Buffer, value: Buffer): void;
  clear(key: Buffer): void;
  /** Without `end`, node-foundationdb clears the prefix `begin`; the adapter always passes both. */
  clearRange(begin: Buffer, end: Buffer): void;

  /**
   * `fdb_transaction_atomic_op` with the given {@link FdbMutationType}; the bytes go to the C API as
   * they are. This is also how the adapter writes versionstamped keys and values: the package's
   * `setVersionstampedKey`/`setVersionstampedValue` need a tuple encoder and append the offset
   * themselves, while mutation types 14 and 15 take bytes that already end with the 4-byte
   * little-endian offset (API version >= 520), exactly as the contract passes them.
   */
  atomicOp(opType: number, key: Buffer, param: Buffer): void;
  /** The promise resolves to the 10-byte versionstamp after a successful commit. */
  getVersionstamp(): { promise: Promise<Buffer> };

  /**
   * With `throwAllErrors: true` the promise rejects with the transaction's error; without it,
   * node-foundationdb resolves `false` on 1020, 1025 and 1101, hiding a failed commit.
   */
  watch(key: Buffer, options?: { throwAllErrors?: boolean }): FdbWatch;

  addReadConflictRange(begin: Buffer, end: Buffer): void;
  addReadConflictKey(key: Buffer): void;
  addWriteConflictRange(begin: Buffer, end: Buffer): void;
  addWriteConflictKey(key: Buffer): void;

  getApproximateSize(): Promise<number>;

  rawCommit(): Promise<void>;
  /** The commit version as 8 big-endian bytes (-1 for a read-only transaction). */
  getCommittedVersion(): Buffer;
  /** `fdb_transaction_on_error`: backs off and resets when `code` is retryable, else rejects. */
  rawOnError(code: number): Promise<void>;
  rawReset(): void;
  rawCancel(): void;
}

/** The subset of node-foundationdb's `Database` the adapter calls. */
export interface FdbDatabaseLike {
  /**
   * node-foundationdb's native database (a field of its `Database`). The adapter only looks on it for
   * {@link NATIVE_MAX_KEY_BYTES}, which the fdb shim sets.
   */
  readonly _db?: unknown;
  rawCreateTransaction(): FdbTransactionLike;
  /** The subspace prefix node-foundationdb adds to every key; the adapter requires it to be empty. */
  getPrefix(): Buffer;
  withKeyEncoding(keyXf: FdbTransformer): FdbDatabaseLike;
  withValueEncoding(valueXf: FdbTransformer): FdbDatabaseLike;
  close(): void;
}

/**
 * The property by which a native database that is not FoundationDB's (the fdb shim's, over an engine
 * with shorter keys, such as LMDB's 4,025 bytes) tells the adapter its longest key. A real cluster
 * does not set it: FoundationDB's 10,000 bytes apply.
 */
export const NATIVE_MAX_KEY_BYTES: unique symbol = Symbol.for('doclayer.fdb.nativeMaxKeyBytes');

/** The longest key the cluster behind `db` stores, when it says so (see {@link NATIVE_MAX_KEY_BYTES}). */
export function nativeMaxKeyBytes(db: FdbDatabaseLike): number | undefined {
  const native = db._db;
  if (typeof native !== 'object' || native === null) return undefined;
  const max = (native as { [NATIVE_MAX_KEY_BYTES]?: unknown })[NATIVE_MAX_KEY_BYTES];
  return typeof max === 'number' && Number.isSafeInteger(max) && max > 0 ? max : undefined;
}

/** The subset of the package's module exports that `openFoundationDB` calls. */
export interface FdbModuleLike {
  setAPIVersion(version: number): void;
  open(clusterFile?: string): FdbDatabaseLike;
}

/** The error class node-foundationdb rejects with: FDB's message and numeric error code. */
export interface FdbErrorLike extends Error {
  code: number;
}

/** The FDB transaction option codes (`fdb_c_options.g.h`) the adapter sets. */
export const FdbTransactionOption = {
  readYourWritesDisable: 51,
} as const;

/**
 * FDB's mutation type codes (`fdb_c_options.g.h`, the package's `MutationType` enum). They are part
 * of the C API and stable across versions, so the adapter needs no module to know them.
 */
export const FdbMutationType = {
  add: 2,
  bitAnd: 6,
  bitOr: 7,
  bitXor: 8,
  appendIfFits: 9,
  max: 12,
  min: 13,
  setVersionstampedKey: 14,
  setVersionstampedValue: 15,
  byteMin: 16,
  byteMax: 17,
  compareAndClear: 20,
} as const;
