import { keyAfter } from '../../kv/contract/bytes';
import type { Database } from '../../kv/contract/database';
import type { KeyValue, ReadTransaction, Transaction } from '../../kv/contract/types';
import { pack, unpack, type Subspace, type TupleItem } from '../../tuple';
import { DocTransaction, type ChangeObserver } from '../doc-transaction';
import { corruptData, DocumentError } from '../errors';
import { DocumentKeys, META_EXPIRY, META_LOCK, metaNameOf, type Layout } from '../keys/layout';
import { getManifest } from '../manifest/manifest-store';
import { decodeLock } from './lock';
import type { Expiry, ExpiryOptions } from '../types';
import type { IndexPort } from '../index-port';
import { removeIndexEntries } from './index-writes';

/**
 * Document expiry (Couchbase's TTL): when a document stops existing.
 *
 * ```
 * <docPrefix> 0x00 'x'                          tuple(expiresAt): the document's expiry
 * sys ('expiry', expiresAt, collectionId, id)   empty: the expiry index, in time order
 * ```
 *
 * `expiresAt` is milliseconds since the Unix epoch (Couchbase counts seconds; milliseconds let a
 * `Date` round-trip and tests run in less than a second). A document whose expiry is at or before now
 * reads as missing at once, whatever the sweeper has done; {@link ExpiryIndex.purge} removes expired
 * documents for good, through the index.
 *
 * The index is a superset: every expiry a document has was indexed by the write that set it, in the
 * same transaction. Writes that change or clear an expiry remove the old entry when they read the
 * old expiry anyway (replace, remove, mutateIn); upsert reads nothing, so the old entry stays until
 * the purge reaches it, re-reads the document's expiry and drops the entry alone.
 */

/** The greatest time a `Date` holds. */
const MAX_TIME = 8.64e15;

/**
 * The absolute expiry (ms) an `expiry` option asks for at `now`, `undefined` for none.
 *
 * @throws DocumentError INVALID_ARGUMENT for a negative or non-finite number, an invalid Date, a Date
 *   at or before the Unix epoch, or a time beyond what a Date holds.
 */
export function requestedExpiry(expiry: Expiry | undefined, now: number): number | undefined {
  if (expiry === undefined) return undefined;
  let at: number;
  if (expiry instanceof Date) {
    at = expiry.getTime();
    if (!(at > 0)) throw new DocumentError('INVALID_ARGUMENT', `an expiry Date is a valid time after the Unix epoch, got ${String(expiry)}`);
  } else {
    if (typeof expiry !== 'number' || !Number.isFinite(expiry) || expiry < 0) {
      const got = typeof expiry === 'number' ? String(expiry) : typeof expiry;
      throw new DocumentError('INVALID_ARGUMENT', `expiry is a number of seconds (0 or more) or a Date, got ${got}`);
    }
    if (expiry === 0) return undefined;
    at = now + Math.ceil(expiry * 1000);
  }
  if (at > MAX_TIME) throw new DocumentError('INVALID_ARGUMENT', 'expiry is beyond the greatest time a Date holds');
  return at;
}

/**
 * The expiry of a document written to a collection with `maxTTL`, as Couchbase applies it: with no
 * cap (0 or absent) the expiry is unchanged; otherwise a document without one (`undefined` or 0)
 * expires `maxTTL` from `now`, and a later expiry is brought down to that. The three numbers are in
 * one unit: Couchbase's seconds, or the milliseconds {@link effectiveExpiry} passes.
 *
 * @param expiry absolute expiry since the Unix epoch; 0 or `undefined` for none
 * @param now the current time since the Unix epoch
 */
export function capExpiry(maxTTL: number | undefined, expiry: number | undefined, now: number): number | undefined {
  if (!maxTTL) return expiry;
  const limit = now + maxTTL;
  return expiry === undefined || expiry === 0 || expiry > limit ? limit : expiry;
}

/** The expiry a write gives a document: the one asked for, capped by its collection's maxTTL (seconds). */
export function effectiveExpiry(maxTTL: number | undefined, requested: number | undefined, now: number): number | undefined {
  return capExpiry(maxTTL === undefined ? undefined : maxTTL * 1000, requested, now);
}

/** What the write options say about expiry, checked. */
export interface ExpiryChoice {
  /** The expiry asked for (ms), `undefined` for none. */
  readonly requested: number | undefined;
  /** Keep the document's current expiry (`expiry` absent). */
  readonly preserve: boolean;
}

/**
 * Reads `{ expiry, preserveExpiry }` at `now`.
 *
 * @throws DocumentError INVALID_ARGUMENT for an invalid expiry, or both options at once.
 */
export function expiryChoice(opts: ExpiryOptions, now: number): ExpiryChoice {
  if (opts.preserveExpiry === true && opts.expiry !== undefined) {
    throw new DocumentError('INVALID_ARGUMENT', 'expiry and preserveExpiry exclude each other');
  }
  return { requested: requestedExpiry(opts.expiry, now), preserve: opts.preserveExpiry === true };
}

export function encodeExpiry(expiresAt: number): Buffer {
  return pack([expiresAt]);
}

/** @throws DocumentError CORRUPT_DATA when the stored expiry is not an integer. */
export function decodeExpiry(value: Uint8Array): number {
  const [at] = unpack(value);
  if (typeof at !== 'number') throw corruptData('document metadata: the expiry is not an integer');
  return at;
}

/** True when a document with this expiry no longer exists at `now`. */
export function isExpired(expiresAt: number | undefined, now: number): boolean {
  return expiresAt !== undefined && expiresAt <= now;
}

/** The document's expiry key: `<docPrefix> 0x00 'x'`. */
export function expiryKey(keys: DocumentKeys): Buffer {
  return keys.meta(META_EXPIRY);
}

/** The document's expiry, `undefined` for none. One point read. */
export async function readExpiry(tr: ReadTransaction, keys: DocumentKeys): Promise<number | undefined> {
  const value = await tr.get(expiryKey(keys));
  return value === undefined ? undefined : decodeExpiry(value);
}

/** Whether a document's root entry exists, its expiry, and when its lock ends. */
export interface Presence {
  readonly exists: boolean;
  readonly expiresAt: number | undefined;
  readonly lockedUntil: number | undefined;
}

/**
 * Whether the document's root entry exists, its expiry and its lock: one range read from the expiry
 * key to the root entry (only the lock key, 'y', sorts between them), so a check of existence costs
 * what a point read of the root did. The version key is outside the range, so this read does not
 * conflict with writes of other fields.
 */
export async function readPresence(tr: ReadTransaction, keys: DocumentKeys): Promise<Presence> {
  const pairs: KeyValue[] = await tr.getRangeAll(expiryKey(keys), keyAfter(keys.root));
  let expiresAt: number | undefined;
  let lockedUntil: number | undefined;
  let exists = false;
  for (const { key, value } of pairs) {
    if (key.equals(keys.root)) exists = true;
    else {
      const name = metaNameOf(key, keys.prefix.length);
      if (name === META_EXPIRY) expiresAt = decodeExpiry(value);
      else if (name === META_LOCK) lockedUntil = decodeLock(value);
    }
  }
  return { exists, expiresAt, lockedUntil };
}

/** What {@link ExpiryIndex.purge} takes. */
export interface PurgeExpiredOptions {
  /** The time to purge up to (inclusive): ms since the epoch or a Date. Default: the layer's clock. */
  now?: number | Date;
  /** Index entries handled per transaction (default 500). */
  batchSize?: number;
}

const DEFAULT_BATCH = 500;

/** The expiry index of one document layer, in its system subspace. */
export class ExpiryIndex {
  private readonly sys: Subspace;

  constructor(
    private readonly layout: Layout,
    /** Told of the documents the purge deletes, in its transactions. */
    private readonly observers: readonly ChangeObserver[] = [],
    /** The secondary indexes whose entries a purged document loses. */
    private readonly indexes?: IndexPort,
  ) {
    this.sys = layout.system;
  }

  /** `sys ('expiry', expiresAt, collectionId, id)`. */
  entry(expiresAt: number, collectionId: number, id: TupleItem): Buffer {
    return this.sys.pack(['expiry', expiresAt, collectionId, id]);
  }

  /**
   * Checks, before a write begins, that the index entry of `expiresAt` fits the engine's key limit: it
   * is longer than the document's own keys (it holds the id after the time and the collection), so a
   * document id near the limit may have no expiry.
   *
   * @throws DocumentError KEY_TOO_LARGE.
   */
  assertFits(expiresAt: number, collectionId: number, id: TupleItem, maxKeyBytes: number): void {
    const length = this.entry(expiresAt, collectionId, id).length;
    if (length > maxKeyBytes) {
      throw new DocumentError(
        'KEY_TOO_LARGE',
        `the document id makes its expiry index key ${length} bytes, over the engine's limit of ${maxKeyBytes}: a shorter id can have an expiry`,
      );
    }
  }

  /** Gives a document an expiry: its expiry key and its index entry (2 keys written). */
  set(tr: Transaction, keys: DocumentKeys, collectionId: number, id: TupleItem, expiresAt: number): void {
    tr.set(expiryKey(keys), encodeExpiry(expiresAt));
    tr.set(this.entry(expiresAt, collectionId, id), '');
  }

  /** Removes the index entry of an expiry the document no longer has (1 key cleared). */
  forget(tr: Transaction, collectionId: number, id: TupleItem, expiresAt: number): void {
    tr.clear(this.entry(expiresAt, collectionId, id));
  }

  /**
   * Writes the expiry a write leaves the document with, given the one it had (`before`, when the
   * write knows it): sets the new one, clears the expiry key when there is none (the key may be there
   * even when `before` is unknown), and drops the old index entry when known.
   */
  replace(tr: Transaction, keys: DocumentKeys, collectionId: number, id: TupleItem, before: number | undefined, after: number | undefined): void {
    if (before === after) return;
    if (before !== undefined) this.forget(tr, collectionId, id, before);
    if (after === undefined) tr.clear(expiryKey(keys));
    else this.set(tr, keys, collectionId, id, after);
  }

  /**
   * The ids of the collections with a change feed, as `tr` sees the manifest (1 range read), when
   * anyone observes them; otherwise none and no read.
   */
  private async historyOf(tr: Transaction): Promise<ReadonlySet<number>> {
    if (this.observers.length === 0) return new Set();
    const manifest = await getManifest(tr, this.sys);
    return new Set(manifest.scopes.flatMap((scope) => scope.collections.filter((c) => c.history === true).map((c) => parseInt(c.uid, 16))));
  }

  /**
   * Deletes every document whose expiry is at or before `now`, through the index: each transaction
   * takes up to `batchSize` entries due (a snapshot range read), reads each entry's document's expiry
   * (point reads, issued together, which conflict with any concurrent rewrite of it), deletes the
   * documents still expired (a range clear each) and clears the entries. An entry whose document was
   * rewritten, removed or dropped with its collection is cleared alone. Each transaction stays far
   * below FDB's limits: per entry about 3 keys of conflict ranges and 2 mutations.
   *
   * @returns the number of documents deleted.
   * @throws DocumentError INVALID_ARGUMENT for a bad `batchSize` or `now`.
   */
  async purge(kv: Database, now: number, batchSize = DEFAULT_BATCH): Promise<number> {
    if (!Number.isSafeInteger(batchSize) || batchSize < 1) {
      throw new DocumentError('INVALID_ARGUMENT', `batchSize is a positive integer, got ${String(batchSize)}`);
    }
    const begin = this.sys.range(['expiry']).begin;
    const end = this.sys.pack(['expiry', now + 1]);
    let purged = 0;
    for (;;) {
      const batch = await kv.transact(async (tr) => {
        DocTransaction.of(tr).observe(this.observers);
        const entries = await tr.snapshot().getRangeAll(begin, end, { limit: batchSize });
        const collectionIds: number[] = [];
        const docs = entries.map((entry) => {
          const [, , collectionId, id] = this.sys.unpack(entry.key) as [string, number, number, TupleItem];
          collectionIds.push(collectionId);
          return new DocumentKeys(this.layout.collectionPrefix(collectionId), id);
        });
        const [expiries, history] = await Promise.all([Promise.all(docs.map((keys) => readExpiry(tr, keys))), this.historyOf(tr)]);
        // The purged documents' index entries go with them (reads only for collections with indexes).
        await Promise.all(
          docs.map((keys, i) => (isExpired(expiries[i], now) ? removeIndexEntries(this.indexes, tr, collectionIds[i], keys) : Promise.resolve())),
        );
        let deleted = 0;
        entries.forEach((entry, i) => {
          tr.clear(entry.key);
          if (isExpired(expiries[i], now)) {
            tr.clearRange(docs[i].begin, docs[i].end);
            if (history.has(collectionIds[i])) DocTransaction.of(tr).observe(this.observers, docs[i].collectionPrefix);
            DocTransaction.of(tr).documentRemoved(docs[i], 'expire');
            deleted++;
          }
        });
        return { deleted, full: entries.length === batchSize };
      });
      purged += batch.deleted;
      if (!batch.full) return purged;
    }
  }
}

/** The time `purge` takes, checked. */
export function purgeTime(now: number | Date | undefined, clock: () => number): number {
  const at = now === undefined ? clock() : now instanceof Date ? now.getTime() : now;
  if (typeof at !== 'number' || !Number.isSafeInteger(at)) {
    throw new DocumentError('INVALID_ARGUMENT', `now is a Date or integer milliseconds since the epoch, got ${String(now)}`);
  }
  return at;
}

/**
 * Runs `sweep` every `intervalMs` (each run starts `intervalMs` after the previous one ended), until
 * stopped. The timer does not keep the process alive. A failed run is reported to `onError` and the
 * next one runs as planned.
 */
export class Sweeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly sweep: () => Promise<unknown>,
    private readonly intervalMs: number,
    private readonly onError: (err: unknown) => void,
  ) {
    if (!Number.isFinite(intervalMs) || intervalMs <= 0) {
      throw new DocumentError('INVALID_ARGUMENT', `the sweep interval is a positive number of ms, got ${String(intervalMs)}`);
    }
    this.schedule();
  }

  /** Stops the timer and waits for a run in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private schedule(): void {
    this.timer = setTimeout(() => {
      // One chain: `stop()` awaits the whole run, and a throwing `onError` rejects the promise `stop()` awaits
      // rather than a detached one.
      this.running = this.sweep()
        .then(
          () => undefined,
          (err) => this.onError(err),
        )
        .finally(() => {
          this.running = undefined;
          if (!this.stopped) this.schedule();
        });
    }, this.intervalMs);
    this.timer.unref();
  }
}
