import { Database } from '../contract/database';
import { kvError } from '../contract/errors';
import { FaultInjector, type FaultInjectionOptions } from '../engine-parts/fault-injector';
import type { Engine, Transaction } from '../contract/types';
import type { Durability } from './group-commit';
import { LmdbCluster } from './lmdb-cluster';
import { LMDB_MAX_KEY_BYTES, LmdbStore } from './lmdb-store';
import { LmdbTransaction } from './lmdb-transaction';
import { versionAt } from './versions';

export interface LmdbEngineOptions {
  /** The folder of the store; created if missing. Must be on a local filesystem (LMDB locks and maps it). */
  path: string;
  /**
   * When a commit resolves. Default `'sync'`.
   * - `'sync'`: once flushed to disk (each batch of concurrent commits shares one flush, on a thread):
   *   it survives a crash of the process, a crash of the OS and a power loss (as far as the disk
   *   honours flushes).
   * - `'fast'`: once committed and visible to every process, with no flush per commit (the store
   *   flushes about once a second): it survives a crash of the process, but a crash of the OS or a
   *   power loss may lose about the last second of commits.
   *
   * See `Durability` (exported as `LmdbDurability`) for the fine print.
   */
  durability?: Durability;
  /** Seeded fault injection into this engine's commits, as the memory engine's; off by default. */
  faults?: FaultInjectionOptions;
  /** Clock in ms (default Date.now): versions follow it, and transactions age by it. */
  now?: () => number;
  /**
   * Bytes of recently read ranges kept in memory (default {@link DEFAULT_READ_CACHE_BYTES}, 16 MiB;
   * 0 for none): a full range read (a whole document, a subtree) read again is answered from memory
   * while no commit of any process has written into it since. Results are what the store holds at
   * the reader's version either way; see `RangeCache`.
   */
  readCacheBytes?: number;
}

/** The range cache's default size: 16 MiB. */
export const DEFAULT_READ_CACHE_BYTES = 16 * 1024 * 1024;

/**
 * The durable embedded engine: FoundationDB's semantics on an LMDB store in one folder, which several
 * processes may use at once.
 *
 * - A transaction reads from an LMDB read snapshot at its read version (the store's last commit
 *   version when it first reads) and records read conflict ranges, as in FDB.
 * - Commits are optimistic and serializable across processes: inside one exclusive LMDB write
 *   transaction, each is checked against the write ranges of every commit after its read version, kept
 *   in the store for 5 s and pruned in runs a little later (conflict: not_committed, 1020; older:
 *   transaction_too_old, 1007), then
 *   applied with its atomic operations and versionstamps, at a commit version from a counter in the
 *   store.
 * - Group commit: the concurrent commits of one process share an LMDB write transaction and its flush.
 *   A commit resolves once durable as {@link LmdbEngineOptions.durability} says.
 * - Watches fire on commits of any process (see `StoreWatches`).
 * - A full range read read again is answered from memory while no commit of any process has written
 *   into the range since (see `RangeCache` and {@link LmdbEngineOptions.readCacheBytes}).
 * - FDB's limits, except keys: at most {@link LMDB_MAX_KEY_BYTES} = 4,025 bytes (LMDB's largest key
 *   with 8 KiB pages, less one byte), key_too_large (2102) beyond.
 *
 * - A commit that LMDB cannot write (the disk is full: file_not_writable, 1514; other I/O errors:
 *   io_error, 1510) fails with nothing of it applied, and later commits succeed once there is room.
 *
 * Close every engine you open: an open engine keeps its LMDB environment mapped, and a pending watch
 * keeps the process alive.
 */
export class LmdbEngine implements Engine {
  readonly name = 'lmdb';
  readonly maxKeyBytes = LMDB_MAX_KEY_BYTES;
  private readonly cluster: LmdbCluster;

  /**
   * Opens (or creates) the store at `options.path`.
   *
   * @throws KvError invalid_option_value (2006) for an unknown durability, fault fractions outside
   *   [0, 1] or a negative or fractional `readCacheBytes`; file_corrupt (1522) for a damaged store
   *   (see `assertOpenable`); incompatible_protocol_version (2100) for a store of another format;
   *   file_not_writable (1514) on a full disk; io_error (1510) when LMDB cannot open the folder.
   */
  constructor(options: LmdbEngineOptions) {
    const durability = options.durability ?? 'sync';
    if (durability !== 'sync' && durability !== 'fast') {
      throw kvError('invalid_option_value', `durability must be 'sync' or 'fast', not '${String(durability)}'`);
    }
    if (typeof options.path !== 'string' || options.path.length === 0) {
      throw kvError('invalid_option_value', 'path must name the folder of the store');
    }
    const readCacheBytes = options.readCacheBytes ?? DEFAULT_READ_CACHE_BYTES;
    if (typeof readCacheBytes !== 'number' || !(readCacheBytes >= 0) || !Number.isSafeInteger(readCacheBytes)) {
      throw kvError('invalid_option_value', `readCacheBytes must be a whole number of bytes, 0 or more, not ${String(readCacheBytes)}`);
    }
    const now = options.now ?? Date.now;
    const faults = options.faults ? new FaultInjector(options.faults) : undefined;
    const store = LmdbStore.open(options.path, versionAt(now()), durability);
    this.cluster = new LmdbCluster(store, durability, now, faults, readCacheBytes);
  }

  /** @throws KvError client_invalid_operation (2000) once the engine is closed. */
  createTransaction(): Transaction {
    this.cluster.assertOpen();
    return new LmdbTransaction(this.cluster);
  }

  /**
   * Waits for the commits in flight, resolves every watch `false`, releases every read snapshot and
   * closes the store. Later transactions and commits fail with client_invalid_operation (2000).
   */
  close(): Promise<void> {
    return this.cluster.close();
  }
}

/** A {@link Database} over an {@link LmdbEngine} on the store at `options.path`. */
export function openLmdbDatabase(options: LmdbEngineOptions): Database {
  return new Database(new LmdbEngine(options));
}
