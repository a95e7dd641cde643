import { Buffer } from 'node:buffer';

/**
 * FoundationDB's metadata version key, `\xff/metadataVersion`: the one key of the system keyspace that
 * transactions read and write without special options. Its value is the 10-byte versionstamp of the
 * last commit that bumped it (absent until one does). A cluster sends it with every read version, so
 * reading it costs no round trip; layers key their caches of metadata by it (fdb-record-layer caches its
 * record-store metadata this way). See {@link ReadTransaction.getMetadataVersion} and
 * {@link Transaction.bumpMetadataVersion}.
 */
export const METADATA_VERSION_KEY: Buffer = Buffer.from('\xff/metadataVersion', 'latin1');

/**
 * The only parameter FDB accepts for `setVersionstampedValue` on {@link METADATA_VERSION_KEY}`: a
 * 10-byte placeholder at offset 0 (4-byte little-endian offset suffix), so the value becomes exactly the
 * commit's versionstamp. Any other parameter is client_invalid_operation (2000).
 */
export const METADATA_VERSION_BUMP: Buffer = Buffer.alloc(14);

/** Whether `key` is {@link METADATA_VERSION_KEY}. */
export function isMetadataVersionKey(key: Uint8Array): boolean {
  return key.length === METADATA_VERSION_KEY.length && METADATA_VERSION_KEY.equals(key);
}
