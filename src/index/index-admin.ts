import { Buffer } from 'node:buffer';
import { DocumentError } from '../document/errors';
import type { IndexedCollectionAccess } from '../document/index-port';
import type { DocId, TransactionOption } from '../document/types';
import { strinc } from '../kv/contract/bytes';
import type { ReadTransaction, Transaction } from '../kv/contract/types';
import type { CompiledIndex } from './compiled-index';
import { checkSpec, encodeCatalog, MAX_INDEXES, sameDefinition, type Catalog, type IndexFieldDescription, type StoredIndex } from './definition';
import { indexDocuments, MAX_DUPLICATES, readStep, splitParts, STEP_KEYS, type BuildPart } from './index-build';
import { readIndex, scanIndex, type IndexEntry, type IndexInterval, type IndexScanOptions } from './index-scan';
import type { IndexMaintainer } from './maintainer';
import type { Filter } from '../filter';

/** An index as `listIndexes` describes it. */
export interface IndexDescription {
  readonly name: string;
  readonly fields: readonly IndexFieldDescription[];
  readonly unique: boolean;
  /** Plain dotted paths stored in each entry. */
  readonly include: readonly string[];
  /** A partial index's filter, as given to createIndex: only matching documents have entries. */
  readonly where?: Filter;
  /** Only `'ready'` indexes serve queries. */
  readonly state: 'building' | 'ready';
  /** While building: documents indexed so far by the build, and whether every part is done. */
  readonly progress?: { readonly scanned: number; readonly done: boolean };
}

/** How the query layer reaches one collection's indexes. */
export interface IndexAccess {
  list(tr: Transaction): Promise<IndexDescription[]>;
  scan(tr: Transaction, name: string, interval: IndexInterval, opts?: IndexScanOptions): AsyncIterable<IndexEntry>;
  /**
   * What {@link scan} yields, as one array: one range read of at most `opts.limit` entries (another
   * after it only when entries of expired documents left it short), without a promise per entry.
   */
  read(tr: Transaction, name: string, interval: IndexInterval, opts?: IndexScanOptions): Promise<IndexEntry[]>;
}

/** Progress of a build, as its callback gets it. */
export interface BuildProgress {
  readonly index: string;
  /** Documents indexed so far (by every worker, this process's and others' alike). */
  readonly scanned: number;
  readonly parts: number;
  readonly partsDone: number;
}

export interface BuildOptions {
  /** Parts the build is split into, run concurrently here (default 1); only a new build splits. */
  readonly workers?: number;
  readonly onProgress?: (progress: BuildProgress) => void;
  /** Document keys per build transaction (default 2,000). */
  readonly stepKeys?: number;
}

export interface CreateIndexOptions extends TransactionOption, BuildOptions {
  /**
   * Build at once when the collection holds documents (default true; never inside a caller's `tr`,
   * whose transaction must stay bounded: the index is then left `'building'` for {@link IndexAdmin.build}).
   */
  readonly build?: boolean;
}

/** A unique build that found documents sharing values. */
export class UniqueBuildError extends DocumentError {
  constructor(
    readonly index: string,
    /** Pairs of document ids with the same values (at most 100 per build part). */
    readonly duplicates: readonly (readonly [DocId, DocId])[],
  ) {
    super(
      'UNIQUE_VIOLATION',
      `the build of unique index ${index} found ${duplicates.length} pair(s) of documents with the same values, e.g. ` +
        duplicates
          .slice(0, 5)
          .map(([a, b]) => `${JSON.stringify(String(a))} and ${JSON.stringify(String(b))}`)
          .join(', ') +
        `; the index stays 'building': fix the documents and build again, or drop it`,
    );
  }
}

/**
 * The indexes of one collection: create, drop, list, build, and the scans the query layer uses.
 *
 * Keys (see index-keys.ts): createIndex reads the catalog and the collection's first document key
 * (is it empty: the index is then ready at once) and writes the catalog; dropIndex reads and writes
 * the catalog and clears the index's entries and progress (1 range clear); listIndexes reads the
 * catalog and the progress of building indexes. Every catalog write (createIndex, dropIndex, a build
 * marking its index ready) also bumps the metadata version (`\xff/metadataVersion`), which every
 * writer of documents reads: the operation's transaction cannot read the metadata version after it.
 */
export class IndexAdmin {
  constructor(
    private readonly maintainer: IndexMaintainer,
    private readonly collection: IndexedCollectionAccess,
  ) {}

  /**
   * Creates an index. On an empty collection it is ready at once; otherwise it is `'building'` and,
   * unless `build: false` or `tr` is given, built before this returns (see {@link build}). Creating an
   * index that exists with the same definition is a no-op (so a retried call is harmless).
   *
   * @throws DocumentError INVALID_INDEX (name, spec), INDEX_EXISTS (another definition under the
   *   name), INVALID_ARGUMENT (over 64 indexes), UNKNOWN_COLLECTION (without autoCreate); the build's
   *   errors (UNIQUE_VIOLATION as {@link UniqueBuildError}, TOO_MANY_INDEX_ENTRIES,
   *   INDEX_ENTRY_TOO_LARGE), the index then stays `'building'`.
   */
  async create(name: string, spec: unknown, opts: CreateIndexOptions = {}): Promise<IndexDescription> {
    const checked = checkSpec(name, spec);
    const created = await this.collection.kv.transact(
      async (tr) => {
        const target = await this.collection.forWrite(tr);
        const catalog = target.create === undefined ? await this.maintainer.catalogOf(tr, target.id) : { nextId: 1, indexes: [] };
        const existing = catalog.indexes.find((index) => index.name === checked.name);
        if (existing !== undefined) {
          if (sameDefinition(existing, checked)) return existing;
          throw new DocumentError('INDEX_EXISTS', `an index named ${checked.name} exists with another definition`);
        }
        if (catalog.indexes.length >= MAX_INDEXES) {
          throw new DocumentError('INVALID_ARGUMENT', `a collection has at most ${MAX_INDEXES} indexes`);
        }
        const [first] = target.create === undefined ? await tr.getRangeAll(target.prefix, strinc(target.prefix), { limit: 1 }) : [];
        const stored: StoredIndex = { id: catalog.nextId, ...checked, state: first === undefined ? 'ready' : 'building' };
        target.create?.();
        this.writeCatalog(tr, target.id, { nextId: catalog.nextId + 1, indexes: [...catalog.indexes, stored] });
        return stored;
      },
      { tr: opts.tr },
    );
    if (created.state === 'building' && opts.tr === undefined && opts.build !== false) return this.build(name, opts);
    return describe(created, undefined);
  }

  /**
   * Drops an index: its definition, entries and build progress, in one transaction (1 range clear).
   *
   * @throws DocumentError INDEX_NOT_FOUND.
   */
  async drop(name: string, opts: TransactionOption = {}): Promise<void> {
    await this.collection.kv.transact(
      async (tr) => {
        const target = await this.collection.forRead(tr);
        const catalog = target === undefined ? undefined : await this.maintainer.catalogOf(tr, target.id);
        const index = catalog?.indexes.find((i) => i.name === name);
        if (target === undefined || catalog === undefined || index === undefined) throw notFound(name);
        const keys = this.maintainer.keys(target.id);
        // Entries and build progress: one range.
        const entries = keys.entries(index.id);
        tr.clearRange(entries, strinc(entries));
        this.writeCatalog(tr, target.id, { nextId: catalog.nextId, indexes: catalog.indexes.filter((i) => i !== index) });
      },
      { tr: opts.tr },
    );
  }

  /** The collection's indexes, in creation order, with the state and progress of each. */
  list(opts: TransactionOption = {}): Promise<IndexDescription[]> {
    return this.collection.kv.transact((tr) => this.describeAll(tr), { tr: opts.tr });
  }

  /** What the query layer uses: {@link list} and scans, in the caller's transaction. */
  access(): IndexAccess {
    return {
      list: (tr) => this.describeAll(tr),
      scan: (tr, name, interval, opts = {}) => this.scan(tr, name, interval, opts),
      read: async (tr, name, interval, opts = {}) => readIndex(tr, await this.compiled(tr, name), interval, opts, this.collection.now()),
    };
  }

  /**
   * Builds (or resumes building) a `'building'` index, and marks it ready. A new build splits the
   * collection's ids into `workers` parts and records them; each part then advances in transactions
   * of about `stepKeys` document keys, recording its position as it goes, so the build resumes where
   * it stopped in any process, and parts run concurrently (here, and in any other process that
   * builds the index meanwhile). Builds of a ready index return at once.
   *
   * @throws DocumentError INDEX_NOT_FOUND; UNIQUE_VIOLATION ({@link UniqueBuildError}, with the
   *   duplicates' ids); TOO_MANY_INDEX_ENTRIES, INDEX_ENTRY_TOO_LARGE naming the document.
   */
  async build(name: string, opts: BuildOptions = {}): Promise<IndexDescription> {
    const kv = this.collection.kv;
    const workers = opts.workers ?? 1;
    if (!Number.isSafeInteger(workers) || workers < 1 || workers > 64)
      throw new DocumentError('INVALID_ARGUMENT', 'workers is an integer from 1 to 64');
    const stepKeys = opts.stepKeys ?? STEP_KEYS;
    const setup = await kv.transact(async (tr) => {
      const found = await this.find(tr, name);
      if (found.index.stored.state === 'ready') return undefined;
      const keys = this.maintainer.keys(found.target.id);
      let parts = await this.readParts(tr, found.target.id, found.index.stored.id);
      if (parts.length === 0) {
        const ranges = await splitParts(tr, found.target.prefix, workers);
        parts = ranges.map((r) => ({
          begin: r.begin.toString('hex'),
          end: r.end.toString('hex'),
          next: r.begin.toString('hex'),
          scanned: 0,
          duplicates: [],
        }));
        parts.forEach((part, i) => tr.set(keys.progressPart(found.index.stored.id, i), JSON.stringify(part)));
      }
      return { ...found, parts };
    });
    if (setup === undefined) return this.describeOne(name);
    const { target, index } = setup;
    const keys = this.maintainer.keys(target.id);
    const scanned = setup.parts.map((p) => p.scanned);
    const done = setup.parts.map((p) => p.next === null);
    const report = () =>
      opts.onProgress?.({ index: name, scanned: scanned.reduce((a, b) => a + b, 0), parts: scanned.length, partsDone: done.filter(Boolean).length });
    const runPart = async (i: number) => {
      const partKey = keys.progressPart(index.stored.id, i);
      while (!done[i]) {
        const step = await kv.transact(async (tr) => {
          const raw = await tr.get(partKey);
          if (raw === undefined) return { part: undefined };
          const part = JSON.parse(raw.toString('utf8')) as BuildPart;
          if (part.next === null) return { part };
          const { docs, next } = await readStep(tr, target.prefix, Buffer.from(part.next, 'hex'), Buffer.from(part.end, 'hex'), stepKeys);
          const duplicates = await indexDocuments(tr, index, docs, this.collection.now(), this.maintainer.maxKeyBytes);
          const updated: BuildPart = {
            ...part,
            next: next === undefined ? null : next.toString('hex'),
            scanned: part.scanned + docs.length,
            duplicates: [...part.duplicates, ...duplicates].slice(0, MAX_DUPLICATES),
          };
          tr.set(partKey, JSON.stringify(updated));
          return { part: updated };
        });
        // A part record gone: another process finished (or the index was dropped); the final step says which.
        if (step.part === undefined) return;
        scanned[i] = step.part.scanned;
        done[i] = step.part.next === null;
        report();
      }
    };
    await Promise.all(setup.parts.map((_, i) => runPart(i)));
    const duplicates = await kv.transact(async (tr) => {
      const found = await this.find(tr, name);
      if (found.index.stored.id !== index.stored.id || found.index.stored.state === 'ready') return [];
      const parts = await this.readParts(tr, target.id, index.stored.id);
      if (parts.length === 0 || parts.some((p) => p.next !== null)) {
        throw new DocumentError('INDEX_NOT_READY', `index ${name}: another build of it stopped or failed meanwhile; build it again`);
      }
      // Done or failed, the parts go: a build after a failure starts over.
      const progress = keys.progress(index.stored.id);
      tr.clearRange(progress, strinc(progress));
      const pairs = parts.flatMap((p) => p.duplicates);
      if (pairs.length > 0) return pairs;
      const catalog = await this.maintainer.catalogOf(tr, target.id);
      this.writeCatalog(tr, target.id, {
        nextId: catalog.nextId,
        indexes: catalog.indexes.map((i) => (i.id === index.stored.id ? { ...i, state: 'ready' as const } : i)),
      });
      return [];
    });
    if (duplicates.length > 0) throw new UniqueBuildError(name, duplicates);
    return this.describeOne(name);
  }

  // ---- internals

  private async describeAll(tr: Transaction): Promise<IndexDescription[]> {
    const target = await this.collection.forRead(tr);
    if (target === undefined) return [];
    const catalog = await this.maintainer.catalogOf(tr, target.id);
    // Ready indexes have no progress to read: the common case makes no promise per index.
    if (catalog.indexes.every((index) => index.state === 'ready')) return catalog.indexes.map((index) => describe(index, undefined));
    return Promise.all(
      catalog.indexes.map(async (index) => {
        if (index.state === 'ready') return describe(index, undefined);
        const parts = await this.readParts(tr.snapshot(), target.id, index.id);
        const scanned = parts.reduce((n, p) => n + p.scanned, 0);
        return describe(index, { scanned, done: parts.length > 0 && parts.every((p) => p.next === null) });
      }),
    );
  }

  private async describeOne(name: string): Promise<IndexDescription> {
    const all = await this.list();
    const found = all.find((d) => d.name === name);
    if (found === undefined) throw notFound(name);
    return found;
  }

  private async *scan(tr: Transaction, name: string, interval: IndexInterval, opts: IndexScanOptions): AsyncIterable<IndexEntry> {
    yield* scanIndex(tr, await this.compiled(tr, name), interval, opts, this.collection.now());
  }

  /** The index named `name` as `tr` sees it. @throws DocumentError INDEX_NOT_FOUND. */
  private async find(tr: Transaction, name: string): Promise<{ target: { id: number; prefix: Buffer }; index: CompiledIndex }> {
    const target = await this.collection.forRead(tr);
    if (target === undefined) throw notFound(name);
    const index = await this.maintainer.compiledIndex(tr, target.id, name);
    if (index === undefined) throw notFound(name);
    return { target, index };
  }

  private async compiled(tr: Transaction, name: string): Promise<CompiledIndex> {
    return (await this.find(tr, name)).index;
  }

  private async readParts(tr: ReadTransaction, collectionId: number, indexId: number): Promise<BuildPart[]> {
    const prefix = this.maintainer.keys(collectionId).progress(indexId);
    const pairs = await tr.getRangeAll(prefix, strinc(prefix));
    return pairs.map((pair) => JSON.parse(pair.value.toString('utf8')) as BuildPart);
  }

  private writeCatalog(tr: Transaction, collectionId: number, catalog: Catalog): void {
    tr.set(this.maintainer.keys(collectionId).catalog, encodeCatalog(catalog));
    this.maintainer.catalogChanged(tr, collectionId);
  }
}

function describe(index: StoredIndex, progress: IndexDescription['progress']): IndexDescription {
  const base: IndexDescription = { name: index.name, fields: index.fields, unique: index.unique, include: index.include, state: index.state };
  const partial = index.where === undefined ? base : { ...base, where: index.where };
  return progress === undefined ? partial : { ...partial, progress };
}

function notFound(name: string): DocumentError {
  return new DocumentError('INDEX_NOT_FOUND', `no index named ${name}`);
}
