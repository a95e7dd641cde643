import { Database } from '../contract/database';
import { FaultInjector, type FaultInjectionOptions } from '../engine-parts/fault-injector';
import { MemoryCluster } from './memory-cluster';
import { MemoryTransaction } from './memory-transaction';
import type { Engine, Transaction } from '../contract/types';

export interface MemoryEngineOptions {
  /** Seeded fault injection, off by default. Fractions in [0,1]. */
  faults?: FaultInjectionOptions;
  /** Clock in ms (default Date.now) — lets tests age transactions. */
  now?: () => number;
}

/**
 * The in-memory engine, with FoundationDB's semantics for real rather than a global lock:
 *
 * - MVCC: a transaction reads an O(1) copy-on-write snapshot of a `sorted-btree` taken at its read
 *   version (its first read), so long readers never see later commits and never block writers.
 * - Serializable optimistic concurrency: read conflict ranges (point reads, the part of a range a
 *   result proves, the keys a selector examined) are checked at commit against the write conflict
 *   ranges of every commit after the read version, kept for the 5 s MVCC window; overlap is
 *   not_committed (1020). Snapshot reads and atomic operations add no read conflicts.
 * - Read-your-writes over sets, clears, range clears and atomic operations, in point, range (both
 *   directions, with limits) and selector reads; reading a key whose value depends on the store (an
 *   atomic operation on an unread key) adds a read conflict on it, as in FDB.
 * - Versions advance strictly, at about 1,000,000 per second of the clock; versionstamps are the commit
 *   version (8 bytes big-endian) and batch order 0. `setReadVersion` reads at the latest version or at
 *   one an open transaction reads at, for 5 s after a commit superseded it (see `VersionHistory`).
 * - FDB's limits and error codes (see `contract/limits.ts`), watches, and seeded fault injection.
 * - Range reads return the stored Buffers themselves, read-only as `contract/types.ts` requires of every result:
 *   a range read costs one small object per pair and no copies. Writes copy their arguments, and `get`
 *   returns a copy, so the store is never modified from outside except by modifying a range result.
 *
 * Commits are serialized: each is checked and applied synchronously within one task.
 */
export class MemoryEngine implements Engine {
  readonly name = 'memory';
  private readonly cluster: MemoryCluster;

  /** @throws KvError invalid_option_value (2006) for fault fractions outside [0, 1] or over 1 in total. */
  constructor(options: MemoryEngineOptions = {}) {
    const faults = options.faults ? new FaultInjector(options.faults) : undefined;
    this.cluster = new MemoryCluster(options.now ?? Date.now, faults);
  }

  /** @throws KvError client_invalid_operation (2000) once the engine is closed. */
  createTransaction(): Transaction {
    this.cluster.assertOpen();
    return new MemoryTransaction(this.cluster);
  }

  /** Cancels all watches (they resolve `false`); later transactions and commits fail with 2000. */
  async close(): Promise<void> {
    this.cluster.close();
  }
}

/** A {@link Database} over a new, empty {@link MemoryEngine}. */
export function openMemoryDatabase(options?: MemoryEngineOptions): Database {
  return new Database(new MemoryEngine(options));
}
