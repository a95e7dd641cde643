import { Buffer } from 'node:buffer';
import BTree from 'sorted-btree';
import { bulkLoad } from 'sorted-btree/extended/bulkLoad';
import union from 'sorted-btree/extended/union';
import { compareBytes, keyAfter } from '../contract/bytes';
import { applyAtomicOp } from '../client/atomic-ops';
import type { Mutation } from '../client/mutation';
import type { KeyRange } from '../contract/key-range';
import { fillVersionstamp } from '../client/versionstamp-template';
import { deleteOwned, leafIndex, ownedLeafOf, putOwned, RecentLeaves, replaceOwnedRange } from './tree-nodes';

/** What a commit changed, for watches. */
export interface AppliedCommit {
  /**
   * Keys set, cleared or atomically modified, including the final keys of versionstamped keys;
   * except the keys set right after a range clear that holds them (see {@link VersionedStore.apply}),
   * which the cleared range in {@link ranges} stands for (a range clear is a write conflict range).
   */
  readonly keys: Buffer[];
  /** Ranges cleared by `clearRange`, and the range each of {@link runs} spans. */
  readonly ranges: KeyRange[];
  /** The keys of each run of sets merged in one pass (see {@link VersionedStore.apply}), sorted, unique. */
  readonly runs: Buffer[][];
}

/**
 * Consecutive sets at least this many are merged into the store as one sorted run when no stored key
 * lies among them: a document insert writes a key per leaf, all new and next to each other.
 */
const RUN_MIN = 64;

/** The new value of the store's version of a key set twice in one run: the later set. */
const later = (_key: Buffer, _stored: Buffer, written: Buffer): Buffer => written;

/** What a range replacement's scan tells `editRange` of a stored key that is not written again. */
const DELETE = Object.freeze({ delete: true });

/** The one key and value of a one-key replacement, as {@link replaceOwnedRange} takes them. */
const EMPTY = Buffer.alloc(0);
const ONE_KEY: Buffer[] = [EMPTY];
const ONE_VALUE: Buffer[] = [EMPTY];

/** A point write that can follow a range clear in one replacement (see {@link VersionedStore.apply}). */
type PointSet = Extract<Mutation, { type: 'set' | 'setVersionstampedValue' }>;

/**
 * The committed data, multi-versioned by copy-on-write: `sorted-btree`'s `clone()` is O(1) and shares
 * every node until one side writes to it, and each later write copies only the O(log n) nodes on the
 * paths it changes.
 *
 * Readers of the latest version read the store's own tree. A commit that finds readers still reading
 * it (see {@link apply}) freezes that tree and keeps it as theirs, and goes on writing to a clone; a
 * commit that finds none writes to the tree in place, copying no node. A transaction's reads end
 * before its own commit, so a transaction that reads, then writes (most do) leaves no reader behind
 * unless another transaction is reading at the same time.
 */
export class VersionedStore {
  private data = new BTree<Buffer, Buffer>(undefined, compareBytes);
  /**
   * The leaves the last in-place writes reached, where the next writes look first; forgotten before
   * every write through the tree's own methods (see `RecentLeaves`).
   */
  private readonly recent = new RecentLeaves();
  private currentVersion: bigint;

  constructor(initialVersion: bigint) {
    this.currentVersion = initialVersion;
  }

  /** The version of the last commit (or the initial version). */
  get version(): bigint {
    return this.currentVersion;
  }

  /**
   * The data at {@link version}, to read until the next commit, or after it if that commit is told
   * there are readers (then it is frozen). Never modified by the reader.
   */
  snapshot(): BTree<Buffer, Buffer> {
    return this.data;
  }

  /**
   * The leaves in-place writes reached last (see `RecentLeaves`), for reads of a snapshot: each is a
   * node of the tree it was found in, holding that tree's pairs between its first and last keys, for as
   * long as it is remembered for that tree.
   */
  get recentLeaves(): RecentLeaves {
    return this.recent;
  }

  /** The latest committed value at `key`. */
  get(key: Buffer): Buffer | undefined {
    return this.data.get(key);
  }

  /**
   * Applies a transaction's mutations in order as the new version `version`, filling versionstamp
   * placeholders with `versionstamp()`. Synchronous, so no reader or committer observes half of it.
   *
   * A run of {@link RUN_MIN} or more consecutive sets whose keys no stored key lies among is merged in
   * one pass (`sorted-btree`'s union of the store with a tree bulk-loaded from the run: it copies the
   * path to where the run goes once, instead of descending from the root for every key); the run is
   * then reported to watches as the range it spans, and its sorted keys are returned for the conflict log.
   *
   * A range clear followed by sets (or versionstamped values) of keys inside it (a document replaced
   * whole, a map value) is applied as one replacement ({@link replaceRange}): one scan of the range's
   * stored keys, each given its new value or deleted, and only the keys not stored before inserted,
   * instead of deleting every key and inserting each again. Such keys are not returned one by one:
   * the range is (a watch checks every watched key in it, and its write conflict covers them).
   *
   * Other writes go key by key.
   *
   * `read`: whether a transaction may still read the data of the version before (what
   * {@link snapshot} returned): it is then kept as it is, frozen, and the commit writes to a clone.
   */
  apply(mutations: readonly Mutation[], version: bigint, versionstamp: () => Buffer, read: boolean): AppliedCommit {
    if (read) {
      const next = this.data.clone();
      this.data.freeze();
      this.data = next;
    }
    const keys: Buffer[] = [];
    const ranges: KeyRange[] = [];
    const runs: Buffer[][] = [];
    for (let i = 0; i < mutations.length;) {
      const m = mutations[i];
      if (m.type === 'clearRange') {
        const end = pointSetRun(mutations, i + 1, m.begin, m.end);
        if (end > i + 1) {
          this.replaceRange(m.begin, m.end, mutations, i + 1, end, versionstamp, runAscends);
          ranges.push({ begin: m.begin, end: m.end });
          i = end;
          continue;
        }
      }
      if (m.type === 'set') {
        let end = i + 1;
        while (end < mutations.length && mutations[end].type === 'set') end++;
        if (end - i < RUN_MIN || !this.mergeRun(mutations, i, end, ranges, runs)) {
          for (; i < end; i++) this.applyOne(mutations[i], versionstamp, keys, ranges);
        }
        i = end;
        continue;
      }
      this.applyOne(m, versionstamp, keys, ranges);
      i++;
    }
    this.currentVersion = version;
    return { keys, ranges, runs };
  }

  /**
   * Merges the sets `mutations[from, to)` into the store in one union, if no stored key lies between
   * the lowest and the highest of their keys; returns false (having changed nothing) otherwise.
   */
  private mergeRun(mutations: readonly Mutation[], from: number, to: number, ranges: KeyRange[], runs: Buffer[][]): boolean {
    let keys: Buffer[] = [];
    let values: Buffer[] = [];
    let sorted = true;
    for (let i = from; i < to; i++) {
      const m = mutations[i] as Extract<Mutation, { type: 'set' }>;
      if (sorted && keys.length > 0 && compareBytes(keys[keys.length - 1], m.key) >= 0) sorted = false;
      keys.push(m.key);
      values.push(m.value);
    }
    if (!sorted) [keys, values] = sortedLastWins(keys, values);
    const first = keys[0];
    const last = keys[keys.length - 1];
    const stored = this.data.getPairOrNextHigher(first);
    if (stored !== undefined && compareBytes(stored[0], last) <= 0) return false;
    this.union(keys, values);
    ranges.push({ begin: first, end: keyAfter(last) });
    runs.push(keys);
    return true;
  }

  /** Merges `keys` (sorted, unique, none stored, no stored key among them) with their values in one union. */
  private union(keys: Buffer[], values: Buffer[]): void {
    this.recent.forget();
    this.data = union(this.data, bulkLoad(keys, values, this.data.maxNodeSize, compareBytes), later);
  }

  /**
   * Clears `[begin, end)` and then applies the point sets `mutations[from, to)`, all inside it, as
   * one replacement. When the range stores exactly those keys on paths of the store's own (a document
   * or map value rewritten with the same shape, no reader holding the nodes), their values are
   * replaced in place (`replaceOwnedRange`). Otherwise one `editRange` scan gives each stored key its
   * new value or deletes it, then the keys not stored before are inserted ({@link RUN_MIN} or more
   * into an emptied range: in one union).
   */
  private replaceRange(
    begin: Buffer,
    end: Buffer,
    mutations: readonly Mutation[],
    from: number,
    to: number,
    versionstamp: () => Buffer,
    ascending: boolean,
  ): void {
    if (to - from === 1) {
      // One key (a map's scalar value): no arrays to sort and match.
      const m = mutations[from] as PointSet;
      const key = m.key;
      const replace = { value: m.type === 'set' ? m.value : fillVersionstamp(m.value, versionstamp()) };
      ONE_KEY[0] = key;
      ONE_VALUE[0] = replace.value;
      const inPlace = replaceOwnedRange(this.data, begin, end, ONE_KEY, ONE_VALUE);
      ONE_KEY[0] = ONE_VALUE[0] = EMPTY;
      if (inPlace) return;
      this.recent.forget();
      let stored = false;
      this.data.editRange(begin, end, false, (at) => {
        if (stored || compareBytes(at, key) !== 0) return DELETE;
        stored = true;
        return replace;
      });
      if (!stored) this.data.set(key, replace.value);
      return;
    }
    let keys: Buffer[] = [];
    let values: Buffer[] = [];
    let sorted = true;
    for (let i = from; i < to; i++) {
      const m = mutations[i] as PointSet;
      if (!ascending && sorted && keys.length > 0 && compareBytes(keys[keys.length - 1], m.key) >= 0) sorted = false;
      keys.push(m.key);
      values.push(m.type === 'set' ? m.value : fillVersionstamp(m.value, versionstamp()));
    }
    if (!sorted) [keys, values] = sortedLastWins(keys, values);
    // The same keys as stored (a document rewritten with the same shape): their values, in place.
    if (replaceOwnedRange(this.data, begin, end, keys, values)) return;
    this.recent.forget();
    // Indexes of the keys the scan did not find stored, in order.
    const fresh: number[] = [];
    let next = 0;
    const replace = { value: undefined as Buffer | undefined };
    this.data.editRange(begin, end, false, (stored) => {
      while (next < keys.length) {
        const order = compareBytes(keys[next], stored);
        if (order > 0) break;
        if (order === 0) {
          replace.value = values[next++];
          return replace;
        }
        fresh.push(next++);
      }
      return DELETE;
    });
    for (; next < keys.length; next++) fresh.push(next);
    if (fresh.length >= RUN_MIN && fresh.length === keys.length) {
      // None of the keys was stored, and every other stored key of the range is deleted: the range is
      // empty, so no stored key lies among them.
      this.union(keys, values);
      return;
    }
    for (const i of fresh) this.data.set(keys[i], values[i]);
  }

  /**
   * Gives `key` the value `value`: in place when the path to it is the store's own and, for a new key,
   * its leaf has room (see `putOwned`), with one descent that compares only the bytes past the keys'
   * shared prefix; otherwise through `BTree.set`. Overwrites are most writes of a 1-caller structure
   * operation (a counter, a version key); appends (a list's or a queue's new item) most of the rest.
   */
  private put(key: Buffer, value: Buffer): void {
    if (putOwned(this.data, key, value, this.recent)) return;
    this.recent.forget();
    this.data.set(key, value);
  }

  /**
   * Removes `key`: in place when its leaf is the store's own and keeps enough keys (see
   * `deleteOwned`), as a queue pop removes its head item; otherwise through `BTree.delete`.
   */
  private remove(key: Buffer): void {
    if (deleteOwned(this.data, key, this.recent)) return;
    this.recent.forget();
    this.data.delete(key);
  }

  private applyOne(m: Mutation, versionstamp: () => Buffer, keys: Buffer[], ranges: KeyRange[]): void {
    const data = this.data;
    switch (m.type) {
      case 'set':
        this.put(m.key, m.value);
        keys.push(m.key);
        break;
      case 'clear':
        this.remove(m.key);
        keys.push(m.key);
        break;
      case 'clearRange':
        this.recent.forget();
        data.deleteRange(m.begin, m.end, false);
        ranges.push({ begin: m.begin, end: m.end });
        break;
      case 'atomic': {
        // One descent when the key is stored on a path of the store's own: read and replaced there.
        const found = ownedLeafOf(data, m.key, this.recent);
        const index = leafIndex();
        const value = applyAtomicOp(m.op, found === undefined ? data.get(m.key) : found.values[index], m.operand);
        if (value === undefined) this.remove(m.key);
        else if (found !== undefined) found.values[index] = value;
        else this.put(m.key, value);
        keys.push(m.key);
        break;
      }
      case 'setVersionstampedKey': {
        const key = fillVersionstamp(m.key, versionstamp());
        this.put(key, m.value);
        keys.push(key);
        break;
      }
      case 'setVersionstampedValue':
        this.put(m.key, fillVersionstamp(m.value, versionstamp()));
        keys.push(m.key);
        break;
    }
  }
}

/** Whether the run {@link pointSetRun} last returned has strictly ascending keys. */
let runAscends = false;

/**
 * The end of the run of point sets from `mutations[from]` whose keys are in `[begin, end)` (the sets a
 * range clear is applied together with), and whether its keys ascend ({@link runAscends}). A document
 * rewrite's keys ascend, so each is compared with the one before it and only the first and the last
 * with the range's bounds (instead of every key with both); a run that does not ascend is checked key
 * by key from where it stops ascending.
 */
function pointSetRun(mutations: readonly Mutation[], from: number, begin: Buffer, end: Buffer): number {
  let to = from;
  let previous: Buffer | undefined;
  for (; to < mutations.length; to++) {
    const m = mutations[to];
    if (m.type !== 'set' && m.type !== 'setVersionstampedValue') break;
    if (previous === undefined ? compareBytes(m.key, begin) < 0 : compareBytes(previous, m.key) >= 0) break;
    previous = m.key;
  }
  runAscends = true;
  if (previous !== undefined && compareBytes(previous, end) >= 0) {
    // The ascending run leaves the range: it ends at its first key at or after `end`.
    let inside = from;
    while (compareBytes((mutations[inside] as PointSet).key, end) < 0) inside++;
    return inside;
  }
  for (; to < mutations.length && isPointSetIn(mutations[to], begin, end); to++) runAscends = false;
  return to;
}

/** Whether `m` sets a key (or a versionstamped value at one) in `[begin, end)`. */
function isPointSetIn(m: Mutation, begin: Buffer, end: Buffer): m is PointSet {
  return (m.type === 'set' || m.type === 'setVersionstampedValue') && compareBytes(m.key, begin) >= 0 && compareBytes(m.key, end) < 0;
}

/** Keys up to which {@link sortedLastWins} sorts by insertion (cheaper for a document's few keys). */
const INSERTION_SORT_MAX = 32;

/** `keys` sorted with their `values`; of a key given more than once, the value given last. */
function sortedLastWins(keys: Buffer[], values: Buffer[]): [Buffer[], Buffer[]] {
  if (keys.length <= INSERTION_SORT_MAX) return insertionSortedLastWins(keys, values);
  // Stable: of equal keys, the one given last stays last.
  const order = keys.map((_, i) => i).sort((a, b) => compareBytes(keys[a], keys[b]));
  const outKeys: Buffer[] = [];
  const outValues: Buffer[] = [];
  for (const i of order) {
    if (outKeys.length > 0 && compareBytes(outKeys[outKeys.length - 1], keys[i]) === 0) outValues[outValues.length - 1] = values[i];
    else {
      outKeys.push(keys[i]);
      outValues.push(values[i]);
    }
  }
  return [outKeys, outValues];
}

/** {@link sortedLastWins} by insertion, in place. */
function insertionSortedLastWins(keys: Buffer[], values: Buffer[]): [Buffer[], Buffer[]] {
  let n = 0;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i];
    const value = values[i];
    let at = n;
    let order = 1;
    while (at > 0 && (order = compareBytes(keys[at - 1], key)) > 0) at--;
    if (at > 0 && order === 0) {
      values[at - 1] = value;
      continue;
    }
    for (let j = n; j > at; j--) {
      keys[j] = keys[j - 1];
      values[j] = values[j - 1];
    }
    keys[at] = key;
    values[at] = value;
    n++;
  }
  keys.length = n;
  values.length = n;
  return [keys, values];
}
