import type { Cas, DocId, JsonValue } from '../document/types';

/**
 * One change of a collection, as the feed delivers it. `token` is the position just after it: pass
 * it as `since` to read on from there. `cas` is the versionstamp of the commit that made the change
 * (for an upsert, the document's CAS after it).
 */
export interface DocumentChangeEvent<T = JsonValue> {
  /** `'upsert'`: the document exists (created or changed); `'remove'`: removed; `'expire'`: deleted by the expiry purge. */
  readonly kind: 'upsert' | 'remove' | 'expire';
  readonly id: DocId;
  readonly cas: Cas;
  readonly token: string;
  /** The document as of this change, with `includeDocs` (upserts only). */
  readonly doc?: T;
}

/**
 * The collection was dropped: every document of it is gone. The last change of its feed; a reader
 * that meets it stops (a collection created later under the name is another collection, with a feed
 * of its own).
 */
export interface CollectionDropEvent {
  readonly kind: 'drop';
  /** The dropped collection's path, `scope.collection`. */
  readonly collection: string;
  readonly cas: Cas;
  readonly token: string;
}

/** What the feed delivers. */
export type ChangeEvent<T = JsonValue> = DocumentChangeEvent<T> | CollectionDropEvent;
