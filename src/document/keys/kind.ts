import { Buffer } from 'node:buffer';
import type { KeyValue, ReadTransaction, Transaction } from '../../kv/contract/types';
import { corruptData, DocumentError, isDocumentError } from '../errors';
import { decodeExpiry, encodeExpiry, isExpired, readPresence } from '../collection/expiry';
import type { DocumentKeys } from './layout';
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
 * with creation, removal and expiry changes) and never write it.
 *
 * A structure with an expiry carries it twice: in the document's expiry key, as every document does
 * (so `get`, `exists` and the purge see it), and after its name in the kind value, `tuple(expiresAt)`,
 * so that the one point read every structure operation makes of the kind also tells whether the
 * structure has expired, with no extra key read. Whoever changes a structure's expiry writes both: a
 * structure's creation and `touch` (src/structures), and the document layer's `touch`.
 */
export type StructureKind = 'list' | 'map' | 'set' | 'queue' | 'counter' | 'text' | 'sortedset';

const KINDS: ReadonlySet<string> = new Set<StructureKind>(['list', 'map', 'set', 'queue', 'counter', 'text', 'sortedset']);

/** The first byte of a structure's root entry: no JSON value's entry starts with it ('$'). */
export const STRUCTURE_MARKER = 0x24;
/** The value of a structure's root entry. */
export const STRUCTURE_ROOT_VALUE: Buffer = Buffer.of(STRUCTURE_MARKER);

const encoded = new Map<StructureKind, Buffer>();

/**
 * The kind metadata value of a structure of `kind` expiring at `expiresAt` (ms; `undefined`: never):
 * the kind's name in ASCII, then `tuple(expiresAt)` when it has an expiry.
 */
export function encodeKind(kind: StructureKind, expiresAt?: number): Buffer {
  let value = encoded.get(kind);
  if (value === undefined) {
    value = Buffer.from(kind, 'latin1');
    encoded.set(kind, value);
  }
  return expiresAt === undefined ? value : Buffer.concat([value, encodeExpiry(expiresAt)]);
}

/** A kind metadata value taken apart: the kind, and the structure's expiry (ms) if it has one. */
export interface StoredKind {
  readonly kind: StructureKind;
  readonly expiresAt: number | undefined;
}

/**
 * The kind and expiry a kind metadata value holds. The name is printable ASCII; the expiry, when
 * there is one, starts at the first byte below 0x20 (a tuple integer's type code).
 *
 * @throws DocumentError CORRUPT_DATA for an unknown kind or a malformed expiry.
 */
export function decodeStoredKind(value: Uint8Array): StoredKind {
  // Read by every structure operation: a kind without an expiry is matched against the known names'
  // bytes, with no string made and no object allocated.
  const plain = PLAIN_KINDS.find((known) => sameBytes(known.name, value));
  if (plain !== undefined) return plain.stored;
  const bytes = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  let end = 0;
  while (end < bytes.length && bytes[end] >= 0x20) end++;
  const name = bytes.toString('latin1', 0, end);
  if (!KINDS.has(name)) throw corruptData(`document data: unknown structure kind ${JSON.stringify(name)}`);
  return { kind: name as StructureKind, expiresAt: end === bytes.length ? undefined : decodeExpiry(bytes.subarray(end)) };
}

/** Each kind's value without an expiry, and what it decodes to (shared: a {@link StoredKind} is read-only). */
const PLAIN_KINDS: readonly { readonly name: Buffer; readonly stored: StoredKind }[] = [...KINDS].map((kind) => ({
  name: Buffer.from(kind, 'latin1'),
  stored: { kind: kind as StructureKind, expiresAt: undefined },
}));

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** The kind a kind metadata value names. */
export function decodeKind(value: Uint8Array): StructureKind {
  return decodeStoredKind(value).kind;
}

/** The kind metadata key of a document. */
export function kindKey(keys: DocumentKeys): Buffer {
  return keys.kind;
}

/** What is at a document's keys, as structure operations see it. */
export interface KindCheck {
  /** What lives there: `undefined` when nothing does, including an expired document or structure. */
  readonly kind: StructureKind | 'document' | undefined;
  /**
   * An expired document or structure (or a stray expiry) is there: it reads as missing, and a
   * structure created in its place must clear it first.
   */
  readonly stale: boolean;
  /** The expiry (ms) of what is there, live or stale, when it has one. */
  readonly expiresAt: number | undefined;
}

/**
 * What is at `keys`. Reads: the kind key (1 point read), which holds a structure's expiry too; when it
 * is absent, also the expiry and root entries (1 range read, see `readPresence`). A document or
 * structure that expired at `now` is missing.
 */
export async function inspectKind(tr: ReadTransaction, keys: DocumentKeys, now: number): Promise<KindCheck> {
  const value = await tr.get(kindKey(keys));
  if (value !== undefined) {
    const { kind, expiresAt } = decodeStoredKind(value);
    if (expiresAt === undefined) return LIVE_CHECKS.get(kind)!;
    return isExpired(expiresAt, now) ? { kind: undefined, stale: true, expiresAt } : { kind, stale: false, expiresAt };
  }
  const { exists, expiresAt } = await readPresence(tr, keys);
  if (expiresAt !== undefined && (!exists || isExpired(expiresAt, now))) return { kind: undefined, stale: true, expiresAt };
  if (expiresAt === undefined) return exists ? LIVE_CHECKS.get('document')! : NOTHING_THERE;
  return { kind: exists ? 'document' : undefined, stale: false, expiresAt };
}

/**
 * The checks of what never expires, shared (a {@link KindCheck} is read-only): every structure
 * operation inspects its kind, and most structures have no expiry.
 */
const LIVE_CHECKS: ReadonlyMap<StructureKind | 'document', KindCheck> = new Map(
  [...KINDS, 'document'].map((kind) => [
    kind as StructureKind | 'document',
    Object.freeze({ kind: kind as StructureKind | 'document', stale: false, expiresAt: undefined }),
  ]),
);
const NOTHING_THERE: KindCheck = Object.freeze({ kind: undefined, stale: false, expiresAt: undefined });

/**
 * Creates a structure's document: writes its kind key (with its expiry, `undefined` for none) and its
 * root entry (2 blind writes), after clearing an expired document in its place (`stale`). The expiry
 * key and the expiry index are the caller's to write.
 */
export function writeKind(tr: Transaction, keys: DocumentKeys, kind: StructureKind, stale = false, expiresAt?: number): void {
  if (stale) tr.clearRange(keys.begin, keys.end);
  tr.set(kindKey(keys), encodeKind(kind, expiresAt));
  tr.set(keys.root, STRUCTURE_ROOT_VALUE);
}

/**
 * Gives a structure whose kind metadata value is `stored` the expiry `expiresAt` in its kind value (1
 * key written), for a document-layer write that changes its expiry key (`touch`).
 */
export function rewriteKindExpiry(tr: Transaction, keys: DocumentKeys, stored: Uint8Array, expiresAt: number | undefined): void {
  tr.set(kindKey(keys), encodeKind(decodeKind(stored), expiresAt));
}

/** The kind metadata value among a whole document's entries, `undefined` for a plain document. */
export function storedKindOf(entries: readonly KeyValue[], keys: DocumentKeys): Buffer | undefined {
  const key = kindKey(keys);
  return entries.find((entry) => entry.key.equals(key))?.value;
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
