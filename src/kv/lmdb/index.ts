/**
 * The lmdb engine: doclayer's durable embedded engine. `openLmdbDatabase({ path })` opens (or creates)
 * a store in the folder `path`, which several processes on the machine may use at once, with
 * FoundationDB's semantics; see `LmdbEngine` for how, `LmdbDurability` for what a resolved commit
 * guarantees, `LMDB_MAX_KEY_BYTES` for the one limit tighter than FoundationDB's, and
 * `DEFAULT_READ_CACHE_BYTES` for the memory its range cache takes unless told otherwise.
 * `checkLmdbStore(path)` reports damage to a store; `backupLmdbStore(path, dest)` copies one while it
 * is in use.
 */
export { DEFAULT_READ_CACHE_BYTES, LmdbEngine, openLmdbDatabase, type LmdbEngineOptions } from './lmdb-engine';
export { LMDB_MAX_KEY_BYTES } from './lmdb-store';
export type { Durability as LmdbDurability } from './group-commit';
export { backupLmdbStore } from './backup-store';
export { checkLmdbStore, type LmdbStoreReport } from './check-store';
