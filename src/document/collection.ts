import { keyAfter, strinc } from '../kv/bytes';
import type { Database } from '../kv/database';
import { isKvError } from '../kv/errors';
import type { KeyValue, Transaction } from '../kv/types';
import type { TupleItem } from '../tuple';
import { decodeItem, Reader } from '../tuple/codec';
import { packPrefixed } from '../tuple/pack';
import type { CollectionRegistry } from './collection-registry';
import { DocumentError, isDocumentError } from './errors';
import { flatten, unflatten, type Entries } from './flatten';
import { docIdElement, docIdOf, generateId } from './ids';
import { assertJsonValue } from './json-value';
import { DATA_SECTION, DocumentKeys, META_SECTION, META_VERSION } from './layout';
import { parsePath } from './path';
import { lookupIn, mutateIn } from './subdoc';
import { failWithDiagnosis, readSubtreeEntries, resolvePath, writeEntries } from './tree';
import type {
  Cas,
  CasOptions,
  DocId,
  GetResult,
  InsertOptions,
  InsertResult,
  JsonValue,
  LookupInResult,
  LookupInSpec,
  MutateInOptions,
  MutateInResult,
  MutateInSpec,
  MutationResult,
  Path,
  ScanItem,
  ScanOptions,
  TransactionOption,
} from './types';
import { casForRead, casOf, checkCas, forgetWrites, wasWritten, writeVersion, writtenDocuments } from './version';

/** What a collection needs from the layer that made it. */
export interface CollectionContext {
  readonly kv: Database;
  readonly registry: CollectionRegistry;
  /** `<prefix> 0x01 <leb128(c)>` for a collection id. */
  collectionPrefix(id: number): Buffer;
}

const DEFAULT_PAGE_SIZE = 100;

/**
 * The documents of one collection. Every method runs in its own transaction (retried on conflicts),
 * or joins the caller's with `{ tr }`: then it neither commits nor retries, and its writes are the
 * caller's to commit.
 *
 * Costs are in KV operations: point reads, range reads (R), keys written (W), range clears. `n` is the
 * number of entries (containers plus leaves, plus chunks of long strings) of the value concerned; a
 * path with `i` array indices costs `i` limit-1 range reads to find each array's first (or last)
 * element. Every write also sets the version key (one blind versionstamped write, never read by
 * writes without `cas`).
 */
export class Collection {
  private prefix: Buffer | undefined;

  /** @internal Use `DocLayer.collection()`. */
  constructor(
    private readonly context: CollectionContext,
    readonly scope: string,
    readonly name: string,
  ) {}

  /**
   * Inserts a new document, under `opts.id` or a generated UUIDv7 id.
   *
   * Cost: 1 point read (does the id exist), n keys written, the version key.
   *
   * @throws DocumentError DOCUMENT_EXISTS, INVALID_VALUE, VALUE_TOO_DEEP, DOCUMENT_TOO_LARGE,
   *   KEY_TOO_LARGE, INVALID_ARGUMENT (id); nothing is written when any is thrown.
   */
  async insert(doc: JsonValue, opts: InsertOptions = {}): Promise<InsertResult> {
    assertJsonValue(doc, 'the document');
    const id = opts.id ?? generateId();
    const element = docIdElement(id);
    const flattened = flattenOnce(doc);
    const { cas } = await this.write(opts.tr, async (tr) => {
      const { prefix, create } = await this.prefixToWrite(tr);
      const keys = new DocumentKeys(prefix, element);
      const entries = flattened(keys.root);
      if (create === undefined && (await tr.get(keys.root)) !== undefined) {
        throw new DocumentError('DOCUMENT_EXISTS', `a document with id ${describeId(id)} exists`, { id });
      }
      create?.();
      writeEntries(tr, entries);
      writeVersion(tr, keys);
    });
    return { id, cas };
  }

  /**
   * Writes the document whether or not it exists, replacing it whole.
   *
   * Cost: no reads; 1 range clear (the old document), n keys written, the version key.
   *
   * @throws DocumentError INVALID_VALUE, VALUE_TOO_DEEP, DOCUMENT_TOO_LARGE, KEY_TOO_LARGE,
   *   INVALID_ARGUMENT; nothing is written when any is thrown.
   */
  async upsert(id: DocId, doc: JsonValue, opts: TransactionOption = {}): Promise<MutationResult> {
    assertJsonValue(doc, 'the document');
    const element = docIdElement(id);
    const flattened = flattenOnce(doc);
    return this.write(opts.tr, async (tr) => {
      const { prefix, create } = await this.prefixToWrite(tr);
      const keys = new DocumentKeys(prefix, element);
      const entries = flattened(keys.root);
      create?.();
      tr.clearRange(keys.begin, keys.end);
      writeEntries(tr, entries);
      writeVersion(tr, keys);
    });
  }

  /**
   * Replaces an existing document whole.
   *
   * Cost: 1 point read (the root entry, or with `cas` the version key), 1 range clear, n keys
   * written, the version key.
   *
   * @throws DocumentError DOCUMENT_NOT_FOUND, CAS_MISMATCH, INVALID_VALUE, VALUE_TOO_DEEP,
   *   DOCUMENT_TOO_LARGE, KEY_TOO_LARGE, INVALID_ARGUMENT; nothing is written when any is thrown.
   */
  async replace(id: DocId, doc: JsonValue, opts: CasOptions = {}): Promise<MutationResult> {
    assertJsonValue(doc, 'the document');
    const element = docIdElement(id);
    const flattened = flattenOnce(doc);
    return this.write(opts.tr, async (tr) => {
      const keys = await this.keysToRead(tr, element);
      if (keys === undefined) throw notFound(id);
      const entries = flattened(keys.root);
      await this.mustExist(tr, keys, id, opts.cas);
      tr.clearRange(keys.begin, keys.end);
      writeEntries(tr, entries);
      writeVersion(tr, keys);
    });
  }

  /**
   * Removes a document and every key it has. The cas returned is `undefined`: a removed document has
   * no version.
   *
   * Cost: 1 point read (the root entry, or with `cas` the version key), 1 range clear.
   *
   * @throws DocumentError DOCUMENT_NOT_FOUND, CAS_MISMATCH, INVALID_ARGUMENT.
   */
  async remove(id: DocId, opts: CasOptions = {}): Promise<MutationResult> {
    const element = docIdElement(id);
    return this.write(opts.tr, async (tr) => {
      const keys = await this.keysToRead(tr, element);
      if (keys === undefined) throw notFound(id);
      await this.mustExist(tr, keys, id, opts.cas);
      tr.clearRange(keys.begin, keys.end);
      return 'removed' as const;
    });
  }

  /**
   * Reads a whole document, or the value at `path` (`''` or `[]`: the whole document).
   *
   * Cost of a whole document: 1 range read of the document's keys (metadata and data), nothing
   * else. Cost with a path: 1 range read of the subtree at the path (the cost does not grow with the
   * rest of the document), 1 limit-1 range read per array index in the path, and 1 snapshot point read
   * of the version key for the cas. Only when nothing is found: 1 point read per path component, to
   * tell PATH_NOT_FOUND from PATH_MISMATCH.
   *
   * The cas is `undefined` for a document written earlier in the same transaction.
   *
   * @throws DocumentError DOCUMENT_NOT_FOUND, PATH_NOT_FOUND, PATH_MISMATCH, INVALID_PATH,
   *   INVALID_ARGUMENT.
   */
  get<T = JsonValue>(id: DocId, opts?: TransactionOption): Promise<GetResult<T>>;
  get<T = JsonValue>(id: DocId, path: Path, opts?: TransactionOption): Promise<GetResult<T>>;
  async get<T = JsonValue>(
    id: DocId,
    pathOrOpts?: Path | TransactionOption,
    maybeOpts?: TransactionOption,
  ): Promise<GetResult<T>> {
    const hasPath = typeof pathOrOpts === 'string' || Array.isArray(pathOrOpts);
    const opts = (hasPath ? maybeOpts : ((pathOrOpts as TransactionOption | undefined) ?? maybeOpts)) ?? {};
    const elements = hasPath ? parsePath(pathOrOpts as Path) : [];
    const element = docIdElement(id);
    return this.read(opts.tr, async (tr) => {
      const keys = await this.keysToRead(tr, element);
      if (keys === undefined) throw notFound(id);
      if (elements.length === 0) {
        const found = await readDocument(tr, keys);
        if (found === undefined) throw notFound(id);
        return found as GetResult<T>;
      }
      const [content, cas] = await Promise.all([readPath(tr, keys, elements, id), casForRead(tr, keys)]);
      return { content: content as T, cas };
    });
  }

  /**
   * Whether the document exists.
   *
   * Cost: 1 point read (the root entry).
   *
   * @throws DocumentError INVALID_ARGUMENT (id).
   */
  async exists(id: DocId, opts: TransactionOption = {}): Promise<boolean> {
    const element = docIdElement(id);
    return this.read(opts.tr, async (tr) => {
      const keys = await this.keysToRead(tr, element);
      return keys !== undefined && (await tr.get(keys.root)) !== undefined;
    });
  }

  /**
   * Reads several whole documents in one transaction, all reads issued together; `undefined` for a
   * missing one.
   *
   * Cost: 1 range read per id, as {@link get}.
   *
   * @throws DocumentError INVALID_ARGUMENT (an id).
   */
  async getMany(ids: readonly DocId[], opts: TransactionOption = {}): Promise<(GetResult | undefined)[]> {
    if (!Array.isArray(ids)) throw new DocumentError('INVALID_ARGUMENT', 'getMany takes an array of ids');
    const elements = ids.map(docIdElement);
    return this.read(opts.tr, async (tr) => {
      const prefix = await this.prefixToRead(tr);
      if (prefix === undefined) return elements.map(() => undefined);
      return Promise.all(elements.map((element) => readDocument(tr, new DocumentKeys(prefix, element))));
    });
  }

  /**
   * The documents of the collection in id order, from `start` (inclusive) to `end` (exclusive), at
   * most `limit` of them. Pages of `pageSize` documents are read by range reads, each page in a
   * transaction of its own unless `tr` is given; a document is never split between pages.
   *
   * Cost per page: range reads of the page's documents' keys (plus the first key of the next
   * document).
   *
   * @throws DocumentError INVALID_ARGUMENT (ids, pageSize, limit).
   */
  async *scan(opts: ScanOptions = {}): AsyncIterable<ScanItem> {
    const pageSize = opts.pageSize ?? DEFAULT_PAGE_SIZE;
    if (!Number.isSafeInteger(pageSize) || pageSize < 1) {
      throw new DocumentError('INVALID_ARGUMENT', `pageSize is a positive integer, got ${String(pageSize)}`);
    }
    const limit = opts.limit ?? Infinity;
    if (limit !== Infinity && (!Number.isSafeInteger(limit) || limit < 0)) {
      throw new DocumentError('INVALID_ARGUMENT', `limit is a non-negative integer, got ${String(limit)}`);
    }
    const startElement = opts.start === undefined ? undefined : docIdElement(opts.start);
    const endElement = opts.end === undefined ? undefined : docIdElement(opts.end);
    const collection = this.cachedPrefix() ?? (await this.read(opts.tr, (tr) => this.prefixToRead(tr)));
    if (collection === undefined) return;
    let begin = startElement === undefined ? collection : packPrefixed(collection, [startElement]);
    const end = endElement === undefined ? strinc(collection) : packPrefixed(collection, [endElement]);
    let remaining = limit;
    while (remaining > 0 && Buffer.compare(begin, end) < 0) {
      const want = Math.min(pageSize, remaining);
      const from = begin;
      const page = await this.read(opts.tr, (tr) => readPage(tr, collection, from, end, want));
      for (const item of page.items) yield item;
      remaining -= page.items.length;
      if (page.next === undefined) return;
      begin = page.next;
    }
  }

  /**
   * Runs lookup specs (get, exists, count; at most 16) against one document, reads issued together.
   * Each entry holds its spec's value or its own error (`exists` is `false` for PATH_NOT_FOUND); the
   * call fails only for document-level errors.
   *
   * Cost per spec: as {@link get} with a path for `get`; 1 point read for `exists`; for `count`, 1
   * point read plus 2 limit-1 range reads for an array or 1 range read of the subtree for an object.
   * Plus 1 snapshot point read of the version key for the cas.
   *
   * @throws DocumentError DOCUMENT_NOT_FOUND, INVALID_ARGUMENT (spec list, an unknown op, `exists`
   *   of the whole document).
   */
  async lookupIn(id: DocId, specs: readonly LookupInSpec[], opts: TransactionOption = {}): Promise<LookupInResult> {
    const element = docIdElement(id);
    return this.read(opts.tr, async (tr) => {
      const keys = await this.keysToRead(tr, element);
      if (keys === undefined) throw notFound(id);
      const [entries, cas] = await Promise.all([lookupIn(tr, keys, specs), casForRead(tr, keys)]);
      return { entries, cas };
    });
  }

  /**
   * Applies mutate specs (at most 16) to one document, all or nothing, in order; Couchbase's
   * sub-document semantics (see docs/documents.md). With `storeSemantics` `'upsert'` or `'insert'`
   * a missing document is created (its root an array when the first spec addresses one).
   *
   * Cost per spec:
   * - insert, upsert (of a field): 1 point read of the parent's entry (plus 1 of the field, for
   *   insert), 1 range clear of the old value (upsert), the new value's n keys.
   * - replace, remove (of a key): 1 point read of the target, 1 range clear, n keys written.
   * - remove of an array element: 1 limit-1 read for `[0]`/`[-1]`, else 2; 1 range clear; in the
   *   middle, the shorter side of the array is moved one position (1 range read, its keys rewritten).
   * - arrayAppend, arrayPrepend: 1 point read of the array's marker, 1 limit-1 range read, the new
   *   elements' keys.
   * - arrayInsert: 2 limit-1 range reads; the shorter side moves as for remove.
   * - arrayAddUnique: 1 range read of the array, the new element's keys.
   * - increment, decrement: 1 point read of the value, 1 key written.
   * - createPath: on a miss, 1 point read per path component and 1 key per parent created.
   * Plus the version key; with `cas`, 1 point read of it. A call that writes 1 MB or more also reads
   * the document's data (1 snapshot range read) to check the size limit.
   *
   * The cas is `undefined` when the specs removed the document (`remove('')`).
   *
   * @throws DocumentError DOCUMENT_NOT_FOUND, DOCUMENT_EXISTS, CAS_MISMATCH, INVALID_ARGUMENT (specs,
   *   combinations), DOCUMENT_TOO_LARGE, and the first failing spec's error (with `specIndex`):
   *   PATH_NOT_FOUND, PATH_EXISTS, PATH_MISMATCH, INVALID_PATH, INVALID_VALUE, VALUE_TOO_DEEP,
   *   VALUE_CANNOT_INSERT, DELTA_INVALID, NUMBER_TOO_BIG, KEY_TOO_LARGE.
   */
  async mutateIn(id: DocId, specs: readonly MutateInSpec[], opts: MutateInOptions = {}): Promise<MutateInResult> {
    const element = docIdElement(id);
    let values: (JsonValue | undefined)[] = [];
    const { cas } = await this.write(opts.tr, async (tr) => {
      // A missing collection is created only if the specs create the document.
      const { prefix, create } = await this.prefixToWrite(tr);
      const outcome = await mutateIn(tr, new DocumentKeys(prefix, element), specs, opts);
      values = outcome.values;
      if (outcome.removed) return 'removed';
      create?.();
    });
    return { cas, values };
  }

  // ---- internals

  /** The collection's key prefix when its id is known without a read. */
  private cachedPrefix(): Buffer | undefined {
    if (this.prefix === undefined) {
      const id = this.context.registry.cached(this.scope, this.name);
      if (id !== undefined) this.prefix = this.context.collectionPrefix(id);
    }
    return this.prefix;
  }

  /** The collection's key prefix as `tr` sees it, or `undefined` when it does not exist. */
  private async prefixToRead(tr: Transaction): Promise<Buffer | undefined> {
    const cached = this.cachedPrefix();
    if (cached !== undefined) return cached;
    const id = await this.context.registry.find(tr, this.scope, this.name);
    return id === undefined ? undefined : this.context.collectionPrefix(id);
  }

  private async keysToRead(tr: Transaction, element: TupleItem): Promise<DocumentKeys | undefined> {
    const prefix = this.prefix ?? (await this.prefixToRead(tr));
    return prefix === undefined ? undefined : new DocumentKeys(prefix, element);
  }

  /** The collection's key prefix for a write, with `create` to run if the write goes ahead. */
  private async prefixToWrite(tr: Transaction): Promise<{ prefix: Buffer; create?: () => void }> {
    const cached = this.cachedPrefix();
    if (cached !== undefined) return { prefix: cached };
    const { id, create } = await this.context.registry.plan(tr, this.scope, this.name);
    return { prefix: this.context.collectionPrefix(id), create };
  }

  private read<T>(tr: Transaction | undefined, fn: (tr: Transaction) => Promise<T>): Promise<T> {
    return tr ? fn(tr) : this.context.kv.transact(fn);
  }

  /**
   * Runs a write in the caller's transaction (cas `undefined`) or its own, whose versionstamp is then
   * the cas, unless `fn` says the document is gone (a removed document has no version). Each attempt
   * of its own starts with an empty record of written documents.
   */
  private async write(
    tr: Transaction | undefined,
    fn: (tr: Transaction) => Promise<void | 'removed'>,
  ): Promise<MutationResult> {
    if (tr) {
      await fn(tr);
      return { cas: undefined };
    }
    let versionstamp: Promise<Buffer> | undefined;
    const outcome = await this.context.kv.transact(async (own) => {
      forgetWrites(own);
      versionstamp = own.getVersionstamp();
      // Attempts that fail reject theirs; only the committed attempt's is awaited.
      versionstamp.catch(() => undefined);
      return fn(own);
    });
    return { cas: outcome === 'removed' ? undefined : casOf(await (versionstamp as Promise<Buffer>)) };
  }

  private async mustExist(tr: Transaction, keys: DocumentKeys, id: DocId, cas: Cas | undefined): Promise<void> {
    if (cas !== undefined) {
      try {
        await checkCas(tr, keys, cas);
      } catch (err) {
        if (isDocumentError(err, 'DOCUMENT_NOT_FOUND')) throw notFound(id);
        throw err;
      }
    } else if ((await tr.get(keys.root)) === undefined) {
      throw notFound(id);
    }
  }
}

/** Flattens `doc` at a root key, once per root key: retries of a transaction reuse the entries. */
function flattenOnce(doc: JsonValue): (root: Buffer) => Entries {
  let root: Buffer | undefined;
  let entries: Entries | undefined;
  return (at) => {
    if (entries === undefined || root === undefined || !root.equals(at)) {
      entries = flatten(doc, at);
      root = at;
    }
    return entries;
  };
}

function notFound(id: DocId): DocumentError {
  return new DocumentError('DOCUMENT_NOT_FOUND', `no document with id ${describeId(id)}`, { id });
}

function describeId(id: DocId): string {
  return typeof id === 'bigint' ? `${id}n` : JSON.stringify(id);
}

/**
 * A whole document: one range read of its metadata and data, or of its data alone when this
 * transaction wrote it (its version is unreadable until commit).
 */
async function readDocument(tr: Transaction, keys: DocumentKeys): Promise<GetResult | undefined> {
  let entries: KeyValue[];
  if (wasWritten(tr, keys)) {
    entries = await readSubtreeEntries(tr, keys.root);
  } else {
    try {
      entries = await tr.getRangeAll(keys.begin, keys.end);
    } catch (err) {
      if (!isKvError(err, 'accessed_unreadable')) throw err;
      entries = await readSubtreeEntries(tr, keys.root);
    }
  }
  return documentOf(entries, keys.prefix.length);
}

/** The document in the entries of one document's range (metadata first, then data). */
function documentOf(entries: readonly KeyValue[], prefixLength: number, from = 0, to = entries.length): GetResult | undefined {
  let cas: Cas | undefined;
  let data = from;
  for (; data < to; data++) {
    const key = entries[data].key;
    if (key[prefixLength] !== META_SECTION) break;
    if (key.length === prefixLength + 2 && key[prefixLength + 1] === META_VERSION) cas = casOf(entries[data].value);
  }
  if (data === to || entries[data].key[prefixLength] !== DATA_SECTION) return undefined;
  return { content: unflatten(entries, data, to, prefixLength + 1), cas };
}

/** The value at a (non-empty) path: one range read of its subtree, after resolving indices. */
async function readPath(tr: Transaction, keys: DocumentKeys, elements: ReturnType<typeof parsePath>, id: DocId): Promise<JsonValue> {
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

interface Page {
  items: ScanItem[];
  /** Where the next page starts (the first key of the next document), if there may be one. */
  next: Buffer | undefined;
}

/**
 * Up to `want` documents from `[begin, end)`: one streamed range read, stopped at the first key of
 * the document after the last one wanted. Version keys of documents this transaction wrote are
 * stepped around (they cannot be read before commit).
 */
async function readPage(tr: Transaction, collection: Buffer, begin: Buffer, end: Buffer, want: number): Promise<Page> {
  const items: ScanItem[] = [];
  let docEntries: KeyValue[] = [];
  let docPrefix: Buffer | undefined;
  let docId: DocId | undefined;
  const finish = () => {
    if (docPrefix === undefined) return;
    const found = documentOf(docEntries, docPrefix.length);
    if (found !== undefined) items.push({ id: docId as DocId, content: found.content, cas: found.cas });
  };
  for await (const pair of rangeSkipping(tr, begin, end, versionKeysWritten(tr, collection, begin, end))) {
    const key = pair.key;
    if (docPrefix !== undefined && belongsTo(key, docPrefix)) {
      docEntries.push(pair);
      continue;
    }
    finish();
    if (items.length === want) return { items, next: key };
    const reader = new Reader(key, collection.length);
    docId = docIdOf(decodeItem(reader));
    docPrefix = key.subarray(0, reader.pos);
    docEntries = [pair];
  }
  finish();
  return { items, next: undefined };
}

function belongsTo(key: Buffer, docPrefix: Buffer): boolean {
  const n = docPrefix.length;
  return key.length > n && key[n] <= DATA_SECTION && key.compare(docPrefix, 0, n, 0, n) === 0;
}

/** The version keys in `[begin, end)` of documents `tr` wrote, sorted. */
function versionKeysWritten(tr: Transaction, collection: Buffer, begin: Buffer, end: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (const identity of writtenDocuments(tr)) {
    const prefix = Buffer.from(identity, 'latin1');
    if (prefix.length <= collection.length || prefix.compare(collection, 0, collection.length, 0, collection.length) !== 0) continue;
    const key = Buffer.concat([prefix, Buffer.of(META_SECTION, META_VERSION)]);
    if (Buffer.compare(key, begin) >= 0 && Buffer.compare(key, end) < 0) out.push(key);
  }
  return out.sort(Buffer.compare);
}

/** The pairs of `[begin, end)` except the keys in `skip` (sorted, inside the range). */
async function* rangeSkipping(tr: Transaction, begin: Buffer, end: Buffer, skip: readonly Buffer[]): AsyncIterable<KeyValue> {
  let from = begin;
  for (const key of skip) {
    yield* tr.getRange(from, key);
    from = keyAfter(key);
  }
  yield* tr.getRange(from, end);
}
