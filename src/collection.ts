import { DocumentCollection } from './document/collection/collection';
import type { DocId, JsonValue } from './document/types';
import {
  count,
  explain,
  FindCursor,
  findOne,
  type CountOptions,
  type Explanation,
  type FindItem,
  type FindOptions,
  type IndexAccess,
  type QuerySource,
} from './query';
import { DocCounter } from './structures/counter';
import { DocList } from './structures/list';
import { DocMap } from './structures/map';
import { Queue, type QueueOptions } from './structures/queue/queue';
import { DocSet, type SetMember } from './structures/set';
import { DocText } from './structures/text';

/**
 * A collection of JSON documents (every operation of {@link DocumentCollection}) and the handles of
 * the data structures stored as its documents (src/structures, docs/structures.md).
 */
export class Collection extends DocumentCollection {
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

  // ---- queries (src/query, docs/queries.md)

  /**
   * The documents matching `filter` (MongoDB's query operators, see docs/queries.md), in `sort` order,
   * through the best ready index. Iterate the cursor, or call `toArray()` or `page()` (a page and its
   * continuation token, for `after`). Without `tr`, each page of `pageSize` runs in a transaction of
   * its own; with it, the query sees the caller's own writes.
   *
   * Keys read per page: the index intervals of the plan (`explain` lists them), issued together, then
   * the documents of the entries read (or, for a covering plan, only whether each exists), issued
   * together. A full scan reads every document.
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
   * tests covers the count (it reads entries and, for each match, whether the document exists).
   */
  count(filter: unknown, opts: CountOptions = {}): Promise<number> {
    return count(this.querySource(), filter, opts);
  }

  /** Runs the query as {@link find} would and reports its plan, index intervals and the keys it read. */
  explain(filter: unknown, opts: FindOptions = {}): Promise<Explanation> {
    return explain(this.querySource(), filter, opts);
  }

  /** @internal How queries read this collection; `indexes` replaces its index access (tests). */
  querySource(indexes: IndexAccess | undefined = this.indexAccess()): QuerySource {
    const access = this.structureAccess();
    return {
      transact: (tr, fn) => access.run(tr, fn),
      getMany: (tr, ids) => this.getMany(ids, { tr }),
      existMany: (tr, ids) => Promise.all(ids.map((id) => this.exists(id, { tr }))),
      scan: async (tr, start, limit) => {
        const out = [];
        for await (const item of this.scan({ tr, start, limit, pageSize: limit })) out.push(item);
        return out;
      },
      indexes,
    };
  }

  /** The collection's secondary indexes as queries read them; `undefined` until src/index provides them. */
  private indexAccess(): IndexAccess | undefined {
    return undefined;
  }
}
