import { existsSync } from 'fs';
import { isAbsolute, relative, resolve } from 'path';
import type { Collection } from '../collection';
import { open, type DocLayer } from '../open';
import { Layout } from '../document/keys/layout';
import { Database } from '../kv/contract/database';
import { chooseEngine, EngineChoiceError, openEngine, type EngineChoice, type EngineOption, type EngineOptions } from '../kv/open-database';
import { stringOption, UsageError, type ParsedArgs } from './args';
import { CountingEngine } from '../kv/counting-engine';
import { CliError } from './error-report';

/**
 * The database a command works on: the engine the global options choose (`--db <folder>`, the
 * default; `--memory`; `--fdb [clusterFile]`; for LMDB, `--durability` and `--read-cache-bytes`), the
 * document layer over it and the collection (`--collection scope.collection`, default
 * `_default._default`).
 */

/** The folder of the durable embedded engine when no option names one, relative to the working directory. */
export const DEFAULT_DATA_FOLDER = 'doclayer-data';

/** The key prefix the CLI opens the document layer with: the library's default, so both see the same data. */
const PREFIX = ['doclayer'];

/** The engine options of the library's chooser, as the global options name them, in the order messages list them. */
const ENGINE_FLAGS: readonly (readonly [EngineOption, string])[] = [
  ['path', '--db'],
  ['memory', '--memory'],
  ['fdb', '--fdb'],
];

/** The engine the global options choose. */
export interface EngineSelection {
  readonly choice: EngineChoice;
  /** The lmdb folder as the user wrote it (or the default), for messages. */
  readonly folder?: string;
}

/**
 * The engine the global options choose, by the library's one chooser; `./doclayer-data` without any.
 *
 * @throws UsageError when more than one engine is chosen, for a `--durability` other than sync or
 *   fast or a `--read-cache-bytes` that is not a whole number, and for either with another engine
 *   than LMDB.
 */
export function engineSelection(args: ParsedArgs, cwd: string): EngineSelection {
  const options: EngineOptions = {};
  const durability = stringOption(args, 'durability');
  if (durability !== undefined) {
    if (durability !== 'sync' && durability !== 'fast') throw new UsageError(`--durability is sync or fast, got ${JSON.stringify(durability)}`);
    options.durability = durability;
  }
  const cacheBytes = stringOption(args, 'read-cache-bytes');
  if (cacheBytes !== undefined) {
    const bytes = Number(cacheBytes);
    if (!/^\d+$/.test(cacheBytes) || !Number.isSafeInteger(bytes)) {
      throw new UsageError(`--read-cache-bytes is a whole number of bytes, 0 or more, got ${JSON.stringify(cacheBytes)}`);
    }
    options.readCacheBytes = bytes;
  }
  const folder = stringOption(args, 'db');
  if (folder !== undefined) options.path = resolve(cwd, folder);
  if (args.options.has('memory')) options.memory = {};
  if (args.options.has('fdb')) {
    const clusterFile = stringOption(args, 'fdb');
    options.fdb = clusterFile === undefined ? {} : { clusterFile: resolve(cwd, clusterFile) };
  }
  const fallbackFolder = `./${DEFAULT_DATA_FOLDER}`;
  try {
    const choice = chooseEngine(options, { engine: 'lmdb', path: resolve(cwd, fallbackFolder) });
    return choice.engine === 'lmdb' ? { choice, folder: folder ?? fallbackFolder } : { choice };
  } catch (err) {
    if (!(err instanceof EngineChoiceError)) throw err;
    if (err.problem !== 'several-engines') {
      const option = err.problem === 'durability-without-lmdb' ? '--durability' : '--read-cache-bytes';
      throw new UsageError(
        `${option} is an option of the durable embedded engine (LMDB, --db), not of ${args.options.has('fdb') ? '--fdb' : '--memory'}`,
      );
    }
    const flags = ENGINE_FLAGS.filter(([option]) => err.given.includes(option)).map(([, flag]) => flag);
    throw new UsageError(`choose one engine: ${flags.join(' and ')} were given`);
  }
}

/** `the durable embedded engine (LMDB) in ./doclayer-data` */
export function describeEngine(choice: EngineChoice, cwd: string): string {
  switch (choice.engine) {
    case 'memory':
      return 'the in-memory engine (nothing is kept after the command)';
    case 'fdb':
      return `FoundationDB (${choice.fdb.clusterFile ?? 'the default cluster file'})`;
    case 'lmdb': {
      const rel = relative(cwd, choice.path);
      const shown = rel === '' ? '.' : rel.startsWith('..') || isAbsolute(rel) ? choice.path : `./${rel}`;
      return `the durable embedded engine (LMDB) in ${shown}`;
    }
    case 'database':
      return 'a database opened by the caller';
  }
}

export interface SessionOptions {
  /** Whether the command may create the database (a write); reads of a folder that is missing fail. */
  create: boolean;
  /** Count the engine's reads and writes (the demo prints them). */
  count?: boolean;
}

export class Session {
  private readonly layout = new Layout(PREFIX);

  private constructor(
    readonly kv: Database,
    readonly docs: DocLayer,
    /** Present with `count`. */
    readonly counting: CountingEngine | undefined,
  ) {}

  /**
   * @throws CliError when a read names a folder that holds no database
   * @throws FdbUnavailableError for `--fdb` without the FoundationDB client library
   */
  static async open(engine: EngineSelection, options: SessionOptions): Promise<Session> {
    let kv = await openKv(engine, options.create);
    let counting: CountingEngine | undefined;
    if (options.count) {
      counting = new CountingEngine(kv.engine);
      kv = new Database(counting);
    }
    return new Session(kv, await open({ database: kv, prefix: PREFIX }), counting);
  }

  collection(name: string | undefined): Collection {
    return this.docs.collection(name);
  }

  /** The prefix of every key of the documents of the collection with this id. */
  collectionPrefix(collectionId: number): Buffer {
    return this.layout.collectionPrefix(collectionId);
  }

  async close(): Promise<void> {
    await this.docs.close();
    await this.kv.close();
  }
}

async function openKv({ choice, folder }: EngineSelection, create: boolean): Promise<Database> {
  if (choice.engine === 'lmdb' && !create && !existsSync(choice.path)) {
    throw new CliError(`no database in ${folder ?? choice.path}: the folder does not exist (a write, such as import or set, creates it)`);
  }
  const { database } = choice.engine === 'fdb' ? await quietly(() => openEngine(choice)) : await openEngine(choice);
  return database;
}

/**
 * Runs `open` with `console.error` silenced: the `foundationdb` package prints its own multi-line
 * notice when its native module cannot load libfdb_c, and the FdbUnavailableError it leads to already
 * says all of it, in the one line the CLI prints.
 */
async function quietly<T>(open: () => Promise<T>): Promise<T> {
  const error = console.error;
  console.error = () => undefined;
  try {
    return await open();
  } finally {
    console.error = error;
  }
}
