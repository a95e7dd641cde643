import type BTree from 'sorted-btree';
import { compareBytes } from '../contract/bytes';
import type { KeyValue } from '../contract/types';
import type { StoredPairs } from '../client/read-your-writes';

type Pair = [Buffer, Buffer];

const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined });
const NOTHING: Iterator<Pair> = { next: () => DONE };

/** Pairs a range read compares with its end before it looks its last key up instead. */
const SHORT_RANGE = 16;

/**
 * A frozen copy-on-write clone of the memory engine's sorted map, as a transaction's read-your-writes
 * merge reads it. Scans stop on reaching the range's last stored key (the very object: a frozen tree
 * never changes) rather than comparing every key with the range's end, because comparing costs more
 * than stepping the iterator.
 */
export class FrozenTree implements StoredPairs {
  constructor(private readonly tree: BTree<Buffer, Buffer>) {}

  get(key: Buffer): Buffer | undefined {
    return this.tree.get(key);
  }

  /**
   * Steps the tree's own iterator, without a wrapper per pair: range reads spend their time here. The
   * first {@link SHORT_RANGE} pairs are compared with the range's far end as they come, so a short
   * read (a document, a page of index entries) descends the tree once; a longer one then finds its
   * last stored key (a second descent) and stops on that object, comparing nothing more.
   */
  collect(begin: Buffer, end: Buffer, reverse: boolean, total: number, out: KeyValue[]): void {
    if (out.length >= total) return;
    const stored = reverse ? this.tree.entriesReversed(end, [], true) : this.tree.entries(begin, []);
    let s = stored.next();
    for (let n = 0; !s.done; n++, s = stored.next()) {
      const key = s.value[0];
      if (reverse ? compareBytes(key, begin) < 0 : compareBytes(key, end) >= 0) return;
      if (n === SHORT_RANGE) break;
      out.push({ key, value: s.value[1] });
      if (out.length >= total) return;
    }
    if (s.done) return;
    // `s` holds a pair inside the range, not yet taken: the range's last key is at or past it.
    const last = reverse ? this.lowestKey(begin, end) : this.highestKey(begin, end);
    for (; !s.done; s = stored.next()) {
      const key = s.value[0];
      out.push({ key, value: s.value[1] });
      if (key === last || out.length >= total) return;
    }
  }

  ascending(begin: Buffer, end: Buffer): Iterator<Pair> {
    const last = this.highestKey(begin, end);
    return last === undefined ? NOTHING : new Through(this.tree.entries(begin, []), last);
  }

  descending(begin: Buffer, end: Buffer): Iterator<Pair> {
    const last = this.lowestKey(begin, end);
    return last === undefined ? NOTHING : new Through(this.tree.entriesReversed(end, [], true), last);
  }

  /** The highest stored key in `[begin, end)`, if any: where an ascending scan stops. */
  private highestKey(begin: Buffer, end: Buffer): Buffer | undefined {
    const pair = this.tree.nextLowerPair(end);
    return pair && compareBytes(pair[0], begin) >= 0 ? pair[0] : undefined;
  }

  /** The lowest stored key in `[begin, end)`, if any: where a descending scan stops. */
  private lowestKey(begin: Buffer, end: Buffer): Buffer | undefined {
    const pair = this.tree.getPairOrNextHigher(begin);
    return pair && compareBytes(pair[0], end) < 0 ? pair[0] : undefined;
  }
}

/** The pairs of a tree iterator up to and including the one whose key is the object `last`. */
class Through implements Iterator<Pair> {
  private over = false;

  constructor(
    private readonly pairs: Iterator<Pair>,
    private readonly last: Buffer,
  ) {}

  next(): IteratorResult<Pair> {
    if (this.over) return DONE;
    const step = this.pairs.next();
    if (step.done || step.value[0] === this.last) this.over = true;
    return step;
  }
}
