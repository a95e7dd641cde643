import { Deferred } from './deferred';
import { onNextTurn } from './next-turn';
import type { Watch } from '../contract/types';

/** True when two optional values are byte-for-byte equal (both absent counts as equal). */
export function sameValue(a: Buffer | undefined, b: Buffer | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.equals(b);
}

/**
 * A watch on one key, compared against `value`: created by a transaction, and handed to its engine's
 * registry of watches (a `WatchRegistry`; the LMDB engine's `StoreWatches`) when that transaction
 * commits. It settles at once (`isSettled`, unregistering it) and its promise on the next turn of the
 * event loop, as FDB's watch futures do.
 */
export class KeyWatch implements Watch {
  private readonly outcome = new Deferred<boolean>();
  private settled = false;
  /** Called once when the watch stops for any reason, to unregister it. */
  onSettle: (() => void) | undefined;

  constructor(
    readonly key: Buffer,
    readonly value: Buffer | undefined,
  ) {}

  get promise(): Promise<boolean> {
    return this.outcome.promise;
  }

  get isSettled(): boolean {
    return this.settled;
  }

  cancel(): void {
    this.settle(() => this.outcome.resolve(false));
  }

  /** Reports a change: the promise resolves `true`. */
  trigger(): void {
    this.settle(() => this.outcome.resolve(true));
  }

  fail(err: unknown): void {
    this.settle(() => this.outcome.reject(err));
  }

  private settle(action: () => void): void {
    if (this.settled) return;
    this.settled = true;
    onNextTurn(action);
    const onSettle = this.onSettle;
    this.onSettle = undefined;
    onSettle?.();
  }
}
