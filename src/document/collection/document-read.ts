import { getRangeAllHandedOver } from '../../kv/client/hand-over';
import { keyAfter } from '../../kv/contract/bytes';
import { isKvError } from '../../kv/contract/errors';
import type { KeyValue, Transaction } from '../../kv/contract/types';
import { DocumentError, isDocumentError } from '../errors';
import { structureJson, type JsonForms } from '../keys/kind';
import type { TupleItem } from '../../tuple';
import { DocTransaction } from '../doc-transaction';
import {
  concat,
  DATA_SECTION,
  DocumentKeys,
  documentPrefix,
  META_EXPIRY,
  META_KIND,
  META_LOCK,
  META_SECTION,
  META_VERSION,
  metaNameOf,
} from '../keys/layout';
import { casOf, wasWritten } from '../keys/version';
import type { Cas, DocId, GetResult, JsonValue } from '../types';
import { unflatten } from '../values/flatten';
import type { parsePath } from '../values/path';
import { failWithDiagnosis, readSubtreeEntries, resolvePath } from '../values/tree';
import { decodeExpiry, isExpired } from './expiry';
import { decodeLock, isLocked, LOCKED_CAS } from './lock';

/**
 * Reading whole documents and values at paths: the range reads and how their entries decode into a
 * {@link GetResult} (metadata first: version, kind, expiry; then the data).
 */

/**
 * A whole document: one range read of its metadata and data, or of its data alone when this
 * transaction wrote it (its version is unreadable until commit).
 */
export async function readDocument(tr: Transaction, keys: DocumentKeys, now: number, forms: JsonForms): Promise<GetResult | undefined> {
  const entries = await readDocumentEntries(tr, keys);
  return documentOf(forms, entries, keys.prefix.length, 0, entries.length, () => keys, now);
}

/**
 * The document `id` of the collection whose key prefix is `collectionPrefix`, as {@link readDocument}
 * reads it (the same range, or the same two when this attempt wrote it), for a get of one whole
 * document: its keys are built from the packed id alone (no {@link DocumentKeys}, whose root, bounds
 * and identity a get otherwise builds and drops), and the entries decode in the read's own callback,
 * which also rejects a missing or expired document with DOCUMENT_NOT_FOUND (naming `docId`).
 */
export function readWholeDocument(
  tr: Transaction,
  collectionPrefix: Buffer,
  id: TupleItem,
  now: number,
  forms: JsonForms,
  docId: DocId,
): Promise<GetResult> {
  const prefix = documentPrefix(collectionPrefix, id);
  if (writtenHere(DocTransaction.existing(tr)?.writtenDocuments(), prefix)) return readFound(tr, collectionPrefix, id, now, forms, docId);
  return getRangeAllHandedOver(tr, concat(prefix, META_SECTION), concat(prefix, DATA_SECTION + 1)).then(
    (entries) => {
      const document = documentOf(forms, entries, prefix.length, 0, entries.length, () => new DocumentKeys(collectionPrefix, id), now);
      if (document === undefined) throw notFound(docId);
      return document;
    },
    (err: unknown) => {
      // A range holding a key this attempt wrote with a versionstamp through another layer's record.
      if (!isKvError(err, 'accessed_unreadable')) throw err;
      return readFound(tr, collectionPrefix, id, now, forms, docId);
    },
  );
}

/** {@link readDocument} of the document `id`, rejecting with DOCUMENT_NOT_FOUND when it is missing. */
async function readFound(tr: Transaction, collectionPrefix: Buffer, id: TupleItem, now: number, forms: JsonForms, docId: DocId): Promise<GetResult> {
  const document = await readDocument(tr, new DocumentKeys(collectionPrefix, id), now, forms);
  if (document === undefined) throw notFound(docId);
  return document;
}

/** Whether the document whose packed prefix is `prefix` is among `written` (`DocumentKeys.identity`s). */
function writtenHere(written: ReadonlySet<string> | undefined, prefix: Buffer): boolean {
  return written !== undefined && written.size > 0 && written.has(prefix.toString('latin1'));
}

/** The entries {@link readDocument} decodes: the document's metadata and data, in key order. */
export async function readDocumentEntries(tr: Transaction, keys: DocumentKeys): Promise<KeyValue[]> {
  if (wasWritten(tr, keys)) return readUnversioned(tr, keys);
  try {
    return await getRangeAllHandedOver(tr, keys.begin, keys.end);
  } catch (err) {
    if (!isKvError(err, 'accessed_unreadable')) throw err;
    return readUnversioned(tr, keys);
  }
}

/**
 * Whole documents of the collection whose key prefix is `collectionPrefix`, in the order of `ids`
 * (their tuple elements): `undefined` for one that is missing or expired at `now`.
 *
 * Keys read per call: 1 range read per document (its metadata and data, as {@link readDocument}),
 * all issued before any is awaited; 2 for a document this attempt wrote (its version key is
 * unreadable until commit). Each document's range is built once; the reads are awaited together and
 * decoded in one pass, without a promise or closure of their own per document.
 */
export function readDocuments(
  tr: Transaction,
  collectionPrefix: Buffer,
  ids: readonly TupleItem[],
  now: number,
  forms: JsonForms,
): Promise<(GetResult | undefined)[]> {
  const written = DocTransaction.existing(tr)?.writtenDocuments();
  const reads: Promise<KeyValue[] | GetResult | undefined>[] = new Array<Promise<KeyValue[] | GetResult | undefined>>(ids.length);
  const prefixLengths: number[] = new Array<number>(ids.length);
  for (let i = 0; i < ids.length; i++) {
    const prefix = documentPrefix(collectionPrefix, ids[i]);
    prefixLengths[i] = prefix.length;
    if (writtenHere(written, prefix)) {
      prefixLengths[i] = -1;
      reads[i] = readDocument(tr, new DocumentKeys(collectionPrefix, ids[i]), now, forms);
    } else {
      reads[i] = getRangeAllHandedOver(tr, concat(prefix, META_SECTION), concat(prefix, DATA_SECTION + 1));
    }
  }
  return Promise.all(reads).then(
    (results) => {
      const docs: (GetResult | undefined)[] = new Array<GetResult | undefined>(ids.length);
      for (let i = 0; i < ids.length; i++) {
        const result = results[i];
        if (prefixLengths[i] < 0) {
          docs[i] = result as GetResult | undefined;
          continue;
        }
        const entries = result as KeyValue[];
        docs[i] = documentOf(forms, entries, prefixLengths[i], 0, entries.length, () => new DocumentKeys(collectionPrefix, ids[i]), now);
      }
      return docs;
    },
    (err: unknown) => {
      // A range holding a key this attempt wrote with a versionstamp (its version key, when the
      // document was written through another layer's record): read each document as readDocument does.
      if (!isKvError(err, 'accessed_unreadable')) throw err;
      return Promise.all(ids.map((id) => readDocument(tr, new DocumentKeys(collectionPrefix, id), now, forms)));
    },
  );
}

/**
 * The document in `entries[from, to)`, one document's range (metadata first, then data); `undefined`
 * when there is none or it expired at `now`. A structure reads as its JSON form (`keysOf` gives its
 * keys, needed only then).
 */
export function documentOf(
  forms: JsonForms,
  entries: readonly KeyValue[],
  prefixLength: number,
  from: number,
  to: number,
  keysOf: () => DocumentKeys,
  now: number,
): GetResult | undefined {
  let cas: Cas | undefined;
  let kind: Buffer | undefined;
  let expiresAt: number | undefined;
  let lockedUntil: number | undefined;
  let data = from;
  for (; data < to; data++) {
    const key = entries[data].key;
    if (key[prefixLength] !== META_SECTION) break;
    const name = metaNameOf(key, prefixLength);
    if (name === META_VERSION) cas = casOf(entries[data].value);
    else if (name === META_KIND) kind = entries[data].value;
    else if (name === META_EXPIRY) expiresAt = decodeExpiry(entries[data].value);
    else if (name === META_LOCK) lockedUntil = decodeLock(entries[data].value);
  }
  // A locked document's CAS is the locker's alone.
  if (isLocked(lockedUntil, now)) cas = LOCKED_CAS;
  if (data === to || entries[data].key[prefixLength] !== DATA_SECTION || isExpired(expiresAt, now)) return undefined;
  if (kind !== undefined) return withExpiry({ content: structureJson(forms, kind, entries.slice(from, to), keysOf()), cas }, expiresAt);
  return withExpiry({ content: unflatten(entries, data, to, prefixLength + 1), cas }, expiresAt);
}

/**
 * A document's metadata and data without its version key, which a transaction that wrote the document
 * cannot read before commit (2 range reads, issued together).
 */
async function readUnversioned(tr: Transaction, keys: DocumentKeys): Promise<KeyValue[]> {
  const version = keys.version;
  const [before, after] = await Promise.all([tr.getRangeAll(keys.begin, version), tr.getRangeAll(keyAfter(version), keys.end)]);
  return before.concat(after);
}

/** The value at a (non-empty) path: one range read of its subtree, after resolving indices. */
export async function readPath(tr: Transaction, keys: DocumentKeys, elements: ReturnType<typeof parsePath>, id: DocId): Promise<JsonValue> {
  const path = await resolvePath(tr, keys.root, elements);
  if (path.length > elements.length) {
    const key = path[elements.length];
    const entries = await readSubtreeEntries(tr, key);
    if (entries.length > 0) return unflatten(entries, 0, entries.length, key.length);
  }
  try {
    return await failWithDiagnosis(tr, elements, path);
  } catch (err) {
    if (isDocumentError(err, 'DOCUMENT_NOT_FOUND')) throw notFound(id);
    throw err;
  }
}

/** `result` with `expiresAt` when the document has an expiry. */
export function withExpiry<R extends object>(result: R, expiresAt: number | undefined): R & { expiresAt?: Date } {
  return expiresAt === undefined ? result : { ...result, expiresAt: new Date(expiresAt) };
}

export function notFound(id: DocId): DocumentError {
  return new DocumentError('DOCUMENT_NOT_FOUND', `no document with id ${describeId(id)}`, { id });
}

export function describeId(id: DocId): string {
  return typeof id === 'bigint' ? `${id}n` : JSON.stringify(id);
}
