import BTree from 'sorted-btree';
import { compareBytes, keyAfter } from '../contract/bytes';
import { kvError } from '../contract/errors';
import type { AtomicOp } from '../contract/types';
import { applyAtomicOp } from './atomic-ops';
import type { Mutation } from './mutation';
import type { KeyRange } from '../contract/key-range';
import { appendCoalesced, coalesceRanges, firstEndingAfter, RangeSet } from './range-set';
import { possibleKeys, type VersionstampTemplate } from './versionstamp-template';

/** An atomic operation waiting for the stored value it applies to. */
export interface AtomicStep {
  readonly op: AtomicOp;
  readonly operand: Buffer;
}

/**
 * What a transaction's own writes say about one key, relative to the snapshot it reads:
 * - `value`: the key's value is known without reading the store (`undefined`: cleared). FDB calls
 *   such a write "independent"; reading it adds no read conflict.
 * - `atomic`: atomic operations to apply to the stored value, which has to be read (and conflicted on).
 * - `unreadable`: the key was given a versionstamped value, unknown until commit.
 */
export type PendingWrite =
  | { readonly kind: 'value'; readonly value: Buffer | undefined }
  | { readonly kind: 'atomic'; readonly steps: AtomicStep[] }
  | { readonly kind: 'unreadable' };

/**
 * The value a pending write gives its key over the stored value `stored`.
 *
 * @throws KvError accessed_unreadable (1036) for a key holding a versionstamped value.
 */
export function resolvePendingWrite(write: PendingWrite, stored: Buffer | undefined): Buffer | undefined {
  switch (write.kind) {
    case 'value':
      return write.value;
    case 'atomic': {
      let value = stored;
      for (const step of write.steps) value = applyAtomicOp(step.op, value, step.operand);
      return value;
    }
    case 'unreadable':
      throw kvError('accessed_unreadable', 'the key holds a versionstamped value, unknown until commit');
  }
}

/** What reads see of the write set before anything was written: no keys. */
const NO_KEYS = new BTree<Buffer, PendingWrite>(undefined, compareBytes);
NO_KEYS.freeze();
const NO_RANGES = new RangeSet();

/**
 * A transaction's writes: the ordered mutation log that the commit applies, the write conflict ranges,
 * and an ordered index of their effect that reads merge over the snapshot (read-your-writes):
 * per-key {@link PendingWrite}s plus the ranges cleared by `clearRange` and the ranges a versionstamped
 * key may land in. Callers validate arguments; everything here is already legal.
 *
 * The per-key index is built on the first read that needs it, by replaying the log: a transaction
 * that only writes (a document insert writes a key per leaf) never pays for a B-tree insert per key,
 * and its write conflicts are the log's keys, sorted once at commit. From then on the index is kept
 * up to date write by write. The range sets exist once something is added to them.
 */
export class WriteSet {
  /** The per-key index, once built; see {@link keys}. */
  private index: BTree<Buffer, PendingWrite> | undefined;
  private clearedRanges: RangeSet | undefined;
  /**
   * Range clears not yet in {@link clearedRanges}: added by the first read that asks ({@link cleared}),
   * so a transaction that clears and writes without reading after (a batch of document rewrites)
   * never builds the set.
   */
  private pendingClears: KeyRange[] | undefined;
  private unreadableRanges: RangeSet | undefined;
  /**
   * Versionstamped keys whose possible keys are not in {@link unreadableRanges} yet, each with the
   * lowest commit version it can get: added by the first read that asks ({@link unreadable}), so a
   * transaction that writes them and reads nothing after (most pushes) never builds the ranges.
   */
  private pendingUnreadable: { readonly template: VersionstampTemplate; readonly lowestVersion: bigint }[] | undefined;
  readonly mutations: Mutation[] = [];
  /**
   * Write conflict ranges other than single keys: range clears and explicit ranges. Every key written
   * on its own has a mutation in the log (or lies in a cleared range), so {@link writeConflicts}
   * derives the single-key conflicts from the log or from the index.
   */
  private readonly conflictRanges: KeyRange[] = [];
  /** Bytes of mutations and write conflict ranges, as FDB's approximate transaction size counts them. */
  bytes = 0;

  /**
   * Per-key effects; entries inside a cleared range were written after the clear. Built from the log
   * on first use (an empty write set reads a shared empty tree and builds nothing).
   */
  get keys(): BTree<Buffer, PendingWrite> {
    if (this.index) return this.index;
    if (this.mutations.length === 0) return NO_KEYS;
    const index = new BTree<Buffer, PendingWrite>(undefined, compareBytes);
    this.index = index;
    // Replayed in order. `cleared` already holds the range clears made after an atomic operation
    // replayed here, which may fold it into a value instead of steps: the later clear deletes the
    // entry, so the index ends up exactly as if it had been kept write by write.
    for (const m of this.mutations) this.indexMutation(m);
    return index;
  }

  /** True while nothing is written: reads see the store alone (conflict ranges do not count). */
  get isEmpty(): boolean {
    return this.mutations.length === 0;
  }

  /** True while nothing is written and no write conflict range added: a commit would be read-only. */
  get isReadOnly(): boolean {
    return this.mutations.length === 0 && this.conflictRanges.length === 0;
  }

  /** Ranges cleared by `clearRange`: their stored keys are hidden from reads. */
  get cleared(): RangeSet {
    const pending = this.pendingClears;
    if (pending !== undefined) {
      this.pendingClears = undefined;
      const set = (this.clearedRanges ??= new RangeSet());
      for (const range of pending) set.add(range.begin, range.end);
    }
    return this.clearedRanges ?? NO_RANGES;
  }

  /** Ranges that a versionstamped key may land in: reading them is `accessed_unreadable`. */
  get unreadable(): RangeSet {
    if (this.pendingUnreadable !== undefined) this.addPendingUnreadable(this.pendingUnreadable);
    return this.unreadableRanges ?? NO_RANGES;
  }

  /** The write conflict ranges, sorted and coalesced. */
  writeConflicts(): KeyRange[] {
    // Empty ranges (an explicit range with begin = end) are dropped by the coalescing.
    const ranges = this.conflictRanges.length === 0 ? [] : coalesceRanges(this.conflictRanges);
    if (ranges.length === 0) return this.writtenKeys().map(pointRange);
    // A key written inside a cleared or added range adds nothing to it (a document rewrite: the clear
    // of the document, then its keys): only the keys outside every range become ranges of their own,
    // merged in among the ranges, which are sorted and disjoint.
    const keys = sortUnique(this.keysOutside(ranges));
    const out: KeyRange[] = [];
    let r = 0;
    for (const key of keys) {
      // A range beginning before `key` ends at or before it, as `key` is in none.
      while (r < ranges.length && compareBytes(ranges[r].begin, key) < 0) appendCoalesced(out, ranges[r++]);
      appendCoalesced(out, pointRange(key));
    }
    while (r < ranges.length) appendCoalesced(out, ranges[r++]);
    return out;
  }

  /**
   * The keys written one by one that lie in none of the sorted, disjoint `ranges`, unsorted and
   * possibly repeated. Keys written one after another mostly fall in the same range (a document's
   * keys in its clear): that range is tried first, and the others searched only when it misses.
   */
  private keysOutside(ranges: readonly KeyRange[]): Buffer[] {
    const keys: Buffer[] = [];
    let hint = 0;
    const consider = (key: Buffer): void => {
      const hinted = ranges[hint];
      if (compareBytes(hinted.begin, key) <= 0 && compareBytes(key, hinted.end) < 0) return;
      const i = rangeIndexContaining(ranges, key);
      if (i < 0) keys.push(key);
      else hint = i;
    };
    if (this.index) {
      this.index.forEach((_, key) => consider(key));
    } else {
      for (const m of this.mutations) if (m.type !== 'clearRange' && m.type !== 'setVersionstampedKey') consider(m.key);
    }
    return keys;
  }

  /**
   * The write conflict ranges besides the keys written one by one: range clears and explicit ranges,
   * sorted and coalesced. Enough for an engine that takes the conflicts of single keys from the keys
   * its commit applies (the memory engine, see `ConflictLog.record`).
   */
  rangeConflicts(): KeyRange[] {
    return this.conflictRanges.length === 0 ? [] : coalesceRanges(this.conflictRanges);
  }

  /**
   * The keys written one by one, sorted, without duplicates: those of the index (which leaves out
   * keys range-cleared later; their range is a conflict range), or else those of the log.
   */
  private writtenKeys(): Buffer[] {
    if (!this.index) return sortedUniqueKeys(this.mutations);
    const keys: Buffer[] = [];
    this.index.forEach((_, key) => {
      keys.push(key);
    });
    return keys;
  }

  set(key: Buffer, value: Buffer): void {
    const m: Mutation = { type: 'set', key, value };
    this.mutations.push(m);
    if (this.index) this.indexMutation(m);
    this.bytes += key.length + value.length + keyConflictBytes(key);
  }

  clear(key: Buffer): void {
    const m: Mutation = { type: 'clear', key };
    this.mutations.push(m);
    if (this.index) this.indexMutation(m);
    this.bytes += 2 * keyConflictBytes(key);
  }

  clearRange(begin: Buffer, end: Buffer): void {
    const m: Mutation = { type: 'clearRange', begin, end };
    this.mutations.push(m);
    (this.pendingClears ??= []).push({ begin, end });
    if (this.index) this.indexMutation(m);
    this.bytes += begin.length + end.length;
    this.addConflictRange(begin, end);
  }

  atomic(op: AtomicOp, key: Buffer, operand: Buffer): void {
    const m: Mutation = { type: 'atomic', op, key, operand };
    this.mutations.push(m);
    if (this.index) this.indexMutation(m);
    this.bytes += key.length + operand.length + keyConflictBytes(key);
  }

  /**
   * Records a versionstamped key. Its final key is unknown until commit, so the range it may land in
   * (`possibleKeys` from the stamp of `lowestVersion`, the lowest commit version it can get) becomes
   * unreadable, and the write conflict on the final key is added at commit, as FDB's commit proxy does.
   */
  setVersionstampedKey(key: VersionstampTemplate, value: Buffer, lowestVersion: bigint): void {
    (this.pendingUnreadable ??= []).push({ template: key, lowestVersion });
    this.mutations.push({ type: 'setVersionstampedKey', key, value });
    this.bytes += key.bytes.length + value.length + keyConflictBytes(key.bytes);
  }

  setVersionstampedValue(key: Buffer, value: VersionstampTemplate): void {
    const m: Mutation = { type: 'setVersionstampedValue', key, value };
    this.mutations.push(m);
    if (this.index) this.indexMutation(m);
    this.bytes += key.length + value.bytes.length + keyConflictBytes(key);
  }

  addConflictRange(begin: Buffer, end: Buffer): void {
    this.conflictRanges.push({ begin, end });
    this.bytes += begin.length + end.length;
  }

  private addPendingUnreadable(pending: readonly { readonly template: VersionstampTemplate; readonly lowestVersion: bigint }[]): void {
    this.pendingUnreadable = undefined;
    for (const { template, lowestVersion } of pending) {
      const range = possibleKeys(template, lowestVersion);
      if (range) (this.unreadableRanges ??= new RangeSet()).add(range.begin, range.end);
    }
  }

  /** Applies one logged mutation to the per-key index. */
  private indexMutation(m: Mutation): void {
    const index = this.index!;
    switch (m.type) {
      case 'set':
        index.set(m.key, { kind: 'value', value: m.value });
        break;
      case 'clear':
        index.set(m.key, { kind: 'value', value: undefined });
        break;
      case 'clearRange':
        index.deleteRange(m.begin, m.end, false);
        break;
      case 'atomic':
        index.set(m.key, this.afterAtomic(index, m.key, { op: m.op, operand: m.operand }));
        break;
      case 'setVersionstampedValue':
        index.set(m.key, { kind: 'unreadable' });
        break;
      case 'setVersionstampedKey':
        break;
    }
  }

  /** An atomic step folded into what is already known about the key. */
  private afterAtomic(index: BTree<Buffer, PendingWrite>, key: Buffer, step: AtomicStep): PendingWrite {
    const previous = index.get(key);
    if (previous === undefined) {
      return this.cleared.rangeContaining(key)
        ? { kind: 'value', value: applyAtomicOp(step.op, undefined, step.operand) }
        : { kind: 'atomic', steps: [step] };
    }
    switch (previous.kind) {
      case 'value':
        return { kind: 'value', value: applyAtomicOp(step.op, previous.value, step.operand) };
      case 'atomic':
        previous.steps.push(step);
        return previous;
      case 'unreadable':
        return previous;
    }
  }
}

/**
 * The keys the log writes one by one (sets, clears, atomic operations, versionstamped values), sorted
 * and without duplicates. Logs written in key order (most are) cost one comparison per key.
 */
export function sortedUniqueKeys(mutations: readonly Mutation[]): Buffer[] {
  const keys: Buffer[] = [];
  for (const m of mutations) {
    if (m.type === 'clearRange' || m.type === 'setVersionstampedKey') continue;
    keys.push(m.key);
  }
  return sortUnique(keys);
}

/** `keys` sorted and without duplicates, in place. Keys already in strict order cost one comparison each. */
function sortUnique(keys: Buffer[]): Buffer[] {
  let sorted = true;
  for (let i = 1; i < keys.length && sorted; i++) sorted = compareBytes(keys[i - 1], keys[i]) < 0;
  if (sorted) return keys;
  keys.sort(compareBytes);
  let n = 1;
  for (let i = 1; i < keys.length; i++) {
    if (compareBytes(keys[i], keys[n - 1]) !== 0) keys[n++] = keys[i];
  }
  keys.length = n;
  return keys;
}

/** The conflict range of the one key `key`: `[key, key + '\x00')`. */
function pointRange(key: Buffer): KeyRange {
  return { begin: key, end: keyAfter(key) };
}

/** In sorted, disjoint `ranges`: the index of the range containing `key`, or -1. */
function rangeIndexContaining(ranges: readonly KeyRange[], key: Buffer): number {
  const i = firstEndingAfter(ranges, key);
  return i < ranges.length && compareBytes(ranges[i].begin, key) <= 0 ? i : -1;
}

/** Bytes of the conflict range `[key, key + '\x00')`. */
function keyConflictBytes(key: Buffer): number {
  return 2 * key.length + 1;
}
