import { Buffer } from 'node:buffer';
import { strinc } from '../../kv/contract/bytes';
import type { ReadTransaction, Transaction } from '../../kv/contract/types';
import type { Subspace } from '../../tuple';
import { DocTransaction, type CollectionEvent } from '../doc-transaction';
import { corruptData, DocumentError, isDocumentError } from '../errors';
import { joinChunks, splitBytes } from '../values/chunks';
import {
  addCollection,
  compareUids,
  defaultManifest,
  diffManifests,
  isUserName,
  parseCollectionPath,
  parseManifest,
  resolveCollection,
  resolveScope,
  validateManifestUpdate,
  type CollectionPath,
  type Manifest,
  type ManifestDiff,
  type ResolvedCollection,
  type ResolvedScope,
  type UsedIds,
} from './manifest';

/**
 * The collections manifest in the database, under a system subspace `sys` (the document layer's
 * `<prefix> 0x00`):
 *
 * ```
 * sys ('manifest', i)              the manifest's JSON in chunks of 10,000 bytes, i = 0, 1, ...
 * sys ('manifest-uid')             its uid, ASCII base 16: one point read tells a cache if it is current
 * sys ('dropped-collection', id)   empty: collection id `id` was dropped and is never reused
 * sys ('dropped-scope', id)        empty: likewise for a scope id
 * ```
 *
 * Chunked JSON rather than a key per collection: the manifest is only ever used whole (to cache it, to
 * check an update against it, to return it), every update writes a new uid, so updates conflict with
 * each other whatever the layout, and a cache checks one key. Chunks keep a manifest of thousands of
 * collections under the 100,000-byte value limit and each value at FDB's recommended size.
 *
 * Nothing is stored until the first update: until then the manifest is {@link defaultManifest}.
 * Every update reads the stored manifest (adding read conflicts on it) and writes the uid key, so of
 * two concurrent updates one commits and the other fails with `not_committed` (1020); a retry loop
 * (`Database.transact`) runs it again on top of the winner's manifest. A process that caches the
 * manifest watches the uid key to learn of updates, and puts a read conflict on it in every
 * transaction that relies on its copy (see `collection-registry.ts`).
 */

const CHUNK_BYTES = 10_000;

/** The tuples of the manifest's keys inside `sys`. */
export const manifestKeys = {
  chunks: ['manifest'] as const,
  chunk: (index: number) => ['manifest', index] as const,
  uid: ['manifest-uid'] as const,
  droppedCollections: ['dropped-collection'] as const,
  droppedCollection: (id: number) => ['dropped-collection', id] as const,
  droppedScopes: ['dropped-scope'] as const,
  droppedScope: (id: number) => ['dropped-scope', id] as const,
};

/** What {@link writeManifest} did. */
export interface ManifestChange extends ManifestDiff {
  /** The manifest now stored (normalised). */
  readonly manifest: Manifest;
  /** False for a no-op: `next` repeated the current manifest, and nothing was written. */
  readonly changed: boolean;
}

export interface WriteManifestOptions {
  /**
   * The key prefix of a collection's documents (`Layout.collectionPrefix`), or every prefix it owns
   * (`Layout.collectionPrefixes`: its indexes too). When given, the keys of every dropped collection
   * are cleared in the same transaction. Without it they stay, unreachable
   * (their id is never reused), for the caller to clear.
   */
  collectionPrefix?: (collectionId: number) => Uint8Array | readonly Uint8Array[];
}

export interface EnsureCollectionOptions {
  /** Create the collection (and its scope) when missing; default `true`. */
  autoCreate?: boolean;
  /** The maxTTL of a collection created by this call; an existing collection keeps its own. */
  maxTTL?: number;
  /**
   * The current manifest when the caller has it (a cache it keeps current, as the document layer's
   * collection registry does), to skip reading it; otherwise it is read.
   */
  manifest?: Manifest;
}

/** A manifest update whose reads and checks are done, to apply in the transaction it was prepared in. */
export interface PreparedManifestWrite {
  readonly change: ManifestChange;
  /**
   * Writes the update (nothing for a no-op). Synchronous, so a caller can decide at the last moment.
   *
   * @throws DocumentError INVALID_ARGUMENT when another update was written in the same transaction
   *   since this one was prepared (two updates prepared concurrently in one transaction: the second
   *   would silently undo the first, so it fails instead).
   */
  apply(): void;
}

/** A collection found or planned for a write (see {@link planCollection}). */
export interface PlannedCollection extends ResolvedCollection {
  /** True when the collection does not exist yet: `create` adds it. */
  readonly created: boolean;
  /** Adds the collection (a prepared manifest update); absent when it exists. */
  readonly create?: () => void;
}

/**
 * True when this attempt of `tr` wrote a manifest: its reads of the manifest are its own, not
 * committed, so no cache may keep them.
 */
export function wroteManifest(tr: Transaction): boolean {
  return (DocTransaction.existing(tr)?.manifestWrites ?? 0) > 0;
}

/** The key of the stored uid, for `tr.watch` by caches that want to learn of updates early. */
export function manifestUidKey(sys: Subspace): Buffer {
  return sys.pack(manifestKeys.uid);
}

/** The stored manifest's uid, `undefined` when none was set. Reads 1 key. */
export async function readManifestUid(tr: ReadTransaction, sys: Subspace): Promise<string | undefined> {
  const value = await tr.get(manifestUidKey(sys));
  return value === undefined ? undefined : value.toString('ascii');
}

/**
 * The stored manifest, `undefined` when none was set. One range read (its chunks).
 *
 * @throws DocumentError CORRUPT_DATA when the stored bytes are not a valid manifest.
 */
export async function readManifest(tr: ReadTransaction, sys: Subspace): Promise<Manifest | undefined> {
  const { begin, end } = sys.range(manifestKeys.chunks);
  const chunks = await tr.getRangeAll(begin, end);
  if (chunks.length === 0) return undefined;
  try {
    return parseManifest(joinChunks(chunks.map((kv) => kv.value)).toString('utf8'));
  } catch (err) {
    throw corruptData('collections manifest', err);
  }
}

/**
 * The current manifest: the stored one, or {@link defaultManifest} (uid 0, only `_default._default`)
 * before any was set, because that collection is usable from the start. One range read.
 */
export async function getManifest(tr: ReadTransaction, sys: Subspace): Promise<Manifest> {
  return (await readManifest(tr, sys)) ?? defaultManifest();
}

/** The greatest dropped ids, for {@link addCollection}. Two limit-1 range reads. */
export async function readUsedIds(tr: ReadTransaction, sys: Subspace): Promise<UsedIds> {
  const last = async (tuple: readonly string[]) => {
    const { begin, end } = sys.range(tuple);
    const [kv] = await tr.getRangeAll(begin, end, { limit: 1, reverse: true });
    return kv === undefined ? undefined : (sys.unpack(kv.key)[1] as number);
  };
  const [maxCollectionId, maxScopeId] = await Promise.all([last(manifestKeys.droppedCollections), last(manifestKeys.droppedScopes)]);
  return { maxCollectionId, maxScopeId };
}

/**
 * Stores `next` (a {@link Manifest}, re-validated here) if it may follow the current manifest (see
 * `validateManifestUpdate`): records the ids it drops, clears the dropped collections' keys when
 * `options.collectionPrefix` is given, and writes the chunks and the uid. Repeating the current
 * manifest writes nothing. {@link prepareManifestWrite} and `apply()` in one step.
 *
 * Reads: the manifest's chunks, and the dropped-id records in the span of the ids `next` adds (two
 * range reads, usually empty). Writes: the chunks (a range clear and one key per 10,000 bytes), the
 * uid, and per dropped scope or collection one key (plus a range clear for a collection).
 *
 * @throws DocumentError OUT_OF_RANGE (uid lower, or equal with other content), INVALID_ARGUMENT (an
 *   invalid manifest, a renamed or moved id, a dropped id reused); nothing is written when thrown.
 */
export async function writeManifest(tr: Transaction, sys: Subspace, next: Manifest, options: WriteManifestOptions = {}): Promise<ManifestChange> {
  const prepared = await prepareManifestWrite(tr, sys, next, options);
  prepared.apply();
  return prepared.change;
}

/**
 * The reads and checks of {@link writeManifest}, with its writes left to `apply()`: for a write that
 * creates a collection only once it is sure to go ahead.
 *
 * @throws DocumentError as {@link writeManifest}.
 */
export async function prepareManifestWrite(
  tr: Transaction,
  sys: Subspace,
  next: Manifest,
  options: WriteManifestOptions = {},
): Promise<PreparedManifestWrite> {
  const manifest = parseManifest(next);
  const context = DocTransaction.of(tr);
  const writesBefore = context.manifestWrites;
  const current = await getManifest(tr, sys);
  const diff = diffManifests(current, manifest);
  const [collections, scopes] = await Promise.all([
    droppedAmong(tr, sys, 'dropped-collection', diff.addedCollections),
    droppedAmong(tr, sys, 'dropped-scope', diff.addedScopes),
  ]);
  validateManifestUpdate(current, manifest, { collections, scopes });
  if (compareUids(manifest.uid, current.uid) === 0) {
    return { change: { manifest, changed: false, ...diff }, apply: () => undefined };
  }
  const apply = () => {
    if (context.manifestWrites !== writesBefore) {
      throw new DocumentError(
        'INVALID_ARGUMENT',
        'another manifest update was written in this transaction since this one was prepared: ' +
          'create collections in one transaction one after another, not concurrently',
      );
    }
    const { begin, end } = sys.range(manifestKeys.chunks);
    tr.clearRange(begin, end);
    const chunks = splitBytes(Buffer.from(JSON.stringify(manifest), 'utf8'), CHUNK_BYTES);
    chunks.forEach((chunk, i) => tr.set(sys.pack(manifestKeys.chunk(i)), chunk));
    tr.set(manifestUidKey(sys), manifest.uid);
    for (const id of diff.droppedScopes) tr.set(sys.pack(manifestKeys.droppedScope(id)), '');
    const named = diff.droppedCollections.length === 0 ? undefined : collectionsById(current);
    for (const id of diff.droppedCollections) {
      tr.set(sys.pack(manifestKeys.droppedCollection(id)), '');
      if (options.collectionPrefix) {
        // Canonical LEB128 ids are prefix-free, so one collection's range holds no other's keys.
        const prefixes = options.collectionPrefix(id);
        for (const prefix of prefixes instanceof Uint8Array ? [prefixes] : prefixes) tr.clearRange(prefix, strinc(prefix));
        context.collectionChanged({ kind: 'dropped', collectionId: id, ...collectionNamed(named, id) });
      }
    }
    for (const event of historyChanges(current, manifest)) context.collectionChanged(event);
    context.manifestWrites = writesBefore + 1;
  };
  return { change: { manifest, changed: true, ...diff }, apply };
}

/** The scope, name and history of every collection of `manifest`, by id (once per update: a manifest may hold thousands). */
function collectionsById(manifest: Manifest): Map<number, { scope: string; name: string; history: boolean }> {
  const byId = new Map<number, { scope: string; name: string; history: boolean }>();
  for (const scope of manifest.scopes) {
    for (const c of scope.collections) byId.set(parseInt(c.uid, 16), { scope: scope.name, name: c.name, history: c.history === true });
  }
  return byId;
}

/** The scope, name and history of dropped collection `id`, from {@link collectionsById} of the manifest that held it. */
function collectionNamed(
  named: Map<number, { scope: string; name: string; history: boolean }> | undefined,
  id: number,
): { scope: string; name: string; history: boolean } {
  const found = named?.get(id);
  if (found === undefined) throw corruptData(`manifest: dropped collection ${id} is not in the manifest it was dropped from`);
  return found;
}

/** The collections of both manifests whose history `next` switches on or off. */
function historyChanges(current: Manifest, next: Manifest): CollectionEvent[] {
  const events: CollectionEvent[] = [];
  // By uid, once: a manifest may hold thousands of collections.
  const previous = new Map(current.scopes.flatMap((s) => s.collections.map((c) => [c.uid, c] as const)));
  for (const scope of next.scopes) {
    for (const collection of scope.collections) {
      const id = parseInt(collection.uid, 16);
      const before = previous.get(collection.uid);
      if (before === undefined || (before.history === true) === (collection.history === true)) continue;
      const kind = collection.history === true ? 'historyOn' : 'historyOff';
      events.push({ kind, collectionId: id, scope: scope.name, name: collection.name, history: before.history === true });
    }
  }
  return events;
}

/** The ids of every collection ever dropped, in id order. One range read. */
export async function readDroppedCollections(tr: ReadTransaction, sys: Subspace): Promise<number[]> {
  const { begin, end } = sys.range(manifestKeys.droppedCollections);
  const found = await tr.getRangeAll(begin, end);
  return found.map((kv) => sys.unpack(kv.key)[1] as number);
}

/**
 * Which of `ids` are recorded as dropped: one range read from the lowest to the highest (new ids are
 * usually above every dropped one, so it finds nothing), rather than a point read per id.
 */
async function droppedAmong(
  tr: ReadTransaction,
  sys: Subspace,
  kind: 'dropped-collection' | 'dropped-scope',
  ids: readonly number[],
): Promise<number[]> {
  if (ids.length === 0) return [];
  const wanted = new Set(ids);
  const low = ids.reduce((a, b) => Math.min(a, b));
  const high = ids.reduce((a, b) => Math.max(a, b));
  const found = await tr.getRangeAll(sys.pack([kind, low]), sys.pack([kind, high + 1]));
  return found.map((kv) => sys.unpack(kv.key)[1] as number).filter((id) => wanted.has(id));
}

/**
 * Couchbase's Set Collections Manifest: parses `json` (text or its parsed value) and stores it as
 * {@link writeManifest} does.
 *
 * @throws DocumentError INVALID_ARGUMENT naming the field, OUT_OF_RANGE, as `writeManifest`.
 */
export async function setManifest(tr: Transaction, sys: Subspace, json: unknown, options: WriteManifestOptions = {}): Promise<ManifestChange> {
  return writeManifest(tr, sys, parseManifest(json), options);
}

/**
 * Couchbase's Get Collection ID against the current manifest. One range read.
 *
 * @throws ManifestLookupError UNKNOWN_SCOPE, UNKNOWN_COLLECTION (with the manifest uid); DocumentError
 *   INVALID_ARGUMENT for an invalid path.
 */
export async function getCollectionId(tr: ReadTransaction, sys: Subspace, path: string): Promise<ResolvedCollection> {
  return resolveCollection(await getManifest(tr, sys), path);
}

/**
 * Couchbase's Get Scope ID against the current manifest. One range read.
 *
 * @throws ManifestLookupError UNKNOWN_SCOPE (with the manifest uid); DocumentError INVALID_ARGUMENT.
 */
export async function getScopeId(tr: ReadTransaction, sys: Subspace, path: string): Promise<ResolvedScope> {
  return resolveScope(await getManifest(tr, sys), path);
}

/**
 * The collection at `path` for a write: the existing one, or one added now by a manifest update in
 * `tr` (its scope too when missing), so a write creates its collection and aborts with it. Concurrent
 * creators conflict on the manifest; the retry finds the winner's collection or adds its own next to
 * it, with a different id. {@link planCollection} and `create()` in one step.
 *
 * Only user names are created; a missing `_default._default` (dropped: id 0 never comes back) or a
 * system name stays unknown.
 *
 * @returns the collection, with `created` true when this call added it.
 * @throws ManifestLookupError UNKNOWN_SCOPE / UNKNOWN_COLLECTION when missing and not created
 *   (`autoCreate: false`, or a name that is never created); DocumentError INVALID_ARGUMENT for an
 *   invalid path or maxTTL, OUT_OF_RANGE when ids run out.
 */
export async function ensureCollection(
  tr: Transaction,
  sys: Subspace,
  path: string | CollectionPath,
  options: EnsureCollectionOptions = {},
): Promise<ResolvedCollection & { created: boolean }> {
  const { create, ...planned } = await planCollection(tr, sys, path, options);
  create?.();
  return planned;
}

/**
 * As {@link ensureCollection}, but a missing collection is only planned: its id is chosen and the
 * manifest update prepared (all reads done), and `create()` writes it. A write that may still fail
 * after choosing its keys (a mutateIn whose specs fail) calls `create()` only once it goes ahead, so a
 * failed write leaves no collection behind, even in a caller's transaction that commits.
 *
 * Reads, when the collection exists: the manifest (one range read) unless `options.manifest` is
 * given. When it is missing: the manifest, the greatest dropped ids (two limit-1 range reads) and the
 * dropped ids among the new ones (two range reads).
 *
 * @throws as {@link ensureCollection}; `create()` throws INVALID_ARGUMENT when another manifest update
 *   was written in `tr` meanwhile (see {@link PreparedManifestWrite.apply}).
 */
export async function planCollection(
  tr: Transaction,
  sys: Subspace,
  path: string | CollectionPath,
  options: EnsureCollectionOptions = {},
): Promise<PlannedCollection> {
  const text = typeof path === 'string' ? path : `${path.scope}.${path.collection}`;
  const { scope, collection } = parseCollectionPath(text);
  const known = (manifest: Manifest): ResolvedCollection | undefined => {
    try {
      return resolveCollection(manifest, { scope, collection });
    } catch (err) {
      if (isDocumentError(err, 'UNKNOWN_COLLECTION') || isDocumentError(err, 'UNKNOWN_SCOPE')) return undefined;
      throw err;
    }
  };
  const given = options.manifest === undefined ? undefined : known(options.manifest);
  if (given !== undefined) return { ...given, created: false };
  const current = await getManifest(tr, sys);
  const existing = known(current);
  if (existing !== undefined) return { ...existing, created: false };
  const creatable = isUserName(collection) && (scope === '_default' || isUserName(scope));
  // Not created: resolving again throws the lookup error, with the stored manifest's uid.
  if (options.autoCreate === false || !creatable) return { ...resolveCollection(current, { scope, collection }), created: false };
  const next = addCollection(current, scope, collection, { maxTTL: options.maxTTL }, await readUsedIds(tr, sys));
  const prepared = await prepareManifestWrite(tr, sys, next);
  return { ...resolveCollection(next, { scope, collection }), created: true, create: () => prepared.apply() };
}
