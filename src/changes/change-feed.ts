import { Buffer } from 'node:buffer';
import type { Database } from '../kv/contract/database';
import type { Transaction, Watch } from '../kv/contract/types';
import type { DocumentCollection } from '../document/collection/collection';
import type { Layout } from '../document/keys/layout';
import { getManifest, manifestUidKey } from '../document/manifest/manifest-store';
import type { JsonValue, TransactionOption } from '../document/types';
import type { ChangeEvent } from './change';
import { compactFeed, type CompactionReport } from './compaction';
import { ChangeFeedError } from './errors';
import { decodeEntry, formatToken, parseToken, type FeedKeys } from './feed-keys';
import { readFeedPage, type FeedPage } from './page';
import { FeedRecorder } from './recorder';
import { quietWatch, waitForChange } from './waiting';

/** Options of `collection.changes()`. */
export interface ChangesOptions {
  /** A token from an earlier change: start just after it. Absent: from the start of the feed. */
  since?: string;
  /** Stop after this many changes. */
  limit?: number;
  /** Deliver each upserted document's content as of the change (`doc`). */
  includeDocs?: boolean;
  /** Keep the iterator open at the end of the feed, woken by a watch when changes commit. */
  follow?: boolean;
  /** Ends a following iterator (it returns; no error). */
  signal?: AbortSignal;
  /** Entries read per transaction (default 100). */
  pageSize?: number;
}

/** Options of {@link ChangeConsumer.process}. */
export interface ProcessOptions {
  /** Changes per handler call, and per transaction (default 100). */
  batchSize?: number;
  includeDocs?: boolean;
  /** Keep processing as changes commit (woken by a watch) until `signal` aborts. */
  follow?: boolean;
  signal?: AbortSignal;
}

/** Options of compaction. */
export interface CompactChangesOptions {
  /** The time tombstones are judged at (ms since the epoch); default the layer's clock. */
  now?: number;
  /** How long removals stay in the feed (ms); default the layer's `changeRetentionMs`. */
  retentionMs?: number;
  /** Entries per transaction (default 500). */
  batchSize?: number;
}

/** A batch handler: runs in the transaction that advances the consumer's position. */
export type ChangeHandler<T = JsonValue> = (changes: readonly ChangeEvent<T>[], context: { readonly tr: Transaction }) => Promise<unknown> | void;

/** Three days: Couchbase's default metadata purge interval, for which it keeps deletes. */
export const DEFAULT_CHANGE_RETENTION_MS = 3 * 24 * 60 * 60 * 1000;
const DEFAULT_PAGE = 100;
const DEFAULT_COMPACTION_BATCH = 500;
const MAX_CONSUMER_NAME_BYTES = 1000;

/** Where a read of the feed goes, as one transaction sees the collection. */
interface FeedTarget {
  readonly feed: FeedKeys;
  /** The prefix of the collection's documents; `undefined` when the feed is a dropped collection's. */
  readonly prefix: Buffer | undefined;
}

/**
 * The change feed of one document layer (see docs/changes.md): its {@link FeedRecorder}, which the
 * composition root hands the document layer as an observer, and the reads, consumers and compaction
 * of every collection's feed.
 */
export class ChangeFeed {
  readonly recorder: FeedRecorder;

  constructor(
    private readonly kv: Database,
    private readonly layout: Layout,
    private readonly now: () => number,
    private readonly retentionMs: number = DEFAULT_CHANGE_RETENTION_MS,
  ) {
    if (!Number.isSafeInteger(retentionMs) || retentionMs < 0) {
      throw new ChangeFeedError('INVALID_ARGUMENT', `changeRetentionMs is a whole number of ms (0 or more), got ${String(retentionMs)}`);
    }
    this.recorder = new FeedRecorder(layout, now);
  }

  /** The changes of `collection`: see `Collection.changes`. */
  async *changes<T = JsonValue>(collection: DocumentCollection, options: ChangesOptions = {}): AsyncGenerator<ChangeEvent<T>, void, undefined> {
    const { since, limit, includeDocs, follow, signal, pageSize } = checkChangesOptions(options);
    let feedId = since?.collectionId;
    let after = since?.position;
    let delivered = 0;
    // The watch of the latest page, cancelled however the iteration ends (a `break` returns at a yield).
    let pending: Watch | undefined;
    try {
      for (;;) {
        if (signal?.aborted || delivered === limit) return;
        const want = limit === undefined ? pageSize : Math.min(pageSize, limit - delivered);
        const step = await this.kv.transact(async (tr) => {
          const target = await this.target(tr, collection, feedId);
          if (target === undefined) return { page: undefined, feedId: undefined, watch: follow ? this.manifestWatch(tr) : undefined };
          const page: FeedPage<T> = await readFeedPage(tr, target.feed, collection, target.prefix, after, want, includeDocs);
          const watch = follow && !page.full && !page.dropped ? quietWatch(tr.watch(target.feed.signal)) : undefined;
          return { page, feedId: target.feed.collectionId, watch };
        });
        pending = step.watch;
        feedId = step.feedId;
        if (step.page !== undefined) {
          for (const change of step.page.changes) {
            yield change;
            if (++delivered === limit) return;
          }
          after = step.page.last ?? after;
          if (step.page.dropped) return;
          if (step.page.full) continue;
        }
        if (step.watch === undefined) return;
        if (!(await waitForChange(step.watch, signal))) return;
      }
    } finally {
      pending?.cancel();
    }
  }

  /** A named consumer of `collection`'s feed: see `Collection.consumer`. */
  consumer<T = JsonValue>(collection: DocumentCollection, name: string): ChangeConsumer<T> {
    return new ChangeConsumer<T>(this, collection, checkedConsumerName(name));
  }

  /**
   * Compacts `collection`'s feed (see `compaction.ts`): superseded entries go, and tombstones older
   * than the retention.
   */
  async compact(collection: DocumentCollection, options: CompactChangesOptions = {}): Promise<CompactionReport> {
    const { now, retentionMs, batchSize } = this.compactionOptions(options);
    const target = await this.kv.transact((tr) => collection.collectionTarget(tr));
    if (target?.history !== true) return { superseded: 0, tombstonesDiscarded: 0 };
    return compactFeed(this.kv, this.recorder.keys(target.id), now, retentionMs, batchSize);
  }

  /** Compacts the feed of every collection with a feed (what the layer's sweeper runs). */
  async compactAll(options: CompactChangesOptions = {}): Promise<CompactionReport> {
    const { now, retentionMs, batchSize } = this.compactionOptions(options);
    const manifest = await this.kv.transact((tr) => getManifest(tr, this.layout.system));
    let superseded = 0;
    let tombstonesDiscarded = 0;
    for (const scope of manifest.scopes) {
      for (const collection of scope.collections) {
        if (collection.history !== true) continue;
        const report = await compactFeed(this.kv, this.recorder.keys(parseInt(collection.uid, 16)), now, retentionMs, batchSize);
        superseded += report.superseded;
        tombstonesDiscarded += report.tombstonesDiscarded;
      }
    }
    return { superseded, tombstonesDiscarded };
  }

  /** @internal The database, for consumers. */
  get database(): Database {
    return this.kv;
  }

  /**
   * @internal The feed a read continues in `tr`: the collection's, or (for a token of a collection
   * since dropped under this name) the dropped collection's, whose last entry is its drop.
   *
   * @throws ChangeFeedError WRONG_COLLECTION for a token of any other collection.
   */
  async target(tr: Transaction, collection: DocumentCollection, feedId: number | undefined): Promise<FeedTarget | undefined> {
    const current = await collection.collectionTarget(tr);
    if (feedId === undefined || current?.id === feedId) {
      if (current === undefined) return undefined;
      if (!current.history) {
        const path = `${collection.scope}.${collection.name}`;
        throw new ChangeFeedError(
          'CHANGES_DISABLED',
          `collection ${path} keeps no change feed: create it with history: true, or call setCollectionHistory('${path}', true)`,
        );
      }
      return { feed: this.recorder.keys(current.id), prefix: current.prefix };
    }
    const feed = this.recorder.keys(feedId);
    const [last] = await tr.snapshot().getRangeAll(feed.entries, feed.entriesEnd, { limit: 1, reverse: true });
    const path = `${collection.scope}.${collection.name}`;
    if (last !== undefined) {
      const value = decodeEntry(last.value);
      if (value.kind === 'drop' && value.id === path) return { feed, prefix: undefined };
    }
    throw new ChangeFeedError('WRONG_COLLECTION', `the token is of the feed of collection id ${feedId.toString(16)}, not of ${path}`);
  }

  /**
   * @internal A watch on the manifest's uid, for a reader of a collection that does not exist yet:
   * its creation changes the manifest.
   */
  manifestWatch(tr: Transaction): Watch {
    return quietWatch(tr.watch(manifestUidKey(this.layout.system)));
  }

  private compactionOptions(options: CompactChangesOptions): Required<CompactChangesOptions> {
    const now = options.now ?? this.now();
    const retentionMs = options.retentionMs ?? this.retentionMs;
    const batchSize = options.batchSize ?? DEFAULT_COMPACTION_BATCH;
    if (!Number.isSafeInteger(now)) throw new ChangeFeedError('INVALID_ARGUMENT', `now is whole ms since the epoch, got ${String(now)}`);
    if (!Number.isSafeInteger(retentionMs) || retentionMs < 0)
      throw new ChangeFeedError('INVALID_ARGUMENT', `retentionMs is a whole number of ms (0 or more), got ${String(retentionMs)}`);
    checkPositive(batchSize, 'batchSize');
    return { now, retentionMs, batchSize };
  }
}

/**
 * A named consumer of a collection's feed, with its position stored in the database
 * (`sys ('changes', c, 'p', name)`). {@link process} hands the handler each batch in the transaction
 * that advances the position, so a handler that writes its results to the same database (with
 * `{ tr }`) processes every change exactly once.
 */
export class ChangeConsumer<T = JsonValue> {
  /** @internal Use `collection.consumer(name)`. */
  constructor(
    private readonly feed: ChangeFeed,
    private readonly collection: DocumentCollection,
    readonly name: string,
  ) {}

  /**
   * Processes the changes after the stored position, `batchSize` per transaction: each transaction
   * reads the position (a read that conflicts with every other runner of this consumer), reads the
   * batch, runs `handler(batch, { tr })`, and stores the position of the batch's last entry; all of
   * it commits together or not at all. On a conflict or commit_unknown_result the transaction runs
   * again from the position then stored, so a batch whose commit went through is never handed over
   * again; the handler itself may run more than once for one batch (a retried attempt), so what it
   * does outside `tr` is at-least-once. Several processes may run the same consumer: their
   * transactions conflict on the position and each batch commits once.
   *
   * Without `follow`, returns once the feed is drained; with it, waits (by a watch) for new changes
   * until `signal` aborts. Also returns after delivering the collection's drop.
   *
   * @returns the number of changes handled by batches known to have committed (a batch whose commit
   *   reported commit_unknown_result but went through is not counted: the database is the record).
   * @throws ChangeFeedError INVALID_ARGUMENT for bad options, HISTORY_EXPIRED when the stored
   *   position is older than the retained history; the handler's errors (its batch is not committed).
   */
  async process(handler: ChangeHandler<T>, options: ProcessOptions = {}): Promise<number> {
    if (typeof handler !== 'function') throw new ChangeFeedError('INVALID_ARGUMENT', 'the handler is a function');
    const batchSize = options.batchSize ?? DEFAULT_PAGE;
    checkPositive(batchSize, 'batchSize');
    const includeDocs = checkBoolean(options.includeDocs, 'includeDocs');
    const follow = checkBoolean(options.follow, 'follow');
    const signal = checkSignal(options.signal);
    let feedId: number | undefined;
    let handled = 0;
    for (;;) {
      if (signal?.aborted) return handled;
      const step = await this.feed.database.transact(async (tr) => {
        const target = await this.feed.target(tr, this.collection, feedId);
        if (target === undefined) {
          return { count: 0, feedId: undefined, more: false, dropped: false, watch: follow ? this.feed.manifestWatch(tr) : undefined };
        }
        const key = target.feed.consumer(this.name);
        const stored = await tr.get(key);
        const page = await readFeedPage<T>(tr, target.feed, this.collection, target.prefix, stored, batchSize, includeDocs);
        if (page.changes.length > 0) await handler(page.changes, { tr });
        if (page.last !== undefined) tr.set(key, page.last);
        const watch = follow && !page.full && !page.dropped ? quietWatch(tr.watch(target.feed.signal)) : undefined;
        return { count: page.changes.length, feedId: target.feed.collectionId, more: page.full, dropped: page.dropped, watch };
      });
      handled += step.count;
      feedId = step.feedId;
      if (step.dropped) return handled;
      if (step.more) continue;
      if (step.watch === undefined) return handled;
      if (!(await waitForChange(step.watch, signal))) return handled;
    }
  }

  /** The token of the consumer's position, `undefined` before its first batch. One point read. */
  async position(opts: TransactionOption = {}): Promise<string | undefined> {
    return this.feed.database.transact(
      async (tr) => {
        const target = await this.collection.collectionTarget(tr);
        if (target === undefined) return undefined;
        const stored = await tr.get(this.feed.recorder.keys(target.id).consumer(this.name));
        return stored === undefined ? undefined : formatToken(target.id, stored);
      },
      { tr: opts.tr },
    );
  }

  /**
   * Moves the consumer to just after `since` (a token of this collection), or to the start of the
   * feed without one: after HISTORY_EXPIRED, resync and reset to a token of the feed's end. 1 key
   * written or cleared.
   *
   * @throws ChangeFeedError INVALID_TOKEN, WRONG_COLLECTION.
   */
  async reset(options: { since?: string } & TransactionOption = {}): Promise<void> {
    const since = options.since === undefined ? undefined : parseToken(options.since);
    await this.feed.database.transact(
      async (tr) => {
        const target = await this.collection.collectionTarget(tr);
        if (target === undefined) return;
        if (since !== undefined && since.collectionId !== target.id) {
          throw new ChangeFeedError(
            'WRONG_COLLECTION',
            `the token is of the feed of collection id ${since.collectionId.toString(16)}, not of ${this.collection.scope}.${this.collection.name}`,
          );
        }
        const key = this.feed.recorder.keys(target.id).consumer(this.name);
        if (since === undefined) tr.clear(key);
        else tr.set(key, since.position);
      },
      { tr: options.tr },
    );
  }
}

function checkChangesOptions(options: ChangesOptions) {
  if (typeof options !== 'object' || options === null) throw new ChangeFeedError('INVALID_ARGUMENT', 'the options are an object');
  const since = options.since === undefined ? undefined : parseToken(options.since);
  if (options.limit !== undefined) checkPositive(options.limit, 'limit');
  const pageSize = options.pageSize ?? DEFAULT_PAGE;
  checkPositive(pageSize, 'pageSize');
  return {
    since,
    limit: options.limit,
    includeDocs: checkBoolean(options.includeDocs, 'includeDocs'),
    follow: checkBoolean(options.follow, 'follow'),
    signal: checkSignal(options.signal),
    pageSize,
  };
}

function checkPositive(value: unknown, what: string): void {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw new ChangeFeedError('INVALID_ARGUMENT', `${what} is a positive integer, got ${String(value)}`);
  }
}

function checkBoolean(value: unknown, what: string): boolean {
  if (value !== undefined && typeof value !== 'boolean') throw new ChangeFeedError('INVALID_ARGUMENT', `${what} is a boolean, got ${typeof value}`);
  return value === true;
}

function checkSignal(signal: unknown): AbortSignal | undefined {
  if (signal !== undefined && !(signal instanceof AbortSignal)) throw new ChangeFeedError('INVALID_ARGUMENT', 'signal is an AbortSignal');
  return signal;
}

function checkedConsumerName(name: unknown): string {
  if (typeof name !== 'string')
    throw new ChangeFeedError('INVALID_ARGUMENT', `a consumer name is a string, got ${name === null ? 'null' : typeof name}`);
  const bytes = Buffer.byteLength(name, 'utf8');
  if (bytes === 0 || bytes > MAX_CONSUMER_NAME_BYTES) {
    throw new ChangeFeedError('INVALID_ARGUMENT', `a consumer name is 1 to ${MAX_CONSUMER_NAME_BYTES} bytes, got ${bytes}`);
  }
  return name;
}
