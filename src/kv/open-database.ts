import type { Database } from './contract/database';
import { ErrorCodes, KvError } from './contract/errors';
import { openFoundationDB, type OpenFoundationDBOptions } from './fdb';
import { openLmdbDatabase, type LmdbDurability } from './lmdb';
import { openMemoryDatabase, type MemoryEngineOptions } from './memory/memory-engine';

/**
 * The one place that turns a caller's engine options into a database: the library's `open()`, the
 * CLI's `--db`/`--memory`/`--fdb` and the Node-RED store's config all name an engine the same way and
 * differ only in the engine they use when none is named.
 */

/** The engine options a caller may give: at most one of `database`, `path`, `fdb` and `memory`. */
export interface EngineOptions {
  /** A database already open, on any engine: the caller's to close. */
  database?: Database;
  /** The folder of a durable embedded store (the lmdb engine), created if missing. */
  path?: string;
  /** When an lmdb commit resolves (`'sync'` or `'fast'`): only with `path`, or an lmdb default. */
  durability?: LmdbDurability;
  /**
   * Bytes of recently read ranges the lmdb engine keeps in memory (`LmdbEngineOptions.readCacheBytes`:
   * default 16 MiB, 0 for none): only with `path`, or an lmdb default.
   */
  readCacheBytes?: number;
  /** A FoundationDB cluster, through the optional `foundationdb` package. */
  fdb?: OpenFoundationDBOptions;
  /** A new in-memory database with these options. */
  memory?: MemoryEngineOptions;
}

/** The options of {@link EngineOptions} that each name an engine, in the order errors list them. */
export const ENGINE_OPTIONS = ['database', 'path', 'fdb', 'memory'] as const;
export type EngineOption = (typeof ENGINE_OPTIONS)[number];

/** The engine {@link chooseEngine} chose, with what {@link openEngine} needs to open it. */
export type EngineChoice =
  | { readonly engine: 'database'; readonly database: Database }
  | { readonly engine: 'lmdb'; readonly path: string; readonly durability?: LmdbDurability; readonly readCacheBytes?: number }
  | { readonly engine: 'fdb'; readonly fdb: OpenFoundationDBOptions }
  | { readonly engine: 'memory'; readonly memory?: MemoryEngineOptions };

/** A database {@link openEngine} opened or was given, and whether the caller must close it. */
export interface OpenedDatabase {
  readonly database: Database;
  /** False for a `database` the caller passed in: closing it is theirs to do. */
  readonly owned: boolean;
  readonly engine: EngineChoice['engine'];
}

/**
 * Engine options that do not go together: KvError invalid_option_value (2006), with what was wrong
 * in fields, so that each caller can say it in its own words (`--db and --memory`, `path and fdb`).
 */
export class EngineChoiceError extends KvError {
  constructor(
    /**
     * `several-engines`: more than one engine option; `durability-without-lmdb`: `durability` for
     * another engine; `read-cache-without-lmdb`: `readCacheBytes` for another engine.
     */
    readonly problem: 'several-engines' | 'durability-without-lmdb' | 'read-cache-without-lmdb',
    /** The engine options given, in {@link ENGINE_OPTIONS} order. */
    readonly given: readonly EngineOption[],
  ) {
    super(
      ErrorCodes.invalid_option_value,
      problem === 'several-engines'
        ? `give at most one of ${ENGINE_OPTIONS.join(', ')}, not ${given.join(' and ')}`
        : `${problem === 'durability-without-lmdb' ? 'durability' : 'readCacheBytes'} is an option of the lmdb engine (path)`,
    );
  }
}

const IN_MEMORY: EngineChoice = { engine: 'memory' };

/**
 * The engine that `options` name, or `fallback` when they name none. Checks only how the options go
 * together; each engine checks its own option values when it opens. Opens nothing.
 *
 * @param fallback the engine without an engine option: default a new in-memory database.
 * @throws EngineChoiceError for several engine options, or `durability` or `readCacheBytes` unless
 *   the engine is lmdb.
 */
export function chooseEngine(options: EngineOptions, fallback: EngineChoice = IN_MEMORY): EngineChoice {
  const given = ENGINE_OPTIONS.filter((name) => options[name] !== undefined);
  if (given.length > 1) throw new EngineChoiceError('several-engines', given);
  const choice = namedEngine(options) ?? fallback;
  const { durability, readCacheBytes } = options;
  if (durability === undefined && readCacheBytes === undefined) return choice;
  if (choice.engine !== 'lmdb') {
    throw new EngineChoiceError(durability !== undefined ? 'durability-without-lmdb' : 'read-cache-without-lmdb', given);
  }
  return {
    ...choice,
    ...(durability === undefined ? {} : { durability }),
    ...(readCacheBytes === undefined ? {} : { readCacheBytes }),
  };
}

function namedEngine(options: EngineOptions): EngineChoice | undefined {
  if (options.database !== undefined) return { engine: 'database', database: options.database };
  if (options.path !== undefined) return { engine: 'lmdb', path: options.path };
  if (options.fdb !== undefined) return { engine: 'fdb', fdb: options.fdb };
  if (options.memory !== undefined) return { engine: 'memory', memory: options.memory };
  return undefined;
}

/**
 * Opens the chosen engine (a `database` choice is returned as it is, not owned). An lmdb folder is
 * created if missing; nothing is read or written.
 *
 * @throws the engine's errors: KvError invalid_option_value (2006) for a bad option value,
 *   FdbUnavailableError without the FoundationDB client, FDB's errors of connecting.
 */
export async function openEngine(choice: EngineChoice): Promise<OpenedDatabase> {
  switch (choice.engine) {
    case 'database':
      return { database: choice.database, owned: false, engine: choice.engine };
    case 'lmdb':
      return {
        database: openLmdbDatabase({ path: choice.path, durability: choice.durability, readCacheBytes: choice.readCacheBytes }),
        owned: true,
        engine: choice.engine,
      };
    case 'fdb':
      return { database: await openFoundationDB(choice.fdb), owned: true, engine: choice.engine };
    case 'memory':
      return { database: openMemoryDatabase(choice.memory), owned: true, engine: choice.engine };
  }
}

/**
 * `openEngine(chooseEngine(options, fallback))`: the database the options name, or the fallback's.
 *
 * @throws EngineChoiceError as {@link chooseEngine}; the engine's errors as {@link openEngine}.
 */
export async function openDatabase(options: EngineOptions, fallback?: EngineChoice): Promise<OpenedDatabase> {
  return openEngine(chooseEngine(options, fallback));
}
