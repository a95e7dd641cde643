/**
 * The lmdb engine: doclayer's durable embedded engine. `openLmdbDatabase({ path })` opens (or creates)
 * a store in the folder `path`, which several processes on the machine may use at once, with
 * FoundationDB's semantics; see `LmdbEngine` for how, `LmdbDurability` for what a resolved commit
 * guarantees, and `LMDB_MAX_KEY_BYTES` for the one limit tighter than FoundationDB's.
 * `checkLmdbStore(path)` reports damage to a store; `backupLmdbStore(path, dest)` copies one while it
 * is in use.
 */
export { LmdbEngine, openLmdbDatabase, type LmdbEngineOptions } from './lmdb-engine';
export { LMDB_MAX_KEY_BYTES } from './lmdb-store';
export type { Durability as LmdbDurability } from './group-commit';
export { backupLmdbStore } from './backup-store';
export { checkLmdbStore, type LmdbStoreReport } from './check-store';
