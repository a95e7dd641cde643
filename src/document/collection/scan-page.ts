import { Buffer } from 'node:buffer';
import { keyAfter } from '../../kv/contract/bytes';
import type { KeyValue, Transaction } from '../../kv/contract/types';
import { decodeItem, Reader } from '../../tuple/codec';
import { DocTransaction } from '../doc-transaction';
import { docIdOf } from '../keys/ids';
import type { JsonForms } from '../keys/kind';
import { DATA_SECTION, DocumentKeys, META_VERSION, metaKey } from '../keys/layout';
import type { DocId, ScanItem } from '../types';
import { documentOf } from './document-read';

/**
 * One page of a collection scan: the documents of a key range, read by one streamed range read and
 * cut at a document boundary, so a page resumes exactly where the last one stopped.
 */

export interface Page {
  items: ScanItem[];
  /** Where the next page starts (the first key of the next document), if there may be one. */
  next: Buffer | undefined;
}

/**
 * Up to `want` documents from `[begin, end)`: one streamed range read, stopped at the first key of
 * the document after the last one wanted. Version keys of documents this transaction wrote are
 * stepped around (they cannot be read before commit).
 */
export async function readPage(
  tr: Transaction,
  forms: JsonForms,
  collection: Buffer,
  begin: Buffer,
  end: Buffer,
  want: number,
  now: number,
): Promise<Page> {
  const items: ScanItem[] = [];
  let docEntries: KeyValue[] = [];
  let docPrefix: Buffer | undefined;
  let docId: DocId | undefined;
  const finish = () => {
    if (docPrefix === undefined) return;
    const prefix = docPrefix;
    const keysOf = () => new DocumentKeys(collection, decodeItem(new Reader(prefix, collection.length)));
    const found = documentOf(forms, docEntries, prefix.length, 0, docEntries.length, keysOf, now);
    if (found !== undefined) items.push({ id: docId as DocId, ...found });
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
  for (const identity of DocTransaction.existing(tr)?.writtenDocuments() ?? []) {
    const prefix = Buffer.from(identity, 'latin1');
    if (prefix.length <= collection.length || prefix.compare(collection, 0, collection.length, 0, collection.length) !== 0) continue;
    const key = metaKey(prefix, META_VERSION);
    if (Buffer.compare(key, begin) >= 0 && Buffer.compare(key, end) < 0) out.push(key);
  }
  return out.sort((a, b) => Buffer.compare(a, b));
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
