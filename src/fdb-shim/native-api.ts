/**
 * The native module interface of node-foundationdb 2.x (`foundationdb/dist/lib/native.d.ts`), the
 * surface the shim implements. It is declared structurally so that doclayer compiles without the
 * package; `test/fdb-shim/native-module.test.ts` checks that the shim satisfies the package's own
 * declarations.
 *
 * Byte arguments are strings (encoded as UTF-8) or buffers, as the C++ addon accepts them; versions
 * cross as 8-byte big-endian buffers. Methods that take a trailing callback return a promise without
 * one.
 */

/** A key, value or range bound as the addon accepts it. */
export type NativeValue = string | Uint8Array | ArrayBuffer;

/** Node-style callback of the addon: `err` is undefined on success. */
export type NativeCallback<T> = (err: Error | null | undefined, result?: T) => void;

/** One batch of a range read: pairs as `[key, value]`, and whether the range may hold more. */
export interface NativeKeyValueList {
  results: Array<[Buffer, Buffer]>;
  more: boolean;
}

/** An option's parameter: none, an integer, or bytes. */
export type NativeOptionValue = string | number | Uint8Array | null | undefined;

/** What a watch returns: a promise that resolves `true` when the key changes, and a way to cancel. */
export interface NativeWatch {
  promise: Promise<boolean>;
  cancel(): void;
}

/** node-foundationdb's `FDBError` class: `new FDBError(description, code)`. */
export type FdbErrorClass = new (description: string, code: number) => Error & { code: number };

export interface NativeTransaction {
  setOption(code: number, param: NativeOptionValue): void;
  commit(): Promise<void>;
  commit(cb: NativeCallback<void>): void;
  reset(): void;
  cancel(): void;
  onError(code: number): Promise<void>;
  onError(code: number, cb: NativeCallback<void>): void;
  getApproximateSize(): Promise<number>;

  get(key: NativeValue, isSnapshot: boolean): Promise<Buffer | undefined>;
  get(key: NativeValue, isSnapshot: boolean, cb: NativeCallback<Buffer | undefined>): void;
  getKey(key: NativeValue, orEqual: boolean, offset: number, isSnapshot: boolean): Promise<Buffer>;
  getKey(key: NativeValue, orEqual: boolean, offset: number, isSnapshot: boolean, cb: NativeCallback<Buffer>): void;
  set(key: NativeValue, value: NativeValue): void;
  clear(key: NativeValue): void;
  atomicOp(opType: number, key: NativeValue, operand: NativeValue): void;
  getRange(...args: NativeRangeArguments): Promise<NativeKeyValueList>;
  getRange(...args: [...NativeRangeArguments, NativeCallback<NativeKeyValueList>]): void;
  clearRange(begin: NativeValue, end: NativeValue): void;
  getEstimatedRangeSizeBytes(begin: NativeValue, end: NativeValue): Promise<number>;
  getRangeSplitPoints(begin: NativeValue, end: NativeValue, chunkSize: number): Promise<Buffer[]>;
  watch(key: NativeValue, ignoreStandardErrors: boolean): NativeWatch;
  addReadConflictRange(begin: NativeValue, end: NativeValue): void;
  addWriteConflictRange(begin: NativeValue, end: NativeValue): void;
  setReadVersion(version: Buffer): void;
  getReadVersion(): Promise<Buffer>;
  getReadVersion(cb: NativeCallback<Buffer>): void;
  getCommittedVersion(): Buffer;
  getVersionstamp(): Promise<Buffer>;
  getVersionstamp(cb: NativeCallback<Buffer>): void;
  /** The addon returns a promise here, although the package's declaration says `string[]`. */
  getAddressesForKey(key: NativeValue): Promise<string[]>;
}

/**
 * `getRange`'s arguments: both selectors (key, orEqual, offset), then the row limit and byte target
 * (0 for none), the streaming mode, the 1-based iteration (for the iterator mode), snapshot, reverse.
 */
export type NativeRangeArguments = [
  begin: NativeValue,
  beginOrEqual: boolean,
  beginOffset: number,
  end: NativeValue,
  endOrEqual: boolean,
  endOffset: number,
  limit: number,
  targetBytes: number,
  streamingMode: number,
  iteration: number,
  isSnapshot: boolean,
  reverse: boolean,
];

export interface NativeDatabase {
  createTransaction(): NativeTransaction;
  setOption(code: number, param: NativeOptionValue): void;
  close(): void;
}

/** `fdb_error_predicate`'s tests, as node-foundationdb numbers them (`ErrorPredicate`). */
export const ErrorPredicate = {
  retryable: 50000,
  maybeCommitted: 50001,
  retryableNotCommitted: 50002,
} as const;

export interface NativeModule {
  /** node-foundationdb's native.js sets this right after loading the module; errors are made with it. */
  FDBError?: FdbErrorClass;
  readonly type: 'napi';
  setAPIVersion(version: number): void;
  setAPIVersionImpl(version: number, headerVersion: number): void;
  startNetwork(): void;
  stopNetwork(): void;
  createDatabase(clusterFile?: string | null): NativeDatabase;
  setNetworkOption(code: number, param: NativeOptionValue): void;
  errorPredicate(test: number, code: number): boolean;
}
