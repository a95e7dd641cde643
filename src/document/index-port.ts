import type { Database } from '../kv/contract/database';
import type { Transaction } from '../kv/contract/types';
import type { DocumentKeys } from './keys/layout';
import type { JsonValue, PathElement } from './types';

/**
 * The narrow port through which the document layer keeps secondary indexes current, in the writer's
 * own transaction, without knowing how they are stored: `src/index` implements it and the composition
 * root hands it to the layer (as it hands the structures' JSON forms). A layer opened without one has
 * no indexes.
 *
 * A write of a document asks for the collection's indexes (`indexesOf`; `undefined` when there are
 * none), reads what the indexes derive from the document before it changes it (`read`, only when the
 * write may change an indexed path: {@link DocumentIndexes.touches}), and after writing hands both
 * states to `update`, which clears the entries the document no longer has and writes the new ones.
 */
export interface IndexPort {
  /**
   * The indexes of collection `collectionId` as `tr` sees them, `undefined` when it has none. Costs 1
   * point read of the collection's index catalog per transaction attempt (later calls in the attempt
   * reuse it); a createIndex or dropIndex committed meanwhile makes the writer retry.
   */
  indexesOf(tr: Transaction, collectionId: number): Promise<DocumentIndexes | undefined>;
  /**
   * {@link indexesOf} and, when there are indexes, what the stored document at `keys` gives them
   * ({@link DocumentIndexes.read}), in one round trip when the indexes are the ones last seen: the
   * document's reads are issued with the catalog's on that guess, and issued again if it was wrong.
   */
  indexesWithState(
    tr: Transaction,
    collectionId: number,
    keys: DocumentKeys,
    expiresAt: number | undefined | 'unknown',
  ): Promise<IndexWrite | undefined>;
}

/** A write's indexes and what the document gave them before it. */
export interface IndexWrite {
  readonly indexes: DocumentIndexes;
  readonly before: IndexedState;
}

/** What one document gives a collection's indexes; opaque to the document layer. */
export interface IndexedState {
  /** False for a document that is absent (or a data structure, which is not indexed). */
  readonly exists: boolean;
}

/** The state of an absent document: it has no index entries. */
export const NOT_INDEXED: IndexedState = { exists: false };

/** A collection's indexes, as one write of one document maintains them. */
export interface DocumentIndexes {
  /** Whether writing at `paths` (mutateIn's spec paths) may change an entry of some index. */
  touches(paths: readonly (readonly PathElement[])[]): boolean;
  /**
   * What the stored document gives the indexes, with `expiresAt` its expiry (`'unknown'` when the
   * writer did not read it: every surviving entry is then rewritten). Reads the subtrees of the
   * indexed paths' top-level fields and the root entry, issued together.
   */
  read(tr: Transaction, keys: DocumentKeys, expiresAt: number | undefined | 'unknown'): Promise<IndexedState>;
  /** What `doc`, written with expiry `expiresAt`, gives the indexes: no reads. */
  stateOf(keys: DocumentKeys, doc: JsonValue, expiresAt: number | undefined): IndexedState;
  /**
   * Moves the document's entries from `before` to `after`: clears the entries it no longer has, writes
   * the new and changed ones, and for unique indexes reads the range of each new entry's values.
   *
   * @throws DocumentError UNIQUE_VIOLATION, TOO_MANY_INDEX_ENTRIES, INDEX_ENTRY_TOO_LARGE (nothing of
   *   the index is written then; the caller's transaction must not commit).
   */
  update(tr: Transaction, keys: DocumentKeys, before: IndexedState, after: IndexedState): Promise<void>;
}

/**
 * How the index layer reaches one collection (`DocumentCollection.indexedCollection()`): the database, the
 * clock, and the collection's id and document key prefix as a transaction sees it.
 */
export interface IndexedCollectionAccess {
  readonly kv: Database;
  now(): number;
  /** The collection for a read; `undefined` when it does not exist. */
  forRead(tr: Transaction): Promise<{ readonly id: number; readonly prefix: Buffer } | undefined>;
  /** The collection for a write, with `create` to run (adding it to the manifest) when it is new. */
  forWrite(tr: Transaction): Promise<{ readonly id: number; readonly prefix: Buffer; readonly create?: () => void }>;
}
