import { Database } from '../contract/database';
import type { Engine, Transaction } from '../contract/types';
import { toKvError } from './errors';
import { FdbTransaction } from './fdb-transaction';
import { nativeMaxKeyBytes, type FdbDatabaseLike, type FdbTransformer } from './node-foundationdb';

/** Keys and values pass through node-foundationdb as the Buffers the adapter gives it. */
const RAW_BYTES: FdbTransformer = { pack: (bytes) => bytes, unpack: (bytes) => bytes };

export interface FdbEngineOptions {
  /**
   * Close the node-foundationdb database when the engine closes. Default `false`: a database passed in
   * by its owner stays open; `openFoundationDB` sets it for the connection it opens.
   */
  closeDatabase?: boolean;
}

/**
 * The FoundationDB engine: each contract transaction is one node-foundationdb transaction. FDB itself
 * provides the semantics the contract describes (conflicts, limits, versionstamps, watches); the engine
 * only translates calls and errors.
 *
 * The database must be at the root of the keyspace: doclayer addresses keys itself (and places its
 * own data under its subspace), and node-foundationdb's subspace prefix does not apply to every
 * operation (the raw versionstamp mutations and selectors that resolve outside the prefix).
 * Any key or value encoders the database has are bypassed: the engine reads and writes raw bytes.
 */
export class FdbEngine implements Engine {
  readonly name = 'fdb';
  /**
   * FoundationDB's 10,000 bytes (absent), or the shorter limit of the engine behind the fdb shim when
   * node-foundationdb runs over it (the shim says so; see `NATIVE_MAX_KEY_BYTES`).
   */
  readonly maxKeyBytes?: number;
  private readonly db: FdbDatabaseLike;
  private closed = false;

  /**
   * @throws TypeError when `db` has a subspace prefix (`db.at(...)`); pass `db.getRoot()` instead.
   */
  constructor(
    db: FdbDatabaseLike,
    private readonly options: FdbEngineOptions = {},
  ) {
    if (db.getPrefix().length > 0) {
      throw new TypeError(
        'The FoundationDB engine needs a database at the root of the keyspace, not one scoped with ' +
          'db.at(prefix): pass db.getRoot() and let doclayer place its keys under its own subspace.',
      );
    }
    this.db = db.withKeyEncoding(RAW_BYTES).withValueEncoding(RAW_BYTES);
    const max = nativeMaxKeyBytes(db);
    if (max !== undefined) this.maxKeyBytes = max;
  }

  createTransaction(): Transaction {
    try {
      return new FdbTransaction(this.db.rawCreateTransaction());
    } catch (err) {
      throw toKvError(err);
    }
  }

  /** Closes the node-foundationdb database if the engine owns it ({@link FdbEngineOptions.closeDatabase}). */
  async close(): Promise<void> {
    if (this.closed || !this.options.closeDatabase) return;
    this.closed = true;
    this.db.close();
  }
}

/**
 * Wraps a node-foundationdb `Database` (from the `foundationdb` package's `fdb.open()`) you already
 * have, so doclayer runs on your cluster: `const db = fromFoundationDB(fdb.open())`.
 *
 * The API version set with `fdb.setAPIVersion(...)` before `fdb.open()` must be 520 or later, where
 * versionstamp offsets are the 4 bytes the contract passes (710 is typical). Closing the returned
 * `Database` leaves `fdbDatabase` open unless `options.closeDatabase` is set.
 *
 * @throws TypeError when `fdbDatabase` is scoped to a subspace prefix; pass `fdbDatabase.getRoot()`.
 */
export function fromFoundationDB(fdbDatabase: FdbDatabaseLike, options: FdbEngineOptions = {}): Database {
  return new Database(new FdbEngine(fdbDatabase, options));
}
