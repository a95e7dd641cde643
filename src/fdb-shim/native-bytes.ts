import { Buffer } from 'node:buffer';
import type { NativeValue } from './native-api';

/**
 * A key, value or bound passed to the addon, as a Buffer: strings are encoded as UTF-8 and byte views
 * are wrapped without copying (the engines copy what they keep).
 *
 * @throws TypeError for anything else, with the addon's message.
 */
export function nativeBytes(value: NativeValue): Buffer {
  if (typeof value === 'string') return Buffer.from(value, 'utf8');
  if (Buffer.isBuffer(value)) return value;
  // Realm-independent checks: under jest, test code and Node's Buffers have different Uint8Arrays.
  if (ArrayBuffer.isView(value)) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  if (Object.prototype.toString.call(value) === '[object ArrayBuffer]') return Buffer.from(value);
  throw new TypeError('Invalid param - must be string, buffer or arraybuffer');
}

/** A version (a signed 64-bit integer) as the addon returns it: 8 big-endian bytes. */
export function versionBytes(version: bigint): Buffer {
  const out = Buffer.alloc(8);
  out.writeBigInt64BE(BigInt.asIntN(64, version), 0);
  return out;
}

/**
 * A version passed to the addon (8 big-endian bytes, as {@link versionBytes} makes them).
 *
 * @throws TypeError for anything but 8 bytes.
 */
export function nativeVersion(version: NativeValue): bigint {
  const bytes = nativeBytes(version);
  if (bytes.length !== 8) throw new TypeError('Invalid version - must be an 8 byte buffer');
  return bytes.readBigInt64BE(0);
}
