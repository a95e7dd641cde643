import { Buffer } from 'node:buffer';
import { LOCKED_CAS } from '../document/collection/lock';
import type { DocumentKeys } from '../document/keys/layout';
import { readVersion } from '../document/keys/version';
import type { Cas } from '../document/types';
import type { Transaction } from '../kv/contract/types';

/**
 * doclayer's CAS (the hex of a 10-byte versionstamp: an 8-byte commit version and a 2-byte order
 * within the commit) as the protocol's 64-bit CAS: the version shifted left by 16 bits, or'd with the
 * order, modulo 2^64. Two versions of one document map to the same number only when their commit
 * versions differ by a multiple of 2^48 (about 9 years of microseconds, or of FoundationDB's million
 * versions a second). A locked document's CAS is all ones, Couchbase's -1.
 *
 * The mapping is only ever used forwards: a client's CAS is checked by reading the document's version
 * in the command's transaction and comparing its 64-bit form ({@link casOfRequest}).
 */

const MASK64 = (1n << 64n) - 1n;
export const WIRE_LOCKED_CAS = MASK64;

/** A CAS that no document has: what a client's CAS that matches nothing is turned into. */
const NO_DOCUMENT_CAS: Cas = '00000000000000000000';

export function wireCas(cas: Cas | undefined): bigint {
  if (cas === undefined) return 0n;
  if (cas === LOCKED_CAS) return WIRE_LOCKED_CAS;
  const bytes = Buffer.from(cas, 'hex');
  return ((bytes.readBigUInt64BE(0) << 16n) | BigInt(bytes.readUInt16BE(8))) & MASK64;
}

/**
 * The doclayer CAS a request's 64-bit CAS stands for, to hand the document operation (which checks it
 * again, conflicting with every write of the document): `undefined` for 0 (no CAS); the document's
 * version when they match; otherwise a CAS no document has, so the operation fails as a mismatch (or
 * as locked, or not found). One point read of the version key.
 */
export async function casOfRequest(tr: Transaction, keys: DocumentKeys | undefined, wire: bigint): Promise<Cas | undefined> {
  if (wire === 0n) return undefined;
  if (keys === undefined) return NO_DOCUMENT_CAS;
  const current = await readVersion(tr, keys, false);
  return current !== undefined && current !== 'unreadable' && wireCas(current) === wire ? current : NO_DOCUMENT_CAS;
}
