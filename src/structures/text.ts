import { Buffer } from 'node:buffer';
import type { KeyValue, ReadTransaction, Transaction } from '../kv/contract/types';
import { DocumentError } from '../document/errors';
import { childKey, decodePosition, descendantsBegin, META_BYTES, META_LENGTH, subtreeEnd, type DocumentKeys } from '../document/keys/layout';
import { joinChunks, MAX_CHUNK_BYTES, splitUtf8 } from '../document/values/chunks';
import { loneSurrogateIndex } from '../document/values/path';
import type { JsonValue, TransactionOption } from '../document/types';
import { decodeInt64, encodeInt64 } from './int64';
import { Structure, type StructureWriteOptions } from './structure';
import { bodyKey } from './structure-keys';

/** Largest chunk: FoundationDB's value limit. */
export const TEXT_CHUNK_BYTES = MAX_CHUNK_BYTES;

const utf8 = new TextDecoder('utf-8');

/**
 * A string stored as UTF-8 bytes in chunks of at most 100,000 bytes at contiguous positions
 * `<body> tuple(p)` whose first position moves, as a list's do: append adds to the last chunk when it
 * fits (an atomic appendIfFits: only the new bytes travel) and otherwise writes new chunks after it;
 * prepend rewrites the first chunk when it fits and otherwise writes new chunks before it. No
 * character is ever split between chunks. The length, in UTF-16 code units (`string.length`) and in
 * UTF-8 bytes, is kept in the metadata keys `'l'` and `'b'` by atomic add. The JSON form
 * (`collection.get`) is the string.
 *
 * As memcached's APPEND and PREPEND, the text is never read to change it; unlike them, appending to a
 * missing text creates it (structures are created by their first write).
 *
 * Concurrency: append reads the last chunk and prepend the first, so concurrent appends conflict with
 * each other (each retries; all land, each whole), as do prepends, and an append and a prepend
 * conflict only while the text has one chunk. Lengths change by atomic add and never conflict.
 */
export class DocText extends Structure {
  readonly kind = 'text' as const;

  /**
   * Adds `s` at the end. Creates the text if it does not exist. Reads: the kind key, 1 limit-1 range
   * read (the last chunk). Writes: an appendIfFits to the last chunk or new chunks, 2 atomic adds (the
   * lengths), the version key.
   *
   * @throws DocumentError INVALID_VALUE (not a string, or a lone surrogate), WRONG_KIND.
   */
  async append(s: string, opts: StructureWriteOptions = {}): Promise<void> {
    const bytes = encode(s);
    await this.writeWith(
      opts,
      (tr, keys) => endChunk(tr, bodyKey(keys), 'last'),
      async ({ tr, keys, create }, last) => {
        const body = bodyKey(keys);
        create();
        if (last !== undefined && last.value.length + bytes.length <= TEXT_CHUNK_BYTES) {
          if (bytes.length > 0) tr.appendIfFits(last.key, bytes);
        } else {
          writeChunks(tr, body, last === undefined ? 0 : last.position + 1, splitUtf8(bytes, TEXT_CHUNK_BYTES));
        }
        addLengths(tr, keys, s.length, bytes.length);
        this.changed(tr, keys);
      },
    );
  }

  /**
   * Adds `s` at the start. Creates the text if it does not exist. Reads: the kind key, 1 limit-1 range
   * read (the first chunk). Writes: the first chunk rewritten, or new chunks before it; 2 atomic adds,
   * the version key.
   *
   * @throws DocumentError INVALID_VALUE, WRONG_KIND.
   */
  async prepend(s: string, opts: StructureWriteOptions = {}): Promise<void> {
    const bytes = encode(s);
    await this.writeWith(
      opts,
      (tr, keys) => endChunk(tr, bodyKey(keys), 'first'),
      async ({ tr, keys, create }, first) => {
        const body = bodyKey(keys);
        create();
        if (first !== undefined && first.value.length + bytes.length <= TEXT_CHUNK_BYTES) {
          if (bytes.length > 0) tr.set(first.key, Buffer.concat([bytes, first.value]));
        } else {
          const chunks = splitUtf8(bytes, TEXT_CHUNK_BYTES);
          writeChunks(tr, body, (first === undefined ? 0 : first.position) - chunks.length, chunks);
        }
        addLengths(tr, keys, s.length, bytes.length);
        this.changed(tr, keys);
      },
    );
  }

  /**
   * Replaces the whole text (blindly). Reads: the kind key. Writes: a range clear of the chunks, the new
   * chunks, the two lengths, the version key. Conflicts with concurrent append and prepend.
   *
   * @throws DocumentError INVALID_VALUE, WRONG_KIND.
   */
  async set(s: string, opts: StructureWriteOptions = {}): Promise<void> {
    const bytes = encode(s);
    await this.write(opts, async ({ tr, keys, create }) => {
      const body = bodyKey(keys);
      create();
      tr.clearRange(descendantsBegin(body), subtreeEnd(body));
      writeChunks(tr, body, 0, splitUtf8(bytes, TEXT_CHUNK_BYTES));
      tr.set(keys.meta(META_LENGTH), encodeInt64(BigInt(s.length)));
      tr.set(keys.meta(META_BYTES), encodeInt64(BigInt(bytes.length)));
      this.changed(tr, keys);
    });
  }

  /**
   * The whole string (`''` for a missing text). Reads: the kind key, 1 range read of the chunks.
   *
   * @throws DocumentError WRONG_KIND.
   */
  async get(opts: TransactionOption = {}): Promise<string> {
    return this.readWith(
      opts,
      (tr, keys) => tr.getRangeAll(descendantsBegin(bodyKey(keys)), subtreeEnd(bodyKey(keys))),
      async (_tr, _keys, chunks) => decodeChunks((chunks ?? []).map((chunk) => chunk.value)),
    );
  }

  /**
   * The length in UTF-16 code units, as `string.length` counts (an astral character such as '😀' is 2).
   * Reads: the kind key, the length key (in a writing transaction, conflicts with every concurrent
   * change).
   *
   * @throws DocumentError WRONG_KIND.
   */
  async length(opts: TransactionOption = {}): Promise<number> {
    return this.readLength(META_LENGTH, opts);
  }

  /** The length in UTF-8 bytes ('😀' is 4); as {@link length}. */
  async byteLength(opts: TransactionOption = {}): Promise<number> {
    return this.readLength(META_BYTES, opts);
  }

  private readLength(name: number, opts: TransactionOption): Promise<number> {
    return this.readWith(
      opts,
      (tr, keys) => tr.get(keys.meta(name)),
      async (_tr, _keys, length) => Number(decodeInt64(length)),
    );
  }
}

interface Chunk {
  readonly key: Buffer;
  readonly position: number;
  readonly value: Buffer;
}

/** The first or last chunk, by one limit-1 range read. */
async function endChunk(tr: ReadTransaction, body: Buffer, which: 'first' | 'last'): Promise<Chunk | undefined> {
  const found = await tr.getRangeAll(descendantsBegin(body), subtreeEnd(body), { limit: 1, reverse: which === 'last' });
  if (found.length === 0) return undefined;
  const { key, value } = found[0];
  return { key, position: decodePosition(key, body.length), value };
}

function writeChunks(tr: Transaction, body: Buffer, from: number, chunks: readonly Buffer[]): void {
  for (let i = 0; i < chunks.length; i++) tr.set(childKey(body, from + i), chunks[i]);
}

function addLengths(tr: Transaction, keys: DocumentKeys, units: number, bytes: number): void {
  if (units === 0) return;
  tr.add(keys.meta(META_LENGTH), encodeInt64(BigInt(units)));
  tr.add(keys.meta(META_BYTES), encodeInt64(BigInt(bytes)));
}

/** @throws DocumentError INVALID_VALUE for a non-string or a string with a lone surrogate. */
function encode(s: unknown): Buffer {
  if (typeof s !== 'string') throw new DocumentError('INVALID_VALUE', `text is a string, got ${typeof s}`);
  const at = loneSurrogateIndex(s);
  if (at >= 0) throw new DocumentError('INVALID_VALUE', `text cannot hold a lone surrogate (at index ${at}): UTF-8 has no form for it`);
  return Buffer.from(s, 'utf8');
}

function decodeChunks(values: readonly Buffer[]): string {
  return utf8.decode(joinChunks(values));
}

/** The JSON form: the string. */
export function textJsonForm(entries: readonly KeyValue[], keys: DocumentKeys): JsonValue {
  const body = bodyKey(keys);
  const values: Buffer[] = [];
  for (const { key, value } of entries) {
    if (key.length > body.length && key.compare(body, 0, body.length, 0, body.length) === 0) values.push(value);
  }
  return decodeChunks(values);
}
