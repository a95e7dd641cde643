import { Buffer } from 'node:buffer';
import type { ChangeObserver, CollectionEvent, DocTransaction, DocumentChange } from '../document/doc-transaction';
import { ContextSlot } from '../document/doc-transaction';
import { decodeLeb128 } from '../document/keys/leb128';
import { DOCUMENTS_SECTION, type Layout } from '../document/keys/layout';
import { encodeEntry, FeedKeys, type EntryKind } from './feed-keys';

/** The 10 placeholder bytes of a versionstamped value and FDB's 4-byte offset (0). */
const STAMP_VALUE = Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]);
/** A position after every entry of the switching transaction: its versionstamp, then order 0xffffffff. */
const HORIZON_VALUE = Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]);

/** What one attempt has written to one collection's feed. */
interface AttemptFeed {
  /** The order (within the transaction) of each document already given an entry, by identity. */
  readonly orders: Map<string, number>;
  next: number;
}

const KINDS: Record<DocumentChange['kind'], EntryKind> = { write: 'upsert', remove: 'remove', expire: 'expire' };

/**
 * Writes the change feed, in the writer's transaction: the document layer tells it of every document
 * write and collection drop (it is one of the layer's {@link ChangeObserver}s). Per changed document
 * per transaction: one versionstamped entry (a second change of the document in the same transaction
 * rewrites the same entry, so the entry says what the transaction left); per transaction and
 * collection: one versionstamped value at the feed's signal key, which followers watch. Blind writes
 * only: no read, no read conflict, nothing two writers can conflict on.
 */
export class FeedRecorder implements ChangeObserver {
  private readonly feeds = new Map<number, FeedKeys>();
  private readonly documentsPrefix: Buffer;
  private readonly slot = new ContextSlot<Map<number, AttemptFeed>>('change feed', () => new Map());

  constructor(
    private readonly layout: Layout,
    private readonly now: () => number,
  ) {
    this.documentsPrefix = Buffer.concat([layout.prefix, Buffer.of(DOCUMENTS_SECTION)]);
  }

  /** The keys of collection `collectionId`'s feed. */
  keys(collectionId: number): FeedKeys {
    let keys = this.feeds.get(collectionId);
    if (keys === undefined) {
      keys = new FeedKeys(this.layout.system, collectionId);
      this.feeds.set(collectionId, keys);
    }
    return keys;
  }

  documentChanged(context: DocTransaction, change: DocumentChange): void {
    const collectionId = this.collectionIdOf(change.keys.collectionPrefix);
    if (collectionId === undefined) return;
    const feed = this.attemptFeed(context, collectionId);
    const identity = change.keys.identity;
    let order = feed.orders.get(identity);
    if (order === undefined) {
      order = feed.next++;
      feed.orders.set(identity, order);
    }
    const keys = this.keys(collectionId);
    context.tr.setVersionstampedKey(keys.entryTemplate(order), encodeEntry({ kind: KINDS[change.kind], id: change.keys.id, atMs: this.now() }));
  }

  /**
   * A drop of a collection with a feed: its entries and records go, and one drop entry is written,
   * the last of its feed. Switching the feed on or off clears what it held; switching it on also
   * moves the horizon to the switching commit, so a token of an earlier time the feed was on gets
   * HISTORY_EXPIRED instead of missing what was written while it was off.
   */
  collectionChanged(context: DocTransaction, event: CollectionEvent): void {
    if (event.kind === 'dropped' && !event.history) return;
    const keys = this.keys(event.collectionId);
    for (const { begin, end } of keys.dataRanges) context.tr.clearRange(begin, end);
    context.tr.clear(keys.cursor);
    if (event.kind === 'historyOn') context.tr.setVersionstampedValue(keys.horizon, HORIZON_VALUE);
    if (event.kind !== 'dropped') return;
    const feed = this.attemptFeed(context, event.collectionId);
    const path = `${event.scope}.${event.name}`;
    context.tr.setVersionstampedKey(keys.entryTemplate(feed.next++), encodeEntry({ kind: 'drop', id: path, atMs: this.now() }));
  }

  /** This attempt's writes to the feed of `collectionId`; the first one sets the signal. */
  private attemptFeed(context: DocTransaction, collectionId: number): AttemptFeed {
    const feeds = context.local(this.slot);
    let feed = feeds.get(collectionId);
    if (feed === undefined) {
      feed = { orders: new Map(), next: 0 };
      feeds.set(collectionId, feed);
      context.tr.setVersionstampedValue(this.keys(collectionId).signal, STAMP_VALUE);
    }
    return feed;
  }

  /** The id of the collection whose documents' keys start with `prefix`, if it is one of this layer's. */
  private collectionIdOf(prefix: Uint8Array): number | undefined {
    const start = this.documentsPrefix;
    if (prefix.length <= start.length || Buffer.compare(prefix.subarray(0, start.length), start) !== 0) return undefined;
    return decodeLeb128(prefix, start.length).value;
  }
}
