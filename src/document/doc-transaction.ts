import { Buffer } from 'node:buffer';
import { StagedTransaction } from '../kv/client/staged-transaction';
import { isKvError } from '../kv/contract/errors';
import type { Transaction } from '../kv/contract/types';
import type { DocumentKeys } from './keys/layout';
import type { PathElement } from './types';

/**
 * What one write did to one document: the record that secondary indexes and the change feed maintain
 * themselves from. `paths` are the paths whose values the write may have changed, as the caller named
 * them (array indices as given); `[[]]` is the whole document.
 */
export interface DocumentChange {
  /** The document: its collection's key prefix (`keys.collectionPrefix`) and its id (`keys.id`). */
  readonly keys: DocumentKeys;
  /**
   * `'write'`: the document exists after it (created or changed); `'remove'`: it is gone;
   * `'expire'`: the expiry purge deleted it.
   */
  readonly kind: 'write' | 'remove' | 'expire';
  readonly paths: readonly (readonly PathElement[])[];
}

/**
 * What a manifest update did to a collection that observers care about: `'dropped'` (its keys were
 * cleared in the transaction), `'historyOn'` / `'historyOff'` (its change feed was switched on or off).
 */
export interface CollectionEvent {
  readonly kind: 'dropped' | 'historyOn' | 'historyOff';
  readonly collectionId: number;
  /** Its scope and name (in the manifest before the update, for a drop). */
  readonly scope: string;
  readonly name: string;
  /** Whether it kept a change feed before the update. */
  readonly history: boolean;
}

/**
 * What a layer above the document layer does with the writes of a transaction, in that transaction
 * (the change feed writes its entries): called synchronously by every record of the context it
 * observes, so its writes join the writer's. The composition root hands a layer's observers to the
 * document layer, which attaches them to the context of each transaction it writes in
 * ({@link DocTransaction.observe}).
 */
export interface ChangeObserver {
  documentChanged(context: DocTransaction, change: DocumentChange): void;
  collectionChanged(context: DocTransaction, event: CollectionEvent): void;
}

/** The whole document, as a path list. */
export const WHOLE_DOCUMENT: readonly (readonly PathElement[])[] = [[]];

/**
 * A piece of per-attempt state that a layer above the document layer keeps in the context (the
 * queue's next user version, for one): made by `create` on first use in each attempt.
 */
export class ContextSlot<T> {
  constructor(
    /** Names the slot in messages. */
    readonly name: string,
    readonly create: (context: DocTransaction) => T,
  ) {}
}

/**
 * The document layer's state for one attempt of one transaction (as fdb-record-layer's
 * FDBRecordContext): which documents it wrote (their versions are unreadable until commit), how many
 * manifest updates it made, whether it has checked the cached manifest, the changes it made, and the
 * slots of the layers above. Every document write passes through {@link documentWritten} or
 * {@link documentRemoved}.
 *
 * One context belongs to one attempt: {@link DocTransaction.of} hands out the same context for as
 * long as the transaction's {@link Transaction.attempt} stays the same, and a fresh one once the retry
 * loop (or the caller) resets the transaction, so nothing of a failed attempt leaks into the next and
 * no runner has to remember to clear anything.
 */
export class DocTransaction {
  /** The attempt of {@link tr} this context belongs to. */
  readonly attempt: number;
  /** Identities (`DocumentKeys.identity`) of the documents written in this attempt. */
  private readonly written = new Set<string>();
  private readonly recorded: DocumentChange[] = [];
  /** The layers' slots (see {@link local}); made on first use, as most attempts use none. */
  private slots: Map<ContextSlot<unknown>, unknown> | undefined;
  private observers: readonly ChangeObserver[] = NO_OBSERVERS;
  /** The collections (`latin1` of their key prefix) whose changes the observers are told of. */
  private observed: Set<string> | undefined;
  /** Whether this attempt has its read conflict on the manifest uid and its read version (see `collection-registry.ts`). */
  manifestConflict = false;
  /** Manifest updates this attempt wrote: its reads of the manifest are its own, not committed. */
  manifestWrites = 0;
  /**
   * The stored manifest uid as a retried attempt read it, to check the collection registry's cached
   * manifest against (once per attempt).
   */
  manifestUid: Promise<string | undefined> | undefined;

  /** The attempt's read of the metadata version, shared by every layer (see {@link metadataVersion}). */
  private metadataVersionRead: Promise<Buffer | undefined | typeof METADATA_VERSION_BUMPED> | undefined;

  /**
   * The metadata version once {@link metadataVersion} has read it (and the attempt has not bumped it
   * since), for callers that can skip an await when it is known: `undefined` until then.
   */
  metadataVersionSettled: { readonly version: Buffer | undefined } | undefined;

  private constructor(readonly tr: Transaction) {
    this.attempt = tr.attempt;
  }

  /**
   * The context of `tr`'s current attempt: made on first use in each attempt. A staged transaction
   * (mutateIn's all-or-nothing stage) shares its parent's.
   */
  static of(transaction: Transaction): DocTransaction {
    const tr = transaction instanceof StagedTransaction ? transaction.parent : transaction;
    const holder = tr as Transaction & { [CONTEXT]?: DocTransaction };
    let context = holder[CONTEXT];
    if (context === undefined || context.attempt !== tr.attempt) {
      context = new DocTransaction(tr);
      holder[CONTEXT] = context;
    }
    return context;
  }

  /**
   * The context of `tr`'s current attempt if one was made, without making one: reads that only ask
   * what the attempt wrote cost no context (and no map entry) in a transaction that writes nothing.
   */
  static existing(transaction: Transaction): DocTransaction | undefined {
    const tr = transaction instanceof StagedTransaction ? transaction.parent : transaction;
    const context = (tr as Transaction & { [CONTEXT]?: DocTransaction })[CONTEXT];
    return context !== undefined && context.attempt === tr.attempt ? context : undefined;
  }

  /**
   * Adds `observers` (a layer's, as its composition root made them) to this attempt: each is told,
   * once however often it is added, of every collection drop and of every change made from now on
   * to a document of the collection whose key prefix is `collectionPrefix` (of any collection this
   * attempt observes; none when absent).
   */
  observe(observers: readonly ChangeObserver[], collectionPrefix?: Uint8Array): void {
    if (observers.length === 0) return;
    if (this.observers !== observers) {
      const added = observers.filter((observer) => !this.observers.includes(observer));
      if (added.length > 0) this.observers = [...this.observers, ...added];
    }
    if (collectionPrefix !== undefined) (this.observed ??= new Set()).add(prefixIdentity(collectionPrefix));
  }

  /** Records that the document at `keys` was written (created or changed at `paths`). */
  documentWritten(keys: DocumentKeys, paths: readonly (readonly PathElement[])[] = WHOLE_DOCUMENT): void {
    this.written.add(keys.identity);
    this.record({ keys, kind: 'write', paths });
  }

  /** Records that the document at `keys` was removed (by a remove, or by the expiry purge). */
  documentRemoved(keys: DocumentKeys, kind: 'remove' | 'expire' = 'remove'): void {
    this.record({ keys, kind, paths: WHOLE_DOCUMENT });
  }

  /** Records that a manifest update dropped a collection (and cleared its keys) or switched its history. */
  collectionChanged(event: CollectionEvent): void {
    for (const observer of this.observers) observer.collectionChanged(this, event);
  }

  /** True when this attempt wrote the document: its version key is unreadable until commit. */
  wasWritten(keys: DocumentKeys): boolean {
    return this.written.has(keys.identity);
  }

  /** Identities (see `DocumentKeys.identity`) of the documents this attempt wrote. */
  writtenDocuments(): ReadonlySet<string> {
    return this.written;
  }

  /** Every document write of this attempt, in the order made. */
  get changes(): readonly DocumentChange[] {
    return this.recorded;
  }

  private record(change: DocumentChange): void {
    this.recorded.push(change);
    if (this.observed === undefined || !this.observed.has(prefixIdentity(change.keys.collectionPrefix))) return;
    for (const observer of this.observers) observer.documentChanged(this, change);
  }

  /**
   * The transaction's metadata version (FoundationDB's `\xff/metadataVersion`), read once per attempt
   * for every layer that caches by it (index catalogs, lock flags); {@link METADATA_VERSION_BUMPED}
   * once the transaction has bumped it, when it is unreadable (1036).
   */
  metadataVersion(): Promise<Buffer | undefined | typeof METADATA_VERSION_BUMPED> {
    if (this.metadataVersionRead !== undefined) return this.metadataVersionRead;
    const read: Promise<Buffer | undefined | typeof METADATA_VERSION_BUMPED> = this.tr.getMetadataVersion().then(
      (version) => {
        // Not once the attempt has bumped it meanwhile: then it reads as bumped.
        if (this.metadataVersionRead === read) this.metadataVersionSettled = { version };
        return version;
      },
      (err: unknown) => {
        if (isKvError(err, 'accessed_unreadable')) return METADATA_VERSION_BUMPED;
        throw err;
      },
    );
    this.metadataVersionRead = read;
    return read;
  }

  /** Records that `tr` bumped the metadata version in this attempt: later reads find it bumped. */
  metadataVersionBumped(): void {
    this.metadataVersionRead = Promise.resolve(METADATA_VERSION_BUMPED);
    this.metadataVersionSettled = undefined;
  }

  /** This attempt's value of `slot`. */
  local<T>(slot: ContextSlot<T>): T {
    const slots = (this.slots ??= new Map());
    if (slots.has(slot)) return slots.get(slot) as T;
    const value = slot.create(this);
    slots.set(slot, value);
    return value;
  }
}

const NO_OBSERVERS: readonly ChangeObserver[] = [];

function prefixIdentity(collectionPrefix: Uint8Array): string {
  return Buffer.from(collectionPrefix.buffer, collectionPrefix.byteOffset, collectionPrefix.byteLength).toString('latin1');
}

/** The metadata version of a transaction that bumped it: unreadable until commit. */
export const METADATA_VERSION_BUMPED: unique symbol = Symbol('doclayer metadata version bumped');

/**
 * Where a transaction holds its context: a symbol-keyed property of the transaction object, replaced
 * (never cleared) when the transaction starts another attempt. A WeakMap keyed by transactions cost a
 * sixth of a field update's time (ephemeron bookkeeping for a new key per transaction).
 */
const CONTEXT = Symbol('doclayer document context');
