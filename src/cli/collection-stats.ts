import { keyAfter, strinc } from '../kv/contract/bytes';
import type { Database } from '../kv/contract/database';
import { decodeItem, Reader } from '../tuple/codec';
import { DATA_SECTION } from '../document/keys/layout';

/**
 * What a collection takes in the key-value store: its documents, keys and bytes (keys plus values),
 * counted by reading every key under its prefix, in pages of their own snapshot transactions so that
 * a large collection neither conflicts with writers nor runs into the 5-second limit.
 */

export interface CollectionStats {
  documents: number;
  keys: number;
  /** Bytes of keys and values. */
  bytes: number;
}

const KEYS_PER_PAGE = 10_000;

/** @param prefix the collection's key prefix: `<prefix> 0x01 <leb128(collection id)>` */
export async function collectionStats(kv: Database, prefix: Buffer): Promise<CollectionStats> {
  const stats: CollectionStats = { documents: 0, keys: 0, bytes: 0 };
  const end = strinc(prefix);
  let begin = prefix;
  let document: Buffer | undefined;
  for (;;) {
    const from = begin;
    const page = await kv.transact((tr) => tr.snapshot().getRangeAll(from, end, { limit: KEYS_PER_PAGE }));
    for (const { key, value } of page) {
      stats.keys++;
      stats.bytes += key.length + value.length;
      if (document === undefined || !belongsTo(key, document)) {
        const reader = new Reader(key, prefix.length);
        decodeItem(reader);
        document = key.subarray(0, reader.pos);
        stats.documents++;
      }
    }
    if (page.length < KEYS_PER_PAGE) return stats;
    begin = keyAfter(page[page.length - 1].key);
  }
}

/** Whether `key` is a key of the document whose keys start with `document` (see `Layout`'s note on ranges). */
function belongsTo(key: Buffer, document: Buffer): boolean {
  const n = document.length;
  return key.length > n && key[n] <= DATA_SECTION && key.compare(document, 0, n, 0, n) === 0;
}
