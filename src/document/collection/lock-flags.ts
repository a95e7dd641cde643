import type { Transaction } from '../../kv/contract/types';
import type { Subspace } from '../../tuple';
import { DocTransaction, METADATA_VERSION_BUMPED } from '../doc-transaction';

/**
 * Which collections have ever had a document locked (`getAndLock`), so that upsert, a blind write,
 * reads a document's lock key only in those: without locks it reads nothing and stays at
 * FoundationDB's floor of 2 round trips (read version, commit).
 *
 * ```
 * <system> ('locks-used', collectionId)  ''     set by a collection's first getAndLock, never cleared
 * ```
 *
 * The first `getAndLock` of a collection sets its flag and bumps the database's metadata version
 * (FoundationDB's `\xff/metadataVersion`, which a cluster sends with the read version: reading it
 * costs no round trip). A writer reads the metadata version, and while it is the one this layer last
 * read the flags at, it trusts the flags it cached then: the flag and the bump commit together, so a
 * flag cached at a version is the flag at that version. A writer that trusted "never locked" conflicts
 * with a concurrent first lock (its read of the metadata version against the bump) and retries, then
 * reads the lock. After its own bump a transaction cannot read the metadata version (1036); it then
 * reads the flag itself.
 */
export class LockFlags {
  /** The metadata version the cached flags were read at. */
  private version: Buffer | undefined;
  private readonly known = new Map<number, boolean>();

  constructor(private readonly system: Subspace) {}

  /**
   * Whether documents of collection `collectionId` may be locked, as `tr` sees it. Cost: the metadata
   * version (no round trip on a cluster); 1 point read of the flag only when this layer has not read
   * it at that version.
   */
  async mayBeLocked(tr: Transaction, collectionId: number): Promise<boolean> {
    const version = await DocTransaction.of(tr).metadataVersion();
    if (version === METADATA_VERSION_BUMPED) return this.readFlag(tr, collectionId);
    if (!sameVersion(version, this.version)) {
      this.version = version;
      this.known.clear();
    }
    const cached = this.known.get(collectionId);
    if (cached !== undefined) return cached;
    const flag = await this.readFlag(tr, collectionId);
    // Kept only if no other version was cached meanwhile: the flag is the flag at `version`.
    if (sameVersion(version, this.version)) this.known.set(collectionId, flag);
    return flag;
  }

  /**
   * What {@link mayBeLocked} returns, without a promise, when it would return it without reading:
   * `tr`'s attempt has read the metadata version (and not bumped it since), the flags cached are the
   * ones at that version, and they have the collection's. `undefined` otherwise: then ask
   * {@link mayBeLocked}.
   */
  knownMayBeLocked(tr: Transaction, collectionId: number): boolean | undefined {
    const settled = DocTransaction.existing(tr)?.metadataVersionSettled;
    if (settled === undefined || !sameVersion(settled.version, this.version)) return undefined;
    return this.known.get(collectionId);
  }

  /**
   * Marks collection `collectionId` as one whose documents may be locked: on its first lock only (1
   * point read of the flag; then the flag and the metadata version bump written).
   */
  async enable(tr: Transaction, collectionId: number): Promise<void> {
    if (await this.readFlag(tr, collectionId)) return;
    tr.set(this.key(collectionId), '');
    tr.bumpMetadataVersion();
    DocTransaction.of(tr).metadataVersionBumped();
  }

  private async readFlag(tr: Transaction, collectionId: number): Promise<boolean> {
    return (await tr.get(this.key(collectionId))) !== undefined;
  }

  private key(collectionId: number): Buffer {
    return this.system.pack(['locks-used', collectionId]);
  }
}

function sameVersion(a: Buffer | undefined, b: Buffer | undefined): boolean {
  return a === undefined || b === undefined ? a === b : a.equals(b);
}
