import { Buffer } from 'node:buffer';
import type { Transaction } from '../kv/contract/types';
import type { DocumentCollection } from '../document/collection/collection';
import { docIdOf } from '../document/keys/ids';
import { DocumentKeys } from '../document/keys/layout';
import { casOf, readVersion } from '../document/keys/version';
import type { JsonValue } from '../document/types';
import type { ChangeEvent, DocumentChangeEvent } from './change';
import { ChangeFeedError } from './errors';
import { decodeEntry, formatToken, STAMP_BYTES, type FeedKeys } from './feed-keys';

/** A page of the feed as one transaction read it. */
export interface FeedPage<T> {
  /** The changes to deliver, in feed order. */
  readonly changes: ChangeEvent<T>[];
  /** The position of the last entry read (delivered or skipped), `undefined` when none was read. */
  readonly last: Buffer | undefined;
  /** Whether the page met the collection's drop: nothing follows it. */
  readonly dropped: boolean;
  /** Whether the read stopped at `limit`: more may follow at once. */
  readonly full: boolean;
}

/**
 * Reads up to `limit` entries after `after` and keeps those that are their document's current state
 * as `tr` sees it: an upsert whose versionstamp is the document's version (its CAS), a removal of a
 * document that has no version. Every other entry is superseded by a later one of the same document
 * (whose entry follows in the feed), and is skipped.
 *
 * Reads (all snapshot reads, adding no conflicts): the horizon key and the entries (issued
 * together), then per entry the document's version key (together); with `includeDocs`, the
 * documents of the upserts kept (1 range read each, together, through `getMany`: these add read
 * conflicts on the documents).
 *
 * @throws ChangeFeedError HISTORY_EXPIRED when `after` is before the horizon: tombstones after it
 *   were discarded, so the feed can no longer say which documents were removed since.
 */
export async function readFeedPage<T = JsonValue>(
  tr: Transaction,
  feed: FeedKeys,
  collection: DocumentCollection,
  collectionPrefix: Buffer | undefined,
  after: Buffer | undefined,
  limit: number,
  includeDocs: boolean,
): Promise<FeedPage<T>> {
  const snapshot = tr.snapshot();
  const [horizon, entries] = await Promise.all([
    snapshot.get(feed.horizon),
    snapshot.getRangeAll(feed.entriesAfter(after), feed.entriesEnd, { limit }),
  ]);
  if (after !== undefined && horizon !== undefined && Buffer.compare(after, horizon) < 0) {
    throw new ChangeFeedError(
      'HISTORY_EXPIRED',
      `the token is older than the feed's retained history (removals up to c${feed.collectionId.toString(16)}-${horizon.toString('hex')} were forgotten): read the collection afresh, then follow from the feed's end`,
    );
  }
  const decoded = entries.map((entry) => ({ position: feed.positionOf(entry.key), value: decodeEntry(entry.value) }));
  const dropAt = decoded.findIndex((entry) => entry.value.kind === 'drop');
  const read = dropAt === -1 ? decoded : decoded.slice(0, dropAt + 1);
  const versions = await Promise.all(
    read.map(({ value }) =>
      value.kind === 'drop' || collectionPrefix === undefined
        ? Promise.resolve(undefined)
        : readVersion(tr, new DocumentKeys(collectionPrefix, value.id), true),
    ),
  );
  const changes: ChangeEvent<T>[] = [];
  const upserts: number[] = [];
  read.forEach(({ position, value }, i) => {
    const cas = casOf(position.subarray(0, STAMP_BYTES));
    const token = formatToken(feed.collectionId, position);
    if (value.kind === 'drop') {
      changes.push({ kind: 'drop', collection: value.id as string, cas, token });
      return;
    }
    const version = versions[i];
    const current = value.kind === 'upsert' ? version === cas : version === undefined;
    if (!current) return;
    if (value.kind === 'upsert') upserts.push(changes.length);
    changes.push({ kind: value.kind, id: docIdOf(value.id), cas, token });
  });
  if (includeDocs && upserts.length > 0) {
    const docs = await collection.getMany(
      upserts.map((i) => (changes[i] as DocumentChangeEvent<T>).id),
      { tr },
    );
    // An upsert whose document reads as missing has expired: the purge's 'expire' change follows.
    const expired = new Set<number>();
    upserts.forEach((at, i) => {
      const found = docs[i];
      if (found === undefined || found.cas !== changes[at].cas) expired.add(at);
      else changes[at] = { ...changes[at], doc: found.content as T } as ChangeEvent<T>;
    });
    if (expired.size > 0) changes.splice(0, changes.length, ...changes.filter((_, i) => !expired.has(i)));
  }
  return {
    changes,
    last: read.length === 0 ? undefined : Buffer.from(read[read.length - 1].position),
    dropped: dropAt !== -1,
    full: dropAt === -1 && entries.length === limit,
  };
}
