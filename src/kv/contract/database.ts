import { KvError, kvError } from './errors';
import { Limits } from './limits';
import type { Bytes, Engine, KeySelector, KeyValue, RangeOptions, TransactOptions, Transaction } from './types';

/**
 * A database over one engine: the retry loop and one-shot conveniences. Layers receive a `Database`
 * and never know which engine is behind it.
 */
export class Database {
  constructor(readonly engine: Engine) {}

  /**
   * The longest key the engine stores, in bytes: FoundationDB's 10,000 or the engine's own, tighter
   * limit. Layers check keys they build against it, to fail with their own typed error on every engine.
   */
  get maxKeyBytes(): number {
    return this.engine.maxKeyBytes ?? Limits.maxKeyBytes;
  }

  /**
   * Runs `fn` in a transaction and commits it. On a retryable error (1020 not_committed, 1007
   * transaction_too_old, 1021 commit_unknown_result, ...) it calls the transaction's `onError`, which
   * waits the engine's jittered backoff and resets the transaction, and runs the whole of `fn` again
   * with the same `Transaction` object, as FDB's retry loop does: every attempt gets the same object,
   * emptied of the previous attempt's reads, writes, conflict ranges and read version. `fn` must
   * therefore be safe to run more than once, and state kept per `Transaction` object must be forgotten
   * when an attempt fails; after 1021 the previous attempt may have been applied.
   *
   * With `opts.tr`, joins that transaction: runs `fn(opts.tr)` once, without committing or retrying.
   *
   * @throws KvError the last attempt's error once it is not retryable, `maxRetries` is exceeded or
   *   `timeoutMs` has passed.
   */
  async transact<T>(fn: (tr: Transaction) => Promise<T> | T, opts: TransactOptions = NO_OPTIONS): Promise<T> {
    if (opts.tr !== undefined) {
      if (!isTransaction(opts.tr))
        throw kvError('invalid_option_value', `tr is a transaction (from createTransaction or transact), got ${describe(opts.tr)}`);
      return fn(opts.tr);
    }
    // The clock is read only for a deadline: every operation of every layer runs through here.
    const started = opts.timeoutMs === undefined ? 0 : Date.now();
    const tr = this.engine.createTransaction();
    for (let retries = 0; ; retries++) {
      try {
        const result = await fn(tr);
        await tr.commit();
        return result;
      } catch (err) {
        const outOfRetries = opts.maxRetries !== undefined && retries >= opts.maxRetries;
        const outOfTime = opts.timeoutMs !== undefined && Date.now() - started >= opts.timeoutMs;
        if (outOfRetries || outOfTime || !(err instanceof KvError)) {
          tr.cancel();
          throw err;
        }
        try {
          await tr.onError(err);
        } catch (final) {
          tr.cancel();
          throw final;
        }
        // The backoff may have used up the time left: do not start an attempt past the deadline.
        if (opts.timeoutMs !== undefined && Date.now() - started >= opts.timeoutMs) {
          tr.cancel();
          throw err;
        }
      }
    }
  }

  /** A new transaction that the caller commits; prefer {@link transact}, which also retries. */
  createTransaction(): Transaction {
    return this.engine.createTransaction();
  }

  /** Reads one key in its own transaction. */
  get(key: Bytes): Promise<Buffer | undefined> {
    return this.transact((tr) => tr.get(key));
  }

  /** Reads a range in its own transaction. */
  getRangeAll(begin: Bytes | KeySelector, end: Bytes | KeySelector, options?: RangeOptions): Promise<KeyValue[]> {
    return this.transact((tr) => tr.getRangeAll(begin, end, options));
  }

  /** Writes one key in its own transaction. */
  set(key: Bytes, value: Bytes): Promise<void> {
    return this.transact((tr) => tr.set(key, value));
  }

  /** Clears one key in its own transaction. */
  clear(key: Bytes): Promise<void> {
    return this.transact((tr) => tr.clear(key));
  }

  /** Clears `[begin, end)` in its own transaction. */
  clearRange(begin: Bytes, end: Bytes): Promise<void> {
    return this.transact((tr) => tr.clearRange(begin, end));
  }

  close(): Promise<void> {
    return this.engine.close();
  }
}

/** The options of a call that passes none: shared, not allocated per call. */
const NO_OPTIONS: TransactOptions = Object.freeze({});

/** Whether `value` has the shape of a {@link Transaction}: what a caller's `{ tr }` must be. */
function isTransaction(value: unknown): value is Transaction {
  if (typeof value !== 'object' || value === null) return false;
  const tr = value as Partial<Record<keyof Transaction, unknown>>;
  return typeof tr.get === 'function' && typeof tr.set === 'function' && typeof tr.commit === 'function' && typeof tr.attempt === 'number';
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'object') return Array.isArray(value) ? 'an array' : 'an object without the transaction methods';
  return typeof value;
}
