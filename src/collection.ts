import type { ChangeEvent } from './changes/change';
import type { ChangeConsumer, ChangeFeed, ChangesOptions, CompactChangesOptions } from './changes/change-feed';
import type { CompactionReport } from './changes/compaction';
import { DocumentCollection, type CollectionContext } from './document/collection/collection';
import type { TransactionOption } from './document/types';
import { IndexAdmin, type BuildOptions, type CreateIndexOptions, type IndexAccess, type IndexDescription } from './index/index-admin';
import type { IndexSpec } from './index/definition';
import type { IndexMaintainer } from './index/maintainer';
import type { DocId, JsonValue } from './document/types';
import { count, explain, FindCursor, findOne, type CountOptions, type Explanation, type FindItem, type FindOptions, type QuerySource } from './query';
import { DocCounter } from './structures/counter';
import { DocList } from './structures/list';
import { DocMap } from './structures/map';
import { Queue, type QueueOptions } from './structures/queue/queue';
import { DocSet, type SetMember } from './structures/set';
import { DocText } from './structures/text';
import { DocSortedSet } from './structures/sorted-set';

/**
 * A collection of JSON documents (every operation of {@link DocumentCollection}) and the handles of
 * the data structures stored as its documents (src/structures, docs/structures.md).
 */
export class Collection extends DocumentCollection {
  private readonly indexAdmin: IndexAdmin;

  /** @internal Use `DocLayer.collection()`. */
  constructor(
    context: CollectionContext,
    scope: string,
    name: string,
    indexes: IndexMaintainer,
    private readonly feed: ChangeFeed,
  ) {
    super(context, scope, name);
    this.indexAdmin = new IndexAdmin(indexes, this.indexedCollection());
  }

  // ---- secondary indexes (src/index, docs/indexes.md)

  /**
   * Creates a secondary index named `name` over `spec.fields` (paths, each ascending or
   * `{ path, order: 'desc' }`; `items[*].sku` indexes every element), `unique` or not, storing the
   * `include` paths' values in each entry. Every write of the collection keeps it current in its own
   * transaction from then on. On an empty collection it is ready at once; otherwise it is built
   * before this returns (resumable: see {@link buildIndex}), unless `build: false` or `tr` is given.
   * The definition is stored with the collection (every process sees it; dropping the collection
   * drops it). Creating an existing index with the same definition does nothing.
   *
   * @throws DocumentError INVALID_INDEX (a bad name, path, order, option; over 16 fields),
   *   INDEX_EXISTS, UNIQUE_VIOLATION (a unique build found duplicates: `UniqueBuildError` lists
   *   them), TOO_MANY_INDEX_ENTRIES / INDEX_ENTRY_TOO_LARGE (naming the document).
   */
  createIndex(name: string, spec: IndexSpec, opts?: CreateIndexOptions): Promise<IndexDescription> {
    return this.indexAdmin.create(name, spec, opts);
  }

  /**
   * Drops an index: its definition, entries and build progress, in one transaction.
   *
   * @throws DocumentError INDEX_NOT_FOUND.
   */
  dropIndex(name: string, opts?: TransactionOption): Promise<void> {
    return this.indexAdmin.drop(name, opts);
  }

  /** The collection's indexes with their state (`'building'` or `'ready'`) and build progress. */
  listIndexes(opts?: TransactionOption): Promise<IndexDescription[]> {
    return this.indexAdmin.list(opts);
  }

  /**
   * Builds a `'building'` index, or resumes its build where it stopped (in this or any process),
   * over `workers` id ranges at once, reporting progress to `onProgress`; marks it ready.
   *
   * @throws DocumentError INDEX_NOT_FOUND, UNIQUE_VIOLATION (`UniqueBuildError`, with the ids),
   *   TOO_MANY_INDEX_ENTRIES, INDEX_ENTRY_TOO_LARGE.
   */
  buildIndex(name: string, opts?: BuildOptions): Promise<IndexDescription> {
    return this.indexAdmin.build(name, opts);
  }

  /**
   * How the query layer lists and scans this collection's indexes, in a caller's transaction: the
   * low-level scans `find` plans over (see docs/indexes.md, "Scans").
   */
  indexAccess(): IndexAccess {
    return this.indexAdmin.access();
  }

  // ---- data structures

  /**
   * The collection's changes in commit order, as an async iterator (docs/changes.md): per document
   * its latest change (intermediate versions may be merged), removals and expiries as tombstones,
   * the collection's drop as a last `'drop'` event. Each change carries a `token`; pass it as `since`
   * to resume after it. With `follow` the iterator stays open and wakes by a watch when changes
   * commit, until `signal` aborts. A plain reader is at-least-once: resuming from a token delivers
   * what followed it, and a document changed again is delivered again.
   *
   * Reads per page of `pageSize` entries (one transaction each): 1 range read of the feed and the
   * horizon key, 1 point read of each entry's document version (with `includeDocs`, 1 range read of
   * each upserted document).
   *
   * @throws ChangeFeedError INVALID_TOKEN (a malformed `since`), WRONG_COLLECTION (a token of
   *   another collection), HISTORY_EXPIRED (a token older than the retained removals: resync),
   *   INVALID_ARGUMENT (other options); all before anything is delivered.
   */
  changes<T = JsonValue>(options: ChangesOptions = {}): AsyncGenerator<ChangeEvent<T>, void, undefined> {
    return this.feed.changes<T>(this, options);
  }

  /**
   * The consumer `name` of this collection's changes: its position is stored in the database, and
   * `process(handler, { batchSize })` advances it in the transaction the handler writes in, so
   * processing is exactly once (see {@link ChangeConsumer.process}).
   *
   * @throws ChangeFeedError INVALID_ARGUMENT for a name that is not a string of 1 to 1,000 bytes.
   */
  consumer<T = JsonValue>(name: string): ChangeConsumer<T> {
    return this.feed.consumer<T>(this, name);
  }

  /**
   * Compacts this collection's change feed now (the expiry sweeper does it for every collection):
   * see `DocLayer.compactChanges`.
   */
  compactChanges(options: CompactChangesOptions = {}): Promise<CompactionReport> {
    return this.feed.compact(this, options);
  }

  /**
   * The list at `id`: a handle, touching nothing. Created by its first write; a missing list reads as
   * empty. Its document reads (`get`) as an array.
   *
   * @throws DocumentError INVALID_ARGUMENT (id).
   */
  list<T = JsonValue>(id: DocId): DocList<T> {
    return new DocList<T>(this.structureAccess(), id);
  }

  /** The map at `id` (an object document), as {@link list}. */
  map<V = JsonValue>(id: DocId): DocMap<V> {
    return new DocMap<V>(this.structureAccess(), id);
  }

  /** The set of primitives at `id` (reads as an array), as {@link list}. */
  set<M extends SetMember = SetMember>(id: DocId): DocSet<M> {
    return new DocSet<M>(this.structureAccess(), id);
  }

  /** The queue at `id` (reads as an array with the next item to pop last, as Couchbase's CouchbaseQueue), as {@link list}. */
  queue<T extends JsonValue = JsonValue>(id: DocId, options?: QueueOptions): Queue<T> {
    return new Queue<T>(this.structureAccess(), id, options);
  }

  /** The counter at `id` (reads as a number), as {@link list}. */
  counter(id: DocId): DocCounter {
    return new DocCounter(this.structureAccess(), id);
  }

  /** The text at `id` (reads as a string), as {@link list}. */
  text(id: DocId): DocText {
    return new DocText(this.structureAccess(), id);
  }

  /** The sorted set at `id` (string members ordered by score; reads as `[member, score]` pairs), as {@link list}. */
  sortedSet(id: DocId): DocSortedSet {
    return new DocSortedSet(this.structureAccess(), id);
  }

  // ---- queries (src/query, docs/queries.md)

  /**
   * The documents matching `filter` (MongoDB's query operators, see docs/queries.md), in `sort` order,
   * through the best ready index. Iterate the cursor, or call `toArray()` or `page()` (a page and its
   * continuation token, for `after`). Without `tr`, each page of `pageSize` runs in a transaction of
   * its own; with it, the query sees the caller's own writes.
   *
   * Keys read per page: the index intervals of the plan (`explain` lists them), issued together, then
   * the documents of the entries read (none for a covering plan), issued together. A full scan reads
   * every document.
   *
   * @throws DocumentError INVALID_FILTER, UNSUPPORTED_OPERATOR (the filter); INVALID_QUERY (options, a
   *   token of another query, a bad hint); NO_INDEX when no ready index serves the query and
   *   `allowScan` is not set (the message names an index that would). Thrown when the cursor is first
   *   read.
   */
  find<T = JsonValue>(filter: unknown, opts: FindOptions = {}): FindCursor<T> {
    return new FindCursor<T>(this.querySource(), filter, opts);
  }

  /** The first document `find` would return, or `undefined`. Same keys and errors as {@link find}. */
  findOne<T = JsonValue>(filter: unknown, opts: FindOptions = {}): Promise<FindItem<T> | undefined> {
    return findOne<T>(this.querySource(), filter, opts);
  }

  /**
   * How many documents match `filter`. Reads as {@link find}; an index holding every path the filter
   * tests covers the count (it reads index entries only).
   */
  count(filter: unknown, opts: CountOptions = {}): Promise<number> {
    return count(this.querySource(), filter, opts);
  }

  /** Runs the query as {@link find} would and reports its plan, index intervals and the keys it read. */
  explain(filter: unknown, opts: FindOptions = {}): Promise<Explanation> {
    return explain(this.querySource(), filter, opts);
  }

  /** @internal How queries read this collection; `indexes` replaces its index access (tests). */
  querySource(indexes: IndexAccess = this.indexAccess()): QuerySource {
    const access = this.structureAccess();
    return {
      transact: (tr, fn) => access.run(tr, fn),
      getMany: (tr, ids) => this.getMany(ids, { tr }),
      scan: async (tr, start, limit) => {
        const out = [];
        for await (const item of this.scan({ tr, start, limit, pageSize: limit })) out.push(item);
        return out;
      },
      indexes,
    };
  }
}
