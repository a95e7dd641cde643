import type { Database } from '../kv/database';
import { openMemoryDatabase } from '../kv/memory-engine';
import type { TransactOptions, Transaction } from '../kv/types';
import type { Tuple } from '../tuple';
import { Collection } from './collection';
import { CollectionRegistry, parseCollectionName } from './collection-registry';
import { DocumentError } from './errors';
import { Layout } from './layout';

export interface OpenOptions {
  /** An existing KV database to use (any engine). Default: a new in-memory database (openMemoryDatabase). */
  database?: Database;
  /** Key prefix of everything doclayer stores; default the tuple ('doclayer'). */
  prefix?: Tuple | Uint8Array;
}

const DEFAULT_PREFIX: Tuple = ['doclayer'];

/**
 * Opens the document layer over a KV database: collections of JSON documents stored one key per
 * leaf under `prefix` (see docs/documents.md). Opening reads and writes nothing.
 *
 * @throws DocumentError INVALID_ARGUMENT for a prefix that is neither a tuple nor bytes, or that
 *   starts with 0xff (FDB's system keyspace).
 */
export async function open(options: OpenOptions = {}): Promise<DocLayer> {
  const prefix = options.prefix ?? DEFAULT_PREFIX;
  if (!(prefix instanceof Uint8Array) && !Array.isArray(prefix)) {
    throw new DocumentError('INVALID_ARGUMENT', 'prefix is a tuple (an array) or bytes (a Uint8Array)');
  }
  let layout: Layout;
  try {
    layout = new Layout(prefix);
  } catch (err) {
    throw new DocumentError('INVALID_ARGUMENT', `prefix cannot be packed as a tuple: ${(err as Error).message}`, { cause: err });
  }
  if (layout.prefix[0] === 0xff) throw new DocumentError('INVALID_ARGUMENT', 'prefix cannot start with 0xff');
  const database = options.database;
  return new DocLayer(database ?? openMemoryDatabase(), layout, database === undefined);
}

/** The document layer: collections over one KV database. */
export class DocLayer {
  private readonly registry: CollectionRegistry;
  private readonly collections = new Map<string, Collection>();

  /** @internal Use {@link open}. */
  constructor(
    readonly kv: Database,
    private readonly layout: Layout,
    private readonly ownsDatabase: boolean,
  ) {
    this.registry = new CollectionRegistry(layout);
  }

  /**
   * A collection: `_default._default` when `name` is absent, `'scope.collection'`, or a collection
   * name in the `_default` scope. Names are 1-251 characters of `A-Z a-z 0-9 _ - %`, not starting
   * with `_` or `%` (except `_default`). A collection is created by the first write to it, in that
   * write's transaction; reads of a collection that does not exist find no documents. Its id is
   * cached once known, so later operations cost no extra read.
   *
   * @throws DocumentError INVALID_ARGUMENT for an invalid name.
   */
  collection(name?: string): Collection {
    const parsed = parseCollectionName(name);
    const qualified = `${parsed.scope}.${parsed.name}`;
    let collection = this.collections.get(qualified);
    if (collection === undefined) {
      collection = new Collection(
        { kv: this.kv, registry: this.registry, collectionPrefix: (id) => this.layout.collectionPrefix(id) },
        parsed.scope,
        parsed.name,
      );
      this.collections.set(qualified, collection);
    }
    return collection;
  }

  /**
   * Runs `fn` in a transaction with retries: `kv.transact`. Pass `{ tr }` to collection methods to make
   * them part of it.
   */
  transact<T>(fn: (tr: Transaction) => Promise<T>, opts?: TransactOptions): Promise<T> {
    return this.kv.transact(fn, opts);
  }

  /** Closes the database if `open` created it; a database passed to `open` is the caller's to close. */
  async close(): Promise<void> {
    if (this.ownsDatabase) await this.kv.close();
  }
}
