import { compareBytes, keyAfter } from '../contract/bytes';
import { kvError } from '../contract/errors';
import { MAX_USER_KEY, type KeyRange } from '../contract/key-range';

/** Bytes in a versionstamp: an 8-byte big-endian commit version and a 2-byte big-endian batch order. */
export const VERSIONSTAMP_BYTES = 10;

/** The highest versionstamp, used to bound the keys a versionstamped key may become. */
const MAX_VERSIONSTAMP = Buffer.alloc(VERSIONSTAMP_BYTES, 0xff);

/**
 * A key or value awaiting its transaction's versionstamp: `bytes` without FDB's 4-byte offset suffix,
 * and the position of the 10 placeholder bytes the commit overwrites.
 */
export interface VersionstampTemplate {
  readonly bytes: Buffer;
  readonly offset: number;
}

/**
 * Splits FDB's `bytes ++ uint32LE(offset)` form (API version >= 520).
 *
 * @throws KvError client_invalid_operation (2000) when the suffix is missing or the placeholder does not
 *   fit inside the bytes, as FDB does.
 */
export function parseVersionstampTemplate(withOffset: Buffer): VersionstampTemplate {
  if (withOffset.length < 4) throw kvError('client_invalid_operation', 'a versionstamp template needs a 4-byte offset suffix');
  const bytes = withOffset.subarray(0, withOffset.length - 4);
  const offset = withOffset.readInt32LE(withOffset.length - 4);
  if (offset < 0 || offset + VERSIONSTAMP_BYTES > bytes.length) {
    throw kvError('client_invalid_operation', `versionstamp offset ${offset} does not fit in ${bytes.length} bytes`);
  }
  return { bytes: Buffer.from(bytes), offset };
}

/** The template's bytes with `stamp` written at its offset (a new buffer). */
export function fillVersionstamp(template: VersionstampTemplate, stamp: Buffer): Buffer {
  const out = Buffer.from(template.bytes);
  stamp.copy(out, template.offset, 0, VERSIONSTAMP_BYTES);
  return out;
}

/** The template filled with the highest possible versionstamp. */
export function fillMaxVersionstamp(template: VersionstampTemplate): Buffer {
  return fillVersionstamp(template, MAX_VERSIONSTAMP);
}

/** The versionstamp of a commit: `version` as 8 bytes big-endian, then `batchOrder` as 2 bytes big-endian. */
export function versionstampOf(version: bigint, batchOrder = 0): Buffer {
  const out = Buffer.allocUnsafe(VERSIONSTAMP_BYTES);
  out.writeBigUInt64BE(version, 0);
  out.writeUInt16BE(batchOrder, 8);
  return out;
}

/**
 * The keys a versionstamped key may become, given that its commit version will be at least
 * `lowestVersion`: from that version's stamp up to the highest stamp, clipped to the user keyspace
 * (`undefined` when nothing is left). Reads of them fail with accessed_unreadable (1036) until commit.
 */
export function possibleKeys(template: VersionstampTemplate, lowestVersion: bigint): KeyRange | undefined {
  const lowest = fillVersionstamp(template, versionstampOf(lowestVersion));
  const afterHighest = keyAfter(fillMaxVersionstamp(template));
  const end = compareBytes(afterHighest, MAX_USER_KEY) > 0 ? MAX_USER_KEY : afterHighest;
  return compareBytes(lowest, end) < 0 ? { begin: lowest, end } : undefined;
}
