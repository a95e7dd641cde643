import { keyAfter } from '../contract/bytes';
import type { KeyRange } from '../contract/key-range';
import type { KeyValue, RangeOptions } from '../contract/types';

/** First batch of a streamed range read; batches double up to {@link MAX_BATCH}, like FDB's iterator mode. */
const FIRST_BATCH = 64;
const MAX_BATCH = 4096;

/**
 * Where a streamed range read is: the part of its range still to read, the pairs its limit still
 * allows, and how many pairs the next batch asks for (`options.batchSize` when given, else growing
 * from {@link FIRST_BATCH}). `ClientTransaction` and `StagedTransaction` both stream their
 * range reads through it, so that both read the same batches of a range.
 */
export class RangeBatches {
  /** The part of the range not read yet. */
  begin: Buffer;
  end: Buffer;
  readonly reverse: boolean;
  private remaining: number;
  private size: number;
  private readonly fixedSize: boolean;

  /** @param limit the read's limit, checked by `rangeLimit` (`Infinity` for none) */
  constructor(range: KeyRange, limit: number, options: RangeOptions) {
    this.begin = range.begin;
    this.end = range.end;
    this.reverse = options.reverse === true;
    this.remaining = limit;
    this.fixedSize = options.batchSize !== undefined && options.batchSize > 0;
    this.size = this.fixedSize ? (options.batchSize as number) : FIRST_BATCH;
  }

  /** How many pairs the next batch asks for. */
  get batchLimit(): number {
    return Math.min(this.remaining, this.size);
  }

  /**
   * Takes the batch just read (`limited`: it returned all it asked for) off the range and the limit.
   * Returns whether another batch follows.
   */
  advance(items: readonly KeyValue[], limited: boolean): boolean {
    this.remaining -= items.length;
    const last = items[items.length - 1];
    if (last === undefined || !limited || this.remaining <= 0) return false;
    if (this.reverse) this.end = last.key;
    else this.begin = keyAfter(last.key);
    if (!this.fixedSize) this.size = Math.min(this.size * 2, MAX_BATCH);
    return true;
  }
}

/**
 * What a read of up to `limit` pairs of `[begin, end)` that returned `items` proves, and so the read
 * conflict it records: the whole range, or with the limit reached, the range up to and including the
 * last key returned.
 */
export function provenRange(begin: Buffer, end: Buffer, items: readonly KeyValue[], limit: number, reverse: boolean): KeyRange {
  const last = items[items.length - 1];
  if (last === undefined || items.length < limit) return { begin, end };
  return reverse ? { begin: last.key, end } : { begin, end: keyAfter(last.key) };
}
