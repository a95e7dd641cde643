import type { KeyValue } from '../contract/types';

/** A batch of a streamed range read, and how to read the next one (`undefined`: that was the last). */
export interface RangeBatch {
  readonly items: KeyValue[];
  readonly next: (() => RangeBatch) | undefined;
}

const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined });

/**
 * The async iterator of `getRange`: hands out the pairs of each batch without a generator step each,
 * and reads a batch only when the previous one is used up. Like an async generator, it starts on the
 * first `next()` (errors reject that call), and ends for good once it has failed or been returned.
 */
export class RangeStream implements AsyncIterableIterator<KeyValue> {
  private items: KeyValue[] = [];
  private index = 0;
  /** Reads the next batch; `undefined` once there is none. */
  private following: (() => RangeBatch) | undefined;

  constructor(start: () => RangeBatch) {
    this.following = start;
  }

  next(): Promise<IteratorResult<KeyValue, undefined>> {
    if (this.index < this.items.length) return Promise.resolve({ done: false, value: this.items[this.index++] });
    const following = this.following;
    if (!following) return Promise.resolve(DONE);
    this.following = undefined;
    this.items = [];
    this.index = 0;
    let batch: RangeBatch;
    try {
      batch = following();
    } catch (err) {
      return Promise.reject(err);
    }
    this.items = batch.items;
    this.following = batch.next;
    // A batch is empty only when it is the last.
    return this.next();
  }

  return(): Promise<IteratorResult<KeyValue, undefined>> {
    this.following = undefined;
    this.items = [];
    this.index = 0;
    return Promise.resolve(DONE);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}
