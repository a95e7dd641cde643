import { strinc } from '../kv/bytes';
import type { ReadTransaction, Transaction } from '../kv/types';
import type { Subspace } from '../tuple';
import { isDocumentError } from './errors';
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
 * (`Database.transact`) runs it again on top of the winner's manifest.
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
   * The key prefix of a collection's documents (`Layout.collectionPrefix`). When given, the keys of
   * every dropped collection are cleared in the same transaction. Without it they stay, unreachable
   * (their id is never reused), for the caller to clear.
   */
  collectionPrefix?: (collectionId: number) => Uint8Array;
}

export interface EnsureCollectionOptions {
  /** Create the collection (and its scope) when missing; default `true`. */
  autoCreate?: boolean;
  /** The maxTTL of a collection created by this call; an existing collection keeps its own. */
  maxTTL?: number;
  /**
   * The current manifest when the caller has it (from a {@link ManifestCache} checked in `tr`), to
   * skip reading it; otherwise it is read.
   */
  manifest?: Manifest;
}

/** Transactions that wrote a manifest: what they read is not committed, so no cache keeps it. */
const writtenIn = new WeakSet<ReadTransaction>();

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
 * @throws Error when the stored bytes are not a valid manifest (corruption).
 */
export async function readManifest(tr: ReadTransaction, sys: Subspace): Promise<Manifest | undefined> {
  const { begin, end } = sys.range(manifestKeys.chunks);
  const chunks = await tr.getRangeAll(begin, end);
  if (chunks.length === 0) return undefined;
  try {
    return parseManifest(Buffer.concat(chunks.map((kv) => kv.value)).toString('utf8'));
  } catch (err) {
    throw new Error('doclayer: corrupt collections manifest', { cause: err });
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
  const [maxCollectionId, maxScopeId] = await Promise.all([
    last(manifestKeys.droppedCollections),
    last(manifestKeys.droppedScopes),
  ]);
  return { maxCollectionId, maxScopeId };
}

/**
 * Stores `next` (a {@link Manifest}, re-validated here) if it may follow the current manifest (see
 * `validateManifestUpdate`): records the ids it drops, clears the dropped collections' keys when
 * `options.collectionPrefix` is given, and writes the chunks and the uid. Repeating the current
 * manifest writes nothing.
 *
 * Reads: the manifest's chunks, and the dropped-id records in the span of the ids `next` adds (two
 * range reads, usually empty). Writes: the chunks (a range clear and one key per 10,000 bytes), the
 * uid, and per dropped scope or collection one key (plus a range clear for a collection).
 *
 * @throws DocumentError OUT_OF_RANGE (uid lower, or equal with other content), INVALID_ARGUMENT (an
 *   invalid manifest, a renamed or moved id, a dropped id reused); nothing is written when thrown.
 */
export async function writeManifest(
  tr: Transaction,
  sys: Subspace,
  next: Manifest,
  options: WriteManifestOptions = {},
): Promise<ManifestChange> {
  const manifest = parseManifest(next);
  const current = await getManifest(tr, sys);
  const diff = diffManifests(current, manifest);
  const [collections, scopes] = await Promise.all([
    droppedAmong(tr, sys, 'dropped-collection', diff.addedCollections),
    droppedAmong(tr, sys, 'dropped-scope', diff.addedScopes),
  ]);
  validateManifestUpdate(current, manifest, { collections, scopes });
  if (compareUids(manifest.uid, current.uid) === 0) return { manifest, changed: false, ...diff };

  const { begin, end } = sys.range(manifestKeys.chunks);
  tr.clearRange(begin, end);
  const json = Buffer.from(JSON.stringify(manifest), 'utf8');
  for (let i = 0; i * CHUNK_BYTES < json.length; i++) {
    tr.set(sys.pack(manifestKeys.chunk(i)), json.subarray(i * CHUNK_BYTES, (i + 1) * CHUNK_BYTES));
  }
  tr.set(manifestUidKey(sys), manifest.uid);
  for (const id of diff.droppedScopes) tr.set(sys.pack(manifestKeys.droppedScope(id)), '');
  for (const id of diff.droppedCollections) {
    tr.set(sys.pack(manifestKeys.droppedCollection(id)), '');
    if (options.collectionPrefix) {
      // Canonical LEB128 ids are prefix-free, so one collection's range holds no other's keys.
      const prefix = options.collectionPrefix(id);
      tr.clearRange(prefix, strinc(prefix));
    }
  }
  writtenIn.add(tr);
  return { manifest, changed: true, ...diff };
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
export async function setManifest(
  tr: Transaction,
  sys: Subspace,
  json: string | unknown,
  options: WriteManifestOptions = {},
): Promise<ManifestChange> {
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
 * it, with a different id.
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
  const text = typeof path === 'string' ? path : `${path.scope}.${path.collection}`;
  const { scope, collection } = parseCollectionPath(text);
  const manifest = options.manifest ?? (await getManifest(tr, sys));
  try {
    return { ...resolveCollection(manifest, { scope, collection }), created: false };
  } catch (err) {
    const creatable = isUserName(collection) && (scope === '_default' || isUserName(scope));
    if (options.autoCreate === false || !creatable || !isDocumentError(err)) throw err;
    if (err.code !== 'UNKNOWN_COLLECTION' && err.code !== 'UNKNOWN_SCOPE') throw err;
  }
  const current = options.manifest === undefined ? manifest : await getManifest(tr, sys);
  const next = addCollection(current, scope, collection, { maxTTL: options.maxTTL }, await readUsedIds(tr, sys));
  await writeManifest(tr, sys, next);
  return { ...resolveCollection(next, { scope, collection }), created: true };
}

/**
 * One process's copy of the manifest. {@link ManifestCache.manifest} checks it with one point read of
 * the uid key in the caller's transaction, which also puts a read conflict on that key: a transaction
 * that used a manifest since replaced (a collection dropped by another process) fails to commit and
 * its retry sees the new one. Manifests read by a transaction that wrote one are not kept, since that
 * write may never commit.
 */
export class ManifestCache {
  private cached: Manifest | undefined;

  constructor(readonly sys: Subspace) {}

  /** The current manifest as `tr` sees it: 1 point read when the cached copy is current, else a range read too. */
  async manifest(tr: Transaction): Promise<Manifest> {
    if (writtenIn.has(tr)) return getManifest(tr, this.sys);
    const uid = (await readManifestUid(tr, this.sys)) ?? defaultManifest().uid;
    if (this.cached?.uid === uid) return this.cached;
    const manifest = await getManifest(tr, this.sys);
    if (!writtenIn.has(tr)) this.cached = manifest;
    return manifest;
  }

  /** Forgets the cached copy (the next call reads the manifest). */
  clear(): void {
    this.cached = undefined;
  }
}
