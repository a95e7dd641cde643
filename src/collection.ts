import { DocumentCollection } from './document/collection/collection';
import type { DocId, JsonValue } from './document/types';
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
}
