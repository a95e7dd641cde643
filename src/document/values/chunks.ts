import { Buffer } from 'node:buffer';
import { Limits } from '../../kv/contract/limits';

/**
 * Splits bytes too long for one KV value into pieces for consecutive keys, and joins the pieces back:
 * the one split helper behind long strings (`flatten.ts`), the collections manifest
 * (`manifest-store.ts`) and texts (`structures/text.ts`), each of which chooses its own keys.
 */

/** The largest piece: FoundationDB's value limit. */
export const MAX_CHUNK_BYTES = Limits.maxValueBytes;

/** `bytes` in pieces of `max` bytes, the last one shorter when it does not divide; views, not copies. */
export function splitBytes(bytes: Buffer, max: number = MAX_CHUNK_BYTES): Buffer[] {
  return split(bytes, max, false);
}

/**
 * UTF-8 `bytes` in pieces of at most `max` (4 or more) bytes, each ending on a character boundary: a
 * piece never ends before a continuation byte `10xxxxxx`, so every piece is valid UTF-8 on its own.
 */
export function splitUtf8(bytes: Buffer, max: number = MAX_CHUNK_BYTES): Buffer[] {
  return split(bytes, max, true);
}

function split(bytes: Buffer, max: number, utf8: boolean): Buffer[] {
  const out: Buffer[] = [];
  let at = 0;
  while (at < bytes.length) {
    let end = Math.min(at + max, bytes.length);
    if (utf8) while (end < bytes.length && (bytes[end] & 0xc0) === 0x80) end--;
    out.push(bytes.subarray(at, end));
    at = end;
  }
  return out;
}

/** The pieces in order as one buffer (the piece itself when there is one). */
export function joinChunks(chunks: readonly Buffer[]): Buffer {
  return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
}
