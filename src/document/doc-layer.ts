import { strinc } from '../kv/contract/bytes';
import type { Database } from '../kv/contract/database';
import { chooseEngine, EngineChoiceError, openEngine, type EngineChoice, type EngineOptions } from '../kv/open-database';
import type { TransactOptions, Transaction } from '../kv/contract/types';
import type { Tuple } from '../tuple';
import type { CollectionContext, DocumentCollection } from './collection/collection';
import type { JsonForms } from './keys/kind';
import { DocTransaction, type ChangeObserver } from './doc-transaction';
import type { IndexPort } from './index-port';
import { CollectionRegistry } from './manifest/collection-registry';
import { DocumentError } from './errors';
import { LockFlags } from './collection/lock-flags';
import { ExpiryIndex, purgeTime, Sweeper, type PurgeExpiredOptions } from './collection/expiry';
import { Layout } from './keys/layout';
import {
  addCollection,
  dropCollection,
  isValidName,
  setCollectionHistory,
  parseCollectionPath,
  resolveCollection,
  type CollectionPath,
  type Manifest,
  type ResolvedCollection,
  type ResolvedScope,
} from './manifest/manifest';
import { getCollectionId, getManifest, getScopeId, readDroppedCollections, readUsedIds, setManifest, writeManifest } from './manifest/manifest-store';
import type { TransactionOption } from './types';

/**
 * Options of {@link openDocumentLayer} (and the public `open`). The engine is chosen by
 * `src/kv/open-database.ts`'s `EngineOptions`: `database` (an existing KV database, yours to close),
 * `path` (a folder for the durable embedded LMDB engine, created if missing, shared by processes) with
 * `durability` and `readCacheBytes`, `fdb` (a FoundationDB cluster), or `memory` (also the default
 * without any of them).
 */
export interface OpenOptions extends EngineOptions {
  /** Key prefix of everything doclayer stores; default the tuple ('doclayer'). */
  prefix?: Tuple | Uint8Array;
  /**
   * Whether the first write to a collection missing from the manifest adds it (default `true`). With
   * `false`, every operation on a missing collection fails with UNKNOWN_COLLECTION (or UNKNOWN_SCOPE),
   * as in Couchbase. Each `collection()` call may say otherwise.
   */
  autoCreate?: boolean;
  /** The clock documents expire by, in ms since the epoch (default `Date.now`). */
  now?: () => number;
  /** Starts the expiry sweeper ({@link DocumentLayer.startExpirySweeper}) with this interval in ms. */
  expirySweepIntervalMs?: number;
}

/** Options of a collection handle. */
export interface CollectionOptions {
  /** As {@link OpenOptions.autoCreate}, for this handle. */
  autoCreate?: boolean;
}

/** Options of {@link DocumentLayer.startExpirySweeper}. */
export interface ExpirySweeperOptions {
  /** Called with the error of a failed run (the next run goes ahead). Default: `process.emitWarning`. */
  onError?: (err: unknown) => void;
}

const DEFAULT_PREFIX: Tuple = ['doclayer'];
const DEFAULT = '_default';
/** Dropped collections whose keys one transaction of `purgeDropped` clears. */
const DROPPED_BATCH = 1000;

/** What a document layer is made of, besides its options: how its collection handles are made. */
export interface DocumentLayerParts<C extends DocumentCollection> {
  /** How structures' documents read as JSON. */
  readonly forms: JsonForms;
  /** What the layers above do in the transaction of every document write and collection drop (the change feed). */
  readonly observers?: readonly ChangeObserver[];
  /** Upkeep of the layers above that the expiry sweeper runs too (the change feed's compaction). */
  readonly sweep?: () => Promise<unknown>;
  /** Makes the handle of a collection. */
  collection(context: CollectionContext, scope: string, name: string): C;
  /** How writes keep secondary indexes current (the index layer's); without it there are none. */
  readonly indexes?: IndexPort;
}

/** The settings {@link openDocumentLayer} hands the layer it makes. */
export interface LayerSettings {
  readonly autoCreate: boolean;
  readonly now: () => number;
}

/**
 * Opens a document layer over a KV database: collections of JSON documents stored one key per leaf
 * under `prefix` (see docs/documents.md). The database is, by the first option given: `database`
 * (yours to close), `path` (the lmdb engine on that folder), `fdb` (a FoundationDB cluster), or
 * `memory` / nothing (a new in-memory database); the layer's `close` closes what this created.
 * `make` builds the layer (the composition root's `open` makes one with the data structures).
 * Opening reads and writes nothing.
 *
 * @throws DocumentError INVALID_ARGUMENT for a prefix that is neither a tuple nor bytes or starts
 *   with 0xff (FDB's system keyspace), several engine options, `durability` or `readCacheBytes`
 *   without `path`, or a bad sweep interval; the engine's errors (KvError, FdbUnavailableError) when
 *   it cannot be opened.
 */
export async function openDocumentLayer<L extends DocumentLayer<DocumentCollection>>(
  options: OpenOptions,
  make: (kv: Database, layout: Layout, ownsDatabase: boolean, settings: LayerSettings) => L,
): Promise<L> {
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
  const choice = engineChoice(options);
  const now = options.now ?? Date.now;
  if (typeof now !== 'function') throw new DocumentError('INVALID_ARGUMENT', 'now is a function returning ms since the epoch');
  const { database, owned } = await openEngine(choice);
  const layer = make(database, layout, owned, { autoCreate: options.autoCreate !== false, now });
  if (options.expirySweepIntervalMs !== undefined) {
    try {
      layer.startExpirySweeper(options.expirySweepIntervalMs);
    } catch (err) {
      await layer.close();
      throw err;
    }
  }
  return layer;
}

/**
 * The document layer: scopes and collections of documents over one KV database, named by the
 * collections manifest (Couchbase's: see docs/documents.md). `C` is the type of its collection
 * handles (the public `DocLayer` has collections with data structures).
 */
export class DocumentLayer<C extends DocumentCollection = DocumentCollection> {
  private readonly registry: CollectionRegistry;
  private readonly expiry: ExpiryIndex;
  /** Which collections have ever had a document locked (one cache per layer). */
  private readonly locks: LockFlags;
  private readonly handles = new Map<string, C>();
  private sweeper: Sweeper | undefined;

  /** @internal Use {@link open}. */
  constructor(
    readonly kv: Database,
    /** @internal The keys of this layer (for the document check). */
    readonly layout: Layout,
    private readonly ownsDatabase: boolean,
    private readonly settings: LayerSettings,
    private readonly parts: DocumentLayerParts<C>,
  ) {
    this.registry = new CollectionRegistry(kv, layout);
    this.expiry = new ExpiryIndex(layout, parts.observers ?? [], parts.indexes);
    this.locks = new LockFlags(layout.system);
  }

  /**
   * A collection, by path: absent, `'.'` or `'_default._default'` for the default collection;
   * `'scope.collection'` (an empty part is `_default`: `'.users'` is `_default.users`); or a bare
   * collection name in the `_default` scope (`'users'`), as Couchbase SDKs' `bucket.collection()`.
   *
   * Collections are found through the manifest, which this layer caches (and watches), so an
   * operation on a known collection reads nothing to find it. A collection (and its scope) missing
   * from the manifest is added by a manifest update in the transaction of the first write to it
   * (unless `autoCreate` is false: UNKNOWN_COLLECTION); reads of a missing collection find no
   * documents. Only user names (not starting with `_`) are created this way.
   *
   * @throws DocumentError INVALID_ARGUMENT for an invalid path: several dots, or a name that is not
   *   1-251 bytes of `A-Z a-z 0-9 _ - %` (and `$` after a leading `_`), or starts with `%` or `$`.
   */
  collection(path?: string, options: CollectionOptions = {}): C {
    return this.handle(collectionPath(path), options);
  }

  /**
   * A scope by name (absent: `_default`), whose `collection(name)` is `collection('scope.name')`.
   *
   * @throws DocumentError INVALID_ARGUMENT for an invalid name (a path with a dot included).
   */
  scope(name?: string): Scope<C> {
    return new Scope<C>(this, name === undefined ? DEFAULT : checkedName(name, 'scope'));
  }

  /**
   * Couchbase's Set Collections Manifest: replaces the manifest with `json` (its text or parsed
   * value) when it may follow the current one (a higher uid; ids keep their names; dropped ids never
   * come back; the same uid and content is a no-op). Collections it drops are unreachable at once and
   * their keys cleared in the same transaction. Every layer's cached manifest is replaced (this one's
   * at commit; other processes' when their watch fires).
   *
   * @returns the manifest now stored, normalised.
   * @throws DocumentError INVALID_ARGUMENT naming the field of an invalid manifest or a forbidden
   *   change; OUT_OF_RANGE for a lower uid, or the same uid with other content.
   */
  async setManifest(json: string | object, opts: TransactionOption = {}): Promise<Manifest> {
    const change = await this.update(opts.tr, (tr) =>
      setManifest(tr, this.layout.system, json, { collectionPrefix: (id) => this.layout.collectionPrefixes(id) }),
    );
    return change.manifest;
  }

  /** The current manifest (uid 0, `_default._default` only, before any was set). One range read. */
  getManifest(opts: TransactionOption = {}): Promise<Manifest> {
    return this.kv.transact((tr) => getManifest(tr, this.layout.system), { tr: opts.tr });
  }

  /**
   * Couchbase's Get Collection ID for a path `scope.collection` (exactly one dot; an empty part is
   * `_default`), against the stored manifest (one range read): its id, the manifest uid, and its
   * maxTTL when it has one.
   *
   * @throws DocumentError INVALID_ARGUMENT for an invalid path; ManifestLookupError UNKNOWN_SCOPE or
   *   UNKNOWN_COLLECTION, carrying the manifest uid.
   */
  getCollectionId(path: string, opts: TransactionOption = {}): Promise<ResolvedCollection> {
    return this.kv.transact((tr) => getCollectionId(tr, this.layout.system, path), { tr: opts.tr });
  }

  /**
   * Couchbase's Get Scope ID: `scope` (`''` is `_default`; a `.collection` part is ignored; several
   * dots are invalid), against the stored manifest (one range read).
   *
   * @throws DocumentError INVALID_ARGUMENT; ManifestLookupError UNKNOWN_SCOPE with the manifest uid.
   */
  getScopeId(path: string, opts: TransactionOption = {}): Promise<ResolvedScope> {
    return this.kv.transact((tr) => getScopeId(tr, this.layout.system, path), { tr: opts.tr });
  }

  /**
   * Adds a collection (and its scope when missing) by a manifest update, with a `maxTTL` in seconds
   * if given, and a change feed with `history: true` (docs/changes.md); a path as {@link collection}
   * takes it.
   *
   * @throws DocumentError INVALID_ARGUMENT for an invalid path or maxTTL, an existing collection, a
   *   system name; OUT_OF_RANGE when ids run out.
   */
  async createCollection(path: string, opts: { maxTTL?: number; history?: boolean } & TransactionOption = {}): Promise<ResolvedCollection> {
    const { scope, collection } = collectionPath(path);
    return this.update(opts.tr, async (tr) => {
      const sys = this.layout.system;
      const [current, used] = await Promise.all([getManifest(tr, sys), readUsedIds(tr, sys)]);
      const next = addCollection(current, scope, collection, { maxTTL: opts.maxTTL, history: opts.history }, used);
      await writeManifest(tr, sys, next);
      return resolveCollection(next, { scope, collection });
    });
  }

  /**
   * Switches a collection's change feed (its manifest `history`, as Couchbase names it) on or off by a
   * manifest update; nothing is written when it already is so. Writes that commit after the update
   * follow it (they conflict with it otherwise, through the cached manifest's uid). Switching on
   * starts an empty feed; switching off discards the feed (see docs/changes.md).
   *
   * @returns the manifest now stored.
   * @throws DocumentError INVALID_ARGUMENT for an invalid path or a `history` that is not a boolean;
   *   ManifestLookupError UNKNOWN_SCOPE or UNKNOWN_COLLECTION.
   */
  async setCollectionHistory(path: string, history: boolean, opts: TransactionOption = {}): Promise<Manifest> {
    const { scope, collection } = collectionPath(path);
    const change = await this.update(opts.tr, async (tr) => {
      const current = await getManifest(tr, this.layout.system);
      const next = setCollectionHistory(current, scope, collection, history);
      return next === current ? { manifest: current } : writeManifest(tr, this.layout.system, next);
    });
    return change.manifest;
  }

  /**
   * Drops a collection by a manifest update: its documents are unreachable at once, its keys are
   * cleared in the same transaction, and its id is never used again (a collection created later
   * under the name gets a new one).
   *
   * @returns the manifest now stored.
   * @throws DocumentError INVALID_ARGUMENT for an invalid path; ManifestLookupError UNKNOWN_SCOPE or
   *   UNKNOWN_COLLECTION.
   */
  async dropCollection(path: string, opts: TransactionOption = {}): Promise<Manifest> {
    const { scope, collection } = collectionPath(path);
    const change = await this.update(opts.tr, async (tr) => {
      const next = dropCollection(await getManifest(tr, this.layout.system), scope, collection);
      return writeManifest(tr, this.layout.system, next, { collectionPrefix: (id) => this.layout.collectionPrefixes(id) });
    });
    return change.manifest;
  }

  /**
   * Deletes the documents expired at `now` (default: the layer's clock) through the expiry index, in
   * transactions of `batchSize` index entries (default 500), each document's expiry re-read in the
   * transaction that deletes it. Expired documents read as missing whether or not this ran.
   *
   * @returns how many documents were deleted.
   * @throws DocumentError INVALID_ARGUMENT for a bad `now` or `batchSize`.
   */
  async purgeExpired(options: PurgeExpiredOptions = {}): Promise<number> {
    return this.expiry.purge(this.kv, purgeTime(options.now, this.settings.now), options.batchSize);
  }

  /**
   * Clears the keys of every dropped collection again (one range clear each, 1,000 per transaction):
   * a write that used a cached manifest in the moment before it learned of a drop may have left keys
   * under the dropped id (see `collection-registry.ts`). Unreachable either way; this frees the space.
   *
   * @returns the number of dropped collections whose keys were cleared.
   */
  async purgeDropped(): Promise<number> {
    const ids = await this.kv.transact((tr) => readDroppedCollections(tr.snapshot(), this.layout.system));
    for (let i = 0; i < ids.length; i += DROPPED_BATCH) {
      const batch = ids.slice(i, i + DROPPED_BATCH);
      await this.kv.transact((tr) => {
        for (const id of batch) {
          for (const prefix of this.layout.collectionPrefixes(id)) tr.clearRange(prefix, strinc(prefix));
        }
      });
    }
    return ids.length;
  }

  /**
   * Runs {@link purgeExpired} and {@link purgeDropped} every `intervalMs`, until
   * {@link stopExpirySweeper} or {@link close}. The timer does not keep the process alive.
   *
   * @throws DocumentError INVALID_ARGUMENT for an interval that is not a positive number, or when a
   *   sweeper is already running.
   */
  startExpirySweeper(intervalMs: number, options: ExpirySweeperOptions = {}): void {
    if (this.sweeper !== undefined) throw new DocumentError('INVALID_ARGUMENT', 'the expiry sweeper is already running');
    const onError = options.onError ?? ((err: unknown) => process.emitWarning(err instanceof Error ? err : String(err)));
    this.sweeper = new Sweeper(
      async () => {
        await this.purgeExpired();
        await this.purgeDropped();
        await this.parts.sweep?.();
      },
      intervalMs,
      onError,
    );
  }

  /** Stops the expiry sweeper, waiting for a run in progress. */
  async stopExpirySweeper(): Promise<void> {
    const sweeper = this.sweeper;
    this.sweeper = undefined;
    await sweeper?.stop();
  }

  /**
   * Runs `fn` in a transaction with retries: `kv.transact`. Pass `{ tr }` to collection methods to make
   * them part of it.
   */
  transact<T>(fn: (tr: Transaction) => Promise<T>, opts?: TransactOptions): Promise<T> {
    return this.kv.transact(fn, opts);
  }

  /**
   * Stops the sweeper and the manifest watch, and closes the database if `open` created it; a
   * database passed to `open` is the caller's to close. Close the layer or its database: the watch of
   * an open layer keeps a process on lmdb alive (the engine polls for other processes' commits).
   */
  async close(): Promise<void> {
    await this.stopExpirySweeper();
    this.registry.close();
    if (this.ownsDatabase) await this.kv.close();
  }

  /** @internal The handle of a collection (one per path and option). */
  handle(path: CollectionPath, options: CollectionOptions): C {
    const autoCreate = options.autoCreate ?? this.settings.autoCreate;
    const key = `${path.scope}.${path.collection}:${autoCreate}`;
    let handle = this.handles.get(key);
    if (handle === undefined) {
      handle = this.parts.collection(
        {
          kv: this.kv,
          registry: this.registry,
          autoCreate,
          now: this.settings.now,
          expiry: this.expiry,
          locks: this.locks,
          forms: this.parts.forms,
          indexes: this.parts.indexes,
          observers: this.parts.observers ?? [],
        },
        path.scope,
        path.collection,
      );
      this.handles.set(key, handle);
    }
    return handle;
  }

  /** Runs a manifest update in `tr` or a transaction of its own; the cached manifest goes at commit. */
  private update<T>(tr: Transaction | undefined, fn: (tr: Transaction) => Promise<T>): Promise<T> {
    return this.kv.transact(
      async (own) => {
        DocTransaction.of(own).observe(this.parts.observers ?? []);
        const result = await fn(own);
        this.registry.invalidateOnCommit(own);
        return result;
      },
      { tr },
    );
  }
}

/** A scope: a group of collections. */
export class Scope<C extends DocumentCollection = DocumentCollection> {
  /** @internal Use `DocLayer.scope()`. */
  constructor(
    private readonly layer: DocumentLayer<C>,
    readonly name: string,
  ) {}

  /**
   * A collection of this scope, by name (absent: `_default`), as {@link DocumentLayer.collection}.
   *
   * @throws DocumentError INVALID_ARGUMENT for an invalid name.
   */
  collection(name?: string, options: CollectionOptions = {}): C {
    const collection = name === undefined ? DEFAULT : checkedName(name, 'collection');
    return this.layer.handle({ scope: this.name, collection }, options);
  }
}

/** A path as {@link DocumentLayer.collection} takes it. */
function collectionPath(path: string | undefined): CollectionPath {
  if (path === undefined) return { scope: DEFAULT, collection: DEFAULT };
  if (typeof path !== 'string') throw new DocumentError('INVALID_ARGUMENT', `a collection path is a string, got ${typeof path}`);
  if (path.includes('.')) return parseCollectionPath(path);
  return { scope: DEFAULT, collection: checkedName(path, 'collection') };
}

function checkedName(name: unknown, what: 'scope' | 'collection'): string {
  if (!isValidName(name)) {
    throw new DocumentError(
      'INVALID_ARGUMENT',
      `invalid ${what} name ${JSON.stringify(name)}: 1-251 bytes of A-Z a-z 0-9 _ - % ($ too after a leading _), not starting with % or $`,
    );
  }
  return name;
}

/** The engine `options` name, the chooser's errors as this layer's. */
function engineChoice(options: EngineOptions): EngineChoice {
  try {
    return chooseEngine(options);
  } catch (err) {
    if (!(err instanceof EngineChoiceError)) throw err;
    throw new DocumentError(
      'INVALID_ARGUMENT',
      err.problem === 'several-engines'
        ? `give one of database, path, fdb and memory, not ${err.given.join(' and ')}`
        : `${err.problem === 'durability-without-lmdb' ? 'durability' : 'readCacheBytes'} is an option of path (the lmdb engine)`,
      { cause: err },
    );
  }
}
