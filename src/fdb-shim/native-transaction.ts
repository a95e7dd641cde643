import { Buffer } from 'node:buffer';
import { Backoff } from '../kv/contract/backoff';
import { ErrorCodes, KvError } from '../kv/contract/errors';
import { FdbMutationType } from '../kv/fdb/node-foundationdb';
import { Limits } from '../kv/contract/limits';
import type { AtomicOp, KeySelector, ReadTransaction, Transaction, Watch } from '../kv/contract/types';
import { ShimErrorCodes, type FdbErrors } from './fdb-errors';
import type {
  NativeCallback,
  NativeKeyValueList,
  NativeOptionValue,
  NativeRangeArguments,
  NativeTransaction,
  NativeValue,
  NativeWatch,
} from './native-api';
import { nativeBytes, nativeVersion, versionBytes } from './native-bytes';
import { nativeWatch } from './native-watch';
import { rejectOnNextTurn, settleOnNextTurn } from '../kv/client/next-turn';
import { PendingOperations } from './pending-operations';
import { readRangeBatch } from './range-batch';
import { batchLimits } from './streaming-mode';
import { assertOptionParam, TransactionOptionCode, type TransactionOptions } from './transaction-options';
import { versionstampedKeyTemplate, versionstampedValueTemplate } from './versionstamp-offsets';
import { isMetadataVersionKey, METADATA_VERSION_BUMP } from '../kv/contract/metadata-version';

/** FDB's first onError delay, in ms; it doubles per retry up to `max_retry_delay`. */
const INITIAL_RETRY_DELAY_MS = 10;

/**
 * From this API version a timeout, retry limit and retry delay survive `onError`, and a transaction
 * whose onError rethrows is left cancelled; before it, onError resets the options to the database's.
 */
const PERSISTENT_OPTIONS_API_VERSION = 610;

/** The address the locality API reports for every key: the shim serves all keys from this process. */
const LOCAL_ADDRESS = '127.0.0.1:4500';

/** FDB's atomic mutation codes (as node-foundationdb sends them) and the engines' operation names. */
const ATOMIC_OPS: ReadonlyMap<number, AtomicOp> = new Map(
  (['add', 'bitAnd', 'bitOr', 'bitXor', 'appendIfFits', 'max', 'min', 'byteMin', 'byteMax', 'compareAndClear'] as const).map((op) => [
    FdbMutationType[op],
    op,
  ]),
);

/** What a transaction needs from its database and module. */
export interface TransactionContext {
  readonly errors: FdbErrors;
  /** The API version selected with `setAPIVersion`. */
  readonly apiVersion: number;
  /** A copy of the database's defaults for transaction options (its `transaction_*` options). */
  defaultOptions(): TransactionOptions;
}

/** The addon's calling convention: a promise, or with a callback, `(err, result)` and no return. */
function settle<T>(promise: Promise<T>, cb: NativeCallback<T> | null | undefined): Promise<T> | undefined {
  if (cb === undefined || cb === null) return promise;
  if (typeof cb !== 'function') throw new TypeError('Invalid callback argument call');
  promise.then(
    (result) => cb(undefined, result),
    (err: Error) => cb(err),
  );
  return undefined;
}

function selector(key: NativeValue, orEqual: boolean, offset: number): KeySelector {
  return { key: nativeBytes(key), orEqual, offset };
}

/**
 * node-foundationdb's native transaction over one engine {@link Transaction}: each call is translated
 * to the engine's, which provides FDB's semantics (isolation, conflicts, read-your-writes, selectors,
 * atomic operations, versionstamps, watches, limits), and the engine's errors come back as the
 * package's `FDBError` with the same code.
 *
 * What the C client does above the engine, the shim does here: mutations never throw but record their
 * error for the next read or commit (FDB's deferred error); range reads return batches sized by limit,
 * byte target and streaming mode, with the `more` flag; onError backs off and resets for retryable
 * codes, within `retry_limit` and `max_retry_delay`; `timeout` fails every pending and later operation
 * with transaction_timed_out (1031), watches included, until reset; `size_limit` is checked at commit.
 */
export class ShimNativeTransaction implements NativeTransaction {
  private options: TransactionOptions;
  private readonly pending = new PendingOperations();
  /** The engine's watches made since the last reset, cancelled with the transaction. */
  private watches: Watch[] = [];
  /** onError calls since the last reset, counted against `retry_limit`. */
  private retries = 0;
  private backoff: Backoff | undefined;
  private backoffCeilingMs = 0;
  /** When the timeout starts counting: creation or the last reset. */
  private startedAt = Date.now();
  private timer: NodeJS.Timeout | undefined;
  /** What every operation fails with until reset: 1031 after a timeout, 1025 after cancel. */
  private terminalCode: number | undefined;
  /** The first error of a mutation since the last reset, reported by the next read or commit. */
  private deferredError: KvError | undefined;

  constructor(
    private readonly inner: Transaction,
    private readonly context: TransactionContext,
  ) {
    this.options = context.defaultOptions();
    this.armTimeout();
  }

  // ---- options and lifecycle

  /**
   * `read_your_writes_disable` goes to the engine transaction, its error (2000 once the transaction has
   * read or written) deferred to the next read or commit, as FDB's client defers it.
   *
   * @throws FDBError invalid_option_value (2006) for a value outside the option's range.
   */
  setOption(code: number, param: NativeOptionValue): void {
    assertOptionParam(param);
    if (code === TransactionOptionCode.readYourWritesDisable) {
      this.mutate(() => this.inner.disableReadYourWrites());
      return;
    }
    try {
      this.options.apply(code, param);
    } catch (err) {
      throw this.context.errors.fromEngine(err);
    }
    if (code === TransactionOptionCode.timeout) this.armTimeout();
  }

  commit(): Promise<void>;
  commit(cb: NativeCallback<void>): void;
  commit(cb?: NativeCallback<void>): Promise<void> | undefined {
    return settle(this.commitAttempt(), cb);
  }

  reset(): void {
    this.pending.forgetAll();
    this.watches = [];
    this.terminalCode = undefined;
    this.deferredError = undefined;
    this.retries = 0;
    this.backoff = undefined;
    this.options = this.context.defaultOptions();
    this.startedAt = Date.now();
    this.inner.reset();
    this.armTimeout();
  }

  cancel(): void {
    this.terminate(ErrorCodes.transaction_cancelled);
  }

  onError(code: number): Promise<void>;
  onError(code: number, cb: NativeCallback<void>): void;
  onError(code: number, cb?: NativeCallback<void>): Promise<void> | undefined {
    return settle(this.retryAfter(code), cb);
  }

  getApproximateSize(): Promise<number> {
    return this.future(() => this.inner.getApproximateSize());
  }

  // ---- reads

  get(key: NativeValue, isSnapshot: boolean): Promise<Buffer | undefined>;
  get(key: NativeValue, isSnapshot: boolean, cb: NativeCallback<Buffer | undefined>): void;
  get(key: NativeValue, isSnapshot: boolean, cb?: NativeCallback<Buffer | undefined>): Promise<Buffer | undefined> | undefined {
    const k = nativeBytes(key);
    // `\xff/metadataVersion` is readable without options, as in FDB: the engines' metadata version.
    const read = isMetadataVersionKey(k) ? () => this.reads(isSnapshot).getMetadataVersion() : () => this.reads(isSnapshot).get(k);
    return settle(this.future(read), cb);
  }

  getKey(key: NativeValue, orEqual: boolean, offset: number, isSnapshot: boolean): Promise<Buffer>;
  getKey(key: NativeValue, orEqual: boolean, offset: number, isSnapshot: boolean, cb: NativeCallback<Buffer>): void;
  getKey(key: NativeValue, orEqual: boolean, offset: number, isSnapshot: boolean, cb?: NativeCallback<Buffer>): Promise<Buffer> | undefined {
    const sel = selector(key, orEqual, offset);
    return settle(
      this.future(() => this.reads(isSnapshot).getKey(sel)),
      cb,
    );
  }

  getRange(...args: NativeRangeArguments): Promise<NativeKeyValueList>;
  getRange(...args: [...NativeRangeArguments, NativeCallback<NativeKeyValueList>]): void;
  getRange(
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
    cb?: NativeCallback<NativeKeyValueList>,
  ): Promise<NativeKeyValueList> | undefined {
    const from = selector(begin, beginOrEqual, beginOffset);
    const to = selector(end, endOrEqual, endOffset);
    const batch = this.future(async () => {
      const limits = batchLimits(limit, targetBytes, streamingMode, iteration);
      return readRangeBatch(this.reads(isSnapshot), from, to, limits, reverse);
    });
    return settle(batch, cb);
  }

  /** The bytes of keys and values in `[begin, end)`, read as a snapshot; FDB estimates from samples. */
  getEstimatedRangeSizeBytes(begin: NativeValue, end: NativeValue): Promise<number> {
    const b = nativeBytes(begin);
    const e = nativeBytes(end);
    return this.future(async () => {
      let bytes = 0;
      for await (const kv of this.inner.snapshot().getRange(b, e)) bytes += kv.key.length + kv.value.length;
      return bytes;
    });
  }

  /**
   * `begin`, then the first key after each further `chunkSize` bytes of `[begin, end)` (read as a
   * snapshot), then `end`: the boundaries of chunks of about `chunkSize` bytes, as FDB computes them from
   * its byte samples.
   */
  getRangeSplitPoints(begin: NativeValue, end: NativeValue, chunkSize: number): Promise<Buffer[]> {
    const b = nativeBytes(begin);
    const e = nativeBytes(end);
    return this.future(async () => {
      if (!(chunkSize > 0)) throw new KvError(ErrorCodes.invalid_option_value, `chunk size ${chunkSize}`);
      const points: Buffer[] = [Buffer.from(b)];
      let bytes = 0;
      for await (const kv of this.inner.snapshot().getRange(b, e)) {
        if (bytes >= chunkSize) {
          points.push(kv.key);
          bytes = 0;
        }
        bytes += kv.key.length + kv.value.length;
      }
      points.push(Buffer.from(e));
      return points;
    });
  }

  getReadVersion(): Promise<Buffer>;
  getReadVersion(cb: NativeCallback<Buffer>): void;
  getReadVersion(cb?: NativeCallback<Buffer>): Promise<Buffer> | undefined {
    return settle(
      this.future(async () => versionBytes(await this.inner.getReadVersion())),
      cb,
    );
  }

  /**
   * Reads at `version` (8 big-endian bytes), if the engine still holds it: later reads fail with
   * transaction_too_old (1007) or future_version (1009) if not. version_invalid (2011) and
   * read_version_already_set (2010) are deferred to the next read or commit, as FDB's client defers them.
   *
   * @throws TypeError for anything but 8 bytes.
   */
  setReadVersion(version: Buffer): void {
    const v = nativeVersion(version);
    this.mutate(() => this.inner.setReadVersion(v));
  }

  getCommittedVersion(): Buffer {
    return versionBytes(this.inner.getCommittedVersion());
  }

  getVersionstamp(): Promise<Buffer>;
  getVersionstamp(cb: NativeCallback<Buffer>): void;
  getVersionstamp(cb?: NativeCallback<Buffer>): Promise<Buffer> | undefined {
    return settle(
      this.future(() => this.inner.getVersionstamp()),
      cb,
    );
  }

  /** One placeholder address for every key: all of them live in this process. */
  getAddressesForKey(key: NativeValue): Promise<string[]> {
    nativeBytes(key);
    return this.future(() => settleOnNextTurn(() => [LOCAL_ADDRESS]));
  }

  // ---- writes: errors are deferred to the next read or commit, as FDB's client does

  set(key: NativeValue, value: NativeValue): void {
    const k = nativeBytes(key);
    const v = nativeBytes(value);
    this.mutate(() => this.inner.set(k, v));
  }

  clear(key: NativeValue): void {
    const k = nativeBytes(key);
    this.mutate(() => this.inner.clear(k));
  }

  clearRange(begin: NativeValue, end: NativeValue): void {
    const b = nativeBytes(begin);
    const e = nativeBytes(end);
    this.mutate(() => this.inner.clearRange(b, e));
  }

  atomicOp(opType: number, key: NativeValue, operand: NativeValue): void {
    const k = nativeBytes(key);
    const param = nativeBytes(operand);
    this.mutate(() => {
      if (opType === FdbMutationType.setVersionstampedKey) {
        this.inner.setVersionstampedKey(versionstampedKeyTemplate(k, this.context.apiVersion), param);
      } else if (opType === FdbMutationType.setVersionstampedValue && isMetadataVersionKey(k)) {
        // FDB accepts exactly one parameter for the metadata version: the placeholder at offset 0.
        if (!versionstampedValueTemplate(param, this.context.apiVersion).equals(METADATA_VERSION_BUMP)) {
          throw new KvError(ErrorCodes.client_invalid_operation, 'the metadata version takes only a versionstamp at offset 0');
        }
        this.inner.bumpMetadataVersion();
      } else if (opType === FdbMutationType.setVersionstampedValue) {
        this.inner.setVersionstampedValue(k, versionstampedValueTemplate(param, this.context.apiVersion));
      } else {
        const op = ATOMIC_OPS.get(opType);
        if (!op) throw new KvError(ShimErrorCodes.invalid_mutation_type, `mutation type ${opType}`);
        this.inner.atomicOp(op, k, param);
      }
    });
  }

  addReadConflictRange(begin: NativeValue, end: NativeValue): void {
    const b = nativeBytes(begin);
    const e = nativeBytes(end);
    this.mutate(() => this.inner.addReadConflictRange(b, e));
  }

  addWriteConflictRange(begin: NativeValue, end: NativeValue): void {
    const b = nativeBytes(begin);
    const e = nativeBytes(end);
    this.mutate(() => this.inner.addWriteConflictRange(b, e));
  }

  watch(key: NativeValue, ignoreStandardErrors: boolean): NativeWatch {
    const k = nativeBytes(key);
    const refusal = this.refusal();
    const watch = refusal === undefined ? this.inner.watch(k) : failedWatch(refusal);
    this.watches.push(watch);
    return nativeWatch(watch, ignoreStandardErrors, this.context.errors, this.pending);
  }

  // ---- internals

  private reads(isSnapshot: boolean): ReadTransaction {
    return isSnapshot ? this.inner.snapshot() : this.inner;
  }

  /**
   * Why the transaction cannot run an operation now (its terminal error, then its deferred one), as
   * the `FDBError` to report, or `undefined`.
   */
  private refusal(): Error | undefined {
    if (this.terminalCode !== undefined) return this.context.errors.fromCode(this.terminalCode);
    if (this.deferredError !== undefined) return this.context.errors.fromEngine(this.deferredError);
    return undefined;
  }

  /**
   * Runs an engine operation as one of the addon's futures: refused with the transaction's terminal or
   * deferred error, failed by a timeout or cancel while pending, with engine errors as `FDBError`s.
   * Like the engines' promises, a refusal settles on a later turn of the event loop, as the addon
   * settles every future.
   */
  private future<T>(op: () => Promise<T>): Promise<T> {
    const refusal = this.refusal();
    if (refusal !== undefined) return rejectOnNextTurn(refusal);
    let started: Promise<T>;
    try {
      started = op();
    } catch (err) {
      started = Promise.reject(err);
    }
    return this.pending.track(started).catch((err: unknown) => {
      throw this.context.errors.fromEngine(err);
    });
  }

  private mutate(op: () => void): void {
    // After a timeout or cancel every read and the commit fail anyway.
    if (this.terminalCode !== undefined) return;
    try {
      op();
    } catch (err) {
      if (!(err instanceof KvError)) throw err;
      this.deferredError ??= err;
    }
  }

  private async commitAttempt(): Promise<void> {
    let refusal = this.refusal();
    if (refusal === undefined && this.options.sizeLimit < Limits.maxTransactionBytes) {
      const size = await this.future(() => this.inner.getApproximateSize());
      if (size > this.options.sizeLimit) {
        refusal = this.context.errors.fromCode(
          ErrorCodes.transaction_too_large,
          `${size} bytes, the transaction's size_limit is ${this.options.sizeLimit}`,
        );
      }
    }
    if (refusal !== undefined) {
      // What waits on this commit (the versionstamp, watches) fails with it, as FDB's commit would.
      this.pending.failAll(refusal);
      throw refusal;
    }
    await this.future(() => this.inner.commit());
  }

  /** FDB's onError over the engine: backoff and reset for retryable codes, within the options. */
  private async retryAfter(code: number): Promise<void> {
    if (this.terminalCode !== undefined) throw this.context.errors.fromCode(this.terminalCode);
    const retryLimitHit = this.options.retryLimit !== -1 && this.retries >= this.options.retryLimit;
    this.retries++;
    if (retryLimitHit || !new KvError(code).retryable) {
      if (this.context.apiVersion >= PERSISTENT_OPTIONS_API_VERSION) this.terminate(ErrorCodes.transaction_cancelled);
      else this.resetAttempt();
      throw this.context.errors.fromCode(code);
    }
    await this.pending.track(this.retryBackoff().wait());
    this.resetAttempt();
  }

  private retryBackoff(): Backoff {
    const ceiling = this.options.maxRetryDelayMs;
    if (!this.backoff || this.backoffCeilingMs !== ceiling) {
      this.backoff = new Backoff(Math.min(INITIAL_RETRY_DELAY_MS, ceiling), ceiling);
      this.backoffCeilingMs = ceiling;
    }
    return this.backoff;
  }

  /** What onError resets: the attempt's reads, writes and deferred error, keeping retries and the clock. */
  private resetAttempt(): void {
    this.pending.forgetAll();
    this.watches = [];
    this.deferredError = undefined;
    this.inner.reset();
    if (this.context.apiVersion < PERSISTENT_OPTIONS_API_VERSION) {
      this.options = this.context.defaultOptions();
      this.armTimeout();
    }
  }

  /** Fails everything pending and later with `code` until reset, and cancels the engine transaction. */
  private terminate(code: number): void {
    if (this.terminalCode !== undefined) return;
    this.terminalCode = code;
    this.disarmTimeout();
    this.pending.failAll(this.context.errors.fromCode(code));
    for (const watch of this.watches.splice(0)) watch.cancel();
    this.inner.cancel();
  }

  private armTimeout(): void {
    this.disarmTimeout();
    if (this.options.timeoutMs === 0 || this.terminalCode !== undefined) return;
    const remaining = this.startedAt + this.options.timeoutMs - Date.now();
    if (remaining <= 0) {
      this.terminate(ErrorCodes.transaction_timed_out);
      return;
    }
    this.timer = setTimeout(() => this.terminate(ErrorCodes.transaction_timed_out), remaining);
    // A pending timeout must not keep the process alive.
    this.timer.unref();
  }

  private disarmTimeout(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/** A watch that has already failed with `err`, for a transaction that refuses to make one. */
function failedWatch(err: Error): Watch {
  const promise = Promise.reject(err);
  promise.catch(() => undefined);
  return { promise, cancel: () => undefined };
}
