import type { KeyValue } from '../../kv/contract/types';
import type { DocumentKeys } from '../../document/keys/layout';
import type { JsonValue } from '../../document/types';
import { decodePayload, decodeRecord } from './item';
import { QueueKeys } from './keys';

/**
 * A queue's JSON form, as `collection.get(id)` returns it: an array of every item not yet consumed
 * (ready, delayed and leased), in the order of Couchbase's CouchbaseQueue (RFC 50): the next item to
 * pop is the last element, `[-1]`, and the most recently pushed ready item is `[0]`. That is pop order
 * reversed, pop order being visible scheduled items (earliest first), then ready items, then scheduled
 * items not yet visible, by the reader's clock (`Date.now()`).
 */
export function queueJsonForm(entries: readonly KeyValue[], doc: DocumentKeys): JsonValue {
  const keys = new QueueKeys(doc);
  const now = Date.now();
  const visible: JsonValue[] = [];
  const ready: JsonValue[] = [];
  const later: JsonValue[] = [];
  for (const { key, value } of entries) {
    if (keys.isReady(key)) {
      ready.push(decodePayload(decodeRecord(value).payload));
    } else if (keys.isScheduled(key)) {
      const position = keys.position(key);
      const item = decodePayload(decodeRecord(value).payload);
      if (position.area === 'scheduled' && position.at <= now) visible.push(item);
      else later.push(item);
    }
  }
  return [...later.reverse(), ...ready.reverse(), ...visible.reverse()];
}
