import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { LMDB_MAX_KEY_BYTES, openLmdbDatabase, type LmdbEngineOptions } from '../../src/kv/lmdb';
import { kvConformanceSuite } from './conformance';

/** Each database is a new store in its own folder under one temporary folder, removed at the end. */
const root = mkdtempSync(join(tmpdir(), 'doclayer-lmdb-conformance-'));
let stores = 0;
const open = async (options: Omit<LmdbEngineOptions, 'path'> = {}) => openLmdbDatabase({ path: join(root, `store-${stores++}`), ...options });

kvConformanceSuite('lmdb', {
  open: () => open(),
  openWithFaults: (faults) => open({ faults }),
  openWithClock: (now) => open({ now }),
  cleanup: async () => rmSync(root, { recursive: true, force: true }),
  limits: { maxKeyBytes: LMDB_MAX_KEY_BYTES },
});
