import { Buffer } from 'node:buffer';
import { ErrorCodes, KvError } from '../kv/contract/errors';

/** The API version from which FDB reads a 4-byte versionstamp offset in keys and values. */
export const FOUR_BYTE_OFFSET_API_VERSION = 520;

function withOffset(bytes: Buffer, offset: number): Buffer {
  const out = Buffer.alloc(bytes.length + 4);
  bytes.copy(out, 0);
  out.writeUInt32LE(offset, bytes.length);
  return out;
}

/**
 * A versionstamped key's parameter in the form the engines take (FDB's form from API version 520:
 * the bytes, then the placeholder's offset as 4 little-endian bytes). Before 520 FDB read a 2-byte
 * offset.
 *
 * @throws KvError client_invalid_operation (2000) when the offset suffix is missing.
 */
export function versionstampedKeyTemplate(keyWithOffset: Buffer, apiVersion: number): Buffer {
  if (apiVersion >= FOUR_BYTE_OFFSET_API_VERSION) return keyWithOffset;
  if (keyWithOffset.length < 2) {
    throw new KvError(ErrorCodes.client_invalid_operation, 'a versionstamped key needs a 2-byte offset suffix');
  }
  const bytes = keyWithOffset.subarray(0, keyWithOffset.length - 2);
  return withOffset(bytes, keyWithOffset.readUInt16LE(keyWithOffset.length - 2));
}

/**
 * A versionstamped value's parameter in the engines' form. Before API version 520 FDB took no offset
 * in values: the placeholder was the value's first 10 bytes.
 */
export function versionstampedValueTemplate(valueWithOffset: Buffer, apiVersion: number): Buffer {
  if (apiVersion >= FOUR_BYTE_OFFSET_API_VERSION) return valueWithOffset;
  return withOffset(valueWithOffset, 0);
}
