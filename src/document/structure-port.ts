import type { Database } from '../kv/contract/database';
import type { Transaction } from '../kv/contract/types';
import type { TupleItem } from '../tuple';
import type { DocumentKeys } from './keys/layout';
import type { ExpiryIndex } from './collection/expiry';

/**
 * The narrow port through which the data structures (`src/structures`) use a collection: the
 * database, the clock, a transaction runner, the keys of a document as a transaction sees the
 * collection (whose id may have to be read, or planned by a write that creates the collection), and
 * the expiry index structures with an expiry are entered in.
 * A collection provides it (`DocumentCollection.structureAccess()`); the structures never see the
 * collection itself.
 */
export interface StructureAccess {
  readonly kv: Database;
  /** The clock documents expire by (ms since the epoch): an expired plain document is missing. */
  now(): number;
  /** Runs `fn` in `tr`, or in a transaction of its own with retries (each attempt with a fresh document context). */
  run<T>(tr: Transaction | undefined, fn: (tr: Transaction) => Promise<T>): Promise<T>;
  /**
   * The document's keys, or `undefined` when the collection does not exist (so neither does the
   * document). Without a promise when the collection is known at once, as {@link keysToWrite}.
   */
  keysToRead(tr: Transaction, element: TupleItem): DocumentKeys | Promise<DocumentKeys | undefined>;
  /**
   * The document's keys for a write, with `create` to run (creating the collection) if it writes, the
   * collection's id (for expiry index entries) and its maxTTL in seconds, if it has one. Without a
   * promise when the collection is known at once (the commonest case: no microtask turns to take it);
   * then what the promise would reject with is thrown. The caller issues a read in `tr` before it
   * yields (every structure write reads its kind key at once): that read takes the read version the
   * collection lookup's conflict needs (`CollectionRegistry.writeTarget`, `readsAtOnce`).
   */
  keysToWrite(tr: Transaction, element: TupleItem): StructureWriteTarget | Promise<StructureWriteTarget>;
  /** The layer's expiry index: a structure with an expiry has an entry, as a document does. */
  readonly expiry: ExpiryIndex;
}

/** Where a structure write goes: see {@link StructureAccess.keysToWrite}. */
export interface StructureWriteTarget {
  readonly keys: DocumentKeys;
  readonly create?: () => void;
  readonly collectionId: number;
  readonly maxTTL?: number;
}
