import { Buffer } from 'node:buffer';
import type { Collection } from '../collection';
import { casOf } from '../document/keys/version';
import { docIdElement } from '../document/keys/ids';
import { META_ITEM, type DocumentKeys } from '../document/keys/layout';
import { DocumentError } from '../document/errors';
import type { DocId, Expiry, GetResult } from '../document/types';
import type { Database } from '../kv/contract/database';
import type { Transaction } from '../kv/contract/types';
import { holdValue, valueBytes, type ValueEncoding } from './item-value';
import { Status } from './protocol';
import { CommandError } from './server-error';
import { casOfRequest, wireCas } from './wire-cas';

/**
 * Items (a key's value, flags, CAS and expiry, as memcached and Couchbase clients see them) held by
 * doclayer documents. Each method is one transaction, retried inside, so memcached's and Couchbase's
 * atomicity holds across connections and across server processes sharing one store.
 *
 * Besides the document (see `item-value.ts` for how values are held), an item has a record in its
 * document's metadata, `<docPrefix> 0x00 'i'`: the value's encoding and the client's 32-bit flags. A
 * document without one (as the library writes them) is JSON with the JSON common flags. Every
 * whole-document write clears the record with the rest of the document, so a library write of the
 * document turns it back into plain JSON.
 */

/** Couchbase's common flags for a JSON document. */
export const JSON_COMMON_FLAGS = 0x02000006;

/** The largest relative expiry in the protocol (30 days): larger numbers are Unix times. */
const RELATIVE_EXPIRY_LIMIT = 30 * 24 * 3600;

const MASK64 = (1n << 64n) - 1n;

export interface Item {
  readonly value: Buffer;
  readonly flags: number;
  /** True when the value is JSON (the datatype bit). */
  readonly json: boolean;
  readonly cas: bigint;
  readonly expiresAt?: Date;
}

/** The flags and encoding of an item. */
interface ItemRecord {
  readonly flags: number;
  readonly encoding: ValueEncoding;
}

const ENCODINGS: readonly ValueEncoding[] = ['json', 'text', 'binary'];
const DEFAULT_RECORD: ItemRecord = { flags: JSON_COMMON_FLAGS, encoding: 'json' };

function encodeRecord(record: ItemRecord): Buffer {
  const out = Buffer.allocUnsafe(5);
  out[0] = ENCODINGS.indexOf(record.encoding);
  out.writeUInt32BE(record.flags >>> 0, 1);
  return out;
}

function decodeRecord(value: Uint8Array | undefined): ItemRecord {
  if (value === undefined) return DEFAULT_RECORD;
  const bytes = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  const encoding = ENCODINGS[bytes[0]];
  if (bytes.length !== 5 || encoding === undefined) throw new DocumentError('CORRUPT_DATA', 'corrupt item record');
  return { flags: bytes.readUInt32BE(1), encoding };
}

/**
 * The expiry an item's 32-bit expiry field asks for: 0 none, up to 30 days seconds from now, beyond
 * that a Unix time in seconds (one already past expires the item at once).
 */
export function itemExpiry(field: number): Expiry | undefined {
  if (field === 0) return undefined;
  return field <= RELATIVE_EXPIRY_LIMIT ? field : new Date(field * 1000);
}

/** A key as a document id: its UTF-8 text. A key that is not UTF-8 cannot name a document. */
export function idOfKey(key: Buffer): DocId {
  const id = key.toString('utf8');
  if (!Buffer.from(id, 'utf8').equals(key)) throw new CommandError(Status.InvalidArguments, 'a key is UTF-8 text');
  return id;
}

export type StoreMode = 'set' | 'add' | 'replace';

export class ItemStore {
  constructor(private readonly kv: Database) {}

  /** The item under `id`. @throws DocumentError DOCUMENT_NOT_FOUND. */
  async get(c: Collection, id: DocId): Promise<Item> {
    return this.kv.transact(async (tr) => {
      const [doc, record] = await Promise.all([c.get(id, { tr }), this.readRecord(tr, c, id)]);
      return itemOf(doc, record, wireCas(doc.cas));
    });
  }

  /** The item under `id`, its expiry changed (getAndTouch). */
  async getAndTouch(c: Collection, id: DocId, expiry: Expiry | undefined): Promise<Item> {
    const { result, cas } = await this.committed(async (tr) => {
      const [doc, record] = await Promise.all([c.getAndTouch(id, expiry ?? 0, { tr }), this.readRecord(tr, c, id)]);
      return { doc, record };
    });
    return itemOf(result.doc, result.record, cas);
  }

  /** The item under `id`, locked for `seconds` (getAndLock); its CAS is the lock's. */
  async getAndLock(c: Collection, id: DocId, seconds: number): Promise<Item> {
    const { result, cas } = await this.committed(async (tr) => {
      const [doc, record] = await Promise.all([c.getAndLock(id, seconds, { tr }), this.readRecord(tr, c, id)]);
      return { doc, record };
    });
    return itemOf(result.doc, result.record, cas);
  }

  /**
   * Stores a value: `set` whether or not the item exists (with a CAS: only over that version), `add`
   * only if it does not, `replace` only if it does. Returns the new CAS.
   */
  async store(
    c: Collection,
    id: DocId,
    mode: StoreMode,
    value: Buffer,
    flags: number,
    json: boolean,
    expiry: Expiry | undefined,
    wire: bigint,
  ): Promise<bigint> {
    const held = holdValue(value, json);
    const record: ItemRecord = { flags, encoding: held.encoding };
    const { cas } = await this.committed(async (tr) => {
      if (mode === 'add') {
        await c.insert(held.content, { tr, id, expiry });
      } else if (mode === 'replace' || wire !== 0n) {
        const cas = await casOfRequest(tr, await this.keys(tr, c, id), wire);
        await c.replace(id, held.content, { tr, cas, expiry });
      } else {
        await c.upsert(id, held.content, { tr, expiry });
      }
      await this.writeRecord(tr, c, id, record);
    });
    return cas;
  }

  /** Removes the item (with a CAS: only that version). Returns the CAS of the removal. */
  async remove(c: Collection, id: DocId, wire: bigint): Promise<bigint> {
    const { cas } = await this.committed(async (tr) => {
      const cas = await casOfRequest(tr, await this.keys(tr, c, id), wire);
      await c.remove(id, { tr, cas });
    });
    return cas;
  }

  /**
   * Adds `delta` to (or takes it from) the item's decimal value, as memcached: unsigned 64-bit,
   * increments wrap, decrements stop at 0. A missing item is created with `initial`, unless the
   * expiry field is all ones. Returns the new value and CAS.
   */
  async arithmetic(
    c: Collection,
    id: DocId,
    increment: boolean,
    delta: bigint,
    initial: bigint,
    expiryField: number,
    wire: bigint,
  ): Promise<{ value: bigint; cas: bigint }> {
    const { result, cas } = await this.committed(async (tr) => {
      const current = await this.readOptional(tr, c, id);
      if (current === undefined) {
        if (expiryField === 0xffffffff) throw new DocumentError('DOCUMENT_NOT_FOUND', 'no such item');
        if (wire !== 0n) throw new DocumentError('DOCUMENT_NOT_FOUND', 'no such item');
        const bytes = Buffer.from(initial.toString(), 'latin1');
        const held = holdValue(bytes, false);
        await c.insert(held.content, { tr, id, expiry: itemExpiry(expiryField) });
        await this.writeRecord(tr, c, id, { flags: 0, encoding: held.encoding });
        return initial;
      }
      const text = current.item.value.toString('latin1');
      if (!/^[0-9]{1,20}$/.test(text) || BigInt(text) > MASK64) {
        throw new CommandError(Status.DeltaBadValue, 'the value is not a decimal number below 2^64');
      }
      const before = BigInt(text);
      const after = increment ? (before + delta) & MASK64 : before > delta ? before - delta : 0n;
      const held = holdValue(Buffer.from(after.toString(), 'latin1'), false);
      const cas = await casOfRequest(tr, current.keys, wire);
      await c.replace(id, held.content, { tr, cas, preserveExpiry: true });
      await this.writeRecord(tr, c, id, { flags: current.record.flags, encoding: held.encoding });
      return after;
    });
    return { value: result, cas };
  }

  /** Appends (or prepends) bytes to the item's value, keeping its flags and expiry. Returns the new CAS. */
  async concat(c: Collection, id: DocId, bytes: Buffer, prepend: boolean, wire: bigint): Promise<bigint> {
    const { cas } = await this.committed(async (tr) => {
      const current = await this.readOptional(tr, c, id);
      if (current === undefined) throw new CommandError(Status.NotStored, 'no such item');
      const value = prepend ? Buffer.concat([bytes, current.item.value]) : Buffer.concat([current.item.value, bytes]);
      const held = holdValue(value, false);
      const cas = await casOfRequest(tr, current.keys, wire);
      await c.replace(id, held.content, { tr, cas, preserveExpiry: true });
      await this.writeRecord(tr, c, id, { flags: current.record.flags, encoding: held.encoding });
    });
    return cas;
  }

  /** Gives the item a new expiry. Returns the new CAS. */
  async touch(c: Collection, id: DocId, expiry: Expiry | undefined): Promise<bigint> {
    const { cas } = await this.committed(async (tr) => {
      await c.touch(id, expiry ?? 0, { tr });
    });
    return cas;
  }

  /** Ends a lock, given the lock's CAS. */
  async unlock(c: Collection, id: DocId, wire: bigint): Promise<void> {
    await this.kv.transact(async (tr) => {
      const cas = await casOfRequest(tr, await this.keys(tr, c, id), wire);
      if (cas === undefined) throw new CommandError(Status.InvalidArguments, 'unlock takes the CAS of the lock');
      await c.unlock(id, cas, { tr });
    });
  }

  // ---- internals

  /** Runs `fn` in a transaction of its own; the CAS is its versionstamp's. */
  private async committed<T>(fn: (tr: Transaction) => Promise<T>): Promise<{ result: T; cas: bigint }> {
    let stamp: Promise<Buffer> | undefined;
    const result = await this.kv.transact(async (tr) => {
      stamp = tr.getVersionstamp();
      // Attempts that fail reject theirs; only the committed attempt's is awaited.
      stamp.catch(() => undefined);
      return fn(tr);
    });
    return { result, cas: wireCas(casOf(await (stamp as Promise<Buffer>))) };
  }

  private async keys(tr: Transaction, c: Collection, id: DocId): Promise<DocumentKeys | undefined> {
    return c.structureAccess().keysToRead(tr, docIdElement(id));
  }

  private async readRecord(tr: Transaction, c: Collection, id: DocId): Promise<ItemRecord> {
    const keys = await this.keys(tr, c, id);
    return decodeRecord(keys === undefined ? undefined : await tr.get(keys.meta(META_ITEM)));
  }

  private async readOptional(tr: Transaction, c: Collection, id: DocId): Promise<{ item: Item; record: ItemRecord; keys: DocumentKeys } | undefined> {
    const keys = await this.keys(tr, c, id);
    if (keys === undefined) return undefined;
    const [doc, record] = await Promise.all([
      c.get(id, { tr }).catch((err) => {
        if (err instanceof DocumentError && err.code === 'DOCUMENT_NOT_FOUND') return undefined;
        throw err;
      }),
      tr.get(keys.meta(META_ITEM)).then(decodeRecord),
    ]);
    return doc === undefined ? undefined : { item: itemOf(doc, record, wireCas(doc.cas)), record, keys };
  }

  /** Writes the item record after a whole-document write, unless it is the default (JSON, JSON flags). */
  private async writeRecord(tr: Transaction, c: Collection, id: DocId, record: ItemRecord): Promise<void> {
    if (record.encoding === DEFAULT_RECORD.encoding && record.flags === DEFAULT_RECORD.flags) return;
    const keys = await this.keys(tr, c, id);
    if (keys !== undefined) tr.set(keys.meta(META_ITEM), encodeRecord(record));
  }
}

function itemOf(doc: GetResult, record: ItemRecord, cas: bigint): Item {
  return {
    value: valueBytes(doc.content, record.encoding),
    flags: record.flags,
    json: record.encoding === 'json',
    cas,
    ...(doc.expiresAt === undefined ? {} : { expiresAt: doc.expiresAt }),
  };
}
