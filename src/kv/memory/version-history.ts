import type BTree from 'sorted-btree';

/** Versions whose data is kept for `setReadVersion`, at most: each keeps the tree nodes commits replaced since. */
const MAX_HELD_VERSIONS = 1024;

/** The data of the versions from `version` up to (not including) the next commit's, `until`. */
interface HeldVersion {
  readonly version: bigint;
  readonly data: BTree<Buffer, Buffer>;
  /** The next commit's version; absent while `version` is the latest. */
  until: bigint | undefined;
  /** When the next commit was made (ms): the versions up to it were the latest until then. */
  supersededAt: number;
}

/** What a forgotten slot holds, so that it keeps no tree alive. */
const FORGOTTEN: HeldVersion = { version: -1n, data: undefined as never, until: -1n, supersededAt: -Infinity };

/** The data at a version, and until when that version was the latest (ms; `undefined`: it still is). */
export interface VersionData {
  readonly data: BTree<Buffer, Buffer>;
  readonly supersededAt: number | undefined;
}

/**
 * The memory engine's MVCC history, for transactions that choose their read version: the snapshot of
 * every version a transaction read at (a frozen copy-on-write clone, which the engine makes anyway),
 * kept after later commits, so that another transaction can read at that version too. Versions no
 * transaction read at are not kept; neither are more than {@link MAX_HELD_VERSIONS}, nor, by
 * {@link forgetSupersededBefore}, those superseded over 5 seconds ago.
 */
export class VersionHistory {
  /** Oldest first, from {@link head}: entries before it are forgotten (dropped in chunks, not one by one). */
  private held: HeldVersion[] = [];
  private head = 0;

  /** Keeps `data` as the data of `version`, the latest; once per version. */
  remember(version: bigint, data: BTree<Buffer, Buffer>): void {
    const last = this.held[this.held.length - 1];
    if (last?.version === version) return;
    this.held.push({ version, data, until: undefined, supersededAt: Infinity });
    if (this.held.length - this.head > MAX_HELD_VERSIONS) this.forget(1);
  }

  /** A commit at `now` made `version` the latest: the data kept for the one before covers versions up to it. */
  committed(version: bigint, now: number): void {
    const last = this.held[this.held.length - 1];
    if (last && last.until === undefined) {
      last.until = version;
      last.supersededAt = now;
    }
  }

  /** The data of the database as of `version`, if kept. */
  dataAt(version: bigint): VersionData | undefined {
    for (let i = this.held.length - 1; i >= this.head; i--) {
      const entry = this.held[i];
      if (entry.version > version) continue;
      if (entry.until !== undefined && version >= entry.until) return undefined;
      return { data: entry.data, supersededAt: entry.until === undefined ? undefined : entry.supersededAt };
    }
    return undefined;
  }

  /** Forgets the data of the versions superseded before `time` (ms). */
  forgetSupersededBefore(time: number): void {
    let stale = 0;
    while (this.head + stale < this.held.length && this.held[this.head + stale].supersededAt < time) stale++;
    if (stale > 0) this.forget(stale);
  }

  /** Forgets the `count` oldest entries; the array is compacted once half of it is forgotten. */
  private forget(count: number): void {
    for (let i = this.head; i < this.head + count; i++) this.held[i] = FORGOTTEN;
    this.head += count;
    if (this.head > 64 && this.head * 2 > this.held.length) {
      this.held = this.held.slice(this.head);
      this.head = 0;
    }
  }
}
