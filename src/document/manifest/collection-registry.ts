import { addReadConflictRangeHandedOver } from '../../kv/client/hand-over';
import { keyAfter } from '../../kv/contract/bytes';
import type { Database } from '../../kv/contract/database';
import type { Transaction, Watch } from '../../kv/contract/types';
import { DocTransaction } from '../doc-transaction';
import { isDocumentError } from '../errors';
import type { Layout } from '../keys/layout';
import { resolveCollection, type CollectionPath, type Manifest, type ResolvedCollection } from './manifest';
import { StagedTransaction } from '../../kv/client/staged-transaction';
import { getManifest, manifestUidKey, planCollection, readManifestUid, wroteManifest } from './manifest-store';

/**
 * Collection paths to ids through the collections manifest (`manifest-store.ts`), with one cached
 * copy of the manifest per document layer, so that an operation on a known collection reads nothing
 * to find it.
 *
 * The copy is kept current by a watch on the manifest's uid key, set in the transaction that read the
 * copy: any later update, by any process, fires it and the copy is dropped (the next operation reads
 * the manifest again and sets a new watch). Every transaction that relies on the copy also puts a read
 * conflict on the uid key (no read): an update committed after the transaction's read version makes it
 * fail with not_committed, and its retry checks the uid (one point read) before trusting the copy
 * again, since the watch may not have fired yet. A retry is an attempt after the first of its
 * transaction object (`Transaction.attempt`: `Database.transact` and `onError` reuse the object).
 *
 * What remains is an update committed before the transaction's read version whose watch has not fired
 * yet (microseconds in the memory engine; up to its 20 ms poll for another process on lmdb; FDB's
 * watch latency). In that window an operation may use the id of a collection just dropped:
 * - a read finds nothing (ids are never reused, and the drop cleared the collection's keys), though
 *   a collection re-created under the same name has a new id and its documents are not seen;
 * - a write lands under the dropped id, unreachable (to every process but the stale one, until its
 *   watch fires). `DocLayer.purgeDropped()` (also run by the sweeper) clears every dropped
 *   collection's keys again, which removes such leftovers.
 * A caller that retries with a new transaction object instead of `onError` or `reset` gets no uid
 * check: its retry is in the same window. A collection missing from the copy is never trusted to be missing: the operation reads the stored
 * manifest in its own transaction (one range read), so collections created by other processes are
 * found at once.
 */

/** A collection as an operation uses it. */
export interface CollectionTarget {
  readonly id: number;
  /** `<prefix> 0x01 <leb128(id)>`: the prefix of every key of its documents. */
  readonly prefix: Buffer;
  /** Seconds; caps the expiry of documents written to it. */
  readonly maxTTL?: number;
  /** Present when the collection keeps a change feed: writes to it are told to the layer's observers. */
  readonly history?: true;
}

/** A collection for a write: with `create` when it does not exist yet. */
export interface WriteTarget extends CollectionTarget {
  /** Adds the collection to the manifest in the write's transaction; run it once the write goes ahead. */
  readonly create?: () => void;
}

export class CollectionRegistry {
  private cached: Manifest | undefined;
  private watch: Watch | undefined;
  private loading: Promise<Manifest> | undefined;
  /** Bumped by every invalidation: a load that started before one is not kept. */
  private generation = 0;
  private closed = false;
  /** The last lookup of each path object (collections keep theirs): a known collection costs no map lookup. */
  private readonly lookups = new WeakMap<CollectionPath, { manifest: Manifest; target: CollectionTarget | undefined }>();
  private readonly uidKey: Buffer;
  /** `uidKey + 0x00`: the end of its point conflict, made once (every write's attempt records it). */
  private readonly uidEnd: Buffer;

  constructor(
    private readonly kv: Database,
    private readonly layout: Layout,
  ) {
    this.uidKey = manifestUidKey(layout.system);
    this.uidEnd = keyAfter(this.uidKey);
  }

  /**
   * The collection for a read in `tr`, `undefined` when it does not exist. Reads nothing when the
   * cached manifest knows it (after the first load, a range read and a watch in a transaction of its
   * own); otherwise one range read of the stored manifest in `tr`.
   *
   * @throws ManifestLookupError UNKNOWN_SCOPE / UNKNOWN_COLLECTION instead of `undefined` when `strict`.
   */
  forRead(tr: Transaction, path: CollectionPath, strict: boolean): Promise<CollectionTarget | undefined> {
    try {
      return promised(this.readTarget(tr, path, strict));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /**
   * What {@link forRead} resolves to, without a promise when the cached manifest answers at once
   * (`cachedLookup`: the same read conflict on the uid); otherwise forRead's promise. What forRead
   * rejects with is thrown here when it is found without waiting.
   */
  readTarget(tr: Transaction, path: CollectionPath, strict: boolean): CollectionTarget | Promise<CollectionTarget | undefined> {
    return this.cachedLookup(tr, path, false) ?? this.readForRead(tr, path, strict);
  }

  /** {@link forRead} when the cached manifest cannot answer at once: it may read the stored one. */
  private async readForRead(tr: Transaction, path: CollectionPath, strict: boolean): Promise<CollectionTarget | undefined> {
    const { manifest, stored } = await this.manifestFor(tr);
    const found = this.lookup(manifest, path);
    if (found !== undefined || stored) return found ?? this.missing(manifest, path, strict);
    const current = await this.storedManifest(tr, manifest);
    return this.lookup(current, path) ?? this.missing(current, path, strict);
  }

  /**
   * The collection for a write in `tr`. A missing one is planned (its id chosen from the stored
   * manifest, read in `tr`) and `create` adds it; the cached manifest is dropped once `tr` commits.
   *
   * @throws ManifestLookupError UNKNOWN_SCOPE / UNKNOWN_COLLECTION when missing and `autoCreate` is
   *   false or the name is one that is never created (a system name, a dropped `_default`);
   *   DocumentError OUT_OF_RANGE when ids run out.
   */
  forWrite(tr: Transaction, path: CollectionPath, autoCreate: boolean): Promise<WriteTarget> {
    try {
      return promised(this.writeTarget(tr, path, autoCreate));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /**
   * What {@link forWrite} resolves to, without a promise when the cached manifest answers at once
   * (`cachedLookup`: the same read conflict on the uid), as it does for every write to a known
   * collection on a first attempt; otherwise forWrite's promise. What forWrite rejects with is thrown
   * here when it is found without waiting.
   *
   * `readsAtOnce`: the caller issues a read in `tr` before it yields (no await in between), as every
   * structure write does (its kind key): that read takes the read version the uid conflict needs, so
   * a lookup answered at once takes none of its own (no promise; see {@link takeUidConflict}).
   */
  writeTarget(tr: Transaction, path: CollectionPath, autoCreate: boolean, readsAtOnce = false): WriteTarget | Promise<WriteTarget> {
    return this.cachedLookup(tr, path, readsAtOnce) ?? this.readForWrite(tr, path, autoCreate);
  }

  /** {@link forWrite} when the cached manifest cannot answer at once: it may read and plan. */
  private async readForWrite(tr: Transaction, path: CollectionPath, autoCreate: boolean): Promise<WriteTarget> {
    const { manifest, stored } = await this.manifestFor(tr);
    const found = this.lookup(manifest, path);
    if (found !== undefined) return found;
    const planned = await planCollection(tr, this.layout.system, path, { autoCreate });
    const target = this.targetOf(planned);
    if (!planned.created) {
      if (!stored) this.invalidate();
      return target;
    }
    const create = planned.create as () => void;
    return {
      ...target,
      create: () => {
        create();
        this.invalidateOnCommit(tr);
      },
    };
  }

  /**
   * The collection at `path` in the cached manifest, without a transaction: what a write there will
   * most likely find (it finds the collection in its transaction, as {@link forWrite} says), so that
   * it can prepare its keys before it starts. `undefined` when none is cached.
   */
  cachedTarget(path: CollectionPath): CollectionTarget | undefined {
    return this.cached === undefined ? undefined : this.lookup(this.cached, path);
  }

  /** Drops the cached manifest once `tr`, which wrote a manifest update, commits. */
  invalidateOnCommit(tr: Transaction): void {
    tr.getVersionstamp().then(
      () => this.invalidate(),
      () => undefined,
    );
  }

  /** Drops the cached manifest and its watch: the next operation loads it again. */
  invalidate(): void {
    this.generation++;
    this.cached = undefined;
    const watch = this.watch;
    this.watch = undefined;
    watch?.cancel();
  }

  /** Cancels the watch; later operations read the stored manifest each time. */
  close(): void {
    this.closed = true;
    this.invalidate();
  }

  /**
   * The manifest an operation in `tr` uses: `tr`'s own after it wrote one, else the cached copy
   * (loaded first if need be), checked against the stored uid (one point read per attempt) when `tr`
   * is on a retry. Puts a read conflict on the uid key.
   */
  private async manifestFor(tr: Transaction): Promise<{ manifest: Manifest; stored: boolean }> {
    if (wroteManifest(tr)) return { manifest: await getManifest(tr, this.layout.system), stored: true };
    const context = this.takeUidConflict(tr);
    const cached = this.cached ?? (await this.load());
    if (tr.attempt === 0) return { manifest: cached, stored: false };
    const retried = context ?? DocTransaction.of(tr);
    // A retry, perhaps because the manifest changed after the last attempt's read version: the watch
    // may not have said so yet.
    retried.manifestUid ??= readManifestUid(tr, this.layout.system);
    const uid = (await retried.manifestUid) ?? '0';
    if (uid === cached.uid) return { manifest: cached, stored: false };
    return { manifest: await this.storedManifest(tr, cached), stored: true };
  }

  /**
   * What {@link manifestFor} would find for `path` without reading or waiting: on `tr`'s first
   * attempt, with no manifest written by it, the cached manifest's collection (the read conflict on the
   * uid taken as manifestFor takes it). `undefined` when that does not apply or the cached manifest
   * does not have the collection: then ask manifestFor. Every structure write and most document
   * operations on a known collection take this path, without the promises of the one that reads.
   * `readsAtOnce` as {@link writeTarget} says.
   */
  private cachedLookup(tr: Transaction, path: CollectionPath, readsAtOnce: boolean): CollectionTarget | undefined {
    const cached = this.cached;
    if (cached === undefined || tr.attempt !== 0 || wroteManifest(tr)) return undefined;
    this.takeUidConflict(tr, readsAtOnce);
    return this.lookup(cached, path);
  }

  /**
   * Puts the read conflict on the uid key that every use of the cached manifest relies on: once per
   * attempt that has a context (the calls of a combined batch share theirs), whose context it
   * returns; every time on a stage, whose conflict ranges its parent gets only if it is applied.
   *
   * The conflict only covers updates after the read version, so the read version must be taken now,
   * not at commit (where a blind write would take a later one and land under the id of a collection
   * dropped in between): this takes it (`getReadVersion`, not awaited; a failure shows in the
   * operation's own reads) unless `callerReads`, when the caller's own read, issued before it yields,
   * takes it at the same moment.
   */
  private takeUidConflict(tr: Transaction, callerReads = false): DocTransaction | undefined {
    const context = tr instanceof StagedTransaction ? undefined : DocTransaction.existing(tr);
    if (context?.manifestConflict !== true) {
      // addReadConflictKey's range, without a copy of the key per attempt.
      addReadConflictRangeHandedOver(tr, this.uidKey, this.uidEnd);
      if (!callerReads) tr.getReadVersion().catch(ignore);
      if (context !== undefined) context.manifestConflict = true;
    }
    return context;
  }

  /** The stored manifest as `tr` sees it; drops the cached copy when it is older. */
  private async storedManifest(tr: Transaction, cached: Manifest): Promise<Manifest> {
    const manifest = await getManifest(tr, this.layout.system);
    if (manifest.uid !== cached.uid && !wroteManifest(tr) && this.cached === cached) this.invalidate();
    return manifest;
  }

  /** Loads the manifest and watches its uid, in one transaction (shared by concurrent callers). */
  private load(): Promise<Manifest> {
    if (this.loading === undefined) {
      const loading = this.fetch();
      this.loading = loading;
      const done = () => {
        if (this.loading === loading) this.loading = undefined;
      };
      loading.then(done, done);
    }
    return this.loading;
  }

  private async fetch(): Promise<Manifest> {
    const generation = this.generation;
    const watches: Watch[] = [];
    const manifest = await this.kv.transact(async (tr) => {
      const read = await getManifest(tr, this.layout.system);
      const watch = tr.watch(this.uidKey);
      // A failed attempt rejects its watch; only the committed attempt's is kept.
      watch.promise.catch(() => undefined);
      watches.push(watch);
      return read;
    });
    const watch = watches[watches.length - 1];
    if (this.closed || generation !== this.generation) {
      watch.cancel();
      return manifest;
    }
    this.cached = manifest;
    this.watch = watch;
    const expire = () => {
      if (this.watch === watch) this.invalidate();
    };
    watch.promise.then(expire, expire);
    return manifest;
  }

  /** The collection at `path` in `manifest`, `undefined` when missing. */
  private lookup(manifest: Manifest, path: CollectionPath): CollectionTarget | undefined {
    const last = this.lookups.get(path);
    if (last?.manifest === manifest) return last.target;
    let target: CollectionTarget | undefined;
    try {
      target = this.targetOf(resolveCollection(manifest, path));
    } catch (err) {
      if (!isDocumentError(err, 'UNKNOWN_COLLECTION') && !isDocumentError(err, 'UNKNOWN_SCOPE')) throw err;
    }
    this.lookups.set(path, { manifest, target });
    return target;
  }

  private targetOf(resolved: ResolvedCollection): CollectionTarget {
    const prefix = this.layout.collectionPrefix(resolved.collectionId);
    const target: { id: number; prefix: Buffer; maxTTL?: number; history?: true } = { id: resolved.collectionId, prefix };
    if (resolved.maxTTL !== undefined) target.maxTTL = resolved.maxTTL;
    if (resolved.history) target.history = true;
    return target;
  }

  /** `undefined`, or with `strict` the lookup error (with the uid of the manifest judged against). */
  private missing(manifest: Manifest, path: CollectionPath, strict: boolean): undefined {
    if (strict) resolveCollection(manifest, path);
    return undefined;
  }
}

/** `answer` as a promise: itself when it is one. */
function promised<T>(answer: T | Promise<T>): Promise<T> {
  return answer instanceof Promise ? answer : Promise.resolve(answer);
}

function ignore(): undefined {
  return undefined;
}
