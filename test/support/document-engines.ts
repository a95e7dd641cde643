import type { Database } from '../../src/kv/database';
import type { FaultInjectionOptions } from '../../src/kv/memory/fault-injector';
import { openMemoryDatabase } from '../../src/kv/memory-engine';

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
}

export const documentEngines: readonly DocumentEngine[] = [
  {
    name: 'memory',
    open: async () => openMemoryDatabase(),
    openWithFaults: async (faults) => openMemoryDatabase({ faults }),
  },
];
