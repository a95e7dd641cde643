import { Buffer } from 'node:buffer';
import type * as LmdbPackage from 'lmdb';
import type { Database as LmdbDatabase, RangeOptions as LmdbRangeOptions, RootDatabase, Transaction as LmdbTransaction } from 'lmdb';
import { statSync } from 'fs';
import { join, resolve } from 'path';
import { compareBytes } from '../contract/bytes';
import { isKvError, kvError } from '../contract/errors';
import type { KeyValue } from '../contract/types';
import { assertOpenable } from './file-checks';
import { assertRoomToOpen } from './free-space';
import { openFailure, readFailure, writeFailure } from './store-failure';

/**
 * LMDB, as the lmdb engine uses it: the only module that uses the `lmdb` package (loaded when the first
 * store is opened). Everything LMDB imposes is handled here, so that the engine logic above deals in
 * user keys and plain bytes:
 *
 * - Keys: LMDB rejects the empty key and caps key size (1,978 bytes with 4 KiB pages; 4,026, the
 *   package's hard maximum, with pages of 8 KiB or more). The store uses 8 KiB pages and keeps each
 *   user key behind a one-byte prefix, so the empty key works and user keys may have up to
 *   {@link LMDB_MAX_KEY_BYTES} = 4,025 bytes. Range bounds longer than that (legal in FoundationDB) are
 *   translated into equivalent bounds that fit.
 * - Layout: one environment in one folder, with three named databases: `data` (the user keyspace),
 *   `meta` (the last commit version, the conflict-log horizon and the format) and `log` (the write
 *   conflict ranges of recent commits, by commit version).
 * - Reads go through explicit LMDB read transactions ({@link StoreSnapshot}); writes through one
 *   exclusive LMDB write transaction at a time ({@link LmdbStore.write}), which LMDB serializes across
 *   processes.
 * - Durability: the environment is opened with LMDB's `MDB_NOSYNC`, never with the package's default
 *   `overlappingSync`: a commit writes its pages and meta page to the file (the OS page cache) and
 *   returns with no flush, and the store flushes the data file (fdatasync) on a thread of libuv's pool
 *   ({@link LmdbStore.flushed}): after each batch of commits for `'sync'`, about once a second
 *   ({@link FAST_FLUSH_MS}) for `'fast'`, and when it closes. A committed transaction survives a crash
 *   of the process (it is in the OS page cache, and reopening on the same boot uses it); only a flushed
 *   one survives a crash of the OS or a power loss. `overlappingSync` flushes inside the commit under a
 *   flush lock shared by the processes, and LMDB's recovery of that lock from a process killed while
 *   holding it resets the store's transaction counter without the write lock: the soak test met it
 *   as MDB_PANIC and as commits refused with MDB_BAD_TXN (docs/reliability.md).
 * - Opening: the `lmdb` package's LMDB sets the store's shared transaction counter (`mti_txnid` in
 *   `lock.mdb`) to the newest meta page it read while opening, without the write lock (upstream LMDB
 *   fixed this as ITS#9496; the package's copy, 3.5.6, still has it). A commit by another process between
 *   that read and that write is then lost: the next writer begins from the meta page before it and
 *   overwrites it, and a process reading that commit's pages may crash. So every open and every write
 *   transaction of the store holds the write lock of a second, empty LMDB environment in the folder
 *   ({@link GATE_FOLDER}): opens and commits, in any process, never overlap. The gate is never written,
 *   so its own open does it no harm; a process killed holding it is recovered by LMDB as usual.
 * - Closing: the package's LMDB, unlike upstream, destroys the shared mutexes in `lock.mdb` when the
 *   process closing an environment is its last user. A process that opens it at that moment keeps the
 *   destroyed mutexes: every open and every transaction of it fails with EINVAL ("Invalid argument")
 *   until every process has closed the environment. So a store's environment is closed holding the
 *   gate too, and a process keeps its gates open ({@link Gates}) while it uses them and for a while
 *   after: a gate is closed only when the process has more than {@link IDLE_GATES} unused ones, or
 *   exits (the package closes what is open then, without the gate: see docs/reliability.md).
 * - Failures: a damaged data file is refused before LMDB maps it (`assertOpenable`), a store is not
 *   opened on a full disk (`assertRoomToOpen`), and LMDB's errors become typed errors (`writeFailure`,
 *   `openFailure`).
 *
 * Values are copied out of LMDB's reusable read buffer by the decoder below rather than by the
 * package's own copy, which is several times slower on Node's Buffers.
 */

/** Largest user key: LMDB's 4,026-byte maximum with 8 KiB pages, less the one-byte prefix. */
export const LMDB_MAX_KEY_BYTES = 4025;

const PAGE_SIZE = 8192;
/** LMDB keeps one slot per open read transaction in its lock file, shared by every process. */
const MAX_READERS = 1024;
/**
 * How often a store frees the reader slots of processes that died without closing (SIGKILL, crash).
 * Until then such a slot pins the snapshot its process was reading: no process can reuse the pages
 * freed since, and the data file grows. LMDB frees them only on request: the package does on open and
 * every 10 minutes of writing.
 */
const STALE_READERS_CHECK_MS = 5_000;
/**
 * How often a store opened for `'fast'` flushes its commits to disk (on a thread, like Redis's
 * `appendfsync everysec`), while it commits.
 */
const FAST_FLUSH_MS = 1_000;
/**
 * The folder, inside the store's, of the empty LMDB environment whose write lock every open and every
 * write transaction of the store holds (see the module's notes on opening).
 */
export const GATE_FOLDER = 'open-gate';
/** How many gates of stores it no longer has open a process keeps open (see the module's notes on closing). */
const IDLE_GATES = 16;
/** The byte in front of every user key in the `data` database. */
const DATA_PREFIX = 0x00;
/** Stands for the end of the user keyspace in range bounds (see {@link userKeys}). */
const DATA_END = Buffer.from([DATA_PREFIX + 1]);
const FIRST_KEY = Buffer.alloc(0);
const FORMAT = 1;
const META_VERSION = Buffer.from('version');
const META_HORIZON = Buffer.from('horizon');
const META_FORMAT = Buffer.from('format');
/** How many keys a range clear collects before deleting them. */
const CLEAR_CHUNK = 4096;
/**
 * How many pairs a range replacement ({@link StoreWriter.replaceRange}) reads at a time: it reads
 * values as well as keys, up to 100 kB each, so a chunk holds at most about 25 MB.
 */
const REPLACE_CHUNK = 256;

/**
 * Copies up to this many bytes one by one: for a short key or value a JavaScript loop costs about half
 * of what a view of the source and a native copy do (16 bytes: 62 ns against 126 ns; even at 64).
 */
const SHORT_COPY_BYTES = 48;

/**
 * Bytes `[start, end)` of one of the package's reusable buffers as a fresh Buffer. Neither the
 * buffer's `length` (which the package overrides on its value buffer) nor Buffer's `copy` or
 * `subarray` (each a view of the source per call) is used.
 */
function freshCopy(source: Uint8Array, start: number, end: number): Buffer {
  const size = end - start;
  const out = Buffer.allocUnsafe(size);
  if (size <= SHORT_COPY_BYTES) {
    for (let i = 0; i < size; i++) out[i] = source[start + i];
  } else {
    out.set(new Uint8Array(source.buffer, source.byteOffset + start, size));
  }
  return out;
}

/** Values pass through unchanged on write and are copied into a fresh Buffer on read. */
const rawBytes = {
  encode: (value: Buffer): Buffer => value,
  // `bytes` may be the package's reusable buffer, whose `length` it sets to the value's size.
  decode: (bytes: Buffer): Buffer => freshCopy(bytes, 0, bytes.length),
};

/**
 * The `data` database's keys as the package reads and writes them: it hands user keys to `writeKey`,
 * which writes the one-byte prefix and the key straight into the package's key buffer, and `readKey`
 * copies a stored key without its prefix into a fresh Buffer. Translating inside the package's own
 * encoding step, rather than around it, saves two Buffers per key and halved the CPU of a short range
 * read (a 7-leaf document: 12-14 us to 7-8 us, docs/performance.md). {@link DATA_END}, the bound past
 * every user key, is written as the one byte after the prefix.
 */
const userKeys = {
  writeKey(key: Buffer, target: Buffer, start: number): number {
    if (key === DATA_END) {
      target[start] = DATA_PREFIX + 1;
      return start + 1;
    }
    target[start] = DATA_PREFIX;
    target.set(key, start + 1);
    return start + 1 + key.length;
  },
  readKey: (target: Buffer, start: number, end: number): Buffer => freshCopy(target, start + 1, end),
};

/** A recent commit's entry in the conflict log. */
export interface ConflictRecordEntry {
  readonly version: bigint;
  readonly record: Buffer;
}

/** Reads of the store, at a read snapshot or inside the write transaction. */
export interface StoreReader {
  /** The value of a user key, as a fresh Buffer. */
  get(key: Buffer): Buffer | undefined;
  /**
   * Up to `limit` pairs of `[begin, end)` (`end` absent: to the end of the keyspace), in key order or
   * reversed, as fresh Buffers. Bounds may be longer than {@link LMDB_MAX_KEY_BYTES}.
   */
  scan(begin: Buffer, end: Buffer | undefined, reverse: boolean, limit: number): Array<[Buffer, Buffer]>;
  /** {@link scan}, appending the pairs to `out` as they are read: no array of its own, no pair per entry. */
  collect(begin: Buffer, end: Buffer | undefined, reverse: boolean, limit: number, out: KeyValue[]): void;
  /** The version of the last commit. */
  lastVersion(): bigint;
  /** Every commit after this version is still in the conflict log. */
  horizon(): bigint;
  /** Up to `limit` conflict-log entries after version `after` (from the oldest when absent), oldest first. */
  conflictRecords(after: bigint | undefined, limit: number): ConflictRecordEntry[];
}

/** Writes inside the one write transaction, on top of its reads. */
export interface StoreWriter extends StoreReader {
  set(key: Buffer, value: Buffer): void;
  clear(key: Buffer): void;
  /** Removes the keys of `[begin, end)`. */
  clearRange(begin: Buffer, end: Buffer): void;
  /**
   * Leaves `[begin, end)` holding exactly `keys[i]` = `values[i]`: a range clear followed by those
   * sets. `keys` are inside the range and strictly ascending.
   */
  replaceRange(begin: Buffer, end: Buffer, keys: readonly Buffer[], values: readonly Buffer[]): void;
  setLastVersion(version: bigint): void;
  setHorizon(version: bigint): void;
  appendConflictRecord(version: bigint, record: Buffer): void;
  removeConflictRecord(version: bigint): void;
}

class StoreAccess implements StoreReader {
  protected readonly options: { transaction?: LmdbTransaction };

  constructor(
    protected readonly dbs: StoreDatabases,
    transaction: LmdbTransaction | undefined,
  ) {
    this.options = transaction ? { transaction } : {};
  }

  get(key: Buffer): Buffer | undefined {
    if (key.length > LMDB_MAX_KEY_BYTES) return undefined;
    return this.dbs.data.get(key, this.options);
  }

  scan(begin: Buffer, end: Buffer | undefined, reverse: boolean, limit: number): Array<[Buffer, Buffer]> {
    const out: Array<[Buffer, Buffer]> = [];
    if (limit <= 0) return out;
    const options = storedRange(begin, end, reverse);
    if (Number.isFinite(limit)) options.limit = limit;
    const transaction = this.rangeTransaction();
    if (transaction) options.transaction = transaction;
    for (const { key, value } of this.dbs.data.getRange(options)) out.push([key, value]);
    return out;
  }

  collect(begin: Buffer, end: Buffer | undefined, reverse: boolean, limit: number, out: KeyValue[]): void {
    if (limit <= 0) return;
    const options = storedRange(begin, end, reverse);
    if (Number.isFinite(limit)) options.limit = limit;
    const transaction = this.rangeTransaction();
    if (transaction) options.transaction = transaction;
    // The package's entries are fresh `{ key, value }` objects of fresh Buffers: kept as they are.
    for (const entry of this.dbs.data.getRange(options)) out.push(entry);
  }

  lastVersion(): bigint {
    return readVersion(this.dbs.meta.get(META_VERSION, this.options), 'version');
  }

  horizon(): bigint {
    return readVersion(this.dbs.meta.get(META_HORIZON, this.options), 'horizon');
  }

  /** The transaction a range read names (none: the package's current one). */
  protected rangeTransaction(): LmdbTransaction | undefined {
    return this.options.transaction;
  }

  conflictRecords(after: bigint | undefined, limit: number): ConflictRecordEntry[] {
    const options: LmdbRangeOptions = { limit, ...this.options };
    if (after !== undefined && after >= 0n) {
      options.start = versionKey(after);
      options.exclusiveStart = true;
    }
    const out: ConflictRecordEntry[] = [];
    for (const { key, value } of this.dbs.log.getRange(options)) out.push({ version: key.readBigUInt64BE(0), record: value });
    return out;
  }
}

/**
 * A consistent view of the store at one moment: an LMDB read transaction. It must be released; while it
 * is open LMDB keeps the pages it reads, in every process.
 */
export class StoreSnapshot extends StoreAccess {
  private released = false;

  constructor(
    dbs: StoreDatabases,
    private readonly transaction: LmdbTransaction,
    /**
     * Whether a range read may name no transaction when this one is the package's current one: not
     * while the store's write transaction is open (the package then reads through it by default), nor
     * with a package that does not mark its read transactions as this module expects.
     */
    private readonly mayReadCurrent: () => boolean,
  ) {
    super(dbs, transaction);
  }

  /**
   * None while this snapshot's transaction is still the package's current shared read transaction
   * (the one it reads through by default, until it is renewed on a later turn or by the next
   * {@link LmdbStore.snapshot}): a range read naming a transaction opens and closes a native cursor
   * each time, while one reading the current transaction renews the package's one idle cursor. That
   * is about 3 us of a range read's 4-8 us (docs/performance.md). The package marks a read
   * transaction `notCurrent` when it stops being the current one while held, as this one is.
   */
  protected override rangeTransaction(): LmdbTransaction | undefined {
    const shared = this.transaction as LmdbTransaction & PackageReadTransaction;
    if (!shared.notCurrent && !shared.isDone && this.mayReadCurrent()) return undefined;
    return this.transaction;
  }

  get isReleased(): boolean {
    return this.released;
  }

  /** Ends the read transaction. Idempotent; reading afterwards is a bug the caller must prevent. */
  release(): void {
    if (this.released) return;
    this.released = true;
    this.transaction.done();
  }
}

class StoreWriteAccess extends StoreAccess implements StoreWriter {
  constructor(dbs: StoreDatabases) {
    // Inside a write transaction the package reads through it, whatever transaction is passed.
    super(dbs, undefined);
  }

  set(key: Buffer, value: Buffer): void {
    this.dbs.data.putSync(key, value);
  }

  clear(key: Buffer): void {
    if (key.length <= LMDB_MAX_KEY_BYTES) this.dbs.data.removeSync(key);
  }

  clearRange(begin: Buffer, end: Buffer): void {
    const options = storedRange(begin, end, false);
    options.limit = CLEAR_CHUNK;
    for (;;) {
      const keys = [...this.dbs.data.getKeys(options)];
      for (const key of keys) this.dbs.data.removeSync(key);
      if (keys.length < CLEAR_CHUNK) return;
    }
  }

  /**
   * One walk of the stored pairs, in step with `keys`: a stored key that is not set again is removed,
   * one set again to the value it holds is left as it is (a document rewritten with mostly the same
   * leaves puts only those that changed), and every other key is put. What is left is what a clear
   * and the sets would leave, and the commit's write conflict ranges are the transaction's, so
   * nothing a reader, a conflict check or a watch (which compares values) sees differs.
   */
  replaceRange(begin: Buffer, end: Buffer, keys: readonly Buffer[], values: readonly Buffer[]): void {
    const data = this.dbs.data;
    const options = storedRange(begin, end, false);
    options.limit = REPLACE_CHUNK;
    // Every key of the range starts with the bytes its bounds share (a document's prefix): compared
    // after them.
    const shared = sharedLength(begin, end);
    let next = 0;
    for (;;) {
      const stored = [...data.getRange(options)];
      for (const { key, value } of stored) {
        let order = 1;
        while (next < keys.length && (order = compareAfter(keys[next], key, shared)) < 0) {
          data.putSync(keys[next], values[next]);
          next++;
        }
        if (next < keys.length && order === 0) {
          if (!sameBytes(values[next], value)) data.putSync(key, values[next]);
          next++;
        } else {
          data.removeSync(key);
        }
      }
      if (stored.length < REPLACE_CHUNK) break;
      // The chunk's last key may still be there: the next chunk starts after it.
      options.start = stored[stored.length - 1].key;
      options.exclusiveStart = true;
    }
    for (; next < keys.length; next++) data.putSync(keys[next], values[next]);
  }

  setLastVersion(version: bigint): void {
    this.dbs.meta.putSync(META_VERSION, versionKey(version));
  }

  setHorizon(version: bigint): void {
    this.dbs.meta.putSync(META_HORIZON, versionKey(version));
  }

  appendConflictRecord(version: bigint, record: Buffer): void {
    this.dbs.log.putSync(versionKey(version), record);
  }

  removeConflictRecord(version: bigint): void {
    this.dbs.log.removeSync(versionKey(version));
  }
}

/** The package's bookkeeping on a read transaction (not in its types). */
interface PackageReadTransaction {
  /** Set when the transaction stopped being the package's current read transaction while in use. */
  readonly notCurrent?: boolean;
  readonly isDone?: boolean;
}

interface StoreDatabases {
  readonly data: LmdbDatabase<Buffer, Buffer>;
  readonly meta: LmdbDatabase<Buffer, Buffer>;
  readonly log: LmdbDatabase<Buffer, Buffer>;
}

/** One LMDB environment, opened by one engine; other processes may have the same folder open. */
export class LmdbStore {
  private readonly writer: StoreWriteAccess;
  private readonly writeFlags: number;
  private staleReadersCheckedAt = Date.now();
  /** Commits written since the last flush began (environments that do not flush in each commit). */
  private unflushed = false;
  /** The flush running on a thread, and the one queued behind it for the commits made meanwhile. */
  private flushing: Promise<void> | undefined;
  private nextFlush: Promise<void> | undefined;
  private flushTimer: NodeJS.Timeout | undefined;
  private closed = false;
  /** Inside {@link write}'s LMDB write transaction. */
  private writing = false;
  /** The package marks a held read transaction that stopped being its current one (checked on open). */
  private readonly marksCurrentReads: boolean;
  private readonly mayReadCurrent = (): boolean => this.marksCurrentReads && !this.writing;

  private constructor(
    private readonly root: RootDatabase<Buffer, Buffer>,
    /** The empty environment whose write lock the store's opens and commits hold ({@link GATE_FOLDER}). */
    private readonly gate: RootDatabase,
    private readonly dbs: StoreDatabases,
    /** The folder of the store. */
    readonly path: string,
    /** Flush in the background about every {@link FAST_FLUSH_MS} while committing ('fast'). */
    private readonly flushesInBackground: boolean,
  ) {
    this.writer = new StoreWriteAccess(dbs);
    this.marksCurrentReads = marksCurrentReads(dbs.data);
    const flags = lmdbPackage().TransactionFlags;
    // Committed on this thread, not flushed (an MDB_NOSYNC environment).
    this.writeFlags = flags.ABORTABLE | flags.SYNCHRONOUS_COMMIT | flags.NO_SYNC_FLUSH;
  }

  /**
   * Runs `fn` holding the write lock of the store's gate ({@link GATE_FOLDER}), which it takes before
   * any lock of the store: a write transaction of the gate that is always aborted (it writes nothing).
   */
  private static holdingGate<T>(gate: RootDatabase, fn: () => T): T {
    const { ABORT, TransactionFlags } = lmdbPackage();
    let result: T | undefined;
    gate.transactionSync(() => {
      result = fn();
      return ABORT;
    }, TransactionFlags.ABORTABLE | TransactionFlags.SYNCHRONOUS_COMMIT);
    return result as T;
  }

  /**
   * Opens (creating if needed) the store in the folder `path`. A new store starts at `initialVersion`.
   *
   * @throws KvError file_corrupt (1522) when the data file is damaged in a way seen on open (see
   *   `assertOpenable`) or the store has data but no format stamp; incompatible_protocol_version (2100)
   *   for a store of another format, or an LMDB environment whose pages are too small for
   *   {@link LMDB_MAX_KEY_BYTES}; file_not_writable (1514) on a full disk; io_error (1510) when LMDB
   *   cannot open the folder.
   *
   * `durability` says when commits are flushed: `'sync'` when the caller asks ({@link flushed}, after
   * each batch), `'fast'` also about once a second in the background.
   */
  static open(path: string, initialVersion: bigint, durability: 'sync' | 'fast' = 'sync'): LmdbStore {
    assertRoomToOpen(path);
    assertOpenable(path);
    let gate: RootDatabase;
    try {
      gate = gates.acquire(path);
    } catch (err) {
      throw openFailure(err, path);
    }
    try {
      // No commit of any process lands while LMDB opens the store (see the module's notes on opening).
      return LmdbStore.holdingGate(gate, () => LmdbStore.openInGate(path, gate, initialVersion, durability));
    } catch (err) {
      gates.release(path);
      throw isKvError(err) ? err : openFailure(err, path);
    }
  }

  private static openInGate(path: string, gate: RootDatabase, initialVersion: bigint, durability: 'sync' | 'fast'): LmdbStore {
    let root: RootDatabase<Buffer, Buffer>;
    try {
      root = lmdbPackage().open<Buffer, Buffer>({
        path,
        // A folder even when the path has an extension, which the package would take for a file name.
        noSubdir: false,
        pageSize: PAGE_SIZE,
        maxDbs: 4,
        maxReaders: MAX_READERS,
        keyEncoding: 'binary',
        encoding: 'binary',
        // No flush in the commit, no overlappingSync and its shared flush lock (see the module's notes).
        noSync: true,
      });
    } catch (err) {
      throw openFailure(err, path);
    }
    try {
      const dbOptions = { keyEncoding: 'binary' as const, encoding: 'binary' as const, encoder: rawBytes };
      const dataOptions = { keyEncoder: userKeys, encoding: 'binary' as const, encoder: rawBytes };
      const dbs: StoreDatabases = {
        data: root.openDB<Buffer, Buffer>('data', dataOptions),
        meta: root.openDB<Buffer, Buffer>('meta', dbOptions),
        log: root.openDB<Buffer, Buffer>('log', dbOptions),
      };
      const maxKeySize = (dbs.data as unknown as { maxKeySize: number }).maxKeySize;
      if (maxKeySize < LMDB_MAX_KEY_BYTES + 1) {
        throw kvError(
          'incompatible_protocol_version',
          `the LMDB environment at ${path} allows keys of ${maxKeySize} bytes; the lmdb engine needs ${LMDB_MAX_KEY_BYTES + 1} (8 KiB pages)`,
        );
      }
      const initialize = () => {
        const format = dbs.meta.get(META_FORMAT);
        if (format === undefined) {
          // The stamp is written with the store's first state: data without it is a damaged store.
          if (dbs.meta.get(META_VERSION) !== undefined || dbs.data.getKeysCount({ start: FIRST_KEY, end: DATA_END, limit: 1 }) > 0) {
            throw kvError('file_corrupt', `the store at ${path} holds data but no format stamp`);
          }
          const start = versionKey(initialVersion);
          dbs.meta.putSync(META_FORMAT, Buffer.from([FORMAT]));
          dbs.meta.putSync(META_VERSION, start);
          dbs.meta.putSync(META_HORIZON, start);
        } else if (format.length !== 1 || format[0] !== FORMAT) {
          throw kvError(
            'incompatible_protocol_version',
            `the store at ${path} has format ${format.toString('hex')}; this version of the lmdb engine reads format ${FORMAT}`,
          );
        }
      };
      // A new store is initialized in a write transaction (another process may be creating it too);
      // opening an existing one waits for no other process's writes.
      const created = dbs.meta.get(META_FORMAT) === undefined;
      if (created) root.transactionSync(initialize);
      else initialize();
      const store = new LmdbStore(root, gate, dbs, path, durability === 'fast');
      if (created) store.unflushed = true; // flushed with the first commit's flush, or on close
      return store;
    } catch (err) {
      void root.close();
      throw isKvError(err) ? err : openFailure(err, path);
    }
  }

  /**
   * A snapshot of the latest commit, in whichever process it was made. Release it.
   *
   * @throws KvError io_error (1510) or file_corrupt (1522) when LMDB cannot begin the read.
   */
  snapshot(): StoreSnapshot {
    if (Date.now() - this.staleReadersCheckedAt > STALE_READERS_CHECK_MS) this.clearStaleReaders();
    // The package shares one read transaction per event-loop turn; resetting it first makes this one
    // see every commit that has completed, in any process, before this call (causal consistency).
    try {
      this.dbs.data.resetReadTxn();
      return new StoreSnapshot(this.dbs, this.dbs.data.useReadTransaction(), this.mayReadCurrent);
    } catch (err) {
      throw readFailure(err, this.path);
    }
  }

  /**
   * Runs `fn` inside the next exclusive LMDB write transaction (LMDB serializes them across processes)
   * and resolves with its result once that transaction has committed, is visible and is flushed. If
   * `fn` throws, none of its writes are applied and the promise rejects with its error. `fn` must be
   * synchronous.
   *
   * The transaction is a top-level one, begun and committed on this thread (which waits meanwhile for
   * the writers of other processes), not a child of the package's asynchronous write transaction:
   * committing such a child crashed processes (SIGSEGV in LMDB's merge of the child's pages into its
   * parent) in the soak test, `npm run soak`.
   *
   * @throws KvError file_not_writable (1514) when the disk is full, file_corrupt (1522), io_error
   *   (1510): LMDB failed the transaction (see `writeFailure`). None of its writes are applied.
   */
  async write<T>(fn: (writer: StoreWriter) => T): Promise<T> {
    let thrown: { error: unknown } | undefined;
    try {
      // No other process opens the store meanwhile (see the module's notes on opening).
      const result = LmdbStore.holdingGate(this.gate, () =>
        this.root.transactionSync(() => {
          this.writing = true;
          try {
            return fn(this.writer);
          } catch (error) {
            thrown = { error };
            throw error;
          } finally {
            this.writing = false;
          }
        }, this.writeFlags),
      );
      this.unflushed = true;
      if (this.flushesInBackground) this.flushTimer ??= setTimeout(() => this.backgroundFlush(), FAST_FLUSH_MS).unref();
      return result;
    } catch (err) {
      if (thrown && err === thrown.error) throw err;
      throw writeFailure(err, this.path);
    }
  }

  /**
   * Resolves once every transaction this store committed before the call is flushed to disk: an
   * fdatasync of the data file on a thread (`mdb_env_sync`, which takes no lock in an `MDB_NOSYNC`
   * environment), so the JavaScript thread goes on meanwhile, and the next batch commits while this
   * one is flushed. Calls made while one runs share the next one, which covers every commit made
   * before it starts.
   *
   * Rejects with the error of the flush: the commits are then committed (visible, and they survive a
   * crash of the process) but maybe not on disk.
   */
  flushed(): Promise<void> {
    return this.flush();
  }

  /** {@link flushed}, for the store's own flushes (the background one, on close). */
  private flush(): Promise<void> {
    if (!this.flushing) return (this.flushing = this.startFlush());
    this.nextFlush ??= this.flushing.then(
      () => this.queuedFlush(),
      () => this.queuedFlush(),
    );
    return this.nextFlush;
  }

  private queuedFlush(): Promise<void> {
    this.nextFlush = undefined;
    return (this.flushing = this.startFlush());
  }

  private startFlush(): Promise<void> {
    this.unflushed = false;
    const done = new Promise<void>((resolve, reject) => {
      if (this.closed) return resolve();
      syncOnThread(this.root, (error) => (error ? reject(error instanceof Error ? error : new Error(describeFlushError(error))) : resolve()));
    });
    const clear = () => {
      if (this.flushing === done) this.flushing = undefined;
    };
    done.then(clear, clear);
    return done;
  }

  /** The 'fast' store's periodic flush; a failure is retried with the next one (the data is committed). */
  private backgroundFlush(): void {
    this.flushTimer = undefined;
    if (this.unflushed && !this.closed) this.flush().catch(() => (this.unflushed = true));
  }

  /**
   * Writes a compacted copy of the store as of one moment (an LMDB read transaction, so writers of any
   * process go on meanwhile) into the folder `dest`, as its `data.mdb`: only pages in use, renumbered.
   * The copy is a store that opens as it is. Rejects with LMDB's error; `dest` must not hold a data file.
   */
  copyTo(dest: string): Promise<void> {
    return this.root.backup(dest, true);
  }

  /**
   * Frees the reader slots of processes that died without closing the store (see
   * {@link STALE_READERS_CHECK_MS}); returns how many.
   */
  clearStaleReaders(): number {
    this.staleReadersCheckedAt = Date.now();
    return this.root.readerCheck();
  }

  /** Flushes what this store committed, then closes the environment (in this process). */
  async close(): Promise<void> {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    if (this.unflushed || this.flushing) await this.flush().catch(() => undefined);
    this.closed = true;
    // No other process opens the store while LMDB closes it here (see the module's notes on closing).
    // The package closes at once when no write of its own is pending (the store makes none); otherwise
    // it closes after them, without the gate.
    let closing: Promise<void> | undefined;
    try {
      LmdbStore.holdingGate(this.gate, () => {
        closing = this.root.close();
      });
    } catch {
      // The gate failed (its lock file is unusable): the store still closes, without it.
      closing ??= this.root.close();
    }
    await closing;
    gates.release(this.path);
  }
}

let loadedPackage: typeof LmdbPackage | undefined;

/**
 * The gates ({@link GATE_FOLDER}) this process has open, by store folder: a gate stays open while a
 * store of its folder is, and after, among the {@link IDLE_GATES} most recently released ones (see the
 * module's notes on closing). One gate per folder, whichever stores of it are open.
 */
class Gates {
  private readonly open = new Map<string, { gate: RootDatabase; users: number; lockFile: string }>();

  acquire(path: string): RootDatabase {
    const key = resolve(path);
    let entry = this.open.get(key);
    if (entry && entry.users === 0 && entry.lockFile !== lockFileIdentity(path)) {
      // The folder was deleted (or replaced) since: this gate is no longer the one other processes open.
      this.open.delete(key);
      void entry.gate.close();
      entry = undefined;
    }
    if (!entry) {
      const gate = lmdbPackage().open({ path: join(path, GATE_FOLDER), noSubdir: false, noSync: true, maxDbs: 1, maxReaders: MAX_READERS });
      entry = { gate, users: 0, lockFile: lockFileIdentity(path) };
    }
    // Most recently used last (the map keeps insertion order).
    this.open.delete(key);
    this.open.set(key, entry);
    entry.users++;
    return entry.gate;
  }

  release(path: string): void {
    const key = resolve(path);
    const entry = this.open.get(key);
    if (!entry) return;
    entry.users--;
    let idle = 0;
    for (const other of this.open.values()) if (other.users === 0) idle++;
    for (const [otherKey, other] of this.open) {
      if (idle <= IDLE_GATES) break;
      if (other.users > 0) continue;
      this.open.delete(otherKey);
      idle--;
      void other.gate.close();
    }
  }

  /** Closes the gates of folders this process has no store of open. */
  async closeIdle(): Promise<void> {
    const closing: Array<Promise<void>> = [];
    for (const [key, entry] of this.open) {
      if (entry.users > 0) continue;
      this.open.delete(key);
      closing.push(entry.gate.close());
    }
    await Promise.all(closing);
  }
}

const gates = new Gates();

/** Which file the lock file of the gate of the store in `path` is (device and inode), or '' if none. */
function lockFileIdentity(path: string): string {
  const stats = statSync(join(path, GATE_FOLDER, 'lock.mdb'), { throwIfNoEntry: false });
  return stats ? `${stats.dev}:${stats.ino}` : '';
}

/**
 * Closes the gates ({@link GATE_FOLDER}) this process keeps open for stores it has closed, so that
 * nothing of it holds files in their folders (before unmounting their filesystem, say). A store of
 * such a folder opened at the same moment by another process may then fail to open (see the module's
 * notes on closing).
 */
export function closeIdleGates(): Promise<void> {
  return gates.closeIdle();
}

/**
 * The package, loaded on first use: its native binary is only needed by programs that open an lmdb
 * store, not by every program that imports the KV layer.
 */
function lmdbPackage(): typeof LmdbPackage {
  if (loadedPackage) return loadedPackage;
  try {
    return (loadedPackage = require('lmdb') as typeof LmdbPackage);
  } catch (err) {
    throw new Error(`the lmdb engine needs the 'lmdb' package and its prebuilt binary for this platform: ${String(err)}`);
  }
}

/**
 * Whether the package marks a read transaction `notCurrent` when it stops being its current one while
 * held (lmdb 3.x does), which {@link StoreSnapshot} relies on to read ranges without naming it: with a
 * version of the package that does not, snapshots name their transaction on every read.
 */
function marksCurrentReads(db: LmdbDatabase<Buffer, Buffer>): boolean {
  db.resetReadTxn();
  const held = db.useReadTransaction() as LmdbTransaction & PackageReadTransaction;
  const marked = () => held.notCurrent === true;
  try {
    if (marked()) return false;
    db.resetReadTxn();
    return marked();
  } finally {
    held.done();
  }
}

/** The package's `sync` (untyped): `mdb_env_sync` on a thread of libuv's pool, then `callback`. */
function syncOnThread(root: RootDatabase<Buffer, Buffer>, callback: (error?: unknown) => void): void {
  (root as unknown as { sync(callback: (error?: unknown) => void): void }).sync(callback);
}

/**
 * The package's range options for user keys in `[begin, end)` (the prefix is added by {@link userKeys}).
 * A bound longer than any storable key is replaced by its prefix of {@link LMDB_MAX_KEY_BYTES} bytes, `p`: for every storable key `k`,
 * `k >= bound` exactly when `k > p`, and `k < bound` exactly when `k <= p`.
 */
function storedRange(begin: Buffer, end: Buffer | undefined, reverse: boolean): LmdbRangeOptions {
  const longBegin = begin.length > LMDB_MAX_KEY_BYTES;
  const low = longBegin ? begin.subarray(0, LMDB_MAX_KEY_BYTES) : begin;
  const longEnd = end !== undefined && end.length > LMDB_MAX_KEY_BYTES;
  const high = end === undefined ? DATA_END : longEnd ? end.subarray(0, LMDB_MAX_KEY_BYTES) : end;
  if (!reverse) return { start: low, exclusiveStart: longBegin, end: high, inclusiveEnd: longEnd };
  // Reversed, the package starts at `start` (inclusive unless exclusiveStart) and stops at `end`.
  return { start: high, exclusiveStart: !longEnd, end: low, inclusiveEnd: !longBegin, reverse: true };
}

/** How many bytes `a` and `b` begin with in common. */
function sharedLength(a: Uint8Array, b: Uint8Array): number {
  const n = a.length < b.length ? a.length : b.length;
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

/** `compareBytes(a, b)` of keys that both begin with the same `skip` bytes. */
function compareAfter(a: Uint8Array, b: Uint8Array, skip: number): number {
  const n = a.length < b.length ? a.length : b.length;
  for (let i = skip; i < n; i++) {
    const x = a[i];
    const y = b[i];
    if (x !== y) return x < y ? -1 : 1;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

/** Whether `a` and `b` hold the same bytes (stored values are short: no native call). */
function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && compareBytes(a, b) === 0;
}

function versionKey(version: bigint): Buffer {
  const out = Buffer.allocUnsafe(8);
  out.writeBigUInt64BE(version, 0);
  return out;
}

function readVersion(bytes: Buffer | undefined, what: string): bigint {
  if (!bytes || bytes.length !== 8) throw new Error(`the store's ${what} is missing or malformed`);
  return bytes.readBigUInt64BE(0);
}

/** A flush failure that is not an Error, as text (LMDB's thread reports a code or a message). */
function describeFlushError(error: unknown): string {
  return typeof error === 'string' || typeof error === 'number' ? `LMDB flush failed: ${error}` : 'LMDB flush failed';
}
