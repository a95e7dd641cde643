import { Buffer } from 'node:buffer';
import { DocumentError } from '../errors';

/**
 * Unsigned LEB128 for 32-bit collection ids, as Couchbase puts them at the start of document keys:
 * 7 bits per byte, lowest group first, the high bit set on every byte but the last. Only the canonical
 * (shortest) encoding is accepted, so every id has exactly one key prefix.
 */

/** Bytes in the longest encoding: 5 × 7 bits cover 32. */
const MAX_BYTES = 5;
const MAX_U32 = 0xffffffff;

/**
 * The canonical encoding of `n` (1 to 5 bytes).
 *
 * @throws DocumentError INVALID_ARGUMENT unless `n` is an integer in `0..0xFFFFFFFF`.
 */
export function encodeLeb128(n: number): Buffer {
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > MAX_U32) {
    throw new DocumentError('INVALID_ARGUMENT', `a LEB128 collection id is an integer in 0..4294967295, got ${String(n)}`);
  }
  const out: number[] = [];
  let rest = n;
  // `>>>` works on unsigned 32-bit integers, which is exactly the accepted range.
  while (rest > 0x7f) {
    out.push((rest & 0x7f) | 0x80);
    rest >>>= 7;
  }
  out.push(rest);
  return Buffer.from(out);
}

/**
 * Decodes the canonical encoding starting at `bytes[offset]`.
 *
 * @returns the value and the number of bytes it took.
 * @throws DocumentError INVALID_LEB128 (the message names the offset) when the input ends first, no
 *   byte within 5 ends the number, the 5th byte carries bits above 32, or the encoding is not the
 *   shortest (a last byte of 0 after others, as in `81 00`).
 * @throws DocumentError INVALID_ARGUMENT for an offset that is not an integer in `0..bytes.length`.
 */
export function decodeLeb128(bytes: Uint8Array, offset = 0): { value: number; length: number } {
  if (!Number.isInteger(offset) || offset < 0 || offset > bytes.length) {
    throw new DocumentError('INVALID_ARGUMENT', `offset ${offset} is outside the ${bytes.length} bytes given`);
  }
  let value = 0;
  // Ends by the 5th byte at the latest: it either has no continuation bit or is rejected.
  for (let i = 0; ; i++) {
    const at = offset + i;
    if (at >= bytes.length) {
      throw invalid(offset, `the input ends after ${i} byte${i === 1 ? '' : 's'}, before the last byte`);
    }
    const byte = bytes[at];
    if (i === MAX_BYTES - 1 && byte > 0x0f) {
      const what = byte & 0x80 ? 'no last byte within 5 bytes' : `byte ${hex(byte)} sets bits above 32`;
      throw invalid(offset, `${what}: the value exceeds 0xFFFFFFFF`);
    }
    // Multiplication, not shifts: bit 31 would make a shifted number negative.
    value += (byte & 0x7f) * 2 ** (7 * i);
    if ((byte & 0x80) === 0) {
      if (byte === 0 && i > 0) throw invalid(offset, 'not canonical: the last byte is 0x00 (zero padding)');
      return { value, length: i + 1 };
    }
  }
}

function invalid(offset: number, what: string): DocumentError {
  return new DocumentError('INVALID_LEB128', `${what} (LEB128 at offset ${offset})`, { position: offset });
}

function hex(byte: number): string {
  return `0x${byte.toString(16).padStart(2, '0').toUpperCase()}`;
}
