import type { TupleItem } from '../../tuple';
import { isDocumentError } from '../errors';
import { docIdElement } from '../keys/ids';
import { areWritable, DocumentKeys, writableDocumentKeys } from '../keys/layout';
import type { CollectionRegistry } from '../manifest/collection-registry';
import type { CollectionPath } from '../manifest/manifest';
import type { DocId, JsonValue } from '../types';
import { flatten, flattenChecked, type Entries } from '../values/flatten';
import { assertJsonValue } from '../values/json-value';

/**
 * A whole document a write was given (insert, upsert, replace): checked as JSON when the write
 * starts, before anything else about it, and flattened once per root key (a retry of the transaction,
 * or another call of a combined batch, reuses the entries).
 *
 * Where the layer's cached manifest knows the collection, the document's keys there are known before
 * the transaction starts (it almost always finds the same collection), and the check is the walk
 * that flattens the document at that root rather than a walk of its own. A limit that walk reaches
 * (KEY_TOO_LARGE, DOCUMENT_TOO_LARGE) is thrown only when the write asks for the entries at that root,
 * where flattening in the transaction would have thrown it, so errors keep their order.
 */
export class DocumentToWrite {
  /** The root the entries were flattened at, and the entries or the limit reached there. */
  private root: Buffer | undefined;
  private entries: Entries | undefined;
  private limit: unknown;

  /**
   * @throws DocumentError INVALID_VALUE, VALUE_TOO_DEEP (see `assertJsonValue`).
   */
  constructor(
    readonly doc: JsonValue,
    private readonly maxKeyBytes: number,
    /** The document's keys in the collection the cached manifest knows, if it knows it and they are writable. */
    private readonly likely: DocumentKeys | undefined,
  ) {
    if (likely === undefined) {
      assertJsonValue(doc, 'the document');
      return;
    }
    this.root = likely.root;
    try {
      this.entries = flattenChecked(doc, likely.root, maxKeyBytes, 'the document');
    } catch (err) {
      if (!isDocumentError(err, 'KEY_TOO_LARGE') && !isDocumentError(err, 'DOCUMENT_TOO_LARGE')) throw err;
      this.limit = err;
    }
  }

  /**
   * The document's keys in the collection whose key prefix is `collectionPrefix` (the write's target).
   *
   * @throws DocumentError KEY_TOO_LARGE as `writableDocumentKeys`.
   */
  keysIn(collectionPrefix: Uint8Array, element: TupleItem): DocumentKeys {
    const likely = this.likely;
    return likely !== undefined && likely.collectionPrefix === collectionPrefix
      ? likely
      : writableDocumentKeys(collectionPrefix, element, this.maxKeyBytes);
  }

  /**
   * The document's entries at the data key `root`.
   *
   * @throws DocumentError KEY_TOO_LARGE, DOCUMENT_TOO_LARGE (see `flatten`).
   */
  entriesAt(root: Buffer): Entries {
    if (this.root === undefined || !this.root.equals(root)) {
      this.entries = flatten(this.doc, root, this.maxKeyBytes);
      this.root = root;
    }
    if (this.entries === undefined) throw this.limit;
    return this.entries;
  }
}

/**
 * Checks `doc` as a whole document to write under `id` in the collection at `path` (see
 * {@link DocumentToWrite}); the id is checked afterwards, by the caller.
 *
 * @throws DocumentError INVALID_VALUE, VALUE_TOO_DEEP.
 */
export function documentToWrite(doc: JsonValue, id: DocId, registry: CollectionRegistry, path: CollectionPath, maxKeyBytes: number): DocumentToWrite {
  return new DocumentToWrite(doc, maxKeyBytes, likelyKeys(id, registry, path, maxKeyBytes));
}

/** The document's keys in the collection the cached manifest has at `path`, when it has one and they are writable. */
function likelyKeys(id: DocId, registry: CollectionRegistry, path: CollectionPath, maxKeyBytes: number): DocumentKeys | undefined {
  const target = registry.cachedTarget(path);
  if (target === undefined) return undefined;
  let element: TupleItem;
  try {
    element = docIdElement(id);
  } catch {
    // The id's error comes after the document's check.
    return undefined;
  }
  const keys = new DocumentKeys(target.prefix, element);
  return areWritable(keys, maxKeyBytes) ? keys : undefined;
}
