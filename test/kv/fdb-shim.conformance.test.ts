/**
 * The shared KV conformance suite on doclayer's FoundationDB engine, run through node-foundationdb's
 * real JavaScript (the `foundationdb` package: Database, Transaction, encoders, options, the retry
 * calls) over doclayer's fdb shim in place of its native module, backed by the memory engine. No
 * FoundationDB cluster runs here; this is the closest check of the adapter's use of the package.
 * Faults and the clock are the memory engine's, injected below the package, so those tests run too.
 */
import { openShimBackedDatabase } from '../support/fdb-shim';
import { kvConformanceSuite } from './conformance';

kvConformanceSuite('fdb over node-foundationdb on the fdb shim', {
  open: async () => openShimBackedDatabase(),
  openWithFaults: async (faults) => openShimBackedDatabase({ faults }),
  openWithClock: async (now) => openShimBackedDatabase({ now }),
});
