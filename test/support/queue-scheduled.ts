import type { DocLayer } from '../../src';
import type { JsonValue } from '../../src/document/types';
import { QueueKeys } from '../../src/structures/queue/keys';
import { decodePayload, decodeRecord } from '../../src/structures/queue/item';

/**
 * The scheduled items of queue `id` in the default collection as [value, visible-at] pairs, by time:
 * what repeatable jobs enqueued (their items are delayed pushes), read from the keys themselves.
 */
export async function scheduledItems(docs: DocLayer, id = 'q'): Promise<[JsonValue, number][]> {
  const c = docs.collection();
  return docs.transact(async (tr) => {
    const doc = await c.structureAccess().keysToRead(tr, id);
    if (doc === undefined) return [];
    const keys = new QueueKeys(doc);
    const out: [JsonValue, number][] = [];
    for (const { key, value } of await tr.getRangeAll(keys.scheduled, keys.scheduledEnd)) {
      const position = keys.position(key);
      if (position.area === 'scheduled') out.push([decodePayload(decodeRecord(value).payload), position.at]);
    }
    return out;
  });
}
