import type { KeyValue, ReadTransaction, Transaction } from '../../kv/contract/types';
import { corruptData, DocumentError, isDocumentError } from '../errors';
import { isExpired, readPresence } from '../collection/expiry';
import { META_KIND, type DocumentKeys } from './layout';
import type { JsonValue } from '../types';

/**
 * What a document is: a plain JSON document, or one of the data structures. A structure's document has
 * two entries no plain document has (see docs/structures.md):
 *
 * - its kind, at the metadata key `<docPrefix> 0x00 'k'`, as the kind's name in ASCII;
 * - a root data entry holding {@link STRUCTURE_MARKER} instead of an object or array marker, so that
 *   sub-document operations, which read the root (or find nothing under it), fail on a structure
 *   without an extra read, and nothing of a plain document can be mistaken for a structure.
 *
 * Both are written once, when the structure is created, and cleared when it is removed (`clear()`
 * removes the document); element operations read the kind (one point read, so they conflict only
 * with creation and removal) and never write it.
 */
export type StructureKind = 'list' | 'map' | 'set' | 'queue' | 'counter' | 'text' | 'sortedset';

const KINDS: ReadonlySet<string> = new Set<StructureKind>(['list', 'map', 'set', 'queue', 'counter', 'text', 'sortedset']);

/** The first byte of a structure's root entry: no JSON value's entry starts with it ('$'). */
export const STRUCTURE_MARKER = 0x24;
/** The value of a structure's root entry. */
export const STRUCTURE_ROOT_VALUE: Buffer = Buffer.of(STRUCTURE_MARKER);

const encoded = new Map<StructureKind, Buffer>();

/** The kind metadata value of `kind`. */
export function encodeKind(kind: StructureKind): Buffer {
  let value = encoded.get(kind);
  if (value === undefined) {
    value = Buffer.from(kind, 'latin1');
    encoded.set(kind, value);
  }
  return value;
}

/** The kind a kind metadata value names. */
export function decodeKind(value: Uint8Array): StructureKind {
  const name = Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('latin1');
  if (!KINDS.has(name)) throw corruptData(`document data: unknown structure kind ${JSON.stringify(name)}`);
  return name as StructureKind;
}

/** The kind metadata key of a document. */
export function kindKey(keys: DocumentKeys): Buffer {
  return keys.meta(META_KIND);
}

/** What is at a document's keys, as structure operations see it. */
export interface KindCheck {
  readonly kind: StructureKind | 'document' | undefined;
  /**
   * An expired plain document (or a stray expiry) is there: it reads as missing, and a structure
   * created in its place must clear it first.
   */
  readonly stale: boolean;
}

/**
 * What is at `keys`. Reads: the kind key (1 point read); when it is absent, also the expiry and root
 * entries (1 range read, see `readPresence`): a plain document that expired at `now` is missing.
 */
export async function inspectKind(tr: ReadTransaction, keys: DocumentKeys, now: number): Promise<KindCheck> {
  const kind = await tr.get(kindKey(keys));
  if (kind !== undefined) return { kind: decodeKind(kind), stale: false };
  const { exists, expiresAt } = await readPresence(tr, keys);
  if (expiresAt !== undefined && (!exists || isExpired(expiresAt, now))) return { kind: undefined, stale: true };
  return { kind: exists ? 'document' : undefined, stale: false };
}

/**
 * Creates a structure's document: writes its kind key and its root entry (2 blind writes), after
 * clearing an expired document in its place (`stale`: the expiry index entry it leaves is dropped by
 * the purge, which finds no expiry).
 */
export function writeKind(tr: Transaction, keys: DocumentKeys, kind: StructureKind, stale = false): void {
  if (stale) tr.clearRange(keys.begin, keys.end);
  tr.set(kindKey(keys), encodeKind(kind));
  tr.set(keys.root, STRUCTURE_ROOT_VALUE);
}

// ---- plain document operations on a structure

/**
 * The error a sub-document operation (lookupIn, mutateIn, get with a path) should throw for `err`:
 * WRONG_KIND when the document at `keys` is a structure and `err` is what such an operation meets at
 * a structure's root marker, which is neither an object nor an array: PATH_MISMATCH, or CORRUPT_DATA
 * from decoding the whole root (`get('')`, whose entries sit below a marker that is no container).
 * The kind is read (1 point read) only then; every other error keeps its own code.
 */
export async function errorForStructure(tr: Transaction, keys: DocumentKeys, err: unknown): Promise<unknown> {
  if (!isStructureRootError(err)) return err;
  const kind = await tr.get(kindKey(keys));
  return kind === undefined ? err : wrongKind(decodeKind(kind), 'document');
}

/** Whether `err` is what a sub-document operation meets at a structure's root (see {@link errorForStructure}). */
export function isStructureRootError(err: unknown): boolean {
  return isDocumentError(err, 'PATH_MISMATCH') || isDocumentError(err, 'CORRUPT_DATA');
}

/**
 * Rejects a mutateIn that would rewrite a structure's root: `upsert('')` replaces the root's subtree
 * without reading it, and would leave the structure's metadata behind. Costs 1 point read of the kind
 * key, for such specs only.
 *
 * @throws DocumentError WRONG_KIND.
 */
export async function rejectRootUpsertOfStructure(tr: Transaction, keys: DocumentKeys, specs: readonly unknown[]): Promise<void> {
  if (!Array.isArray(specs) || !specs.some(isRootUpsert)) return;
  const kind = await tr.get(kindKey(keys));
  if (kind !== undefined) throw wrongKind(decodeKind(kind), 'document');
}

function isRootUpsert(spec: unknown): boolean {
  if (typeof spec !== 'object' || spec === null) return false;
  const { op, path } = spec as { op?: unknown; path?: unknown };
  return op === 'upsert' && (path === '' || (Array.isArray(path) && path.length === 0));
}

/** The WRONG_KIND error for using a document of kind `found` as a `wanted`. */
export function wrongKind(found: StructureKind | 'document', wanted: StructureKind | 'document'): DocumentError {
  const article = (k: string) => (k === 'document' ? 'a plain JSON document' : `a ${k}`);
  return new DocumentError('WRONG_KIND', `the document is ${article(found)}, not ${article(wanted)}`);
}

/** Decodes the JSON form of a structure from its whole-document range (metadata + data entries, in key order). */
export type JsonFormReader = (entries: readonly KeyValue[], keys: DocumentKeys) => JsonValue;

/**
 * The JSON forms of the structure kinds: the document layer reads a structure's document through
 * them (`get` of a list is its array) without depending on the structures layer, which provides them.
 */
export type JsonForms = ReadonlyMap<StructureKind, JsonFormReader>;

/**
 * The JSON form of a structure whose kind metadata value is `kind`, from its whole-document range.
 *
 * @throws DocumentError CORRUPT_DATA for an unknown kind; INVALID_ARGUMENT when `forms` has none for it.
 */
export function structureJson(forms: JsonForms, kind: Uint8Array, entries: readonly KeyValue[], keys: DocumentKeys): JsonValue {
  const decoded = decodeKind(kind);
  const reader = forms.get(decoded);
  if (reader === undefined) throw new DocumentError('INVALID_ARGUMENT', `this document layer was opened without the JSON form of a ${decoded}`);
  return reader(entries, keys);
}
