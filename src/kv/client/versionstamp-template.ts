import { Buffer } from 'node:buffer';
import { compareBytes, copyOf } from '../contract/bytes';
import { kvError } from '../contract/errors';
import { MAX_USER_KEY, type KeyRange } from '../contract/key-range';

/** Bytes in a versionstamp: an 8-byte big-endian commit version and a 2-byte big-endian batch order. */
export const VERSIONSTAMP_BYTES = 10;

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
  const template = parseOwnedVersionstampTemplate(withOffset);
  return { bytes: copyOf(template.bytes), offset: template.offset };
}

/**
 * {@link parseVersionstampTemplate} of bytes the caller owns and never modifies (a transaction's own
 * copy of its argument): the template's bytes are a view of them, not a copy.
 */
export function parseOwnedVersionstampTemplate(withOffset: Buffer): VersionstampTemplate {
  if (withOffset.length < 4) throw kvError('client_invalid_operation', 'a versionstamp template needs a 4-byte offset suffix');
  const length = withOffset.length - 4;
  const offset = withOffset.readInt32LE(length);
  if (offset < 0 || offset + VERSIONSTAMP_BYTES > length) {
    throw kvError('client_invalid_operation', `versionstamp offset ${offset} does not fit in ${length} bytes`);
  }
  return { bytes: withOffset.subarray(0, length), offset };
}

/**
 * A template in both of its forms, checked once: FDB's `bytes ++ uint32LE(offset)`, which any
 * transaction takes, and its parse, which the memory and LMDB engines' transactions take as it is
 * (see `setVersionstampedValueHandedOver`). For a layer's constant template, shared by every write.
 */
export interface PreparedVersionstampTemplate {
  readonly withOffset: Buffer;
  readonly template: VersionstampTemplate;
}

/**
 * `withOffset` checked and parsed once ({@link parseVersionstampTemplate}); the caller never modifies it.
 *
 * @throws KvError client_invalid_operation (2000) as `parseVersionstampTemplate` does.
 */
export function prepareVersionstampTemplate(withOffset: Buffer): PreparedVersionstampTemplate {
  return { withOffset, template: parseVersionstampTemplate(withOffset) };
}

/**
 * The template's bytes with `stamp` written at its offset: a new buffer, or `stamp` itself when the
 * template is the versionstamp alone (a document's version value), which then costs no copy; stored
 * values are read-only, and every caller passes a stamp it made for its commit.
 */
export function fillVersionstamp(template: VersionstampTemplate, stamp: Buffer): Buffer {
  if (template.offset === 0 && template.bytes.length === VERSIONSTAMP_BYTES && stamp.length === VERSIONSTAMP_BYTES) return stamp;
  const out = copyOf(template.bytes);
  out.set(stamp.length === VERSIONSTAMP_BYTES ? stamp : stamp.subarray(0, VERSIONSTAMP_BYTES), template.offset);
  return out;
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
  const { bytes, offset } = template;
  // The lowest: the version's stamp (batch order 0); past the highest: every stamp byte 0xff, then 0x00.
  const lowest = copyOf(bytes);
  lowest.writeBigUInt64BE(lowestVersion, offset);
  lowest[offset + 8] = 0;
  lowest[offset + 9] = 0;
  const afterHighest = Buffer.allocUnsafe(bytes.length + 1);
  afterHighest.set(bytes, 0);
  afterHighest.fill(0xff, offset, offset + VERSIONSTAMP_BYTES);
  afterHighest[bytes.length] = 0;
  const end = compareBytes(afterHighest, MAX_USER_KEY) > 0 ? MAX_USER_KEY : afterHighest;
  return compareBytes(lowest, end) < 0 ? { begin: lowest, end } : undefined;
}
