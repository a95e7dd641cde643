import type { KeyValue } from '../contract/types';
import { rejectOnNextTurn, settleOnNextTurn } from './next-turn';

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
 *
 * A batch is read when it is asked for and delivered on a later turn of the event loop, as FDB
 * delivers each batch of a range read; the pairs of a batch then follow without waiting, as FDB's
 * bindings hand them out.
 */
export class RangeStream implements AsyncIterableIterator<KeyValue> {
  private items: KeyValue[] = [];
  private index = 0;
  /** Reads the next batch; `undefined` once there is none. */
  private following: (() => RangeBatch) | undefined;
  /** Settles once the batch just read has been delivered: later calls of `next()` wait for it. */
  private delivering: Promise<unknown> | undefined;

  constructor(start: () => RangeBatch) {
    this.following = start;
  }

  next(): Promise<IteratorResult<KeyValue, undefined>> {
    if (this.delivering) return this.delivering.then(() => this.next());
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
      return rejectOnNextTurn(err);
    }
    this.items = batch.items;
    this.following = batch.next;
    // A batch is empty only when it is the last.
    const delivered = settleOnNextTurn(() => (this.index < this.items.length ? { done: false as const, value: this.items[this.index++] } : DONE));
    const delivering = delivered.then(() => {
      if (this.delivering === delivering) this.delivering = undefined;
    });
    this.delivering = delivering;
    return delivered;
  }

  return(): Promise<IteratorResult<KeyValue, undefined>> {
    this.following = undefined;
    this.delivering = undefined;
    this.items = [];
    this.index = 0;
    return Promise.resolve(DONE);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}
