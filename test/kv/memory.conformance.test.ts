import { openMemoryDatabase } from '../../src/kv/memory/memory-engine';
import { kvConformanceSuite } from './conformance';

kvConformanceSuite('memory', {
  open: async () => openMemoryDatabase(),
  openWithFaults: async (faults) => openMemoryDatabase({ faults }),
  openWithClock: async (now) => openMemoryDatabase({ now }),
});
