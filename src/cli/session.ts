import { existsSync } from 'fs';
import { isAbsolute, relative, resolve } from 'path';
import type { Collection } from '../collection';
import { open, type DocLayer } from '../open';
import { Layout } from '../document/keys/layout';
import { Database } from '../kv/contract/database';
import { openFoundationDB } from '../kv/fdb/open';
import { openLmdbDatabase } from '../kv/lmdb';
import { openMemoryDatabase } from '../kv/memory/memory-engine';
import { stringOption, UsageError, type ParsedArgs } from './args';
import { CountingEngine } from '../kv/counting-engine';
import { CliError } from './error-report';

/**
 * The database a command works on: the engine the global options choose (`--db <folder>`, the
 * default; `--memory`; `--fdb [clusterFile]`), the document layer over it and the collection
 * (`--collection scope.collection`, default `_default._default`).
 */

/** The folder of the durable embedded engine when no option names one, relative to the working directory. */
export const DEFAULT_DATA_FOLDER = 'doclayer-data';

/** The key prefix the CLI opens the document layer with: the library's default, so both see the same data. */
const PREFIX = ['doclayer'];

export type EngineChoice =
  | { readonly kind: 'lmdb'; readonly path: string; readonly given: string }
  | { readonly kind: 'memory' }
  | { readonly kind: 'fdb'; readonly clusterFile?: string };

/** @throws UsageError when more than one engine is chosen. */
export function chooseEngine(args: ParsedArgs, cwd: string): EngineChoice {
  const chosen = ['db', 'memory', 'fdb'].filter((name) => args.options.has(name));
  if (chosen.length > 1) throw new UsageError(`choose one engine: ${chosen.map((name) => `--${name}`).join(' and ')} were given`);
  if (args.options.has('memory')) return { kind: 'memory' };
  if (args.options.has('fdb')) {
    const clusterFile = stringOption(args, 'fdb');
    return clusterFile === undefined ? { kind: 'fdb' } : { kind: 'fdb', clusterFile: resolve(cwd, clusterFile) };
  }
  const given = stringOption(args, 'db') ?? `./${DEFAULT_DATA_FOLDER}`;
  return { kind: 'lmdb', path: resolve(cwd, given), given };
}

/** `the durable embedded engine (LMDB) in ./doclayer-data` */
export function describeEngine(choice: EngineChoice, cwd: string): string {
  switch (choice.kind) {
    case 'memory':
      return 'the in-memory engine (nothing is kept after the command)';
    case 'fdb':
      return `FoundationDB (${choice.clusterFile ?? 'the default cluster file'})`;
    case 'lmdb': {
      const rel = relative(cwd, choice.path);
      const shown = rel === '' ? '.' : rel.startsWith('..') || isAbsolute(rel) ? choice.path : `./${rel}`;
      return `the durable embedded engine (LMDB) in ${shown}`;
    }
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
  static async open(choice: EngineChoice, options: SessionOptions): Promise<Session> {
    let kv = await openKv(choice, options.create);
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

async function openKv(choice: EngineChoice, create: boolean): Promise<Database> {
  switch (choice.kind) {
    case 'memory':
      return openMemoryDatabase();
    case 'fdb':
      return quietly(() => openFoundationDB(choice.clusterFile === undefined ? {} : { clusterFile: choice.clusterFile }));
    case 'lmdb':
      if (!create && !existsSync(choice.path)) {
        throw new CliError(`no database in ${choice.given}: the folder does not exist (a write, such as import or set, creates it)`);
      }
      return openLmdbDatabase({ path: choice.path });
  }
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
