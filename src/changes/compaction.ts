import { Buffer } from 'node:buffer';
import type { Database } from '../kv/contract/database';
import type { TupleItem } from '../tuple';
import { decodeEntry, decodeTombstone, encodeTombstone, POSITION_BYTES, type FeedKeys } from './feed-keys';

/** What one compaction did. */
export interface CompactionReport {
  /** Entries removed because a later change of their document superseded them. */
  readonly superseded: number;
  /** Tombstones (removal entries) discarded for being older than the retention. */
  readonly tombstonesDiscarded: number;
}

/** A document's retained entry as the compactor records it: position, then 1 for a tombstone. */
interface Retained {
  readonly position: Buffer;
  readonly tombstone: boolean;
}

function encodeRetained(retained: Retained): Buffer {
  return Buffer.concat([retained.position, Buffer.of(retained.tombstone ? 1 : 0)]);
}

function decodeRetained(bytes: Buffer): Retained {
  return { position: bytes.subarray(0, POSITION_BYTES), tombstone: bytes[POSITION_BYTES] === 1 };
}

/**
 * Brings a collection's feed down to one entry per document plus the tombstones within the retention:
 *
 * 1. Reads the entries after its cursor, `batchSize` per transaction (snapshot reads: writers
 *    appending entries do not conflict), and for each document keeps only the newest: the entry it
 *    recorded for the document before (`sys ('changes', c, 'd', id)`, 1 point read per document, issued
 *    together) is cleared, the new one recorded; removals are also listed in the tombstone list.
 *    Then the cursor moves. So each entry is handled once, in commit order.
 * 2. Discards the tombstones written before `now - retentionMs` (the oldest first; the list is in feed
 *    order), with their entries and records, and raises the horizon to the last one discarded (an
 *    atomic byteMax, read by nobody here): readers whose position is before it get HISTORY_EXPIRED.
 *
 * Concurrent compactions of one collection conflict on the cursor (1.) or the tombstones (2.) and
 * run one after the other. Superseded entries not yet compacted are skipped by readers, so
 * compaction changes what is stored, never what is delivered (except the tombstones it discards).
 */
export async function compactFeed(kv: Database, feed: FeedKeys, now: number, retentionMs: number, batchSize: number): Promise<CompactionReport> {
  let superseded = 0;
  for (;;) {
    const step = await kv.transact(async (tr) => {
      const cursor = await tr.get(feed.cursor);
      const entries = await tr.snapshot().getRangeAll(feed.entriesAfter(cursor), feed.entriesEnd, { limit: batchSize });
      if (entries.length === 0) return { cleared: 0, full: false };
      const decoded = entries.map((entry) => ({ position: feed.positionOf(entry.key), value: decodeEntry(entry.value) }));
      const ids = new Map<string, TupleItem>();
      for (const { value } of decoded) if (value.kind !== 'drop') ids.set(feed.documentRecord(value.id).toString('latin1'), value.id);
      const records = await Promise.all([...ids.values()].map((id) => tr.get(feed.documentRecord(id))));
      const retained = new Map<string, Retained | undefined>();
      [...ids.keys()].forEach((key, i) => retained.set(key, records[i] === undefined ? undefined : decodeRetained(records[i])));
      let cleared = 0;
      for (const { position, value } of decoded) {
        if (value.kind === 'drop') continue;
        const recordKey = feed.documentRecord(value.id);
        const before = retained.get(recordKey.toString('latin1'));
        if (before !== undefined) {
          tr.clear(feed.entry(before.position));
          if (before.tombstone) tr.clear(feed.tombstone(before.position));
          cleared++;
        }
        const latest = { position: Buffer.from(position), tombstone: value.kind !== 'upsert' };
        retained.set(recordKey.toString('latin1'), latest);
        tr.set(recordKey, encodeRetained(latest));
        if (latest.tombstone) tr.set(feed.tombstone(position), encodeTombstone(value.atMs, value.id));
      }
      tr.set(feed.cursor, decoded[decoded.length - 1].position);
      return { cleared, full: entries.length === batchSize };
    });
    superseded += step.cleared;
    if (!step.full) break;
  }
  let tombstonesDiscarded = 0;
  const before = now - retentionMs;
  for (;;) {
    const step = await kv.transact(async (tr) => {
      const { begin, end } = feed.tombstones;
      const tombstones = await tr.getRangeAll(begin, end, { limit: batchSize });
      let discarded = 0;
      for (const { key, value } of tombstones) {
        const { atMs, id } = decodeTombstone(value);
        if (atMs > before) return { discarded, more: false };
        const position = feed.tombstonePosition(key);
        tr.clear(key);
        tr.clear(feed.entry(position));
        tr.clear(feed.documentRecord(id));
        tr.byteMax(feed.horizon, position);
        discarded++;
      }
      return { discarded, more: tombstones.length === batchSize };
    });
    tombstonesDiscarded += step.discarded;
    if (!step.more) break;
  }
  return { superseded, tombstonesDiscarded };
}
