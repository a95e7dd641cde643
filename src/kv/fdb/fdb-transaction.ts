import { Buffer } from 'node:buffer';
import { toBuffer } from '../contract/bytes';
import { ErrorCodes, KvError, kvError } from '../contract/errors';
import { isKeySelector } from '../contract/key-selector';
import { TransactionShorthands } from '../contract/transaction-shorthands';
import type { AtomicOp, Bytes, KeySelector, KeyValue, RangeOptions, ReadTransaction, Transaction, Watch } from '../contract/types';
import { isFdbError, toKvError } from './errors';
import { METADATA_VERSION_BUMP, METADATA_VERSION_KEY } from '../contract/metadata-version';
import {
  FdbMutationType,
  FdbTransactionOption,
  type FdbKeySelector,
  type FdbRangeOptions,
  type FdbTransactionLike,
  type FdbWatch,
} from './node-foundationdb';

const noop = (): void => undefined;

/** Runs a synchronous call into the package, rethrowing its `FDBError` as a {@link KvError}. */
function mapped<T>(call: () => T): T {
  try {
    return call();
  } catch (err) {
    throw toKvError(err);
  }
}

/** Awaits a call into the package (which may also throw synchronously), mapping its errors. */
async function mappedAsync<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw toKvError(err);
  }
}

/** A contract key or selector as node-foundationdb's selector object; a bare key is firstGreaterOrEqual. */
function toFdbSelector(keyOrSelector: Bytes | KeySelector): FdbKeySelector {
  if (isKeySelector(keyOrSelector)) {
    const { key, orEqual, offset } = keyOrSelector;
    return { key: toBuffer(key), orEqual, offset, _isKeySelector: true };
  }
  return { key: toBuffer(keyOrSelector), orEqual: false, offset: 1, _isKeySelector: true };
}

function toFdbRangeOptions(options: RangeOptions): FdbRangeOptions {
  // batchSize is a hint the contract lets engines ignore: FDB sizes batches by its streaming mode.
  return { limit: options.limit ?? 0, reverse: options.reverse ?? false };
}

/** FDB versions cross the package as 8 big-endian bytes of a signed 64-bit integer. */
function versionFromBytes(bytes: Buffer): bigint {
  return bytes.readBigInt64BE(0);
}

function versionBytes(version: bigint): Buffer {
  const bytes = Buffer.alloc(8);
  bytes.writeBigInt64BE(version, 0);
  return bytes;
}

/**
 * What an attempt has done so far, for the contract's checks that FDB's client makes on its network
 * thread and reports through a later operation instead.
 */
interface AttemptUse {
  /** It has read or written something: read-your-writes can no longer be disabled. */
  used: boolean;
  /** It has a read version (read, asked for it, or set it). */
  hasReadVersion: boolean;
}

/**
 * A promise for the caller that never counts as unhandled: a versionstamp or watch of an attempt that
 * failed to commit rejects, and the retry loop has already moved on. node-foundationdb does the same.
 */
function quiet<T>(promise: Promise<T>): Promise<T> {
  promise.catch(noop);
  return promise;
}

async function* keyValues(open: () => AsyncIterable<[Buffer, Buffer]>): AsyncGenerator<KeyValue> {
  try {
    for await (const [key, value] of open()) yield { key, value };
  } catch (err) {
    throw toKvError(err);
  }
}

/** Reads through a node-foundationdb transaction (or its `snapshot()` view). */
class FdbReads implements ReadTransaction {
  constructor(
    private readonly tn: FdbTransactionLike,
    private readonly use: AttemptUse,
  ) {}

  get(key: Bytes): Promise<Buffer | undefined> {
    this.reading();
    return mappedAsync(() => this.tn.get(toBuffer(key)));
  }

  async getKey(selector: KeySelector): Promise<Buffer> {
    this.reading();
    const key = await mappedAsync(() => this.tn.getKey(toFdbSelector(selector)));
    // node-foundationdb reports the empty key (where FDB clamps selectors before the first key) as undefined.
    return key ?? Buffer.alloc(0);
  }

  getRange(begin: Bytes | KeySelector, end: Bytes | KeySelector, options: RangeOptions = {}): AsyncIterable<KeyValue> {
    this.reading();
    const tn = this.tn;
    const from = toFdbSelector(begin);
    const to = toFdbSelector(end);
    const fdbOptions = toFdbRangeOptions(options);
    return {
      [Symbol.asyncIterator]: () => keyValues(() => tn.getRange(from, to, fdbOptions)),
    };
  }

  async getRangeAll(begin: Bytes | KeySelector, end: Bytes | KeySelector, options: RangeOptions = {}): Promise<KeyValue[]> {
    this.reading();
    const pairs = await mappedAsync(() => this.tn.getRangeAll(toFdbSelector(begin), toFdbSelector(end), toFdbRangeOptions(options)));
    return pairs.map(([key, value]) => ({ key, value }));
  }

  async getReadVersion(): Promise<bigint> {
    this.use.hasReadVersion = true;
    return versionFromBytes(await mappedAsync(() => this.tn.getReadVersion()));
  }

  /** FDB reads `\xff/metadataVersion` without any option, from what came with the read version. */
  getMetadataVersion(): Promise<Buffer | undefined> {
    this.reading();
    return mappedAsync(() => this.tn.get(METADATA_VERSION_KEY));
  }

  private reading(): void {
    this.use.used = true;
    this.use.hasReadVersion = true;
  }
}

/** A contract {@link Watch} over node-foundationdb's `{promise, cancel}` watch. */
class FdbWatchHandle implements Watch {
  readonly promise: Promise<boolean>;
  private resolve: (fired: boolean) => void = noop;
  private cancelled = false;

  constructor(private readonly native: FdbWatch) {
    this.promise = quiet(
      new Promise<boolean>((resolve, reject) => {
        this.resolve = resolve;
        native.promise.then(resolve, (err: unknown) => {
          // operation_cancelled is how FDB ends a cancelled watch future; the contract resolves false.
          if (isFdbError(err) && err.code === ErrorCodes.operation_cancelled) resolve(false);
          else reject(toKvError(err));
        });
      }),
    );
  }

  cancel(): void {
    if (this.cancelled) return;
    this.cancelled = true;
    // Resolve first: the native future may still fire after fdb_future_cancel, and the contract says false.
    this.resolve(false);
    mapped(() => this.native.cancel());
  }
}

/**
 * The contract's {@link Transaction} over a node-foundationdb `Transaction` created with raw byte keys
 * and values. Every call maps to one call of the package's public API; the cluster enforces FDB's
 * limits and semantics, and the package's `FDBError`s are rethrown as {@link KvError}s with FDB's code.
 */
export class FdbTransaction extends TransactionShorthands implements Transaction {
  private readonly reads: FdbReads;
  private snapshotReads: FdbReads | undefined;
  private readonly use: AttemptUse = { used: false, hasReadVersion: false };
  /** See {@link Transaction.attempt}. */
  attempt = 0;

  constructor(private readonly tn: FdbTransactionLike) {
    super();
    this.reads = new FdbReads(tn, this.use);
  }

  get(key: Bytes): Promise<Buffer | undefined> {
    return this.reads.get(key);
  }

  getKey(selector: KeySelector): Promise<Buffer> {
    return this.reads.getKey(selector);
  }

  getRange(begin: Bytes | KeySelector, end: Bytes | KeySelector, options?: RangeOptions): AsyncIterable<KeyValue> {
    return this.reads.getRange(begin, end, options);
  }

  getRangeAll(begin: Bytes | KeySelector, end: Bytes | KeySelector, options?: RangeOptions): Promise<KeyValue[]> {
    return this.reads.getRangeAll(begin, end, options);
  }

  getReadVersion(): Promise<bigint> {
    return this.reads.getReadVersion();
  }

  getMetadataVersion(): Promise<Buffer | undefined> {
    return this.reads.getMetadataVersion();
  }

  snapshot(): ReadTransaction {
    this.snapshotReads ??= new FdbReads(this.tn.snapshot(), this.use);
    return this.snapshotReads;
  }

  /**
   * Checked here, as FDB's client checks it, because the package reports the error only through the
   * next operation. @throws KvError version_invalid (2011), read_version_already_set (2010)
   */
  setReadVersion(version: bigint): void {
    if (version < 1n) throw kvError('version_invalid', `read version ${version}`);
    if (this.use.hasReadVersion) throw kvError('read_version_already_set');
    mapped(() => this.tn.setReadVersion(versionBytes(version)));
    this.use.hasReadVersion = true;
  }

  /**
   * FDB's `read_your_writes_disable` option. Checked here, as FDB's client checks it, because the
   * package reports the error only through the next operation. @throws KvError client_invalid_operation (2000)
   */
  disableReadYourWrites(): void {
    if (this.use.used) {
      throw kvError('client_invalid_operation', 'read-your-writes can only be disabled before the transaction reads or writes');
    }
    mapped(() => this.tn.setOption(FdbTransactionOption.readYourWritesDisable));
  }

  set(key: Bytes, value: Bytes): void {
    this.write(() => this.tn.set(toBuffer(key), toBuffer(value)));
  }

  clear(key: Bytes): void {
    this.write(() => this.tn.clear(toBuffer(key)));
  }

  clearRange(begin: Bytes, end: Bytes): void {
    this.write(() => this.tn.clearRange(toBuffer(begin), toBuffer(end)));
  }

  atomicOp(op: AtomicOp, key: Bytes, param: Bytes): void {
    this.write(() => this.tn.atomicOp(FdbMutationType[op], toBuffer(key), toBuffer(param)));
  }

  setVersionstampedKey(keyWithOffset: Bytes, value: Bytes): void {
    this.write(() => this.tn.atomicOp(FdbMutationType.setVersionstampedKey, toBuffer(keyWithOffset), toBuffer(value)));
  }

  setVersionstampedValue(key: Bytes, valueWithOffset: Bytes): void {
    this.write(() => this.tn.atomicOp(FdbMutationType.setVersionstampedValue, toBuffer(key), toBuffer(valueWithOffset)));
  }

  /** FDB's only accepted write of the key: the 14-byte placeholder with offset 0. */
  bumpMetadataVersion(): void {
    this.write(() => this.tn.atomicOp(FdbMutationType.setVersionstampedValue, METADATA_VERSION_KEY, METADATA_VERSION_BUMP));
  }

  getVersionstamp(): Promise<Buffer> {
    return quiet(mappedAsync(() => this.tn.getVersionstamp().promise));
  }

  watch(key: Bytes): Watch {
    return new FdbWatchHandle(this.write(() => this.tn.watch(toBuffer(key), { throwAllErrors: true })));
  }

  addReadConflictRange(begin: Bytes, end: Bytes): void {
    this.write(() => this.tn.addReadConflictRange(toBuffer(begin), toBuffer(end)));
  }

  /** node-foundationdb's own call, rather than the shorthand's range. */
  override addReadConflictKey(key: Bytes): void {
    this.write(() => this.tn.addReadConflictKey(toBuffer(key)));
  }

  addWriteConflictRange(begin: Bytes, end: Bytes): void {
    this.write(() => this.tn.addWriteConflictRange(toBuffer(begin), toBuffer(end)));
  }

  /** node-foundationdb's own call, rather than the shorthand's range. */
  override addWriteConflictKey(key: Bytes): void {
    this.write(() => this.tn.addWriteConflictKey(toBuffer(key)));
  }

  getApproximateSize(): Promise<number> {
    return mappedAsync(() => this.tn.getApproximateSize());
  }

  commit(): Promise<void> {
    return mappedAsync(() => this.tn.rawCommit());
  }

  getCommittedVersion(): bigint {
    return versionFromBytes(mapped(() => this.tn.getCommittedVersion()));
  }

  /**
   * Hands `err`'s FDB code to `fdb_transaction_on_error`, which backs off and resets when it is
   * retryable. When FDB rejects with that same code (not retryable), `err` itself is rethrown.
   */
  async onError(err: unknown): Promise<void> {
    const original = toKvError(err);
    if (!(original instanceof KvError)) throw err;
    try {
      await this.tn.rawOnError(original.code);
    } catch (final) {
      throw isFdbError(final) && final.code === original.code ? original : toKvError(final);
    }
    this.newAttempt();
  }

  reset(): void {
    mapped(() => this.tn.rawReset());
    this.newAttempt();
  }

  cancel(): void {
    mapped(() => this.tn.rawCancel());
  }

  /** A write of this attempt, through node-foundationdb. */
  private write<T>(call: () => T): T {
    this.use.used = true;
    return mapped(call);
  }

  private newAttempt(): void {
    this.attempt++;
    this.use.used = false;
    this.use.hasReadVersion = false;
  }
}
