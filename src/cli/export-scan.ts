import type { Collection } from '../collection';
import { docIdElement } from '../document/keys/ids';
import { decodeKind, kindKey, type StructureKind } from '../document/keys/kind';
import type { DocId, ScanItem } from '../document/types';
import type { Database } from '../kv/contract/database';
import type { Transaction } from '../kv/contract/types';
import type { ExportRecord } from './export-format';
import { readQueue } from './queue-record';

/**
 * The documents of a collection as the records of an export (`export-format.ts`), in id order: each
 * document with its kind and expiry. A page of documents and their kinds is read in one transaction
 * (a scan, then one point read of the kind key per document, issued together; for a queue, its items,
 * settings, rate limit and schedules as `queue-record.ts` reads them), so a record's kind and value
 * always agree; pages are transactions of their own, so an export of any size stays within
 * the 5-second limit (and, like any scan in pages, is not one snapshot of the whole collection).
 */
export async function* exportRecords(kv: Database, collection: Collection, pageSize: number): AsyncIterable<ExportRecord> {
  let after: DocId | undefined;
  for (;;) {
    const from = after;
    const page = await kv.transact((tr) => readPage(tr, collection, from, pageSize));
    yield* page;
    if (page.length < pageSize) return;
    after = page[page.length - 1].id;
  }
}

/** Up to `pageSize` records of the documents after `after` (all from the first, without it). */
async function readPage(tr: Transaction, collection: Collection, after: DocId | undefined, pageSize: number): Promise<ExportRecord[]> {
  const items: ScanItem[] = [];
  const scan = collection.scan({ tr, pageSize: pageSize + 1, limit: pageSize + 1, ...(after === undefined ? {} : { start: after }) });
  for await (const item of scan) {
    if (item.id !== after) items.push(item);
  }
  const page = items.slice(0, pageSize);
  const now = Date.now();
  return Promise.all(
    page.map(async (item) => {
      const kind = await kindOf(tr, collection, item.id);
      const queue = kind === 'queue' ? await readQueue(tr, collection, item.id, now) : undefined;
      return {
        id: item.id,
        ...(kind === undefined ? {} : { kind }),
        ...(item.expiresAt === undefined ? {} : { expiresAt: item.expiresAt }),
        ...(queue?.details === undefined ? {} : { queue: queue.details }),
        value: queue === undefined ? item.content : queue.value,
      };
    }),
  );
}

/** The kind of the structure at `id`; `undefined` for a plain document. One point read. */
async function kindOf(tr: Transaction, collection: Collection, id: DocId): Promise<StructureKind | undefined> {
  const keys = await collection.structureAccess().keysToRead(tr, docIdElement(id));
  const kind = keys === undefined ? undefined : await tr.get(kindKey(keys));
  return kind === undefined ? undefined : decodeKind(kind);
}
