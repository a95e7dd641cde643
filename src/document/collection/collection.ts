import { Buffer } from 'node:buffer';
import { strinc } from '../../kv/contract/bytes';
import type { Database } from '../../kv/contract/database';
import type { Transaction } from '../../kv/contract/types';
import { pack, type TupleItem } from '../../tuple';
import { packPrefixed } from '../../tuple/pack';
import { DocTransaction, type ChangeObserver } from '../doc-transaction';
import { DocumentError, isDocumentError } from '../errors';
import { docIdElement, generateId } from '../keys/ids';
import { errorForStructure, isStructureRootError, rejectRootUpsertOfStructure, rewriteKindExpiry, storedKindOf, type JsonForms } from '../keys/kind';
import { DocumentKeys, writableDocumentKeys } from '../keys/layout';
import { casForRead, checkCas, checkedCas, readVersion, writeDocument, writeVersion } from '../keys/version';
import type { CollectionRegistry, CollectionTarget, WriteTarget } from '../manifest/collection-registry';
import type { CollectionPath } from '../manifest/manifest';
import type { StructureAccess, StructureWriteTarget } from '../structure-port';
import { NOT_INDEXED, type IndexedCollectionAccess, type IndexPort } from '../index-port';
import { lookupIn } from '../subdoc/lookup-in';
import { mutateIn, mutateInReads } from '../subdoc/mutate-in';
import type {
  Cas,
  CasOptions,
  DocId,
  Expiry,
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
  ReplaceOptions,
  ScanItem,
  ScanOptions,
  TransactionOption,
  UpsertOptions,
} from '../types';
import { parsePath } from '../values/path';
import { documentToWrite, type DocumentToWrite } from './document-to-write';
import { describeId, notFound, readDocuments, readPath, readWholeDocument, withExpiry } from './document-read';
import {
  effectiveExpiry,
  expiryChoice,
  isExpired,
  readExpiry,
  readPresence,
  requestedExpiry,
  type ExpiryChoice,
  type ExpiryIndex,
  type Presence,
} from './expiry';
import { finishIndexWrite, reexpireIndexEntries, removeIndexEntries, specPaths, startIndexWrite, type IndexWrite } from './index-writes';
import type { LockFlags } from './lock-flags';
import { clearUnlockedDocument, encodeLock, isLocked, LOCK_NOT_READ, lockedError, lockKey, lockSeconds, notLockedError, readLock } from './lock';
import { combineKeyOf, runRead, runWrite, writtenUntracked, type CombineKey } from './run-write';
import { readPage } from './scan-page';
import { documentOf, readDocumentEntries } from './document-read';

/** What a collection needs from the layer that made it. */
export interface CollectionContext {
  readonly kv: Database;
  /** Collection paths to ids, through the layer's cached manifest. */
  readonly registry: CollectionRegistry;
  /** Add the collection on its first write; else operations on a missing one fail (UNKNOWN_COLLECTION). */
  readonly autoCreate: boolean;
  /** The clock documents expire by: ms since the epoch. */
  now(): number;
  readonly expiry: ExpiryIndex;
  /** Which collections have ever had a document locked: upsert and mutateIn read lock keys only there. */
  readonly locks: LockFlags;
  /** How structures' documents read as JSON (provided by the structures layer). */
  readonly forms: JsonForms;
  /** How writes keep secondary indexes current (provided by the index layer; none without it). */
  readonly indexes?: IndexPort;
  /** What the layers above do in the transaction of every write (the change feed): attached to each writing attempt. */
  readonly observers: readonly ChangeObserver[];
}

const DEFAULT_PAGE_SIZE = 100;

/**
 * The documents of one collection. Every method runs in its own transaction (retried on conflicts),
 * or joins the caller's with `{ tr }`: then it neither commits nor retries, and its writes are the
 * caller's to commit. Without `tr`, writes and reads made while another runs on the collection share
 * a transaction with the other calls queued meanwhile, each caller with the result it would get alone
 * (`run-write.ts`; docs/documents.md): the costs below are each call's, in whichever transaction.
 *
 * Costs are in KV operations: point reads, range reads (R), keys written (W), range clears. `n` is the
 * number of entries (containers plus leaves, plus chunks of long strings) of the value concerned; a
 * path with `i` array indices costs `i` limit-1 range reads to find each array's first (or last)
 * element. Every write also sets the version key (one blind versionstamped write, never read by
 * writes without `cas`).
 *
 * The collection is found through the layer's cached manifest, which costs no read once cached (see
 * `collection-registry.ts`); only the first write to a collection missing from the manifest reads and
 * updates it. A document with an expiry has 2 more keys (its expiry and its index entry); once expired
 * it reads as missing, which costs whole-document reads nothing (the expiry is in their range) and
 * the other reads one point read of the expiry key, issued with their other reads.
 *
 * Secondary indexes (docs/indexes.md): with an index layer (the public `open` has one), every write
 * also reads the collection's index catalog key (1 point read per transaction and collection, issued
 * with the write's first reads). When the collection has indexes, a write that may change an indexed
 * path also reads the document's indexed parts before it (the root entry and the subtree of each
 * indexed top-level field: 1 round trip, together with the catalog read when it is the one last
 * seen), clears the entries the document loses and writes the ones it gains (1 key each), and for a
 * unique index reads the range of each new entry's values (limit 16). Insert of a new document and
 * writes that touch no indexed path read nothing more.
 */
export class DocumentCollection {
  private access: StructureAccess | undefined;
  /** The keys of the last structure write's document (see {@link documentKeysToWrite}). */
  private lastWritten: DocumentKeys | undefined;
  private readonly path: CollectionPath;
  /** Where calls on this collection without a transaction meet to share one (every handle of it in the layer). */
  private readonly combineKey: CombineKey;

  /** @internal Use `DocLayer.collection()`. */
  constructor(
    private readonly context: CollectionContext,
    readonly scope: string,
    readonly name: string,
  ) {
    this.path = { scope, collection: name };
    this.combineKey = combineKeyOf(context.registry, `${scope}.${name}`, context.kv);
  }

  /**
   * Inserts a new document, under `opts.id` or a generated UUIDv7 id, expiring at `opts.expiry` (capped
   * by the collection's maxTTL, which also applies without one). An expired document under the id is
   * replaced.
   *
   * Cost: 1 range read (the root entry and the expiry key, which are adjacent: does a live document
   * exist), n keys written, the version key (plus the expiry and its index entry).
   *
   * @throws DocumentError DOCUMENT_EXISTS, INVALID_VALUE, VALUE_TOO_DEEP, DOCUMENT_TOO_LARGE,
   *   KEY_TOO_LARGE, INVALID_ARGUMENT (id, expiry), UNKNOWN_COLLECTION / UNKNOWN_SCOPE (without
   *   autoCreate); nothing is written when any is thrown.
   */
  async insert(doc: JsonValue, opts: InsertOptions = {}): Promise<InsertResult> {
    // Only an absent id is generated: `null` is an invalid id, not a missing one.
    const id = opts.id === undefined ? generateId() : opts.id;
    const document = this.documentToWrite(doc, id);
    const element = docIdElement(id);
    const now = this.context.now();
    const requested = requestedExpiry(opts.expiry, now);
    const { cas } = await this.write(element, opts.tr, async (tr) => {
      const target = await this.writeTarget(tr);
      const keys = document.keysIn(target.prefix, element);
      const entries = document.entriesAt(keys.root);
      const indexing = startIndexWrite(this.context.indexes, tr, target, keys, false);
      const expiresAt = effectiveExpiry(target.maxTTL, requested, now);
      if (expiresAt !== undefined) this.context.expiry.assertFits(expiresAt, target.id, element, this.context.kv.maxKeyBytes);
      if (target.create === undefined) {
        const before = await readPresence(tr, keys);
        if (before.exists && !isExpired(before.expiresAt, now)) {
          throw new DocumentError('DOCUMENT_EXISTS', `a document with id ${describeId(id)} exists`, { id });
        }
        if (before.exists || before.expiresAt !== undefined) await this.discard(tr, keys, target, element, before.expiresAt, indexing);
      }
      await finishIndexWrite(await indexing, tr, keys, doc, expiresAt);
      target.create?.();
      writeDocument(tr, keys, entries);
      if (expiresAt !== undefined) this.context.expiry.set(tr, keys, target.id, element, expiresAt);
    });
    return { id, cas };
  }

  /**
   * Writes the document whether or not it exists, replacing it whole. Its expiry is `opts.expiry`, or
   * with `preserveExpiry` the one it had; otherwise none, as in Couchbase (the maxTTL of the
   * collection applies in every case).
   *
   * Cost: the metadata version (no round trip on a cluster); 1 point read of the lock key only in a
   * collection that has ever had a document locked (see `lock-flags.ts`; with `preserveExpiry`, also 1
   * of the expiry key, issued together; none when the write creates the collection); 1 range clear
   * of the old document (2 around its lock key when it read the lock key and found none, so
   * concurrent upserts of one document do not conflict), n keys written, the version key (plus the expiry and its index entry). The old expiry's index entry is
   * left for `purgeExpired`, which drops it when due. With secondary indexes it also reads the catalog
   * key and, when the collection has indexes, the old document's indexed parts (see the class
   * comment): the entries to clear.
   *
   * @throws DocumentError DOCUMENT_LOCKED (see {@link getAndLock}), INVALID_VALUE, VALUE_TOO_DEEP,
   *   DOCUMENT_TOO_LARGE, KEY_TOO_LARGE, INVALID_ARGUMENT, UNKNOWN_COLLECTION / UNKNOWN_SCOPE (without
   *   autoCreate); nothing is written when any is thrown.
   */
  upsert(id: DocId, doc: JsonValue, opts: UpsertOptions = {}): Promise<MutationResult> {
    // Not async: it returns the write's own promise (an async function would wrap it in another and
    // take extra turns of the microtask queue to settle it); what is checked before throws as a rejection.
    let document: DocumentToWrite;
    let element: TupleItem;
    let now: number;
    let choice: ExpiryChoice;
    try {
      document = this.documentToWrite(doc, id);
      element = docIdElement(id);
      now = this.context.now();
      choice = expiryChoice(opts, now);
    } catch (err) {
      return Promise.reject(err);
    }
    return this.write(element, opts.tr, async (tr) => {
      // Upsert is the commonest write: a collection the registry knows is taken without a promise, and
      // there is no Promise.all around one read.
      const found = this.writeTarget(tr);
      const target = found instanceof Promise ? await found : found;
      const keys = document.keysIn(target.prefix, element);
      const entries = document.entriesAt(keys.root);
      const indexing = startIndexWrite(this.context.indexes, tr, target, keys, true);
      let kept: number | undefined;
      let lockedUntil: number | undefined | typeof LOCK_NOT_READ;
      if (target.create === undefined) {
        let stored: number | undefined;
        if (choice.preserve) [stored, lockedUntil] = await Promise.all([readExpiry(tr, keys), this.readLockIfAny(tr, target.id, keys)]);
        else if (this.context.locks.knownMayBeLocked(tr, target.id) === false) lockedUntil = LOCK_NOT_READ;
        else lockedUntil = await this.readLockIfAny(tr, target.id, keys);
        if (lockedUntil !== LOCK_NOT_READ && isLocked(lockedUntil, now)) throw lockedError(id);
        kept = liveExpiry(stored, now);
      }
      const expiresAt = kept ?? effectiveExpiry(target.maxTTL, choice.requested, now);
      if (expiresAt !== undefined) this.context.expiry.assertFits(expiresAt, target.id, element, this.context.kv.maxKeyBytes);
      const indexed = finishIndexWrite(await indexing, tr, keys, doc, expiresAt);
      if (indexed !== undefined) await indexed;
      target.create?.();
      if (target.create === undefined) clearUnlockedDocument(tr, keys, lockedUntil);
      else tr.clearRange(keys.begin, keys.end);
      writeDocument(tr, keys, entries);
      if (expiresAt !== undefined) this.context.expiry.set(tr, keys, target.id, element, expiresAt);
    });
  }

  /**
   * Replaces an existing (unexpired) document whole. Its expiry is as for {@link upsert}.
   *
   * Cost: 1 range read (the root entry and the expiry key; with `cas` also 1 point read of the version
   * key, issued together), 1 range clear, n keys written, the version key (plus the expiry and its
   * index entry; a changed expiry's old entry is cleared).
   *
   * @throws DocumentError DOCUMENT_NOT_FOUND, CAS_MISMATCH, DOCUMENT_LOCKED, INVALID_VALUE, VALUE_TOO_DEEP,
   *   DOCUMENT_TOO_LARGE, KEY_TOO_LARGE, INVALID_ARGUMENT, UNKNOWN_COLLECTION (without autoCreate);
   *   nothing is written when any is thrown.
   */
  async replace(id: DocId, doc: JsonValue, opts: ReplaceOptions = {}): Promise<MutationResult> {
    const document = this.documentToWrite(doc, id);
    const element = docIdElement(id);
    const now = this.context.now();
    const choice = expiryChoice(opts, now);
    return this.write(element, opts.tr, async (tr) => {
      const found = this.targetToChange(tr);
      const target = found instanceof Promise ? await found : found;
      if (target === undefined) throw notFound(id);
      const keys = document.keysIn(target.prefix, element);
      const entries = document.entriesAt(keys.root);
      const indexing = startIndexWrite(this.context.indexes, tr, target, keys, true);
      const before = await this.mustExist(tr, keys, id, opts.cas, now);
      const after = (choice.preserve ? before : undefined) ?? effectiveExpiry(target.maxTTL, choice.requested, now);
      if (after !== undefined) this.context.expiry.assertFits(after, target.id, element, this.context.kv.maxKeyBytes);
      await finishIndexWrite(await indexing, tr, keys, doc, after);
      tr.clearRange(keys.begin, keys.end);
      writeDocument(tr, keys, entries);
      if (before !== undefined && before !== after) this.context.expiry.forget(tr, target.id, element, before);
      if (after !== undefined) this.context.expiry.set(tr, keys, target.id, element, after);
    });
  }

  /**
   * Removes a document and every key it has. The cas returned is `undefined`: a removed document has
   * no version.
   *
   * Cost: 1 range read (the root entry and the expiry key; with `cas` also 1 point read of the
   * version key, issued together), 1 range clear (and the expiry's index entry).
   *
   * @throws DocumentError DOCUMENT_NOT_FOUND (also for an expired document), CAS_MISMATCH,
   *   DOCUMENT_LOCKED, INVALID_ARGUMENT, UNKNOWN_COLLECTION (without autoCreate).
   */
  async remove(id: DocId, opts: CasOptions = {}): Promise<MutationResult> {
    const element = docIdElement(id);
    const now = this.context.now();
    return this.write(element, opts.tr, async (tr) => {
      const found = this.targetToChange(tr);
      const target = found instanceof Promise ? await found : found;
      if (target === undefined) throw notFound(id);
      const keys = new DocumentKeys(target.prefix, element);
      const indexing = startIndexWrite(this.context.indexes, tr, target, keys, true);
      const before = await this.mustExist(tr, keys, id, opts.cas, now);
      await finishIndexWrite(await indexing, tr, keys, undefined, undefined);
      tr.clearRange(keys.begin, keys.end);
      DocTransaction.of(tr).documentRemoved(keys);
      if (before !== undefined) this.context.expiry.forget(tr, target.id, element, before);
      return 'removed' as const;
    });
  }

  /**
   * Reads a whole document, or the value at `path` (`''` or `[]`: the whole document).
   *
   * Cost of a whole document: 1 range read of the document's keys (metadata and data), nothing
   * else. Cost with a path: 1 range read of the subtree at the path (the cost does not grow with the
   * rest of the document), 1 limit-1 range read per array index in the path, 1 snapshot point read
   * of the version key for the cas and 1 point read of the expiry key, issued together. Only when
   * nothing is found: 1 point read per path component, to tell PATH_NOT_FOUND from PATH_MISMATCH.
   *
   * An expired document is DOCUMENT_NOT_FOUND; `expiresAt` is set when the document has an expiry.
   *
   * The cas is `undefined` for a document written earlier in the same transaction.
   *
   * @throws DocumentError DOCUMENT_NOT_FOUND, PATH_NOT_FOUND, PATH_MISMATCH, INVALID_PATH,
   *   INVALID_ARGUMENT.
   */
  get<T = JsonValue>(id: DocId, opts?: TransactionOption): Promise<GetResult<T>>;
  get<T = JsonValue>(id: DocId, path: Path, opts?: TransactionOption): Promise<GetResult<T>>;
  get<T = JsonValue>(id: DocId, pathOrOpts?: Path | TransactionOption, maybeOpts?: TransactionOption): Promise<GetResult<T>> {
    // Not async, as upsert: it returns the read's own promise.
    let opts: TransactionOption;
    let elements: ReturnType<typeof parsePath>;
    let element: TupleItem;
    try {
      const hasPath = typeof pathOrOpts === 'string' || Array.isArray(pathOrOpts);
      opts = (hasPath ? maybeOpts : ((pathOrOpts as TransactionOption | undefined) ?? maybeOpts)) ?? {};
      elements = hasPath ? parsePath(pathOrOpts as Path) : [];
      element = docIdElement(id);
    } catch (err) {
      return Promise.reject(err);
    }
    if (elements.length === 0) return this.read(opts.tr, (tr) => this.wholeDocument(tr, id, element)) as Promise<GetResult<T>>;
    return this.read(opts.tr, async (tr) => {
      const keys = await this.keysToRead(tr, element);
      if (keys === undefined) throw notFound(id);
      const now = this.context.now();
      const [content, cas, expiresAt] = await Promise.all([
        settle(readPath(tr, keys, elements, id).catch(async (err) => Promise.reject(await errorForStructure(tr, keys, err)))),
        casForRead(tr, keys),
        readExpiry(tr, keys),
      ]);
      // An expired document is missing, whatever its paths hold.
      if (isExpired(expiresAt, now)) throw notFound(id);
      return withExpiry({ content: content() as T, cas }, expiresAt);
    });
  }

  /**
   * Whether the document exists (and has not expired).
   *
   * Cost: 1 range read (the root entry and the expiry key, which are adjacent).
   *
   * @throws DocumentError INVALID_ARGUMENT (id).
   */
  async exists(id: DocId, opts: TransactionOption = {}): Promise<boolean> {
    const element = docIdElement(id);
    return this.read(opts.tr, async (tr) => {
      const keys = await this.keysToRead(tr, element);
      if (keys === undefined) return false;
      const presence = await readPresence(tr, keys);
      return presence.exists && !isExpired(presence.expiresAt, this.context.now());
    });
  }

  /**
   * Reads several whole documents in one transaction, all reads issued together; `undefined` for a
   * missing one.
   *
   * Cost: 1 range read per id, as {@link get}, issued before any is awaited (`readDocuments`).
   *
   * @throws DocumentError INVALID_ARGUMENT (an id).
   */
  async getMany(ids: readonly DocId[], opts: TransactionOption = {}): Promise<(GetResult | undefined)[]> {
    if (!Array.isArray(ids)) throw new DocumentError('INVALID_ARGUMENT', 'getMany takes an array of ids');
    const elements = ids.map(docIdElement);
    return this.read(opts.tr, async (tr) => {
      const found = this.prefixToRead(tr);
      const prefix = found instanceof Promise ? await found : found;
      if (prefix === undefined) return elements.map(() => undefined);
      const now = this.context.now();
      return readDocuments(tr, prefix, elements, now, this.context.forms);
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
    const collection = await this.transact(opts.tr, async (tr) => this.prefixToRead(tr));
    if (collection === undefined) return;
    const now = this.context.now();
    let begin = startElement === undefined ? collection : packPrefixed(collection, [startElement]);
    const end = endElement === undefined ? strinc(collection) : packPrefixed(collection, [endElement]);
    let remaining = limit;
    while (remaining > 0 && Buffer.compare(begin, end) < 0) {
      const want = Math.min(pageSize, remaining);
      const from = begin;
      const page = await this.transact(opts.tr, (tr) => readPage(tr, this.context.forms, collection, from, end, want, now));
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
   * Plus 1 snapshot point read of the version key for the cas and 1 point read of the expiry key.
   *
   * @throws DocumentError DOCUMENT_NOT_FOUND (also for an expired document), INVALID_ARGUMENT (spec
   *   list, an unknown op, `exists` of the whole document).
   */
  async lookupIn(id: DocId, specs: readonly LookupInSpec[], opts: TransactionOption = {}): Promise<LookupInResult> {
    const element = docIdElement(id);
    return this.read(opts.tr, async (tr) => {
      const keys = await this.keysToRead(tr, element);
      if (keys === undefined) throw notFound(id);
      const now = this.context.now();
      const [looked, cas, expiresAt] = await Promise.all([
        settle(lookupIn(tr, keys, specs).catch(async (err) => Promise.reject(await errorForStructure(tr, keys, err)))),
        casForRead(tr, keys),
        readExpiry(tr, keys),
      ]);
      if (isExpired(expiresAt, now)) throw notFound(id);
      const entries = looked();
      // On a structure every spec fails; its error is WRONG_KIND (see errorForStructure).
      const failed = entries.find((entry) => isStructureRootError(entry.error));
      if (failed !== undefined) {
        const err = await errorForStructure(tr, keys, failed.error);
        if (err !== failed.error) throw err;
      }
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
   * the document's data (1 snapshot range read) to check the size limit. Before the specs, 1 snapshot
   * point read of the expiry key (snapshot, so writers of different fields still do not conflict).
   *
   * Round trips: the specs' reads above are issued together, and together with the expiry read (and
   * the lock key's and, with `cas`, the version key's), before the specs run (`subdoc/read-ahead.ts`),
   * so specs on disjoint paths cost one round trip of reads however many there are (3 in all on a
   * cluster: read version, reads, commit; with or without `cas`). Read in order, a round trip each, as
   * before: a spec whose path is, extends or leads to an earlier spec's path; each index in a path (1
   * limit-1 read to resolve it); the reads made only on a miss (createPath, the diagnosis of a missing
   * path). An expired document with storeSemantics `'upsert'` is discarded first, and the reads
   * (with the CAS check's) are made again after that (1 more round trip).
   *
   * Expiry as Couchbase: `opts.expiry`, or with `preserveExpiry` the document's own; otherwise the
   * write clears it (1 key cleared, with its index entry). An expired document is missing: with
   * storeSemantics `'replace'` DOCUMENT_NOT_FOUND, otherwise the specs create it afresh.
   *
   * The cas is `undefined` when the specs removed the document (`remove('')`).
   *
   * @throws DocumentError DOCUMENT_NOT_FOUND, DOCUMENT_EXISTS, CAS_MISMATCH, DOCUMENT_LOCKED, INVALID_ARGUMENT (specs,
   *   combinations), DOCUMENT_TOO_LARGE, and the first failing spec's error (with `specIndex`):
   *   PATH_NOT_FOUND, PATH_EXISTS, PATH_MISMATCH, INVALID_PATH, INVALID_VALUE, VALUE_TOO_DEEP,
   *   VALUE_CANNOT_INSERT, DELTA_INVALID, NUMBER_TOO_BIG, KEY_TOO_LARGE.
   */
  async mutateIn(id: DocId, specs: readonly MutateInSpec[], opts: MutateInOptions = {}): Promise<MutateInResult> {
    const element = docIdElement(id);
    const now = this.context.now();
    const choice = expiryChoice(opts, now);
    let values: (JsonValue | undefined)[] = [];
    const { cas } = await this.write(element, opts.tr, async (tr) => {
      // A missing collection is created only if the specs create the document.
      const target = await this.writeTarget(tr);
      const keys = writableDocumentKeys(target.prefix, element, this.context.kv.maxKeyBytes);
      const indexing = startIndexWrite(this.context.indexes, tr, target, keys, false);
      // The specs' reads go with the expiry and lock reads: one round trip for all.
      const readsAhead = target.create === undefined ? mutateInReads(tr, keys, specs, opts) : undefined;
      const [stored, lockedUntil] =
        target.create === undefined ? await Promise.all([readExpiry(tr.snapshot(), keys), this.readLockIfAny(tr, target.id, keys)]) : [];
      const before = liveExpiry(stored, now);
      const after = (choice.preserve ? before : undefined) ?? effectiveExpiry(target.maxTTL, choice.requested, now);
      if (after !== undefined && after !== before) this.context.expiry.assertFits(after, target.id, element, this.context.kv.maxKeyBytes);
      const expired = stored !== undefined && before === undefined;
      if (expired) {
        if ((opts.storeSemantics ?? 'replace') === 'replace') throw notFound(id);
        await this.discard(tr, keys, target, element, stored, indexing);
      }
      const locked = !expired && lockedUntil !== LOCK_NOT_READ && isLocked(lockedUntil, now);
      if (locked && opts.cas === undefined) throw lockedError(id);
      await rejectRootUpsertOfStructure(tr, keys, specs);
      const indexed = await this.indexedMutation(tr, keys, indexing, specs, opts, before, after);
      // Discarding an expired document wrote to tr: the reads issued ahead no longer answer for it.
      const outcome = await mutateIn(tr, keys, specs, opts, this.context.kv.maxKeyBytes, indexed, expired ? undefined : readsAhead).catch(
        async (err) => Promise.reject(locked && isDocumentError(err, 'CAS_MISMATCH') ? lockedError(id) : await errorForStructure(tr, keys, err)),
      );
      if (locked) tr.clear(lockKey(keys));
      values = outcome.values;
      if (outcome.removed) {
        if (before !== undefined) this.context.expiry.forget(tr, target.id, element, before);
        return 'removed';
      }
      target.create?.();
      this.context.expiry.replace(tr, keys, target.id, element, before, after);
    });
    return { cas, values };
  }

  /**
   * Gives an existing document a new expiry (`0`: none; capped by the collection's maxTTL) and a new
   * CAS, leaving its content alone, as Couchbase's touch.
   *
   * Cost: 1 range read (the root entry, the expiry and lock keys), the version key, the expiry key and
   * its index entry (the old entry cleared).
   * A new expiry also rewrites the document's secondary index entries, which record it (the catalog
   * read, then 1 round trip of the indexed parts; see the class comment).
   *
   * @throws DocumentError DOCUMENT_NOT_FOUND (also for an expired document), DOCUMENT_LOCKED,
   *   INVALID_ARGUMENT (id, expiry), UNKNOWN_COLLECTION (without autoCreate).
   */
  async touch(id: DocId, expiry: Expiry, opts: TransactionOption = {}): Promise<MutationResult> {
    const element = docIdElement(id);
    const now = this.context.now();
    const requested = requestedExpiry(expiry, now);
    return this.write(element, opts.tr, async (tr) => {
      await this.retouch(tr, id, element, requested, now);
    });
  }

  /**
   * Reads a whole document and gives it a new expiry and CAS, as {@link touch}; the result's `cas` is
   * the new one (`undefined` inside a caller's transaction, as for every write).
   *
   * Cost: as {@link touch}, plus 1 range read of the document (issued with the other).
   *
   * @throws DocumentError as {@link touch}.
   */
  async getAndTouch<T = JsonValue>(id: DocId, expiry: Expiry, opts: TransactionOption = {}): Promise<GetResult<T>> {
    const element = docIdElement(id);
    const now = this.context.now();
    const requested = requestedExpiry(expiry, now);
    let content: JsonValue = null;
    let expiresAt: number | undefined;
    const { cas } = await this.write(element, opts.tr, async (tr) => {
      ({ content, expiresAt } = await this.retouch(tr, id, element, requested, now));
    });
    return withExpiry({ content: content as T, cas }, expiresAt);
  }

  /**
   * Reads a whole document and locks it for `lockTime` seconds (over 0, at most 30), as Couchbase's
   * getAndLock. The result's `cas` is the lock's: until the lock ends, every write of the document
   * (upsert, replace, remove, mutateIn, touch, getAndLock) fails with DOCUMENT_LOCKED unless it
   * presents this CAS, and reads report the CAS `LOCKED_CAS`. A write with the lock's CAS, or
   * {@link unlock}, ends the lock. Writes through the data structure handles do not check locks.
   *
   * Cost: 1 range read of the document and 1 of its root entry, expiry and lock keys (issued
   * together), the lock key and the version key.
   *
   * @throws DocumentError DOCUMENT_NOT_FOUND (also for an expired document), DOCUMENT_LOCKED (it is
   *   locked already), INVALID_ARGUMENT (id, lockTime), UNKNOWN_COLLECTION (without autoCreate).
   */
  async getAndLock<T = JsonValue>(id: DocId, lockTime: number, opts: TransactionOption = {}): Promise<GetResult<T>> {
    const element = docIdElement(id);
    const seconds = lockSeconds(lockTime);
    const now = this.context.now();
    let found: GetResult | undefined;
    const { cas } = await runWrite(this.context.kv, opts.tr, async (tr) => {
      const { keys, target, document } = await this.unlockedDocument(tr, id, element, now);
      await this.context.locks.enable(tr, target.id);
      tr.set(lockKey(keys), encodeLock(now + Math.ceil(seconds * 1000)));
      writeVersion(tr, keys, []);
      found = document;
    });
    const { content, expiresAt } = found as GetResult;
    return { content: content as T, cas, ...(expiresAt === undefined ? {} : { expiresAt }) };
  }

  /**
   * Ends the lock {@link getAndLock} took, given its CAS. The document's content and CAS stay as they
   * are.
   *
   * Cost: 1 range read (the root entry, expiry and lock keys) and 1 point read of the version key,
   * issued together; the lock key cleared.
   *
   * @throws DocumentError DOCUMENT_NOT_FOUND (also for an expired document), DOCUMENT_NOT_LOCKED (no
   *   lock holds), CAS_MISMATCH (the lock is another CAS's), INVALID_ARGUMENT (id, a malformed cas),
   *   UNKNOWN_COLLECTION (without autoCreate).
   */
  async unlock(id: DocId, cas: Cas, opts: TransactionOption = {}): Promise<void> {
    const element = docIdElement(id);
    const wanted = checkedCas(cas);
    const now = this.context.now();
    await this.transact(opts.tr, async (tr) => {
      const target = await this.target(tr);
      if (target === undefined) throw notFound(id);
      const keys = new DocumentKeys(target.prefix, element);
      const [presence, current] = await Promise.all([readPresence(tr, keys), readVersion(tr, keys, false)]);
      if (!presence.exists || isExpired(presence.expiresAt, now)) throw notFound(id);
      if (!isLocked(presence.lockedUntil, now)) throw notLockedError(id);
      if (current !== wanted) throw new DocumentError('CAS_MISMATCH', `the document is locked with another CAS than ${cas}`, { id });
      tr.clear(lockKey(keys));
    });
  }

  // ---- internals

  /**
   * The document as {@link touch} finds it, with its new expiry and version written: its content
   * and expiry after.
   */
  private async retouch(
    tr: Transaction,
    id: DocId,
    element: TupleItem,
    requested: number | undefined,
    now: number,
  ): Promise<{ content: JsonValue; expiresAt: number | undefined }> {
    const { keys, target, document, presence, kind } = await this.unlockedDocument(tr, id, element, now);
    const after = effectiveExpiry(target.maxTTL, requested, now);
    if (after !== undefined && after !== presence.expiresAt) this.context.expiry.assertFits(after, target.id, element, this.context.kv.maxKeyBytes);
    // Index entries record the expiry: a new one rewrites them.
    if (after !== presence.expiresAt) {
      await reexpireIndexEntries(
        startIndexWrite(this.context.indexes, tr, target, keys, true, presence.expiresAt),
        tr,
        keys,
        document.content,
        after,
      );
    }
    this.context.expiry.replace(tr, keys, target.id, element, presence.expiresAt, after);
    // A structure carries its expiry in its kind value too (kind.ts).
    if (kind !== undefined && after !== presence.expiresAt) rewriteKindExpiry(tr, keys, kind, after);
    writeVersion(tr, keys, []);
    return { content: document.content, expiresAt: after };
  }

  /**
   * A live document that no lock holds, for a write that keeps its content: its keys, its collection,
   * its content, its presence and, for a structure, its kind metadata value (2 range reads, issued
   * together).
   *
   * @throws DocumentError DOCUMENT_NOT_FOUND, DOCUMENT_LOCKED.
   */
  private async unlockedDocument(
    tr: Transaction,
    id: DocId,
    element: TupleItem,
    now: number,
  ): Promise<{ keys: DocumentKeys; target: CollectionTarget; document: GetResult; presence: Presence; kind: Buffer | undefined }> {
    const target = await this.target(tr);
    if (target === undefined) throw notFound(id);
    const keys = new DocumentKeys(target.prefix, element);
    const [presence, entries] = await Promise.all([readPresence(tr, keys), readDocumentEntries(tr, keys)]);
    const document = documentOf(this.context.forms, entries, keys.prefix.length, 0, entries.length, () => keys, now);
    if (document === undefined || !presence.exists || isExpired(presence.expiresAt, now)) throw notFound(id);
    if (isLocked(presence.lockedUntil, now)) throw lockedError(id);
    return { keys, target, document, presence, kind: storedKindOf(entries, keys) };
  }

  /**
   * When the document's lock ends, for a writer that learns of locks by reading the lock key (upsert,
   * mutateIn): {@link LOCK_NOT_READ} without a read in a collection that never had a document locked
   * (see `lock-flags.ts`).
   */
  private async readLockIfAny(tr: Transaction, collectionId: number, keys: DocumentKeys): Promise<number | undefined | typeof LOCK_NOT_READ> {
    return (await this.context.locks.mayBeLocked(tr, collectionId)) ? readLock(tr, keys) : LOCK_NOT_READ;
  }

  /** @internal The port through which data structure handles (`src/structures`) use this collection. */
  structureAccess(): StructureAccess {
    return (this.access ??= {
      kv: this.context.kv,
      now: () => this.context.now(),
      run: (tr, fn) => this.context.kv.transact(fn, { tr }),
      keysToRead: (tr, element) => this.keysToRead(tr, element),
      keysToWrite: (tr, element) => {
        const target = this.writeTarget(tr, true);
        return target instanceof Promise
          ? target.then((found) => this.structureWriteTarget(found, element))
          : this.structureWriteTarget(target, element);
      },
      expiry: this.context.expiry,
    });
  }

  /** Where a structure write to the document at `element` goes, in the collection `target`. */
  private structureWriteTarget(target: WriteTarget, element: TupleItem): StructureWriteTarget {
    const { prefix, create, id, maxTTL } = target;
    return { keys: this.documentKeysToWrite(prefix, element), create, collectionId: id, maxTTL };
  }

  /**
   * The keys of the document at `element` under `prefix` for a structure write, checked as
   * `writableDocumentKeys` checks them. A structure handle writes the same document call after call:
   * the last keys made are reused while the collection's prefix (the cached manifest's own Buffer) and
   * the id are the same, so its keys are not packed again. The keys are the same bytes either way.
   */
  private documentKeysToWrite(prefix: Buffer, element: TupleItem): DocumentKeys {
    const last = this.lastWritten;
    if (last !== undefined && last.collectionPrefix === prefix && last.id === element) return last;
    const keys = writableDocumentKeys(prefix, element, this.context.kv.maxKeyBytes);
    this.lastWritten = keys;
    return keys;
  }

  /** @internal The port through which the index layer (`src/index`) reaches this collection. */
  indexedCollection(): IndexedCollectionAccess {
    return {
      kv: this.context.kv,
      now: () => this.context.now(),
      forRead: (tr) => this.target(tr),
      forWrite: async (tr) => this.writeTarget(tr),
    };
  }

  /**
   * @internal The collection as `tr` sees it (its id and key prefix), for the layers above that keep
   * data of their own per collection (the change feed): `undefined` when it does not exist (without
   * autoCreate: UNKNOWN_COLLECTION / UNKNOWN_SCOPE instead).
   */
  collectionTarget(tr: Transaction): Promise<CollectionTarget | undefined> {
    return this.target(tr);
  }

  /**
   * The collection as `tr` sees it, for a read: `undefined` when it does not exist (without
   * autoCreate: UNKNOWN_COLLECTION / UNKNOWN_SCOPE instead).
   */
  private target(tr: Transaction): Promise<CollectionTarget | undefined> {
    return this.context.registry.forRead(tr, this.path, !this.context.autoCreate);
  }

  /**
   * The whole document for {@link get}: one range read, as `readWholeDocument` says. A collection the
   * registry knows is taken without a promise (`CollectionRegistry.readTarget`: a known collection on
   * a first attempt, its read conflict taken).
   */
  private wholeDocument(tr: Transaction, id: DocId, element: TupleItem): Promise<GetResult> {
    let found: CollectionTarget | Promise<CollectionTarget | undefined>;
    try {
      found = this.context.registry.readTarget(tr, this.path, !this.context.autoCreate);
      if (!(found instanceof Promise)) return readWholeDocument(tr, found.prefix, element, this.context.now(), this.context.forms, id);
    } catch (err) {
      return Promise.reject(err);
    }
    return found.then((target) => {
      if (target === undefined) throw notFound(id);
      return readWholeDocument(tr, target.prefix, element, this.context.now(), this.context.forms, id);
    });
  }

  /**
   * The collection's key prefix as `tr` sees it, or `undefined` when it does not exist. Without a
   * promise when the registry answers at once (`CollectionRegistry.readTarget`); errors found without
   * waiting are thrown.
   */
  private prefixToRead(tr: Transaction): Buffer | Promise<Buffer | undefined> {
    const target = this.context.registry.readTarget(tr, this.path, !this.context.autoCreate);
    return target instanceof Promise ? target.then((found) => found?.prefix) : target.prefix;
  }

  /**
   * The document's keys as `tr` sees the collection, `undefined` when it does not exist. Without a
   * promise when the registry answers at once (`CollectionRegistry.readTarget`); errors found without
   * waiting are thrown.
   */
  private keysToRead(tr: Transaction, element: TupleItem): DocumentKeys | Promise<DocumentKeys | undefined> {
    const target = this.context.registry.readTarget(tr, this.path, !this.context.autoCreate);
    return target instanceof Promise
      ? target.then((found) => (found === undefined ? undefined : new DocumentKeys(found.prefix, element)))
      : new DocumentKeys(target.prefix, element);
  }

  /**
   * The collection for a write (its key prefix, id and maxTTL), with `create` to run, adding it to the
   * manifest, if it is missing and the write goes ahead. Without a promise when the registry answers
   * from its cached manifest (`CollectionRegistry.writeTarget`: a known collection on a first
   * attempt, its read conflict taken); otherwise a promise. Errors found without waiting are thrown.
   * `readsAtOnce` as `CollectionRegistry.writeTarget` says.
   */
  private writeTarget(tr: Transaction, readsAtOnce = false): WriteTarget | Promise<WriteTarget> {
    const target = this.context.registry.writeTarget(tr, this.path, this.context.autoCreate, readsAtOnce);
    return target instanceof Promise ? target.then((found) => this.observed(tr, found)) : this.observed(tr, target);
  }

  /**
   * The collection for a write that needs it to exist (replace, remove), as {@link target}: without a
   * promise when the registry answers at once (`CollectionRegistry.readTarget`); errors found without
   * waiting are thrown.
   */
  private targetToChange(tr: Transaction): CollectionTarget | Promise<CollectionTarget | undefined> {
    const target = this.context.registry.readTarget(tr, this.path, !this.context.autoCreate);
    return target instanceof Promise
      ? target.then((found) => (found === undefined ? undefined : this.observed(tr, found)))
      : this.observed(tr, target);
  }

  /** `target`, after telling the layer's observers of `tr`'s writes to it if it keeps a change feed. */
  private observed<T extends CollectionTarget>(tr: Transaction, target: T): T {
    if (target.history) DocTransaction.of(tr).observe(this.context.observers, target.prefix);
    return target;
  }

  /** Deletes an expired document (or stray expiry), and its index entries, before a write that treats it as missing. */
  private async discard(
    tr: Transaction,
    keys: DocumentKeys,
    target: CollectionTarget,
    element: TupleItem,
    expiresAt: number | undefined,
    indexing: Promise<IndexWrite | undefined>,
  ): Promise<void> {
    writtenUntracked(tr);
    if ((await indexing) !== undefined) await removeIndexEntries(this.context.indexes, tr, target.id, keys);
    tr.clearRange(keys.begin, keys.end);
    if (expiresAt !== undefined) this.context.expiry.forget(tr, target.id, element, expiresAt);
  }

  /**
   * The index side of a mutateIn: when the collection has indexes and the specs may change an indexed
   * path (or create or remove the document, or change its expiry, which every entry records), reads
   * the document's indexed parts before the specs run and returns what mutateIn runs once they have
   * (on its stage, before applying it): read them again and move the entries. Otherwise nothing.
   */
  private async indexedMutation(
    tr: Transaction,
    keys: DocumentKeys,
    indexing: Promise<IndexWrite | undefined>,
    specs: readonly MutateInSpec[],
    opts: MutateInOptions,
    before: number | undefined,
    after: number | undefined,
  ): Promise<((st: Transaction, removed: boolean) => Promise<void>) | undefined> {
    const indexes = (await indexing)?.indexes;
    if (indexes === undefined) return undefined;
    const paths = specPaths(specs);
    const whole = (opts.storeSemantics ?? 'replace') !== 'replace' || before !== after || paths === undefined;
    if (!whole && !indexes.touches(paths)) return undefined;
    const state = await indexes.read(tr, keys, before);
    return async (st, removed) => {
      const next = removed ? NOT_INDEXED : await indexes.read(st, keys, after);
      await indexes.update(tr, keys, state, next);
    };
  }

  /** `doc` as a whole document to write under `id` here, checked. @throws DocumentError INVALID_VALUE, VALUE_TOO_DEEP */
  private documentToWrite(doc: JsonValue, id: DocId): DocumentToWrite {
    return documentToWrite(doc, id, this.context.registry, this.path, this.context.kv.maxKeyBytes);
  }

  private transact<T>(tr: Transaction | undefined, fn: (tr: Transaction) => Promise<T>): Promise<T> {
    return this.context.kv.transact(fn, { tr });
  }

  /**
   * Runs a write of the document `element` in `tr`, or without one combined with the concurrent
   * writes to this collection (`run-write.ts`).
   */
  private write(element: TupleItem, tr: Transaction | undefined, fn: (tr: Transaction) => Promise<void | 'removed'>): Promise<MutationResult> {
    return runWrite(this.context.kv, tr, fn, this.combineKey, tr === undefined ? documentKey(element) : undefined);
  }

  /** Runs a read in `tr`, or without one combined with the concurrent reads of this collection (`run-write.ts`). */
  private read<T>(tr: Transaction | undefined, fn: (tr: Transaction) => Promise<T>): Promise<T> {
    return runRead(this.context.kv, tr, fn, this.combineKey);
  }

  /**
   * Checks that the document exists, has not expired, is not locked against this writer and, with
   * `cas`, has that version (reads issued together); returns its expiry.
   */
  private async mustExist(tr: Transaction, keys: DocumentKeys, id: DocId, cas: Cas | undefined, now: number): Promise<number | undefined> {
    const [presence, casCheck] = await Promise.all([readPresence(tr, keys), cas === undefined ? undefined : settle(checkCas(tr, keys, cas))]);
    if (!presence.exists || isExpired(presence.expiresAt, now)) throw notFound(id);
    // A locked document takes only the lock's CAS (the version getAndLock wrote).
    const locked = isLocked(presence.lockedUntil, now);
    if (locked && cas === undefined) throw lockedError(id);
    try {
      casCheck?.();
    } catch (err) {
      if (isDocumentError(err, 'DOCUMENT_NOT_FOUND')) throw notFound(id);
      if (locked && isDocumentError(err, 'CAS_MISMATCH')) throw lockedError(id);
      throw err;
    }
    return presence.expiresAt;
  }
}

/** A promise's outcome, to take (or throw) later: lets an expired document's NOT_FOUND win over a path error. */
function settle<T>(promise: Promise<T>): Promise<() => T> {
  return promise.then(
    (value) => () => value,
    (err: unknown) => () => {
      throw err;
    },
  );
}

/** An expiry that has not passed, else `undefined`. */
function liveExpiry(expiresAt: number | undefined, now: number): number | undefined {
  return isExpired(expiresAt, now) ? undefined : expiresAt;
}

/** A document among its collection's, for keeping it to one write per combined batch. */
function documentKey(element: TupleItem): string {
  return typeof element === 'string' ? `s${element}` : pack([element]).toString('latin1');
}
