import { createHash } from 'node:crypto';
import type { KeyValue } from '../../src/kv/contract/types';

/**
 * Bytes as FDB prints them (`'p/a\x00'`), for assertions whose diffs a person reads. Values longer
 * than 64 bytes show as their length and a digest, so two big values compare equal exactly when equal.
 */
export function printable(bytes: Uint8Array | undefined): string {
  if (bytes === undefined) return '<missing>';
  if (bytes.length > 64) {
    const digest = createHash('sha256').update(bytes).digest('hex').slice(0, 16);
    return `<${bytes.length} bytes, sha256 ${digest}>`;
  }
  let out = '';
  for (const byte of bytes) {
    out += byte >= 0x20 && byte < 0x7f && byte !== 0x5c && byte !== 0x27 ? String.fromCharCode(byte) : `\\x${byte.toString(16).padStart(2, '0')}`;
  }
  return `'${out}'`;
}

/** Pairs as `key=value` strings in their order, for comparing range reads. */
export function printablePairs(pairs: readonly KeyValue[]): string[] {
  return pairs.map((kv) => `${printable(kv.key)}=${printable(kv.value)}`);
}
