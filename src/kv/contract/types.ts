/**
 * The ordered-KV transaction contract. Everything above `src/kv` is written against these interfaces
 * and nothing else; every engine (memory, lmdb, fdb) implements them with FoundationDB's semantics:
 *
 * - Keys and values are byte strings compared lexicographically (unsigned bytes). Keys starting with
 *   `0xff` are FDB's system keyspace and are rejected with `key_outside_legal_range` (2004); a range
 *   end may be exactly `0xff`.
 * - Transactions are serializable and optimistic: reads record read conflict ranges, and a commit fails
 *   with `not_committed` (1020) if any key in those ranges was written by a transaction that committed
 *   after this one's read version. Snapshot reads and atomic operations add no read conflicts.
 * - Reads see the transaction's own writes (sets, clears, range clears and atomic operations).
 * - Limits: key <= 10,000 bytes (2102), value <= 100,000 bytes (2103), mutations plus conflict ranges
 *   <= 10,000,000 bytes (2101), 5 seconds from read version to commit (1007).
 *
 * Byte arguments accept any `Uint8Array` (Buffer included) or a string (encoded as UTF-8); results are
 * always `Buffer`.
 *
 * Promises settle on a later turn of the event loop (a macrotask), never within the caller's chain of
 * microtasks, as FDB's futures settle from its network thread: a loop that awaits one operation after
 * another lets timers and I/O run between them, whichever engine it runs on. One exception: the commit
 * of a read-only attempt during which the event loop has already turned (it awaited a read) settles
 * without a turn of its own, as it sends nothing to a cluster; a loop of transactions still yields at
 * least once per attempt.
 *
 * Returned Buffers are read-only: an engine may hand out the Buffers it stores instead of copies (the
 * memory engine's range reads do, so that reading a large range costs no copy per key), and modifying
 * one could change data other readers see. Copy a result (`Buffer.from(b)`) before modifying it.
 */

/** Bytes as accepted by the contract: a Uint8Array (Buffer included), or a string encoded as UTF-8. */
export type Bytes = Uint8Array | string;

/**
 * A key selector as in FDB: the key at `offset` from the last key that is less than `key` (or less than
 * or equal, when `orEqual`). Build them with the functions in `key-selector.ts`.
 */
export interface KeySelector {
  readonly key: Bytes;
  readonly orEqual: boolean;
  readonly offset: number;
}

/** A pair returned by a range read. Both Buffers are read-only (see the top of this file). */
export interface KeyValue {
  readonly key: Buffer;
  readonly value: Buffer;
}

export interface RangeOptions {
  /** Maximum number of pairs to return; 0 or absent means no limit. */
  limit?: number;
  /** Return pairs in descending key order (still from the range `[begin, end)`). */
  reverse?: boolean;
  /** A hint for how many pairs to fetch per round trip when iterating; engines may ignore it. */
  batchSize?: number;
}

/** The atomic operations of FDB, by their FDB names. Parameters are little-endian where numeric. */
export type AtomicOp = 'add' | 'bitAnd' | 'bitOr' | 'bitXor' | 'max' | 'min' | 'byteMin' | 'byteMax' | 'appendIfFits' | 'compareAndClear';

/** A watch on one key, created by {@link Transaction.watch}. */
export interface Watch {
  /**
   * Resolves `true` once a commit after the watching transaction changes the key's value, `false` when
   * the watch is cancelled; rejects with the transaction's error if it fails to commit.
   */
  readonly promise: Promise<boolean>;
  /** Stops watching; the promise resolves `false`. Idempotent. */
  cancel(): void;
}

/** The read half of a transaction; `Transaction.snapshot()` returns one whose reads add no conflicts. */
export interface ReadTransaction {
  /** The value at `key`, or `undefined`. Reads 1 key. The Buffer is read-only (see the top of this file). */
  get(key: Bytes): Promise<Buffer | undefined>;
  /** The key a selector resolves to, clamped to `''`..`'\xff'` as FDB does. */
  getKey(selector: KeySelector): Promise<Buffer>;
  /**
   * Pairs in `[begin, end)` in key order (or reverse), as an async iterator that fetches in batches.
   * `begin`/`end` are keys (meaning firstGreaterOrEqual) or selectors. Keys and values are read-only
   * Buffers that may be the engine's own (see the top of this file).
   */
  getRange(begin: Bytes | KeySelector, end: Bytes | KeySelector, options?: RangeOptions): AsyncIterable<KeyValue>;
  /** The same as {@link getRange}, collected into an array. */
  getRangeAll(begin: Bytes | KeySelector, end: Bytes | KeySelector, options?: RangeOptions): Promise<KeyValue[]>;
  /** The read version this transaction reads at (fetched on first use). */
  getReadVersion(): Promise<bigint>;
  /**
   * FoundationDB's metadata version (the value of `\xff/metadataVersion`, see `metadata-version.ts`):
   * the 10-byte versionstamp of the last commit that called {@link Transaction.bumpMetadataVersion}, or
   * `undefined` if none has. It is delivered with the read version, so it costs no round trip of its
   * own on a cluster. Read through the transaction (not `snapshot()`), it records a read conflict on
   * the key, so the commit fails with not_committed (1020) if a bump committed after the read version:
   * a cache keyed by it cannot be used stale by a transaction that commits.
   *
   * @throws KvError accessed_unreadable (1036) once this transaction has bumped it, as in FDB.
   */
  getMetadataVersion(): Promise<Buffer | undefined>;
}

export interface Transaction extends ReadTransaction {
  /** A view of this transaction whose reads see its writes but record no read conflict ranges. */
  snapshot(): ReadTransaction;

  set(key: Bytes, value: Bytes): void;
  clear(key: Bytes): void;
  /** Clears `[begin, end)`. */
  clearRange(begin: Bytes, end: Bytes): void;

  /** Applies an FDB atomic operation; adds a write conflict on `key` and no read conflict. */
  atomicOp(op: AtomicOp, key: Bytes, param: Bytes): void;
  /** Little-endian two's-complement add of `delta` (a number, bigint or raw LE bytes). */
  add(key: Bytes, delta: number | bigint | Bytes): void;
  max(key: Bytes, param: Bytes): void;
  min(key: Bytes, param: Bytes): void;
  bitAnd(key: Bytes, param: Bytes): void;
  bitOr(key: Bytes, param: Bytes): void;
  bitXor(key: Bytes, param: Bytes): void;
  byteMin(key: Bytes, param: Bytes): void;
  byteMax(key: Bytes, param: Bytes): void;
  appendIfFits(key: Bytes, param: Bytes): void;
  compareAndClear(key: Bytes, param: Bytes): void;

  /**
   * Sets a key containing an incomplete versionstamp: the last 4 bytes of `keyWithOffset` are a
   * little-endian offset to 10 placeholder bytes that the commit replaces with its versionstamp.
   */
  setVersionstampedKey(keyWithOffset: Bytes, value: Bytes): void;
  /** As {@link setVersionstampedKey}, for the value. */
  setVersionstampedValue(key: Bytes, valueWithOffset: Bytes): void;
  /**
   * Sets the metadata version ({@link ReadTransaction.getMetadataVersion}) to this commit's
   * versionstamp: FDB's `setVersionstampedValue('\xff/metadataVersion', 14 zero bytes)`. A write
   * conflict on the key, no read conflict; concurrent transactions that read the metadata version
   * (not at snapshot) fail to commit. Reading it afterwards in this transaction is accessed_unreadable
   * (1036). Call it in every transaction that changes metadata others cache by the version.
   */
  bumpMetadataVersion(): void;
  /**
   * The 10-byte versionstamp (8-byte big-endian commit version, 2-byte batch order) of this transaction,
   * resolving after a successful commit. Must be called before `commit()`; rejects with
   * `no_commit_version` (2021) if the transaction committed without writes.
   */
  getVersionstamp(): Promise<Buffer>;

  /** Watches `key`; the watch starts when this transaction commits (see {@link Watch}). */
  watch(key: Bytes): Watch;

  addReadConflictRange(begin: Bytes, end: Bytes): void;
  addReadConflictKey(key: Bytes): void;
  addWriteConflictRange(begin: Bytes, end: Bytes): void;
  addWriteConflictKey(key: Bytes): void;

  /** An estimate of the bytes this transaction counts against the 10,000,000-byte limit. */
  getApproximateSize(): Promise<number>;

  /**
   * Commits. Rejects with a {@link KvError}; a read-only transaction commits without a version, and
   * without a turn of the event loop of its own if one has passed since the attempt began.
   */
  commit(): Promise<void>;
  /** The commit version after a successful commit (`-1n` for a read-only one), as FDB reports it. */
  getCommittedVersion(): bigint;
  /**
   * FDB's `onError`: if `err` is retryable, waits a jittered exponential backoff and resets this
   * transaction so it can be run again; otherwise rejects with `err`.
   */
  onError(err: unknown): Promise<void>;
  /**
   * Reads this attempt at `version` instead of the latest one, as FDB's `setReadVersion`: every read,
   * and the conflict check at commit, are as of that version. `getReadVersion()` then returns it.
   * Reads fail with transaction_too_old (1007) when the version is over 5 s old or the engine no longer
   * holds its data (the memory and lmdb engines hold the latest version and those their open
   * transactions are reading at: not yet committed, reset or cancelled), and with future_version
   * (1009) when it is newer than the last commit. Both are retryable; a retry starts without it.
   *
   * @throws KvError version_invalid (2011) for a version below 1; read_version_already_set (2010)
   *   once this attempt has a read version (from a read, `getReadVersion()` or this call);
   *   transaction_cancelled (1025), used_during_commit (2017).
   */
  setReadVersion(version: bigint): void;
  /**
   * FDB's `read_your_writes_disable` option, for this attempt: reads see the database as of the read
   * version only, never this transaction's own writes, and record read conflicts for all they read;
   * `watch` fails with watches_disabled (1034). `reset()` and `onError()` turn it off again, as FDB
   * does for every option but its persistent ones.
   *
   * @throws KvError client_invalid_operation (2000) once this attempt has read or written anything;
   *   transaction_cancelled (1025), used_during_commit (2017).
   */
  disableReadYourWrites(): void;

  /** Discards all reads, writes and the read version, as if the transaction were new. */
  reset(): void;
  /**
   * Which attempt of this transaction object is running: 0 at first, one more after each `reset()`
   * and each `onError()` that lets it run again. The retry loop reuses the object across attempts, so
   * a layer above keeps per-attempt state under (transaction, attempt): nothing of a failed attempt
   * reaches the next.
   */
  readonly attempt: number;
  /** Cancels: later operations fail with `transaction_cancelled` (1025). */
  cancel(): void;
}

/** Options of {@link Database.transact}. */
export interface TransactOptions {
  /** Give up after this many retries (the error of the last attempt is thrown). Default: unlimited. */
  maxRetries?: number;
  /** Give up once this many milliseconds have passed since the first attempt. Default: unlimited. */
  timeoutMs?: number;
  /**
   * Run inside this existing transaction instead of a new one: no commit and no retry here, the
   * owner of `tr` commits. This is how operations compose with a caller's transaction.
   */
  tr?: Transaction;
}

/** What an engine provides; {@link Database} adds the retry loop and conveniences on top. */
export interface Engine {
  /** A short name for messages and test titles: `'memory'`, `'lmdb'`, `'fdb'`. */
  readonly name: string;
  /**
   * The longest key it stores, in bytes, when that is below FoundationDB's `Limits.maxKeyBytes` (LMDB:
   * 4,025); absent, FoundationDB's 10,000. Writing a longer key is key_too_large (2102).
   */
  readonly maxKeyBytes?: number;
  createTransaction(): Transaction;
  close(): Promise<void>;
}
