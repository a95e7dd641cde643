import { homedir } from 'os';
import { join } from 'path';
import type { Database } from '../kv/contract/database';
import type { LmdbDurability } from '../kv/lmdb';
import { chooseEngine, EngineChoiceError, openEngine, type EngineChoice, type OpenedDatabase } from '../kv/open-database';
import { ContextStoreError } from './errors';

/**
 * The `config` of a doclayer context store in Node-RED's settings.js:
 *
 * ```js
 * contextStorage: { default: { module: require('doclayer/node-red'), config: { ... } } }
 * ```
 *
 * With no engine option, the store is a durable LMDB store in `<userDir>/doclayer-context`, which
 * every Node-RED process on the machine can share. At most one of `path`, `fdb` and `database`; the
 * engine is chosen as the library's `open()` chooses it (`chooseEngine`).
 */
export interface ContextStoreConfig {
  /** The folder of an LMDB store (created if missing), on a local filesystem. */
  path?: string;
  /**
   * LMDB only (refused with `fdb` or `database`): `'sync'` (default: a set survives a machine crash
   * once its callback ran) or `'fast'`.
   */
  durability?: LmdbDurability;
  /**
   * LMDB only (refused with `fdb` or `database`): bytes of recently read ranges the engine keeps in
   * memory, answered again without LMDB while no commit wrote into them (default 16 MiB, 0 for none).
   * A non-negative integer.
   */
  readCacheBytes?: number;
  /** A FoundationDB cluster (needs the optional `foundationdb` package and libfdb_c). */
  fdb?: {
    /** Default: FoundationDB's own lookup (`FDB_CLUSTER_FILE`, then the platform's default file). */
    clusterFile?: string;
    /** Default 710. */
    apiVersion?: number;
  };
  /** A doclayer database already open, on any engine; the store does not close it. */
  database?: Database;
  /** Everything the store writes is under the tuple (prefix, ...). Default `'node-red'`. */
  prefix?: string;
  /** Set by Node-RED: the settings the runtime passes to context stores (`userDir`). */
  settings?: { userDir?: string };
}

export const DEFAULT_PREFIX = 'node-red';

/** The folder the store uses when `config.path` is absent, as Node-RED's file store picks its own. */
export function defaultPath(config: ContextStoreConfig): string {
  const userDir = config.settings?.userDir ?? join(homedir(), '.node-red');
  return join(userDir, 'doclayer-context');
}

/** @throws ContextStoreError INVALID_ARGUMENT for an inconsistent or mistyped config */
export function checkConfig(config: unknown): ContextStoreConfig {
  if (config === undefined || config === null) return {};
  if (typeof config !== 'object') throw invalidConfig('the config is an object');
  const c = config as ContextStoreConfig;
  configuredEngine(c);
  if (c.path !== undefined && (typeof c.path !== 'string' || c.path === '')) throw invalidConfig('path is a folder name');
  if (c.prefix !== undefined && (typeof c.prefix !== 'string' || c.prefix === '')) throw invalidConfig('prefix is a non-empty string');
  if (c.fdb !== undefined && (typeof c.fdb !== 'object' || c.fdb === null)) throw invalidConfig('fdb is an object: { clusterFile }');
  if (c.durability !== undefined && c.durability !== 'sync' && c.durability !== 'fast') throw invalidConfig("durability is 'sync' or 'fast'");
  if (c.readCacheBytes !== undefined && !(Number.isSafeInteger(c.readCacheBytes) && c.readCacheBytes >= 0)) {
    throw invalidConfig('readCacheBytes is a whole number of bytes, 0 or more');
  }
  return c;
}

/**
 * The engine the config names: `database`, `path` or `fdb`, else LMDB in {@link defaultPath}, with
 * `durability` and `readCacheBytes` for either LMDB store.
 *
 * @throws ContextStoreError INVALID_ARGUMENT for several engines, or durability or readCacheBytes with
 *   fdb or database
 */
function configuredEngine(config: ContextStoreConfig): EngineChoice {
  const { database, path, fdb, durability, readCacheBytes } = config;
  try {
    return chooseEngine({ database, path, fdb, durability, readCacheBytes }, { engine: 'lmdb', path: defaultPath(config) });
  } catch (err) {
    if (!(err instanceof EngineChoiceError)) throw err;
    throw invalidConfig(
      err.problem === 'several-engines'
        ? 'give at most one of path, fdb and database'
        : `${err.problem === 'durability-without-lmdb' ? 'durability' : 'readCacheBytes'} is an option of LMDB, not of fdb or database`,
    );
  }
}

/** Opens the database the config names (checked by {@link checkConfig}). */
export function openConfiguredDatabase(config: ContextStoreConfig): Promise<OpenedDatabase> {
  return openEngine(configuredEngine(config));
}

function invalidConfig(what: string): ContextStoreError {
  return new ContextStoreError('INVALID_ARGUMENT', `doclayer context store: ${what}`);
}
