import BTree from 'sorted-btree';
import { compareBytes, keyAfter } from '../contract/bytes';
import { kvError } from '../contract/errors';
import type { AtomicOp } from '../contract/types';
import { applyAtomicOp } from './atomic-ops';
import type { Mutation } from './mutation';
import type { KeyRange } from '../contract/key-range';
import { coalesceRanges, RangeSet } from './range-set';
import type { VersionstampTemplate } from './versionstamp-template';

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

/**
 * A transaction's writes: the ordered mutation log that the commit applies, the write conflict ranges,
 * and an ordered index of their effect that reads merge over the snapshot (read-your-writes):
 * per-key {@link PendingWrite}s plus the ranges cleared by `clearRange` and the ranges a versionstamped
 * key may land in. Callers validate arguments; everything here is already legal.
 */
export class WriteSet {
  /** Per-key effects; entries inside a cleared range were written after the clear. */
  readonly keys = new BTree<Buffer, PendingWrite>(undefined, compareBytes);
  /** Ranges cleared by `clearRange`: their stored keys are hidden from reads. */
  readonly cleared = new RangeSet();
  /** Ranges that a versionstamped key may land in: reading them is `accessed_unreadable`. */
  readonly unreadable = new RangeSet();
  readonly mutations: Mutation[] = [];
  /**
   * Write conflict ranges other than single keys: range clears and explicit ranges. Every key written
   * on its own has an entry in {@link keys} (or lies in a cleared range), so {@link writeConflicts}
   * derives the single-key conflicts from that already sorted index.
   */
  private readonly conflictRanges: KeyRange[] = [];
  /** Bytes of mutations and write conflict ranges, as FDB's approximate transaction size counts them. */
  bytes = 0;

  /** The write conflict ranges, sorted and coalesced. */
  writeConflicts(): KeyRange[] {
    const points: KeyRange[] = [];
    this.keys.forEach((_, key) => {
      points.push({ begin: key, end: keyAfter(key) });
    });
    if (this.conflictRanges.length === 0) return points;
    // Both inputs sorted: the sort inside coalesceRanges only merges two runs.
    const ranges = coalesceRanges(this.conflictRanges);
    return coalesceRanges(mergeSorted(points, ranges));
  }

  set(key: Buffer, value: Buffer): void {
    this.keys.set(key, { kind: 'value', value });
    this.mutations.push({ type: 'set', key, value });
    this.bytes += key.length + value.length + keyConflictBytes(key);
  }

  clear(key: Buffer): void {
    this.keys.set(key, { kind: 'value', value: undefined });
    this.mutations.push({ type: 'clear', key });
    this.bytes += 2 * keyConflictBytes(key);
  }

  clearRange(begin: Buffer, end: Buffer): void {
    this.keys.deleteRange(begin, end, false);
    this.cleared.add(begin, end);
    this.mutations.push({ type: 'clearRange', begin, end });
    this.bytes += begin.length + end.length;
    this.addConflictRange(begin, end);
  }

  atomic(op: AtomicOp, key: Buffer, operand: Buffer): void {
    this.keys.set(key, this.afterAtomic(key, { op, operand }));
    this.mutations.push({ type: 'atomic', op, key, operand });
    this.bytes += key.length + operand.length + keyConflictBytes(key);
  }

  /**
   * Records a versionstamped key. Its final key is unknown until commit, so `possibleKeys` (the range it
   * may land in) becomes unreadable, and the write conflict on the final key is added at commit, as
   * FDB's commit proxy does.
   */
  setVersionstampedKey(key: VersionstampTemplate, value: Buffer, possibleKeys: KeyRange | undefined): void {
    if (possibleKeys) this.unreadable.add(possibleKeys.begin, possibleKeys.end);
    this.mutations.push({ type: 'setVersionstampedKey', key, value });
    this.bytes += key.bytes.length + value.length + keyConflictBytes(key.bytes);
  }

  setVersionstampedValue(key: Buffer, value: VersionstampTemplate): void {
    this.keys.set(key, { kind: 'unreadable' });
    this.mutations.push({ type: 'setVersionstampedValue', key, value });
    this.bytes += key.length + value.bytes.length + keyConflictBytes(key);
  }

  addConflictRange(begin: Buffer, end: Buffer): void {
    this.conflictRanges.push({ begin, end });
    this.bytes += begin.length + end.length;
  }

  /** An atomic step folded into what is already known about the key. */
  private afterAtomic(key: Buffer, step: AtomicStep): PendingWrite {
    const previous = this.keys.get(key);
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

/** Bytes of the conflict range `[key, key + '\x00')`. */
function keyConflictBytes(key: Buffer): number {
  return 2 * key.length + 1;
}

/** Two lists sorted by begin, merged into one. */
function mergeSorted(a: readonly KeyRange[], b: readonly KeyRange[]): KeyRange[] {
  const out: KeyRange[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    out.push(compareBytes(a[i].begin, b[j].begin) <= 0 ? a[i++] : b[j++]);
  }
  while (i < a.length) out.push(a[i++]);
  while (j < b.length) out.push(b[j++]);
  return out;
}
