import type { Database } from '../../src/kv/contract/database';
import type { FaultInjectionOptions } from '../../src/kv/engine-parts/fault-injector';
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { openLmdbDatabase } from '../../src/kv/lmdb';
import { openMemoryDatabase } from '../../src/kv/memory/memory-engine';
import { openShimBackedDatabase } from './fdb-shim';

/**
 * The engines the document layer's behaviour tests run on. Every `test/document/*.test.ts` file
 * registers its tests through `documentSuite` (`test/document/document-suite.ts`), which repeats them
 * for each engine listed here: adding an engine is adding one entry.
 *
 * An engine whose databases share state between tests (a real FoundationDB cluster) must return an
 * empty database from `open` (clear the keyspace, as `test/kv/fdb.conformance.test.ts` does) and be
 * run with `--runInBand`.
 */
export interface DocumentEngine {
  /** Shown in every test title: `Collection.insert [memory]`. */
  readonly name: string;
  /** A fresh, empty database. */
  open(): Promise<Database>;
  /**
   * A fresh, empty database whose commits fail as `faults` says. Engines that cannot inject faults
   * leave it out, and the tests that need it are skipped for them, saying why.
   */
  openWithFaults?(faults: FaultInjectionOptions): Promise<Database>;
  /** Removes what the engine's databases left behind (folders on disk), once after the suite. */
  cleanup?(): Promise<void>;
}

/** LMDB stores, each in its own folder under one temporary folder created on first use. */
function lmdbEngine(): DocumentEngine {
  let root: string | undefined;
  let stores = 0;
  const path = () => join((root ??= mkdtempSync(join(tmpdir(), 'doclayer-documents-'))), `store-${stores++}`);
  return {
    name: 'lmdb',
    open: async () => openLmdbDatabase({ path: path() }),
    openWithFaults: async (faults) => openLmdbDatabase({ path: path(), faults }),
    cleanup: async () => {
      if (root !== undefined) rmSync(root, { recursive: true, force: true });
      root = undefined;
    },
  };
}

export const documentEngines: readonly DocumentEngine[] = [
  {
    name: 'memory',
    open: async () => openMemoryDatabase(),
    openWithFaults: async (faults) => openMemoryDatabase({ faults }),
  },
  lmdbEngine(),
  {
    // doclayer's fdb adapter over node-foundationdb's real JS layer, over the fdb shim.
    name: 'fdb on the fdb shim',
    open: async () => openShimBackedDatabase(),
    openWithFaults: async (faults) => openShimBackedDatabase({ faults }),
  },
];
