import { Buffer } from 'node:buffer';
import { DocumentError } from '../errors';

/**
 * The collections manifest: which scopes and collections exist and the ids that prefix their keys,
 * with the JSON form and rules of Couchbase's Set Collections Manifest (kv_engine docs/Collections.md,
 * engines/ep/src/collections/manifest.cc). This module is pure: parsing, validation, path resolution
 * and the updates that add or drop a collection. `manifest-store.ts` keeps it in the database.
 *
 * Every manifest these functions return is deeply frozen and normalised (uids in lowercase base 16
 * without leading zeros), so `JSON.stringify(manifest)` is its Couchbase JSON and an update is always
 * a new object.
 */

/** A collection: its name, unique in its scope, and its id, unique across all scopes. */
export interface ManifestCollection {
  readonly name: string;
  /** The collection id (u32) in base 16, lowercase, without `0x`. */
  readonly uid: string;
  /** Seconds; caps the expiry of every document written to the collection. 0 or absent: no cap. */
  readonly maxTTL?: number;
  /**
   * Whether the collection keeps a change feed (Couchbase 7.2's name for a collection's change
   * history; see docs/changes.md). Absent: no feed.
   */
  readonly history?: boolean;
}

/** A scope: a named, unique group of collections. */
export interface ManifestScope {
  readonly name: string;
  /** The scope id (u32) in base 16, lowercase, without `0x`. */
  readonly uid: string;
  readonly collections: readonly ManifestCollection[];
}

/** A whole manifest. Its uid (u64, base 16) never decreases from one stored manifest to the next. */
export interface Manifest {
  readonly uid: string;
  readonly scopes: readonly ManifestScope[];
}

/** A collection path taken apart: `app.users` is `{ scope: 'app', collection: 'users' }`. */
export interface CollectionPath {
  readonly scope: string;
  readonly collection: string;
}

/** A collection found in a manifest (Couchbase's Get Collection ID reply, plus the collection's cap). */
export interface ResolvedCollection {
  /** The uid of the manifest the lookup was made against. */
  readonly manifestUid: string;
  readonly collectionId: number;
  /** The collection's maxTTL in seconds, when it has one. */
  readonly maxTTL?: number;
  /** Present (true) when the collection keeps a change feed. */
  readonly history?: true;
}

/** A scope found in a manifest (Couchbase's Get Scope ID reply). */
export interface ResolvedScope {
  readonly manifestUid: string;
  readonly scopeId: number;
}

/**
 * Ids that were dropped from an earlier manifest and may never come back. Only the ids that `next`
 * adds matter, so a caller may pass just those of them that are dropped.
 */
export interface DroppedIds {
  readonly collections: Iterable<number>;
  readonly scopes: Iterable<number>;
}

/** The greatest ids ever used, dropped ones included; ids in the manifest itself are counted anyway. */
export interface UsedIds {
  readonly maxCollectionId?: number;
  readonly maxScopeId?: number;
}

/** What an update changes, by id. */
export interface ManifestDiff {
  readonly addedScopes: readonly number[];
  readonly droppedScopes: readonly number[];
  readonly addedCollections: readonly number[];
  readonly droppedCollections: readonly number[];
}

/**
 * UNKNOWN_COLLECTION or UNKNOWN_SCOPE, with the uid of the manifest the lookup was judged against (as
 * Couchbase's `{"manifest_uid": "1f"}` error body): a caller holding a cached manifest compares it
 * with the stored uid to know whether to refresh and retry.
 */
export class ManifestLookupError extends DocumentError {
  declare readonly code: 'UNKNOWN_COLLECTION' | 'UNKNOWN_SCOPE';
  readonly manifestUid: string;

  constructor(code: 'UNKNOWN_COLLECTION' | 'UNKNOWN_SCOPE', message: string, manifestUid: string) {
    super(code, `${message} (manifest uid ${manifestUid})`);
    this.manifestUid = manifestUid;
  }
}

/** The longest scope or collection name, in bytes. */
export const MAX_NAME_BYTES = 251;

const DEFAULT = '_default';
/** Ids 0 to 7 are reserved (0 is `_default`), so created scopes and collections start at 8. */
const FIRST_FREE_ID = 8;
const MAX_ID = 0xffffffff;
const MAX_MANIFEST_UID = 0xffffffffffffffffn;
/** kv_engine caps uid strings at the hex digits of their width: 16 for the manifest, 8 for ids. */
const MANIFEST_UID_DIGITS = 16;
const ID_DIGITS = 8;

const USER_NAME = /^[A-Za-z0-9-][A-Za-z0-9_%-]*$/;
const SYSTEM_NAME = /^_[A-Za-z0-9_%$-]*$/;
const HEX = /^[0-9a-fA-F]+$/;

// ---------------------------------------------------------------------------------------------------
// Names

/** What is wrong with a name, or `undefined` for a valid one (user or system). */
function nameProblem(name: string): string | undefined {
  const bytes = Buffer.byteLength(name, 'utf8');
  if (bytes === 0 || bytes > MAX_NAME_BYTES) return `a name is 1 to ${MAX_NAME_BYTES} bytes, got ${bytes}`;
  if (name[0] === '$') return 'names starting with $ are reserved';
  if (name[0] === '_') {
    return SYSTEM_NAME.test(name) ? undefined : 'a system name (starting with _) holds only A-Z a-z 0-9 _ - % $';
  }
  if (name[0] === '%') return 'a name may not start with %';
  return USER_NAME.test(name) ? undefined : 'a name holds only A-Z a-z 0-9 _ - % (and $ after a leading _)';
}

/** A user name: 1-251 bytes of `A-Z a-z 0-9 _ - %`, not starting with `_` or `%`. */
export function isUserName(name: unknown): name is string {
  return typeof name === 'string' && name[0] !== '_' && nameProblem(name) === undefined;
}

/** A system name: 1-251 bytes of `A-Z a-z 0-9 _ - % $`, starting with `_` (as `_default`). */
export function isSystemName(name: unknown): name is string {
  return typeof name === 'string' && name[0] === '_' && nameProblem(name) === undefined;
}

/** A name a manifest may hold: a user name or a system name. */
export function isValidName(name: unknown): name is string {
  return typeof name === 'string' && nameProblem(name) === undefined;
}

// ---------------------------------------------------------------------------------------------------
// Parsing

/**
 * Parses and validates a manifest: JSON text, or the value JSON text parses to.
 *
 * Rules: `uid` (1-16 hex digits) and `scopes` (an array) are required; each scope has `name`, `uid`
 * (1-8 hex digits) and an optional `collections` array (Couchbase's documentation makes it optional);
 * each collection has `name`, `uid`, an optional `maxTTL` (an integer of seconds, 0 to 2^32-1) and an
 * optional `history` (a boolean: whether it keeps a change feed).
 * Names are valid user or system names; ids 1-7 are reserved; id 0 is exactly the `_default` scope and
 * the `_default` collection, which lives in the `_default` scope; scope ids, scope names, collection ids
 * (across all scopes) and collection names within a scope are unique; the `_default` scope is present;
 * uid 0 is only the epoch manifest (the `_default` scope with only the `_default` collection). Unknown
 * keys are ignored, as kv_engine does.
 *
 * @throws DocumentError INVALID_ARGUMENT naming the field (`scopes[1].collections[0].uid`) in the
 *   message and in `path`: invalid JSON, a missing key, a wrong type or any broken rule.
 */
export function parseManifest(json: unknown): Manifest {
  let root = json;
  if (typeof json === 'string') {
    try {
      root = JSON.parse(json);
    } catch (err) {
      throw new DocumentError('INVALID_ARGUMENT', `the manifest is not valid JSON: ${(err as Error).message}`, {
        cause: err,
      });
    }
  }
  const top = objectAt(root, 'manifest');
  const uid = hexAt(top.uid, 'uid', MANIFEST_UID_DIGITS);
  if (!Array.isArray(top.scopes)) throw wrongType(top.scopes, 'scopes', 'an array');

  const scopeIds = new Set<number>();
  const scopeNames = new Set<string>();
  const collectionIds = new Set<number>();
  const scopes = top.scopes.map((rawScope: unknown, i): ManifestScope => {
    const at = `scopes[${i}]`;
    const scope = objectAt(rawScope, at);
    const name = nameAt(scope.name, `${at}.name`);
    const id = idAt(scope.uid, `${at}.uid`);
    if (id === 0 && name !== DEFAULT) {
      throw invalid(`${at}.uid`, `uid "0" is the _default scope, not ${JSON.stringify(name)}`);
    }
    if (id !== 0 && name === DEFAULT) throw invalid(`${at}.uid`, 'the _default scope has uid "0"');
    if (scopeIds.has(id)) throw invalid(`${at}.uid`, `duplicate scope uid "${hex(id)}"`);
    if (scopeNames.has(name)) throw invalid(`${at}.name`, `duplicate scope name ${JSON.stringify(name)}`);
    scopeIds.add(id);
    scopeNames.add(name);

    const rawCollections = scope.collections === undefined ? [] : scope.collections;
    if (!Array.isArray(rawCollections)) throw wrongType(rawCollections, `${at}.collections`, 'an array');
    const names = new Set<string>();
    const collections = rawCollections.map((rawCollection: unknown, j): ManifestCollection => {
      const cat = `${at}.collections[${j}]`;
      const collection = objectAt(rawCollection, cat);
      const cname = nameAt(collection.name, `${cat}.name`);
      const cid = idAt(collection.uid, `${cat}.uid`);
      if (cid === 0 && cname !== DEFAULT) {
        throw invalid(`${cat}.uid`, `uid "0" is the _default collection, not ${JSON.stringify(cname)}`);
      }
      if (cid === 0 && id !== 0) throw invalid(`${cat}.uid`, 'the _default collection lives in the _default scope');
      if (cid !== 0 && cname === DEFAULT) throw invalid(`${cat}.uid`, 'the _default collection has uid "0"');
      if (collectionIds.has(cid)) throw invalid(`${cat}.uid`, `duplicate collection uid "${hex(cid)}"`);
      if (names.has(cname)) {
        const what = `duplicate collection name ${JSON.stringify(cname)} in scope ${JSON.stringify(name)}`;
        throw invalid(`${cat}.name`, what);
      }
      collectionIds.add(cid);
      names.add(cname);
      const maxTTL = collection.maxTTL === undefined ? undefined : maxTTLAt(collection.maxTTL, `${cat}.maxTTL`);
      if (collection.history !== undefined && typeof collection.history !== 'boolean')
        throw wrongType(collection.history, `${cat}.history`, 'a boolean');
      return makeCollection(cname, cid, maxTTL, collection.history === true);
    });
    return { name, uid: hex(id), collections };
  });

  if (!scopeIds.has(0)) throw invalid('scopes', 'the _default scope is missing');
  const manifest: Manifest = { uid: uid.toString(16), scopes };
  if (uid === 0n && !isEpoch(manifest)) {
    throw invalid('uid', 'uid "0" is only the epoch manifest: the _default scope with only the _default collection');
  }
  return freeze(manifest);
}

/** The manifest of a database where none was set: uid 0, holding only `_default._default`. */
export function defaultManifest(): Manifest {
  return DEFAULT_MANIFEST;
}

// ---------------------------------------------------------------------------------------------------
// Paths

/**
 * Parses a collection path `scope.collection`. An empty part means `_default`: `.c1` is
 * `_default.c1`, and `.` is `_default._default`.
 *
 * @throws DocumentError INVALID_ARGUMENT when the path has no `.` or several, or a part is not a valid
 *   name.
 */
export function parseCollectionPath(path: string): CollectionPath {
  if (typeof path !== 'string') {
    throw new DocumentError('INVALID_ARGUMENT', `a collection path is a string, got ${describe(path)}`);
  }
  const parts = path.split('.');
  if (parts.length !== 2) {
    throw new DocumentError('INVALID_ARGUMENT', `a collection path is scope.collection with exactly one '.', got ${JSON.stringify(path)}`);
  }
  return { scope: pathName(parts[0], 'scope', path), collection: pathName(parts[1], 'collection', path) };
}

/**
 * Parses a scope path: `scope`, or the empty string for `_default`. A `.collection` part is ignored,
 * as Couchbase's Get Scope ID does.
 *
 * @throws DocumentError INVALID_ARGUMENT when the path has several `.` or the scope is not a valid name.
 */
export function parseScopePath(path: string): string {
  if (typeof path !== 'string') {
    throw new DocumentError('INVALID_ARGUMENT', `a scope path is a string, got ${describe(path)}`);
  }
  const parts = path.split('.');
  if (parts.length > 2) {
    throw new DocumentError('INVALID_ARGUMENT', `a scope path has at most one '.', got ${JSON.stringify(path)}`);
  }
  return pathName(parts[0], 'scope', path);
}

/**
 * The id of the collection at `path` (a string as {@link parseCollectionPath} takes, or its parts).
 *
 * @throws ManifestLookupError UNKNOWN_SCOPE or UNKNOWN_COLLECTION, carrying `manifest.uid`.
 * @throws DocumentError INVALID_ARGUMENT for an invalid path.
 */
export function resolveCollection(manifest: Manifest, path: string | CollectionPath): ResolvedCollection {
  const { scope, collection } = typeof path === 'string' ? parseCollectionPath(path) : checkedPath(path);
  const entry = scopeEntry(manifest, scope).collections.get(collection);
  if (entry === undefined) {
    const what = `no collection ${JSON.stringify(collection)} in scope ${JSON.stringify(scope)}`;
    throw new ManifestLookupError('UNKNOWN_COLLECTION', what, manifest.uid);
  }
  const resolved: { manifestUid: string; collectionId: number; maxTTL?: number; history?: true } = {
    manifestUid: manifest.uid,
    collectionId: entry.id,
  };
  if (entry.maxTTL !== undefined) resolved.maxTTL = entry.maxTTL;
  if (entry.history) resolved.history = true;
  return resolved;
}

/**
 * The id of the scope at `path` (as {@link parseScopePath} takes).
 *
 * @throws ManifestLookupError UNKNOWN_SCOPE, carrying `manifest.uid`.
 * @throws DocumentError INVALID_ARGUMENT for an invalid path.
 */
export function resolveScope(manifest: Manifest, path: string): ResolvedScope {
  return { manifestUid: manifest.uid, scopeId: scopeEntry(manifest, parseScopePath(path)).id };
}

// ---------------------------------------------------------------------------------------------------
// Updates

/**
 * Checks that `next` may replace `current` (both as {@link parseManifest} returns them; `undefined`
 * when none was set). Rules, as kv_engine's `Manifest::isSuccessor`:
 * - a lower uid is refused with OUT_OF_RANGE;
 * - an equal uid is accepted only for identical content (a repeated set is a no-op, so a retried
 *   update is harmless); a change under the same uid is OUT_OF_RANGE;
 * - a higher uid may add and drop anything, but a scope id that stays keeps its name, and a collection
 *   id that stays keeps its name and scope (its maxTTL may change: it applies to later writes; so may
 *   its history: see docs/changes.md);
 * - an id that `next` adds must not be among `dropped`: dropped ids are never reused.
 *
 * @throws DocumentError OUT_OF_RANGE (uid) or INVALID_ARGUMENT naming the field of `next`.
 */
export function validateManifestUpdate(current: Manifest | undefined, next: Manifest, dropped: DroppedIds = { collections: [], scopes: [] }): void {
  if (current !== undefined) {
    const order = compareUids(next.uid, current.uid);
    if (order < 0) {
      throw new DocumentError('OUT_OF_RANGE', `manifest uid "${next.uid}" is lower than the current "${current.uid}"`);
    }
    if (order === 0) {
      if (!sameContent(current, next)) {
        throw new DocumentError('OUT_OF_RANGE', `manifest uid "${next.uid}" is the current one but the content differs: a change needs a higher uid`);
      }
      return;
    }
  }
  const before = current === undefined ? undefined : idMaps(current);
  const droppedScopes = new Set(dropped.scopes);
  const droppedCollections = new Set(dropped.collections);
  next.scopes.forEach((scope, i) => {
    const id = parseInt(scope.uid, 16);
    const was = before?.scopes.get(id);
    if (was !== undefined && was !== scope.name) {
      const what = `scope uid "${scope.uid}" is ${JSON.stringify(was)}: a scope cannot be renamed`;
      throw invalid(`scopes[${i}].name`, what);
    }
    if (was === undefined && droppedScopes.has(id)) {
      throw invalid(`scopes[${i}].uid`, `scope uid "${scope.uid}" was dropped and is never reused`);
    }
    scope.collections.forEach((collection, j) => {
      const cid = parseInt(collection.uid, 16);
      const wasCollection = before?.collections.get(cid);
      const at = `scopes[${i}].collections[${j}]`;
      if (wasCollection !== undefined && (wasCollection.name !== collection.name || wasCollection.scope !== id)) {
        const where = `${JSON.stringify(wasCollection.name)} in scope uid "${hex(wasCollection.scope)}"`;
        throw invalid(at, `collection uid "${collection.uid}" is ${where}: a collection cannot be renamed or moved`);
      }
      if (wasCollection === undefined && droppedCollections.has(cid)) {
        throw invalid(`${at}.uid`, `collection uid "${collection.uid}" was dropped and is never reused`);
      }
    });
  });
}

/** The scope and collection ids `next` adds to and drops from `current` (`undefined`: none set). */
export function diffManifests(current: Manifest | undefined, next: Manifest): ManifestDiff {
  const before = current === undefined ? { scopes: new Map<number, unknown>(), collections: new Map<number, unknown>() } : idMaps(current);
  const after = idMaps(next);
  const added = (a: Map<number, unknown>, b: Map<number, unknown>) => [...b.keys()].filter((id) => !a.has(id));
  return {
    addedScopes: added(before.scopes, after.scopes),
    droppedScopes: added(after.scopes, before.scopes),
    addedCollections: added(before.collections, after.collections),
    droppedCollections: added(after.collections, before.collections),
  };
}

/**
 * `manifest` with collection `scope.name` added under the next uid, creating the scope too if it is
 * missing. New ids are one above the greatest ever used (in `manifest` or in `used`), and at least 8.
 *
 * Only user names can be created this way (and `_default` as the scope); system names come from a set
 * manifest, and the `_default` collection, once dropped, never comes back (its id 0 is not reused).
 *
 * @throws DocumentError INVALID_ARGUMENT for a name that cannot be created, an existing collection or a
 *   bad `maxTTL`; OUT_OF_RANGE when no id or uid is left.
 */
export function addCollection(
  manifest: Manifest,
  scope: string,
  name: string,
  options: { maxTTL?: number; history?: boolean } = {},
  used: UsedIds = {},
): Manifest {
  if (scope !== DEFAULT && !isUserName(scope)) throw cannotCreate('scope', scope);
  if (!isUserName(name)) throw cannotCreate('collection', name);
  const { maxTTL } = options;
  if (maxTTL !== undefined && !isMaxTTL(maxTTL)) {
    throw new DocumentError('INVALID_ARGUMENT', `maxTTL is ${MAX_TTL_RULE}, got ${describe(maxTTL)}`);
  }
  if (options.history !== undefined && typeof options.history !== 'boolean') {
    throw new DocumentError('INVALID_ARGUMENT', `history is a boolean, got ${describe(options.history)}`);
  }
  const uid = nextUid(manifest);
  const existing = manifest.scopes.find((s) => s.name === scope);
  if (existing?.collections.some((c) => c.name === name)) {
    throw new DocumentError('INVALID_ARGUMENT', `collection ${JSON.stringify(`${scope}.${name}`)} already exists`);
  }
  const collection = makeCollection(name, nextId(manifest, 'collection', used.maxCollectionId), maxTTL, options.history === true);
  if (existing) {
    const collections = [...existing.collections, collection];
    return freeze({ uid, scopes: manifest.scopes.map((s) => (s === existing ? { ...s, collections } : s)) });
  }
  const scopeUid = hex(nextId(manifest, 'scope', used.maxScopeId));
  return freeze({ uid, scopes: [...manifest.scopes, { name: scope, uid: scopeUid, collections: [collection] }] });
}

/**
 * `manifest` with an empty scope `name` added under the next uid, its id chosen as in
 * {@link addCollection}.
 *
 * @throws DocumentError INVALID_ARGUMENT for a name that is not a user name or an existing scope;
 *   OUT_OF_RANGE when no id or uid is left.
 */
export function addScope(manifest: Manifest, name: string, used: UsedIds = {}): Manifest {
  if (!isUserName(name)) throw cannotCreate('scope', name);
  if (manifest.scopes.some((s) => s.name === name)) {
    throw new DocumentError('INVALID_ARGUMENT', `scope ${JSON.stringify(name)} already exists`);
  }
  const uid = nextUid(manifest);
  const scope = { name, uid: hex(nextId(manifest, 'scope', used.maxScopeId)), collections: [] };
  return freeze({ uid, scopes: [...manifest.scopes, scope] });
}

/**
 * `manifest` without collection `scope.name`, under the next uid. Any collection may be dropped, the
 * `_default` one included.
 *
 * @throws ManifestLookupError UNKNOWN_SCOPE or UNKNOWN_COLLECTION; DocumentError OUT_OF_RANGE when no
 *   uid is left.
 */
export function dropCollection(manifest: Manifest, scope: string, name: string): Manifest {
  resolveCollection(manifest, { scope, collection: name });
  const uid = nextUid(manifest);
  const scopes = manifest.scopes.map((s) => (s.name === scope ? { ...s, collections: s.collections.filter((c) => c.name !== name) } : s));
  return freeze({ uid, scopes });
}

/**
 * `manifest` with collection `scope.name`'s history (its change feed) switched on or off, under the
 * next uid; `manifest` itself when it is already so.
 *
 * @throws ManifestLookupError UNKNOWN_SCOPE or UNKNOWN_COLLECTION; DocumentError INVALID_ARGUMENT for a
 *   `history` that is not a boolean, OUT_OF_RANGE when no uid is left.
 */
export function setCollectionHistory(manifest: Manifest, scope: string, name: string, history: boolean): Manifest {
  if (typeof history !== 'boolean') throw new DocumentError('INVALID_ARGUMENT', `history is a boolean, got ${describe(history)}`);
  const { collectionId, maxTTL, history: before } = resolveCollection(manifest, { scope, collection: name });
  if ((before === true) === history) return manifest;
  const uid = nextUid(manifest);
  const changed = makeCollection(name, collectionId, maxTTL, history);
  const scopes = manifest.scopes.map((s) =>
    s.name === scope ? { ...s, collections: s.collections.map((c) => (c.name === name ? changed : c)) } : s,
  );
  return freeze({ uid, scopes });
}

/**
 * `manifest` without scope `name` and its collections, under the next uid.
 *
 * @throws DocumentError INVALID_ARGUMENT for `_default`, which cannot be dropped; ManifestLookupError
 *   UNKNOWN_SCOPE; OUT_OF_RANGE when no uid is left.
 */
export function dropScope(manifest: Manifest, name: string): Manifest {
  if (name === DEFAULT) throw new DocumentError('INVALID_ARGUMENT', 'the _default scope cannot be dropped');
  resolveScope(manifest, name);
  const uid = nextUid(manifest);
  return freeze({ uid, scopes: manifest.scopes.filter((s) => s.name !== name) });
}

/** -1, 0 or 1 as uid `a` is lower than, equal to or higher than uid `b` (base-16 strings). */
export function compareUids(a: string, b: string): number {
  const x = BigInt(`0x${a}`);
  const y = BigInt(`0x${b}`);
  return x < y ? -1 : x > y ? 1 : 0;
}

// ---------------------------------------------------------------------------------------------------
// Internals

const DEFAULT_MANIFEST: Manifest = freeze({
  uid: '0',
  scopes: [{ name: DEFAULT, uid: '0', collections: [{ name: DEFAULT, uid: '0' }] }],
});

interface ScopeEntry {
  readonly id: number;
  readonly collections: Map<string, { readonly id: number; readonly maxTTL?: number; readonly history?: boolean }>;
}

/** Name indexes of frozen manifests, built on first lookup: they cannot change afterwards. */
const indexes = new WeakMap<Manifest, Map<string, ScopeEntry>>();

function scopeEntry(manifest: Manifest, scope: string): ScopeEntry {
  let index = indexes.get(manifest);
  if (index === undefined) {
    index = new Map();
    for (const s of manifest.scopes) {
      const collections = new Map<string, { id: number; maxTTL?: number; history?: boolean }>();
      for (const c of s.collections) collections.set(c.name, { id: parseInt(c.uid, 16), maxTTL: c.maxTTL, history: c.history });
      index.set(s.name, { id: parseInt(s.uid, 16), collections });
    }
    if (Object.isFrozen(manifest)) indexes.set(manifest, index);
  }
  const entry = index.get(scope);
  if (entry === undefined) {
    throw new ManifestLookupError('UNKNOWN_SCOPE', `no scope ${JSON.stringify(scope)}`, manifest.uid);
  }
  return entry;
}

function idMaps(manifest: Manifest): {
  scopes: Map<number, string>;
  collections: Map<number, { name: string; scope: number; maxTTL?: number; history?: boolean }>;
} {
  const scopes = new Map<number, string>();
  const collections = new Map<number, { name: string; scope: number; maxTTL?: number; history?: boolean }>();
  for (const s of manifest.scopes) {
    const sid = parseInt(s.uid, 16);
    scopes.set(sid, s.name);
    for (const c of s.collections) collections.set(parseInt(c.uid, 16), { name: c.name, scope: sid, maxTTL: c.maxTTL, history: c.history });
  }
  return { scopes, collections };
}

/** Same scopes and collections (ids, names, placement, maxTTL, history), whatever their order. */
function sameContent(a: Manifest, b: Manifest): boolean {
  const x = idMaps(a);
  const y = idMaps(b);
  if (x.scopes.size !== y.scopes.size || x.collections.size !== y.collections.size) return false;
  for (const [id, name] of x.scopes) if (y.scopes.get(id) !== name) return false;
  for (const [id, c] of x.collections) {
    const d = y.collections.get(id);
    if (d === undefined || d.name !== c.name || d.scope !== c.scope || d.maxTTL !== c.maxTTL || d.history !== c.history) return false;
  }
  return true;
}

function isEpoch(manifest: Manifest): boolean {
  const [scope, ...others] = manifest.scopes;
  return others.length === 0 && scope.collections.length === 1 && scope.collections[0].uid === '0';
}

function nextUid(manifest: Manifest): string {
  const uid = BigInt(`0x${manifest.uid}`) + 1n;
  if (uid > MAX_MANIFEST_UID) throw new DocumentError('OUT_OF_RANGE', 'no manifest uid is left after ffffffffffffffff');
  return uid.toString(16);
}

function nextId(manifest: Manifest, kind: 'scope' | 'collection', usedMax = 0): number {
  let max = Math.max(FIRST_FREE_ID - 1, usedMax);
  for (const s of manifest.scopes) {
    if (kind === 'scope') max = Math.max(max, parseInt(s.uid, 16));
    else for (const c of s.collections) max = Math.max(max, parseInt(c.uid, 16));
  }
  if (max >= MAX_ID) throw new DocumentError('OUT_OF_RANGE', `no ${kind} id is left after ffffffff`);
  return max + 1;
}

function makeCollection(name: string, id: number, maxTTL: number | undefined, history: boolean): ManifestCollection {
  const collection: { name: string; uid: string; maxTTL?: number; history?: boolean } = { name, uid: hex(id) };
  if (maxTTL !== undefined) collection.maxTTL = maxTTL;
  if (history) collection.history = true;
  return collection;
}

function freeze(manifest: Manifest): Manifest {
  for (const scope of manifest.scopes) {
    for (const collection of scope.collections) Object.freeze(collection);
    Object.freeze(scope.collections);
    Object.freeze(scope);
  }
  Object.freeze(manifest.scopes);
  return Object.freeze(manifest);
}

function hex(id: number): string {
  return id.toString(16);
}

function checkedPath(path: CollectionPath): CollectionPath {
  const text = `${path.scope}.${path.collection}`;
  return { scope: pathName(path.scope, 'scope', text), collection: pathName(path.collection, 'collection', text) };
}

function pathName(part: string, what: 'scope' | 'collection', path: string): string {
  if (part === '') return DEFAULT;
  const problem = typeof part === 'string' ? nameProblem(part) : `got ${describe(part)}`;
  if (problem !== undefined) {
    const where = `${what} name ${JSON.stringify(part)} in path ${JSON.stringify(path)}`;
    throw new DocumentError('INVALID_ARGUMENT', `invalid ${where}: ${problem}`);
  }
  return part;
}

function cannotCreate(what: 'scope' | 'collection', name: string): DocumentError {
  const why = isValidName(name)
    ? 'only user names (not starting with _) are created on demand; system names come from a set manifest'
    : (nameProblem(String(name)) ?? `got ${describe(name)}`);
  return new DocumentError('INVALID_ARGUMENT', `cannot create ${what} ${JSON.stringify(name)}: ${why}`);
}

function invalid(field: string, what: string): DocumentError {
  return new DocumentError('INVALID_ARGUMENT', `manifest field ${field}: ${what}`, { path: field });
}

function wrongType(value: unknown, field: string, expected: string): DocumentError {
  const what = value === undefined ? `missing (expected ${expected})` : `expected ${expected}, got ${describe(value)}`;
  return invalid(field, what);
}

function objectAt(value: unknown, field: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw wrongType(value, field, 'an object');
  return value as Record<string, unknown>;
}

function nameAt(value: unknown, field: string): string {
  if (typeof value !== 'string') throw wrongType(value, field, 'a string');
  const problem = nameProblem(value);
  if (problem !== undefined) throw invalid(field, `invalid name ${JSON.stringify(value)}: ${problem}`);
  return value;
}

function hexAt(value: unknown, field: string, digits: number): bigint {
  if (typeof value !== 'string') throw wrongType(value, field, 'a base-16 string');
  if (!HEX.test(value) || value.length > digits) {
    throw invalid(field, `expected 1 to ${digits} base-16 digits without 0x, got ${JSON.stringify(value)}`);
  }
  return BigInt(`0x${value}`);
}

function idAt(value: unknown, field: string): number {
  const id = Number(hexAt(value, field, ID_DIGITS));
  if (id > 0 && id < FIRST_FREE_ID) throw invalid(field, `uid "${hex(id)}" is reserved: 1 to 7 are for internal use`);
  return id;
}

const MAX_TTL_RULE = `an integer of seconds from 0 to ${MAX_ID}`;

function isMaxTTL(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= MAX_ID;
}

function maxTTLAt(value: unknown, field: string): number {
  if (!isMaxTTL(value)) throw invalid(field, `expected ${MAX_TTL_RULE}, got ${describe(value)}`);
  return value;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'string') return JSON.stringify(value);
  return typeof value === 'number' || typeof value === 'boolean' ? String(value) : typeof value;
}
