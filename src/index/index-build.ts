import { Buffer } from 'node:buffer';
import { DocumentError } from '../document/errors';
import { decodeExpiry } from '../document/collection/expiry';
import { docIdOf } from '../document/keys/ids';
import { DATA_SECTION, META_EXPIRY, META_KIND, META_SECTION, metaNameOf } from '../document/keys/layout';
import type { DocId } from '../document/types';
import { unflatten } from '../document/values/flatten';
import { strinc } from '../kv/contract/bytes';
import type { KeyValue, Transaction } from '../kv/contract/types';
import { pack, unpack } from '../tuple';
import { decodeItem, Reader } from '../tuple/codec';
import { entryExpiry, type CompiledIndex } from './compiled-index';

/**
 * Online index builds: an index created on a collection that holds documents starts `'building'`
 * (writers maintain it from the moment it exists; queries may not use it) and a build walks the
 * documents in id order in bounded transactions, writing each one's entries, until it is `'ready'`.
 *
 * The walk is split in parts (id ranges); each part records where it stands in the database (its
 * progress record), in the transaction that indexes its next documents, so a build stopped anywhere
 * (a crash, a killed process) resumes in any process where it stopped, and several workers (in one
 * process or several) can each take parts. Each step reads its documents with read conflicts, so a
 * concurrent write of one of them makes the step retry and index the new state; writes that land
 * after the step are the writers' to maintain. A unique index's build records every pair of
 * documents it finds with the same values in the part's record and, once every part is done, fails
 * with UNIQUE_VIOLATION listing them, leaving the index `'building'` (the next build starts over).
 */

/** One part of a build, as stored. */
export interface BuildPart {
  /** Hex of the first key of the part (a document's prefix, or the collection's). */
  readonly begin: string;
  /** Hex of the key after the part. */
  readonly end: string;
  /** Hex of where the next step starts; `null` once the part is done. */
  readonly next: string | null;
  /** Documents indexed so far. */
  readonly scanned: number;
  /** Pairs of documents found with the same values in a unique index (at most {@link MAX_DUPLICATES}). */
  readonly duplicates: readonly (readonly [DocId, DocId])[];
}

/** Most duplicate pairs one part records. */
export const MAX_DUPLICATES = 100;
/** Document keys one build step reads (a document is never split; a larger one is read whole). */
export const STEP_KEYS = 2000;

/** A document as a build step reads it. */
interface BuiltDocument {
  readonly id: import('../tuple').TupleItem;
  readonly content: import('../document/types').JsonValue;
  readonly expiresAt: number | undefined;
}

/**
 * Reads the documents of `[begin, end)` (a collection's document keys) from `begin`, about `maxKeys`
 * keys, stopping at a document boundary; structures are skipped (they are not indexed).
 *
 * @returns the documents and where the next step starts (`undefined` at `end`).
 */
export async function readStep(
  tr: Transaction,
  collection: Buffer,
  begin: Buffer,
  end: Buffer,
  maxKeys: number,
): Promise<{ docs: BuiltDocument[]; next: Buffer | undefined }> {
  const docs: BuiltDocument[] = [];
  let entries: KeyValue[] = [];
  let prefix: Buffer | undefined;
  let keys = 0;
  const finish = () => {
    if (prefix === undefined) return;
    const doc = documentFrom(entries, prefix.length, decodeItem(new Reader(prefix, collection.length)));
    if (doc !== undefined) docs.push(doc);
  };
  for await (const pair of tr.getRange(begin, end)) {
    keys++;
    if (prefix !== undefined && belongsTo(pair.key, prefix)) {
      entries.push(pair);
      continue;
    }
    finish();
    if (keys > maxKeys) return { docs, next: pair.key };
    const reader = new Reader(pair.key, collection.length);
    decodeItem(reader);
    prefix = pair.key.subarray(0, reader.pos);
    entries = [pair];
  }
  finish();
  return { docs, next: undefined };
}

function belongsTo(key: Buffer, docPrefix: Buffer): boolean {
  const n = docPrefix.length;
  return key.length > n && key[n] <= DATA_SECTION && key.compare(docPrefix, 0, n, 0, n) === 0;
}

function documentFrom(entries: readonly KeyValue[], prefixLength: number, id: import('../tuple').TupleItem): BuiltDocument | undefined {
  let expiresAt: number | undefined;
  let data = 0;
  for (; data < entries.length; data++) {
    const key = entries[data].key;
    if (key[prefixLength] !== META_SECTION) break;
    const name = metaNameOf(key, prefixLength);
    if (name === META_KIND) return undefined;
    if (name === META_EXPIRY) expiresAt = decodeExpiry(entries[data].value);
  }
  if (data === entries.length || entries[data].key[prefixLength] !== DATA_SECTION) return undefined;
  return { id, content: unflatten(entries, data, entries.length, prefixLength + 1), expiresAt };
}

/**
 * Indexes `docs` into `index` in `tr`: writes each document's entries and, for a unique index, reads
 * the range of each entry's values, returning the pairs of live documents found with the same ones.
 */
export async function indexDocuments(
  tr: Transaction,
  index: CompiledIndex,
  docs: readonly BuiltDocument[],
  now: number,
  maxKeyBytes: number,
): Promise<[DocId, DocId][]> {
  const duplicates: [DocId, DocId][] = [];
  const unique = index.stored.unique;
  const checks: Promise<void>[] = [];
  for (const doc of docs) {
    for (const entry of index.entriesOf(doc.id, doc.content, doc.expiresAt)) {
      if (entry.key.length > maxKeyBytes) {
        throw new DocumentError(
          'INDEX_ENTRY_TOO_LARGE',
          `document ${String(docIdOf(doc.id))} gives index ${index.name} a key of ${entry.key.length} bytes`,
          {
            id: docIdOf(doc.id),
          },
        );
      }
      tr.set(entry.key, entry.value ?? Buffer.alloc(0));
      if (!unique || (doc.expiresAt !== undefined && doc.expiresAt <= now)) continue;
      const begin = Buffer.concat([index.entriesPrefix, entry.values]);
      const own = pack([doc.id]);
      checks.push(
        tr.getRangeAll(begin, Buffer.concat([begin, Buffer.of(0xff)]), { limit: 16 }).then((found) => {
          for (const pair of found) {
            const idBytes = pair.key.subarray(begin.length);
            if (idBytes.equals(own)) continue;
            const expiresAt = entryExpiry(pair.value);
            if (expiresAt !== undefined && expiresAt <= now) continue;
            duplicates.push([docIdOf(unpack(idBytes)[0]), docIdOf(doc.id)]);
          }
        }),
      );
    }
  }
  await Promise.all(checks);
  return duplicates;
}

/**
 * Splits a collection's document keys into at most `parts` ranges that start at document prefixes:
 * boundaries are interpolated between the first and last keys and moved to the start of the document
 * at or after them (2 limit-1 reads, then 1 per boundary).
 */
export async function splitParts(tr: Transaction, collection: Buffer, parts: number): Promise<{ begin: Buffer; end: Buffer }[]> {
  const end = strinc(collection);
  if (parts <= 1) return [{ begin: collection, end }];
  const [first] = await tr.snapshot().getRangeAll(collection, end, { limit: 1 });
  const [last] = await tr.snapshot().getRangeAll(collection, end, { limit: 1, reverse: true });
  if (first === undefined || last === undefined) return [{ begin: collection, end }];
  const width = 8;
  const number = (key: Buffer) =>
    BigInt(
      `0x${Buffer.concat([key.subarray(collection.length), Buffer.alloc(width)])
        .subarray(0, width)
        .toString('hex')}`,
    );
  const low = number(first.key);
  const high = number(last.key);
  const boundaries: Buffer[] = [];
  for (let i = 1; i < parts; i++) {
    const at = low + ((high - low) * BigInt(i)) / BigInt(parts);
    const guess = Buffer.concat([collection, Buffer.from(at.toString(16).padStart(width * 2, '0'), 'hex')]);
    const [found] = await tr.snapshot().getRangeAll(guess, end, { limit: 1 });
    if (found === undefined) continue;
    const reader = new Reader(found.key, collection.length);
    decodeItem(reader);
    const start = found.key.subarray(0, reader.pos);
    if (boundaries.length === 0 || !boundaries[boundaries.length - 1].equals(start)) boundaries.push(Buffer.from(start));
  }
  const starts = [collection, ...boundaries.filter((b) => Buffer.compare(b, collection) > 0)];
  return starts.map((begin, i) => ({ begin, end: i + 1 < starts.length ? starts[i + 1] : end }));
}
