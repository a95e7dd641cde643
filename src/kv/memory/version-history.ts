import type BTree from 'sorted-btree';
import { FrozenTree } from './frozen-tree';
import type { RecentLeaves } from './tree-nodes';

/**
 * A version's data, shared by the transactions reading at it, and until when it was the latest.
 * `readers` counts the open transactions reading at it (see {@link VersionHistory}).
 */
export class HeldVersion {
  readers = 0;
  /** The next commit's version; absent while `version` is the latest. */
  until: bigint | undefined = undefined;
  /** When the next commit was made (ms): the versions up to it were the latest until then. */
  supersededAt = Infinity;

  private frozen: FrozenTree | undefined;

  constructor(
    readonly version: bigint,
    readonly data: BTree<Buffer, Buffer>,
    /** The store's recently written leaves, which point reads of `data` look in first. */
    private readonly recent?: RecentLeaves,
  ) {}

  /**
   * The data as read-your-writes views read it, made once for every transaction reading at this
   * version: the data does not change while it is this version's (a commit makes a new version).
   */
  get pairs(): FrozenTree {
    this.frozen ??= new FrozenTree(this.data, this.recent);
    return this.frozen;
  }
}

/**
 * The memory engine's MVCC history, for transactions that choose their read version
 * (`setReadVersion`): the data of the latest version, and of each superseded version that an open
 * transaction still reads at (a frozen copy-on-write clone, which that transaction holds anyway), so
 * that another transaction can read at it too, as the lmdb engine does. A transaction stops reading
 * when it commits, is reset or cancelled, or retries.
 *
 * Versions nobody reads at any more are forgotten at once: a version kept after its readers are done
 * keeps every tree node the later commits replaced, and keeping the last 1,024 read versions, as this
 * engine did before, made garbage collection a third of a read-modify-write's CPU. Superseded versions
 * are also forgotten 5 seconds after they were superseded (reads of them fail with
 * transaction_too_old by then): transactions abandoned without a commit or cancel keep theirs until
 * then. There is no cap on their number: an open transaction keeps its version's data anyway, and the
 * memory engine's conflict log keeps the commits after the oldest version held here, so a cap would
 * fail the oldest of many concurrent transactions with transaction_too_old.
 */
export class VersionHistory {
  /** The latest version, once a transaction has read at it. */
  private latest: HeldVersion | undefined;
  /** Superseded versions with open readers, oldest first. */
  private superseded: HeldVersion[] = [];

  /** A new reader of the latest version, `version` with `data` (the store's snapshot of it). */
  readLatest(version: bigint, data: BTree<Buffer, Buffer>, recent?: RecentLeaves): HeldVersion {
    let held = this.latest;
    if (held === undefined || held.version !== version) held = this.latest = new HeldVersion(version, data, recent);
    held.readers++;
    return held;
  }

  /** A new reader of a held version, found with {@link dataAt}. */
  readAt(held: HeldVersion): HeldVersion {
    held.readers++;
    return held;
  }

  /** A reader of `held` is done: a superseded version is forgotten with its last reader. */
  release(held: HeldVersion): void {
    held.readers--;
    if (held.readers > 0 || held === this.latest) return;
    // Held versions are in version order: found by bisection among many concurrent readers' versions.
    const superseded = this.superseded;
    let lo = 0;
    let hi = superseded.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (superseded[mid].version < held.version) lo = mid + 1;
      else hi = mid;
    }
    if (superseded[lo] === held) superseded.splice(lo, 1);
  }

  /** A commit at `now` made `version` the latest: the version before is kept while it has readers. */
  committed(version: bigint, now: number): void {
    const held = this.latest;
    if (held === undefined) return;
    this.latest = undefined;
    held.until = version;
    held.supersededAt = now;
    if (held.readers > 0) this.superseded.push(held);
  }

  /** Whether an open transaction reads at the latest version. */
  get latestIsRead(): boolean {
    return this.latest !== undefined && this.latest.readers > 0;
  }

  /** The oldest version an open transaction reads at (among those still held), if any. */
  oldestRead(): bigint | undefined {
    if (this.superseded.length > 0) return this.superseded[0].version;
    return this.latest !== undefined && this.latest.readers > 0 ? this.latest.version : undefined;
  }

  /** The held superseded version whose data is the database as of `version`, if any. */
  dataAt(version: bigint): HeldVersion | undefined {
    for (let i = this.superseded.length - 1; i >= 0; i--) {
      const held = this.superseded[i];
      if (held.version > version) continue;
      return held.until !== undefined && version < held.until ? held : undefined;
    }
    return undefined;
  }

  /** Forgets the versions superseded before `time` (ms), whether or not they still have readers. */
  forgetSupersededBefore(time: number): void {
    let stale = 0;
    while (stale < this.superseded.length && this.superseded[stale].supersededAt < time) stale++;
    if (stale > 0) this.superseded.splice(0, stale);
  }
}
