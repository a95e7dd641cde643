import { Limits } from '../kv/contract/limits';
import type { Engine } from '../kv/contract/types';
import { NATIVE_MAX_KEY_BYTES } from '../kv/fdb/node-foundationdb';
import type { FdbErrors } from './fdb-errors';
import type { NativeDatabase, NativeOptionValue, NativeTransaction } from './native-api';
import { ShimNativeTransaction } from './native-transaction';
import { assertOptionParam, TransactionOptions } from './transaction-options';

/**
 * node-foundationdb's native database: a connection to the cluster that `engine` stores. Its
 * `transaction_timeout`, `transaction_retry_limit`, `transaction_max_retry_delay` and
 * `transaction_size_limit` options become the defaults of the transactions it creates; other database
 * options are accepted and have no effect. Closing it leaves the engine (the cluster) as it is.
 */
export class ShimNativeDatabase implements NativeDatabase {
  private readonly defaults = new TransactionOptions();
  private closed = false;

  /** The engine's longest key, for doclayer's fdb adapter (FoundationDB's is 10,000 bytes). */
  readonly [NATIVE_MAX_KEY_BYTES]: number;

  constructor(
    private readonly engine: Engine,
    private readonly errors: FdbErrors,
    private readonly apiVersion: number,
  ) {
    this[NATIVE_MAX_KEY_BYTES] = engine.maxKeyBytes ?? Limits.maxKeyBytes;
  }

  /** @throws Error once closed, with the addon's message; the engine's errors as `FDBError`s. */
  createTransaction(): NativeTransaction {
    if (this.closed) throw new Error('Cannot create transaction after db closed');
    let inner;
    try {
      inner = this.engine.createTransaction();
    } catch (err) {
      throw this.errors.fromEngine(err);
    }
    return new ShimNativeTransaction(inner, {
      errors: this.errors,
      apiVersion: this.apiVersion,
      defaultOptions: () => this.defaults.copy(),
    });
  }

  /** @throws FDBError invalid_option_value (2006) for a value outside the option's range. */
  setOption(code: number, param: NativeOptionValue): void {
    assertOptionParam(param);
    try {
      this.defaults.apply(code, param);
    } catch (err) {
      throw this.errors.fromEngine(err);
    }
  }

  close(): void {
    this.closed = true;
  }
}
