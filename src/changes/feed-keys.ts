import { Buffer } from 'node:buffer';
import { pack, unpack, type Subspace, type TupleItem } from '../tuple';
import { ChangeFeedError } from './errors';

/**
 * Every key of a collection's change feed, in the document layer's system subspace `sys` (see
 * docs/changes.md):
 *
 * ```
 * sys ('changes', c, 'e') <position>   tuple(kind, id, atMs)   one entry per change (kind 'drop': id is the collection's path)
 * sys ('changes', c, 's')              versionstamp            set by every writing transaction: what followers watch
 * sys ('changes', c, 'd', id)          <position> <kind byte>  the compactor's record of each document's retained entry
 * sys ('changes', c, 't') <position>   tuple(atMs, id)         tombstones kept, in feed order, for the retention purge
 * sys ('changes', c, 'c')              <position>              how far compaction has read
 * sys ('changes', c, 'h')              <position>              the horizon: tombstones up to it were discarded
 * sys ('changes', c, 'p', name)        <position>              a named consumer's position
 * ```
 *
 * A position is 14 bytes: the writing commit's 10-byte versionstamp, then a 4-byte big-endian order
 * of the document among those its transaction changed in the collection. Entries are therefore in
 * commit order, and written at versionstamped keys: writers never read the feed and never conflict
 * through it. The versionstamp part equals the document's version key after the write (its CAS), which
 * is how a reader tells an entry superseded by a later change of its document.
 */

/** Bytes of a position: versionstamp (10) and order within the transaction (4). */
export const POSITION_BYTES = 14;
export const STAMP_BYTES = 10;

/** The kinds of entries, as stored. */
export type EntryKind = 'upsert' | 'remove' | 'expire' | 'drop';
const ENTRY_KINDS: readonly EntryKind[] = ['upsert', 'remove', 'expire', 'drop'];

/** The keys of one collection's feed. */
export class FeedKeys {
  /** `sys ('changes', c, 'e')`: the prefix of every entry. */
  readonly entries: Buffer;
  readonly signal: Buffer;
  readonly cursor: Buffer;
  readonly horizon: Buffer;
  private readonly tombstonePrefix: Buffer;

  constructor(
    private readonly sys: Subspace,
    readonly collectionId: number,
  ) {
    this.entries = sys.pack(['changes', collectionId, 'e']);
    this.signal = sys.pack(['changes', collectionId, 's']);
    this.cursor = sys.pack(['changes', collectionId, 'c']);
    this.horizon = sys.pack(['changes', collectionId, 'h']);
    this.tombstonePrefix = sys.pack(['changes', collectionId, 't']);
  }

  /** The entry at `position`. */
  entry(position: Uint8Array): Buffer {
    return Buffer.concat([this.entries, position]);
  }

  /** The end (exclusive) of the entries. */
  get entriesEnd(): Buffer {
    return Buffer.concat([this.entries, Buffer.alloc(POSITION_BYTES, 0xff)]);
  }

  /** The first entry key after `position` (or the first entry, without one). */
  entriesAfter(position: Uint8Array | undefined): Buffer {
    return position === undefined ? this.entries : Buffer.concat([this.entries, position, Buffer.of(0)]);
  }

  /**
   * The versionstamped-key form (FDB's 4-byte offset suffix) of the entry that the writing
   * transaction's `order`-th changed document gets.
   */
  entryTemplate(order: number): Buffer {
    const key = Buffer.alloc(this.entries.length + POSITION_BYTES + 4);
    this.entries.copy(key, 0);
    key.writeUInt32BE(order, this.entries.length + STAMP_BYTES);
    key.writeUInt32LE(this.entries.length, this.entries.length + POSITION_BYTES);
    return key;
  }

  /** The position of an entry key. */
  positionOf(entryKey: Buffer): Buffer {
    if (entryKey.length !== this.entries.length + POSITION_BYTES) throw corruptFeed('an entry key of the wrong length');
    return entryKey.subarray(this.entries.length);
  }

  /** `sys ('changes', c, 'd', id)`. */
  documentRecord(id: TupleItem): Buffer {
    return this.sys.pack(['changes', this.collectionId, 'd', id]);
  }

  tombstone(position: Uint8Array): Buffer {
    return Buffer.concat([this.tombstonePrefix, position]);
  }

  get tombstones(): { begin: Buffer; end: Buffer } {
    return { begin: this.tombstonePrefix, end: Buffer.concat([this.tombstonePrefix, Buffer.alloc(POSITION_BYTES, 0xff)]) };
  }

  tombstonePosition(key: Buffer): Buffer {
    return key.subarray(this.tombstonePrefix.length);
  }

  /** `sys ('changes', c, 'p', name)`: a consumer's position. */
  consumer(name: string): Buffer {
    return this.sys.pack(['changes', this.collectionId, 'p', name]);
  }

  /** Every key of this collection's feed but its consumers' positions and horizon. */
  get dataRanges(): { begin: Buffer; end: Buffer }[] {
    return [
      this.sys.range(['changes', this.collectionId, 'e']),
      this.sys.range(['changes', this.collectionId, 'd']),
      this.sys.range(['changes', this.collectionId, 't']),
    ];
  }
}

/** The value of an entry: its kind, the document's id (or the dropped collection's path), and the writer's clock. */
export interface EntryValue {
  readonly kind: EntryKind;
  readonly id: TupleItem;
  readonly atMs: number;
}

/** An entry's value: the tuple (kind number, id, atMs). */
export function encodeEntry(value: EntryValue): Buffer {
  return pack([ENTRY_KINDS.indexOf(value.kind), value.id, value.atMs]);
}

/** @throws ChangeFeedError CORRUPT_DATA for bytes no writer produced. */
export function decodeEntry(bytes: Buffer): EntryValue {
  let items: readonly unknown[];
  try {
    items = unpack(bytes);
  } catch {
    throw corruptFeed('an entry that is not a tuple');
  }
  const [kind, id, atMs] = items;
  if (typeof kind !== 'number' || ENTRY_KINDS[kind] === undefined || typeof atMs !== 'number' || items.length !== 3) {
    throw corruptFeed('an entry that is not (kind, id, time)');
  }
  return { kind: ENTRY_KINDS[kind], id: id as TupleItem, atMs };
}

/** A tombstone's value: when its removal was written, and the document's id. */
export function encodeTombstone(atMs: number, id: TupleItem): Buffer {
  return pack([atMs, id]);
}

export function decodeTombstone(bytes: Buffer): { atMs: number; id: TupleItem } {
  const [atMs, id] = unpack(bytes);
  if (typeof atMs !== 'number') throw corruptFeed('a tombstone record that is not (time, id)');
  return { atMs, id };
}

export function corruptFeed(what: string): ChangeFeedError {
  return new ChangeFeedError('CORRUPT_DATA', `corrupt change feed: ${what}`);
}

// ---- tokens

const TOKEN = /^c([0-9a-f]{1,8})-([0-9a-f]{28})$/;

/** A resume position as a reader holds it: `c<collection id in hex>-<position in hex>`. */
export function formatToken(collectionId: number, position: Uint8Array): string {
  return `c${collectionId.toString(16)}-${Buffer.from(position).toString('hex')}`;
}

/** A token taken apart. */
export interface ParsedToken {
  readonly collectionId: number;
  readonly position: Buffer;
}

/**
 * @throws ChangeFeedError INVALID_TOKEN for anything but a token the feed gave out.
 */
export function parseToken(token: unknown): ParsedToken {
  if (typeof token !== 'string') throw new ChangeFeedError('INVALID_TOKEN', `a token is a string, got ${token === null ? 'null' : typeof token}`);
  const match = TOKEN.exec(token);
  if (match === null)
    throw new ChangeFeedError('INVALID_TOKEN', `${JSON.stringify(token.slice(0, 80))} is not a change feed token (c<collection>-<28 hex digits>)`);
  return { collectionId: parseInt(match[1], 16), position: Buffer.from(match[2], 'hex') };
}
