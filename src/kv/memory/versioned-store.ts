import BTree from 'sorted-btree';
import { compareBytes } from '../contract/bytes';
import { applyAtomicOp } from '../client/atomic-ops';
import type { Mutation } from '../client/mutation';
import type { KeyRange } from '../contract/key-range';
import { fillVersionstamp } from '../client/versionstamp-template';

/** What a commit changed, for watches and the conflict log. */
export interface AppliedCommit {
  /** Keys set, cleared or atomically modified, including the final keys of versionstamped keys. */
  readonly keys: Buffer[];
  /** Ranges cleared by `clearRange`. */
  readonly ranges: KeyRange[];
}

/**
 * The committed data, multi-versioned by copy-on-write: `sorted-btree`'s `clone()` is O(1) and shares
 * every node until one side writes to it, so a reader's snapshot costs nothing up front and each later
 * commit copies only the O(log n) nodes on the paths it changes. At most one snapshot exists per
 * version; it is frozen so a reader can never modify the data another reader sees.
 */
export class VersionedStore {
  private readonly data = new BTree<Buffer, Buffer>(undefined, compareBytes);
  private snapshotOfCurrent: BTree<Buffer, Buffer> | undefined;
  private currentVersion: bigint;

  constructor(initialVersion: bigint) {
    this.currentVersion = initialVersion;
  }

  /** The version of the last commit (or the initial version). */
  get version(): bigint {
    return this.currentVersion;
  }

  /** An immutable view of the data at {@link version}. */
  snapshot(): BTree<Buffer, Buffer> {
    if (!this.snapshotOfCurrent) {
      const snapshot = this.data.clone();
      snapshot.freeze();
      this.snapshotOfCurrent = snapshot;
    }
    return this.snapshotOfCurrent;
  }

  /** The latest committed value at `key`. */
  get(key: Buffer): Buffer | undefined {
    return this.data.get(key);
  }

  /**
   * Applies a transaction's mutations in order as the new version `version`, filling versionstamp
   * placeholders with `versionstamp`. Synchronous, so no reader or committer observes half of it.
   */
  apply(mutations: readonly Mutation[], version: bigint, versionstamp: Buffer): AppliedCommit {
    const data = this.data;
    const keys: Buffer[] = [];
    const ranges: KeyRange[] = [];
    for (const m of mutations) {
      switch (m.type) {
        case 'set':
          data.set(m.key, m.value);
          keys.push(m.key);
          break;
        case 'clear':
          data.delete(m.key);
          keys.push(m.key);
          break;
        case 'clearRange':
          data.deleteRange(m.begin, m.end, false);
          ranges.push({ begin: m.begin, end: m.end });
          break;
        case 'atomic': {
          const value = applyAtomicOp(m.op, data.get(m.key), m.operand);
          if (value === undefined) data.delete(m.key);
          else data.set(m.key, value);
          keys.push(m.key);
          break;
        }
        case 'setVersionstampedKey': {
          const key = fillVersionstamp(m.key, versionstamp);
          data.set(key, m.value);
          keys.push(key);
          break;
        }
        case 'setVersionstampedValue':
          data.set(m.key, fillVersionstamp(m.value, versionstamp));
          keys.push(m.key);
          break;
      }
    }
    this.currentVersion = version;
    this.snapshotOfCurrent = undefined;
    return { keys, ranges };
  }
}
