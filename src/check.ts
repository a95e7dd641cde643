import { Buffer } from 'node:buffer';
import { isDocumentError } from './document/errors';
import { documentOf } from './document/collection/document-read';
import { decodeExpiry } from './document/collection/expiry';
import { docIdOf } from './document/keys/ids';
import { decodeStoredKind, type StructureKind } from './document/keys/kind';
import {
  DATA_SECTION,
  DOCUMENTS_SECTION,
  DocumentKeys,
  decodePosition,
  elementEnd,
  isIntegerElement,
  META_BYTES,
  META_EXPIRY,
  META_KIND,
  META_LENGTH,
  META_SECTION,
  META_SIZE,
  metaNameOf,
} from './document/keys/layout';
import { decodeLeb128 } from './document/keys/leb128';
import type { Manifest } from './document/manifest/manifest';
import type { DocId, JsonValue } from './document/types';
import type { KeyValue } from './kv/contract/types';
import type { DocLayer } from './open';
import { decodeInt64 } from './structures/int64';
import { sortedSetIndexProblems } from './structures/sorted-set';
import { STRUCTURE_JSON_FORMS } from './structures/json-forms';
import { bodyKey } from './structures/structure-keys';
import type { TupleItem } from './tuple';
import { decodeItem, Reader } from './tuple/codec';

/**
 * The document check: walks every document key of a doclayer store through the ordinary KV API and
 * reports what no write of doclayer could have left there. It builds on the engine's own check
 * (`checkLmdbStore` for LMDB), which says that every key and value can be read back, not what they mean.
 */

/** One thing wrong, as {@link checkDocuments} reports it. */
export interface DocumentProblem {
  /** `scope.collection`, or `#<id>` for a collection id the manifest does not have. */
  readonly collection: string;
  /** The document's id, when its key decodes that far. */
  readonly id?: DocId;
  /** The key at fault, in hex, when the problem is one key. */
  readonly key?: string;
  readonly problem: string;
}

/** What {@link checkDocuments} found. */
export interface DocumentCheckReport {
  /** No problem found. */
  readonly ok: boolean;
  /** Documents (and structures) checked, in the collections of the manifest. */
  readonly documents: number;
  readonly problems: DocumentProblem[];
}

/** How far a check has come: called after each of its transactions. */
export interface DocumentCheckProgress {
  readonly documents: number;
  readonly keys: number;
}

export interface DocumentCheckOptions {
  onProgress?: (progress: DocumentCheckProgress) => void;
  /**
   * Keys one transaction reads before it stops at the next document (default 10,000), so that each
   * stays well inside FoundationDB's 5 s. A document is always read whole, in one transaction.
   */
  keysPerTransaction?: number;
}

const DEFAULT_KEYS_PER_TRANSACTION = 10_000;

/** The keys of one document as a page read them; a key that does not decode stands alone. */
interface KeyGroup {
  readonly entries: KeyValue[];
  /** The collection id, or the error of a key whose collection id does not decode. */
  readonly collectionId: number | undefined;
  /** Where the id ends in the keys: the document prefix's length; -1 when the key does not decode. */
  readonly prefixLength: number;
  readonly error?: unknown;
}

interface Page {
  readonly groups: KeyGroup[];
  readonly keys: number;
  readonly next: Buffer | undefined;
}

/**
 * Checks every document of `db`: reads the manifest, then every key of the documents section in key
 * order, in transactions of about `keysPerTransaction` keys each, each resuming at the first key of
 * the document where the last stopped (each document is read in one snapshot; the walk as a whole is
 * not one, so documents written meanwhile are seen in either state). Reports, without throwing:
 *
 * - keys that do not decode under the document layout (collection id, document id, section byte);
 * - documents whose entries do not decode (the decoders' CORRUPT_DATA: entries below a scalar, a
 *   missing container entry, a bad leaf, a structure's bad item), expired documents included;
 * - structures whose counters disagree with their members: a set's, map's or queue's size, a text's
 *   lengths; a list whose positions are not contiguous; a structure's kind without its root entry;
 * - documents of collection ids that the manifest does not have (left over from a drop), one problem
 *   per collection id with their number.
 *
 * Reads: the manifest (1 range read, again at the end when unknown collections were seen, to leave
 * out those created meanwhile), every key of `<prefix> 0x01`. Writes nothing.
 *
 * @throws KvError when the engine fails a read (damage the engine sees: run its own check first).
 */
export async function checkDocuments(db: DocLayer, options: DocumentCheckOptions = {}): Promise<DocumentCheckReport> {
  const perTransaction = options.keysPerTransaction ?? DEFAULT_KEYS_PER_TRANSACTION;
  const problems: DocumentProblem[] = [];
  const names = await collectionNames(db, problems);
  const unknown = new Map<number, number>();
  const documentsSection = Buffer.concat([db.layout.prefix, Buffer.of(DOCUMENTS_SECTION)]);
  const end = Buffer.concat([db.layout.prefix, Buffer.of(DOCUMENTS_SECTION + 1)]);
  let from: Buffer | undefined = documentsSection;
  let documents = 0;
  let keys = 0;
  while (from !== undefined) {
    const begin: Buffer = from;
    const page = await db.kv.transact((tr) => readPage(tr.snapshot().getRange(begin, end), documentsSection.length, perTransaction));
    for (const group of page.groups) {
      if (group.collectionId === undefined || group.prefixLength < 0) {
        problems.push(keyProblem(group, names));
        continue;
      }
      const name = names?.get(group.collectionId);
      if (names !== undefined && name === undefined) {
        unknown.set(group.collectionId, (unknown.get(group.collectionId) ?? 0) + 1);
        continue;
      }
      documents++;
      problems.push(...checkDocument(group, name ?? `#${group.collectionId}`, documentsSection.length));
    }
    keys += page.keys;
    from = page.next;
    options.onProgress?.({ documents, keys });
  }
  if (unknown.size > 0) {
    const now = await collectionNames(db, []);
    for (const [id, count] of unknown) {
      if (now?.has(id)) continue;
      problems.push({
        collection: `#${id}`,
        problem: `${count} document${count === 1 ? '' : 's'} in collection id ${id}, which the manifest does not have (left over from a drop?)`,
      });
    }
  }
  return { ok: problems.length === 0, documents, problems };
}

/** The manifest's collections by id; `undefined`, with a problem, when the manifest does not read. */
async function collectionNames(db: DocLayer, problems: DocumentProblem[]): Promise<Map<number, string> | undefined> {
  let manifest: Manifest;
  try {
    manifest = await db.getManifest();
  } catch (err) {
    if (!isDocumentError(err)) throw err;
    problems.push({ collection: '(manifest)', problem: `the collections manifest does not read: ${err.message}` });
    return undefined;
  }
  const names = new Map<number, string>();
  for (const scope of manifest.scopes) {
    for (const collection of scope.collections) names.set(parseInt(collection.uid, 16), `${scope.name}.${collection.name}`);
  }
  return names;
}

/**
 * The keys of `pairs` grouped by document, up to the first document that starts after `want` keys
 * were read: its first key is where the next page starts.
 */
async function readPage(pairs: AsyncIterable<KeyValue>, sectionLength: number, want: number): Promise<Page> {
  const groups: KeyGroup[] = [];
  let current: { entries: KeyValue[]; prefix: Buffer } | undefined;
  let keys = 0;
  for await (const pair of pairs) {
    if (current !== undefined && belongsTo(pair.key, current.prefix)) {
      current.entries.push(pair);
      keys++;
      continue;
    }
    if (keys >= want) return { groups, keys, next: pair.key };
    keys++;
    const group = groupOf(pair, sectionLength);
    groups.push(group);
    current = group.prefixLength < 0 ? undefined : { entries: group.entries, prefix: pair.key.subarray(0, group.prefixLength) };
  }
  return { groups, keys, next: undefined };
}

/** The group that `pair` starts: its collection id and document prefix, or what does not decode. */
function groupOf(pair: KeyValue, sectionLength: number): KeyGroup {
  const key = pair.key;
  let collectionId: number | undefined;
  try {
    const leb = decodeLeb128(key, sectionLength);
    collectionId = leb.value;
    const reader = new Reader(key, sectionLength + leb.length);
    docIdOf(decodeItem(reader));
    const section = key[reader.pos];
    if (section !== META_SECTION && section !== DATA_SECTION) {
      return { entries: [pair], collectionId, prefixLength: -1, error: new Error(sectionProblem(section)) };
    }
    return { entries: [pair], collectionId, prefixLength: reader.pos };
  } catch (err) {
    return { entries: [pair], collectionId, prefixLength: -1, error: err };
  }
}

function sectionProblem(section: number | undefined): string {
  return section === undefined
    ? 'a key that ends after the document id'
    : `a key whose byte after the document id is 0x${section.toString(16).padStart(2, '0')}, neither metadata (0x00) nor data (0x01)`;
}

/** Whether `key` is one of the document's whose prefix is `prefix` (see `scan-page.ts`). */
function belongsTo(key: Buffer, prefix: Buffer): boolean {
  const n = prefix.length;
  return key.length > n && key[n] <= DATA_SECTION && key.compare(prefix, 0, n, 0, n) === 0;
}

function keyProblem(group: KeyGroup, names: Map<number, string> | undefined): DocumentProblem {
  const key = group.entries[0].key;
  const collection = group.collectionId === undefined ? '?' : (names?.get(group.collectionId) ?? `#${group.collectionId}`);
  return { collection, key: key.toString('hex'), problem: `a key that does not decode: ${messageOf(group.error)}` };
}

/** The problems of one document of a known collection. */
function checkDocument(group: KeyGroup, collection: string, sectionLength: number): DocumentProblem[] {
  const { entries, prefixLength } = group;
  const prefix = entries[0].key.subarray(0, prefixLength);
  const collectionPrefix = prefix.subarray(0, sectionLength + decodeLeb128(prefix, sectionLength).length);
  const element: TupleItem = decodeItem(new Reader(prefix, collectionPrefix.length));
  const id = docIdOf(element);
  const keys = new DocumentKeys(collectionPrefix, element);
  const problem = (text: string): DocumentProblem => ({ collection, id, problem: text });
  const meta = metadataOf(entries, prefixLength);
  let content: JsonValue | undefined;
  try {
    // `-Infinity`: expired documents are checked as well.
    content = documentOf(STRUCTURE_JSON_FORMS, entries, prefixLength, 0, entries.length, () => keys, -Infinity)?.content;
    if (meta.kind === undefined) return [];
    const { kind, expiresAt } = decodeStoredKind(meta.kind);
    if (content === undefined) return [problem(`a ${kind} without its root entry`)];
    return [...expiryProblems(expiresAt, meta.expiry), ...structureProblems(kind, content, meta, entries, keys)].map(problem);
  } catch (err) {
    return [problem(`the document does not decode: ${messageOf(err)}`)];
  }
}

interface Metadata {
  kind?: Buffer;
  expiry?: Buffer;
  size?: Buffer;
  length?: Buffer;
  bytes?: Buffer;
}

function metadataOf(entries: readonly KeyValue[], prefixLength: number): Metadata {
  const meta: Metadata = {};
  for (const { key, value } of entries) {
    if (key[prefixLength] !== META_SECTION) break;
    const name = metaNameOf(key, prefixLength);
    if (name === META_KIND) meta.kind = value;
    else if (name === META_EXPIRY) meta.expiry = value;
    else if (name === META_SIZE) meta.size = value;
    else if (name === META_LENGTH) meta.length = value;
    else if (name === META_BYTES) meta.bytes = value;
  }
  return meta;
}

/** Where a structure's stored counters disagree with what it holds (see each structure's file). */
function structureProblems(kind: StructureKind, content: JsonValue, meta: Metadata, entries: readonly KeyValue[], keys: DocumentKeys): string[] {
  switch (kind) {
    case 'set':
    case 'queue':
      return counterProblem('size', meta.size, (content as JsonValue[]).length, kind === 'set' ? 'members' : 'items');
    case 'map':
      return counterProblem('size', meta.size, Object.keys(content as object).length, 'keys');
    case 'text':
      return [
        ...counterProblem('length', meta.length, (content as string).length, 'UTF-16 code units'),
        ...counterProblem('byte length', meta.bytes, Buffer.byteLength(content as string), 'UTF-8 bytes'),
      ];
    case 'sortedset':
      return [...counterProblem('size', meta.size, (content as JsonValue[]).length, 'members'), ...sortedSetIndexProblems(entries, keys)];
    case 'list':
      return listGaps(entries, bodyKey(keys));
    case 'counter':
      return [];
  }
}

/** A structure's expiry is in its kind value and in its expiry key (kind.ts): the two must agree. */
function expiryProblems(inKind: number | undefined, stored: Buffer | undefined): string[] {
  const inKey = stored === undefined ? undefined : decodeExpiry(stored);
  if (inKind === inKey) return [];
  const at = (ms: number | undefined) => (ms === undefined ? 'none' : new Date(ms).toISOString());
  return [`its kind records the expiry ${at(inKind)} but its expiry key ${at(inKey)}`];
}

function counterProblem(what: string, stored: Buffer | undefined, actual: number, of: string): string[] {
  const recorded = decodeInt64(stored);
  return recorded === BigInt(actual) ? [] : [`its stored ${what} is ${recorded} but it holds ${actual} ${of}`];
}

/** A list's positions must be contiguous: its length is `last - first + 1` (`list.ts`). */
function listGaps(entries: readonly KeyValue[], body: Buffer): string[] {
  const bodyLength = body.length;
  let previous: number | undefined;
  for (const { key } of entries) {
    if (key.length <= bodyLength || !isIntegerElement(key, bodyLength) || elementEnd(key, bodyLength) !== key.length) continue;
    if (key.compare(body, 0, bodyLength, 0, bodyLength) !== 0) continue;
    const position = decodePosition(key, bodyLength);
    if (previous !== undefined && position !== previous + 1) {
      return [`its positions jump from ${previous} to ${position}: its length would count elements it does not have`];
    }
    previous = position;
  }
  return [];
}

function messageOf(err: unknown): string {
  return err instanceof Error ? `${err.name === 'Error' ? '' : `${err.name} `}${err.message}`.trim() : String(err);
}
