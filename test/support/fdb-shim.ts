/**
 * node-foundationdb (the `foundationdb` package) running on doclayer's engines through the fdb shim.
 * Importing this module installs the shim in the test file's module registry, so import it before
 * anything that requires 'foundationdb'; the package itself is loaded lazily by {@link foundationdb}.
 */
import { installFdbShim } from '../../src/fdb-shim';
import type { Database } from '../../src/kv/contract/database';
import { fromFoundationDB } from '../../src/kv/fdb';
import { MemoryEngine, type MemoryEngineOptions } from '../../src/kv/memory/memory-engine';
import type { Engine } from '../../src/kv/contract/types';

export type FoundationDB = typeof import('foundationdb');
export type FdbDatabase = ReturnType<FoundationDB['open']>;

/** The API version the tests select: the newest node-foundationdb 2.x supports. */
export const TEST_API_VERSION = 720;

/** Engines for the cluster files that {@link openFdbDatabase} is about to open. */
const engines = new Map<string, Engine>();
let clustersOpened = 0;

/** The shim of this test file: each cluster file not prepared by {@link openFdbDatabase} is a new memory engine. */
export const fdbShim = installFdbShim({
  engine: (clusterFile) => {
    const prepared = clusterFile === undefined ? undefined : engines.get(clusterFile);
    if (clusterFile !== undefined) engines.delete(clusterFile);
    return prepared ?? new MemoryEngine();
  },
});

/** The `foundationdb` package, loaded over the shim, with {@link TEST_API_VERSION} selected. */
export function foundationdb(): FoundationDB {
  const fdb = require('foundationdb') as FoundationDB;
  fdb.setAPIVersion(TEST_API_VERSION);
  return fdb;
}

/** A node-foundationdb database on a cluster of its own: a new memory engine with `options`. */
export function openFdbDatabase(options?: MemoryEngineOptions): FdbDatabase {
  return openFdbDatabaseOn(new MemoryEngine(options));
}

/** A node-foundationdb database on a cluster of its own, stored by `engine` (the caller closes it). */
export function openFdbDatabaseOn(engine: Engine): FdbDatabase {
  const clusterFile = `fdb-shim-test-${++clustersOpened}.cluster`;
  engines.set(clusterFile, engine);
  return foundationdb().open(clusterFile);
}

/**
 * doclayer's fdb engine (the adapter of `src/kv/fdb`) over {@link openFdbDatabase}: every call goes
 * through node-foundationdb's real JavaScript and the shim to a memory engine. Closing it closes the
 * node-foundationdb database.
 */
export function openShimBackedDatabase(options?: MemoryEngineOptions): Database {
  return fromFoundationDB(openFdbDatabase(options), { closeDatabase: true });
}
