import { Buffer } from 'node:buffer';
import { ContextSlot, DocTransaction, METADATA_VERSION_BUMPED } from '../document/doc-transaction';
import { DocumentError } from '../document/errors';
import type { DocumentIndexes, IndexedState, IndexPort } from '../document/index-port';
import { NOT_INDEXED } from '../document/index-port';
import { STRUCTURE_MARKER } from '../document/keys/kind';
import { childKey, type DocumentKeys, type Layout } from '../document/keys/layout';
import type { JsonValue, PathElement } from '../document/types';
import { unflatten } from '../document/values/flatten';
import { kindOf } from '../document/values/leaf';
import { readSubtree, readSubtreeEntries } from '../document/values/tree';
import type { ReadTransaction, Transaction } from '../kv/contract/types';
import { CompiledIndex, describe, entryExpiry, MAX_ENTRY_VALUE_BYTES, type Entry } from './compiled-index';
import { decodeCatalog, type Catalog } from './definition';
import { pathTouches } from './index-path';
import { IndexKeys } from './index-keys';
import { docIdOf } from '../document/keys/ids';
import { pack, unpack } from '../tuple';

/**
 * Index maintenance in the writer's transaction (the document layer's {@link IndexPort}).
 *
 * Every write of a document reads the database's metadata version once per transaction attempt
 * (`Transaction.getMetadataVersion`, which a cluster delivers with the read version: no round trip of
 * its own) instead of its collection's catalog key. Every change of a catalog bumps the metadata
 * version ({@link catalogChanged}), so the read conflicts with any catalog change committed after the
 * writer's read version: a writer in another process cannot miss an index created concurrently. This
 * layer keeps each collection's parsed catalog with the metadata version it was read at, and reads the
 * catalog key again only when the version moved (reusing the parsed catalog when its bytes are the
 * same); an attempt that changed a catalog itself reads catalogs directly from then on. With indexes, a write that may change an indexed
 * path reads the document's indexed parts before it (one round trip: the root entry and the subtree
 * of each indexed path's top-level field), computes the entries before and after, clears the ones
 * that went and writes the ones that came or changed. Non-unique entries are blind writes of keys
 * that hold the document id, so writers of different documents never conflict through an index; a
 * unique index also reads the range of each new entry's values (a read conflict there makes two
 * racing writers of one value conflict).
 */
export class IndexMaintainer implements IndexPort {
  /** Each collection's catalog as last read, with the metadata version (latin1) it was read at. */
  private readonly cache = new Map<number, CachedCatalog>();

  constructor(
    readonly layout: Layout,
    readonly maxKeyBytes: number,
    /** The clock documents expire by (ms since the epoch): expired documents hold no unique value. */
    readonly now: () => number,
  ) {}

  /** The keys of a collection's indexes. */
  keys(collectionId: number): IndexKeys {
    return new IndexKeys(this.layout, collectionId);
  }

  indexesOf(tr: Transaction, collectionId: number): Promise<CollectionIndexes | undefined> {
    return this.loaded(tr, collectionId).then((found) => found.indexes);
  }

  async indexesWithState(
    tr: Transaction,
    collectionId: number,
    keys: DocumentKeys,
    expiresAt: number | undefined | 'unknown',
  ): Promise<{ indexes: CollectionIndexes; before: IndexedState } | undefined> {
    const known = this.memo(tr).has(collectionId);
    const guess = known ? undefined : this.cache.get(collectionId)?.indexes;
    const loading = this.loaded(tr, collectionId);
    const early = guess?.read(tr, keys, expiresAt);
    early?.catch(() => undefined);
    const { indexes } = await loading;
    if (indexes === undefined) return undefined;
    const before = indexes === guess && early !== undefined ? await early : await indexes.read(tr, keys, expiresAt);
    return { indexes, before };
  }

  /** The catalog of a collection as `tr` sees it (the attempt's copy, see {@link indexesOf}). */
  catalogOf(tr: Transaction, collectionId: number): Promise<Catalog> {
    return this.loaded(tr, collectionId).then((found) => found.catalog);
  }

  /**
   * The compiled index named `name` of a collection as `tr` sees it (`undefined` when there is none):
   * the one the attempt's catalog compiled, so a query's scans build nothing per call.
   */
  compiledIndex(tr: Transaction, collectionId: number, name: string): Promise<CompiledIndex | undefined> {
    return this.loaded(tr, collectionId).then((found) => found.indexes?.all.find((index) => index.name === name));
  }

  /**
   * Records that the attempt has just rewritten a collection's catalog: bumps the metadata version
   * (so every writer that read it concurrently, in any process, conflicts) and forgets the attempt's
   * copy. The attempt reads catalogs directly from now on (its metadata version is unreadable).
   */
  catalogChanged(tr: Transaction, collectionId: number): void {
    tr.bumpMetadataVersion();
    DocTransaction.of(tr).metadataVersionBumped();
    const attempt = this.attemptState(tr);
    attempt.version = Promise.resolve(BUMPED);
    attempt.catalogs.delete(collectionId);
  }

  /** This attempt's state in this maintainer: its metadata version and the catalogs it read. */
  private attemptState(tr: Transaction): AttemptCatalogs {
    const perLayer = DocTransaction.of(tr).local(CATALOGS);
    let mine = perLayer.get(this);
    if (mine === undefined) {
      mine = { version: undefined, catalogs: new Map() };
      perLayer.set(this, mine);
    }
    return mine;
  }

  private memo(tr: Transaction): Map<number, Promise<LoadedCatalog>> {
    return this.attemptState(tr).catalogs;
  }

  /**
   * The attempt's metadata version (latin1; `''` when never bumped), read once; {@link BUMPED} once
   * the attempt (or anything else in the transaction) has bumped it, when it is unreadable (1036).
   */
  private metadataVersion(tr: Transaction): Promise<string> {
    const attempt = this.attemptState(tr);
    attempt.version ??= DocTransaction.of(tr)
      .metadataVersion()
      .then((version) => (version === METADATA_VERSION_BUMPED ? BUMPED : version === undefined ? '' : version.toString('latin1')));
    return attempt.version;
  }

  private loaded(tr: Transaction, collectionId: number): Promise<LoadedCatalog> {
    const mine = this.memo(tr);
    let found = mine.get(collectionId);
    if (found === undefined) {
      found = this.read(tr, collectionId);
      mine.set(collectionId, found);
    }
    return found;
  }

  /**
   * A collection's catalog as `tr` sees it: the cached one when it was read at the attempt's metadata
   * version (no key read), else the catalog key (one point read, with its read conflict).
   */
  private async read(tr: Transaction, collectionId: number): Promise<LoadedCatalog> {
    const version = await this.metadataVersion(tr);
    const cached = this.cache.get(collectionId);
    if (cached !== undefined && version !== BUMPED && cached.version === version) return cached;
    const keys = this.keys(collectionId);
    const raw = await tr.get(keys.catalog);
    // The attempt's own catalog changes are not committed: they stay out of the shared cache.
    if (version === BUMPED) return this.parsed(keys, raw, cached);
    const entry = { ...this.parsed(keys, raw, cached), version };
    this.cache.set(collectionId, entry);
    return entry;
  }

  /** The catalog in `raw`, parsed (the cached parse when the bytes are the same). */
  private parsed(keys: IndexKeys, raw: Buffer | undefined, cached: CachedCatalog | undefined): LoadedCatalog {
    if (cached !== undefined && (cached.raw === raw || (cached.raw !== undefined && raw !== undefined && cached.raw.equals(raw)))) {
      return { raw: cached.raw, indexes: cached.indexes, catalog: cached.catalog };
    }
    const catalog = decodeCatalog(raw);
    const indexes =
      catalog.indexes.length === 0
        ? undefined
        : new CollectionIndexes(
            catalog.indexes.map((stored) => new CompiledIndex(stored, keys)),
            this.maxKeyBytes,
            this.now,
          );
    return { raw, indexes, catalog };
  }
}

/** A collection's catalog: its bytes, parsed, and compiled (`indexes` is absent without indexes). */
interface LoadedCatalog {
  readonly raw: Buffer | undefined;
  readonly indexes: CollectionIndexes | undefined;
  readonly catalog: Catalog;
}

/** A catalog in a maintainer's cache: valid for attempts that read metadata version `version`. */
interface CachedCatalog extends LoadedCatalog {
  readonly version: string;
}

/** What one attempt knows: its metadata version (once read) and the catalogs it loaded. */
interface AttemptCatalogs {
  version: Promise<string> | undefined;
  readonly catalogs: Map<number, Promise<LoadedCatalog>>;
}

/** The attempt's metadata version is unreadable: it changed a catalog (or bumped the version otherwise). */
const BUMPED = 'bumped';

/** Per attempt: each maintainer's catalogs, by collection id. */
const CATALOGS = new ContextSlot('index catalogs', () => new Map<IndexMaintainer, AttemptCatalogs>());

/** What a document gives every index of its collection. */
export class IndexState implements IndexedState {
  readonly exists = true;
  constructor(readonly entries: ReadonlyMap<string, Entry>) {}
}

/** The indexes of one collection, as writes maintain them. */
export class CollectionIndexes implements DocumentIndexes {
  /** The top-level fields every index path starts with: a read of the document reads their subtrees. */
  private readonly tops: readonly string[];

  constructor(
    readonly all: readonly CompiledIndex[],
    private readonly maxKeyBytes: number,
    private readonly now: () => number,
  ) {
    const tops = new Set<string>();
    for (const index of all) for (const path of index.paths) tops.add(path.components[0] as string);
    this.tops = [...tops];
  }

  touches(paths: readonly (readonly PathElement[])[]): boolean {
    return paths.some((written) => this.all.some((index) => index.paths.some((path) => pathTouches(path, written))));
  }

  async read(tr: ReadTransaction, keys: DocumentKeys, expiresAt: number | undefined | 'unknown'): Promise<IndexedState> {
    const subtreeKeys = this.tops.map((top) => childKey(keys.root, top));
    const [root, ...subtrees] = await Promise.all([tr.get(keys.root), ...subtreeKeys.map((key) => readSubtreeEntries(tr, key))]);
    if (root === undefined || root[0] === STRUCTURE_MARKER) return NOT_INDEXED;
    let doc: JsonValue;
    if (kindOf(root) !== 'object') {
      // Paths name keys: on an array or scalar root they give the root or MISSING (rare: read it whole).
      doc = (await readSubtree(tr, keys.root)) as JsonValue;
    } else {
      const partial: Record<string, JsonValue> = {};
      subtrees.forEach((entries, i) => {
        if (entries.length === 0) return;
        const value = unflatten(entries, 0, entries.length, subtreeKeys[i].length);
        Object.defineProperty(partial, this.tops[i], { value, enumerable: true, writable: true, configurable: true });
      });
      doc = partial;
    }
    return this.stateOf(keys, doc, expiresAt);
  }

  stateOf(keys: DocumentKeys, doc: JsonValue, expiresAt: number | undefined | 'unknown'): IndexState {
    const entries = new Map<string, Entry>();
    for (const index of this.all) {
      for (const entry of index.entriesOf(keys.id, doc, expiresAt)) entries.set(entry.key.toString('latin1'), entry);
    }
    return new IndexState(entries);
  }

  async update(tr: Transaction, keys: DocumentKeys, before: IndexedState, after: IndexedState): Promise<void> {
    const old = before instanceof IndexState ? before.entries : EMPTY;
    const next = after instanceof IndexState ? after.entries : EMPTY;
    const added: Entry[] = [];
    for (const [hex, entry] of next) {
      const previous = old.get(hex);
      if (previous !== undefined && previous.value !== undefined && entry.value !== undefined && previous.value.equals(entry.value)) continue;
      this.checkSize(keys, entry);
      added.push(entry);
    }
    const fresh = added.filter((entry) => entry.index.stored.unique && !old.has(entry.key.toString('latin1')));
    const now = this.now();
    await Promise.all(fresh.map((entry) => checkUnique(tr, keys, entry, now)));
    for (const [hex, entry] of old) if (!next.has(hex)) tr.clear(entry.key);
    for (const entry of added) tr.set(entry.key, entry.value ?? Buffer.alloc(0));
  }

  private checkSize(keys: DocumentKeys, entry: Entry): void {
    const value = entry.value ?? Buffer.alloc(0);
    if (entry.key.length > this.maxKeyBytes || value.length > MAX_ENTRY_VALUE_BYTES) {
      throw new DocumentError(
        'INDEX_ENTRY_TOO_LARGE',
        `document ${describe(keys.id)} gives index ${entry.index.name} an entry of ${entry.key.length} key bytes and ${value.length} value bytes, ` +
          `over the limits of ${this.maxKeyBytes} and ${MAX_ENTRY_VALUE_BYTES}`,
        { id: docIdOf(keys.id) },
      );
    }
  }
}

const EMPTY: ReadonlyMap<string, Entry> = new Map();

/** Entries of other documents one unique check looks at (expired ones do not count, and may linger until purged). */
const UNIQUE_PROBE = 16;

/**
 * Fails when a live document other than `keys`'s has `entry`'s values in its unique index. Reads the
 * range of those values (a read conflict on it: a racing writer of the same values conflicts).
 */
async function checkUnique(tr: Transaction, keys: DocumentKeys, entry: Entry, now: number): Promise<void> {
  const begin = Buffer.concat([entry.index.entriesPrefix, entry.values]);
  const end = Buffer.concat([begin, Buffer.of(0xff)]);
  const found = await tr.getRangeAll(begin, end, { limit: UNIQUE_PROBE });
  const own = pack([keys.id]);
  for (const pair of found) {
    const idBytes = pair.key.subarray(begin.length);
    if (idBytes.equals(own)) continue;
    const [other] = unpack(idBytes);
    const expiresAt = entryExpiry(pair.value);
    if (expiresAt !== undefined && expiresAt <= now) continue;
    throw new DocumentError(
      'UNIQUE_VIOLATION',
      `document ${describe(keys.id)} has the values of document ${describe(other)} in unique index ${entry.index.name}`,
      { id: docIdOf(keys.id) },
    );
  }
}
