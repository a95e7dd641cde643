import type { Transaction } from '../kv/contract/types';

/**
 * Combining concurrent calls on one thing (a structure, docs/structures.md "Hot structures"; any other
 * owner of a key in {@link combinerFor}): calls made without a caller's transaction while another such
 * call on the same thing is running are queued,
 * and the queued calls then run one after another in one transaction of their own. 32 callers doing
 * `incr` on one counter thus commit in a few transactions instead of 32 that read the same key and
 * conflict until all but one back off.
 *
 * What each caller sees is what it would see alone, in a serial order:
 * - each call runs to completion on the shared transaction before the next starts, so it reads what
 *   the calls before it wrote (an `incr` returns exactly the value after its own add), and the batch
 *   commits, or retries as a whole (every call run again, as any retry does), or fails;
 * - a call that fails for good (a typed error, a limit) or a commit that fails for good aborts the
 *   shared attempt, which is not committed; then every call of the batch runs again alone, in its own
 *   transaction, so each gets its own result or its own error and a failure fails only its own call;
 * - a call with the caller's `{ tr }` is never combined; a call that finds nothing running starts at
 *   once in a transaction of its own, exactly as without combining (a lone caller waits for nothing);
 *   after a batch of several calls, the calls made over the next few turns of the event loop, while
 *   they keep coming, join the next batch;
 * - calls of an operation that can merge them ({@link Merge}) and follow each other in a batch run as
 *   one step, which gives each its own outcome as if they had run one after another; a step may end
 *   the batch early (it returns outcomes for the first calls only), and the calls after it wait for
 *   the next batch.
 *
 * On a retry after commit_unknown_result every call of the batch runs again: what can repeat is what
 * each operation documents for its own transaction (operations with receipts, the queue's, read
 * them back per call).
 *
 * A batch holds at most {@link MAX_BATCH} calls, so that it stays far within FDB's 10 MB and 5 s limits
 * (a batch that exceeds them anyway fails for good and its calls run alone).
 */

/** Calls per combined transaction. */
export const MAX_BATCH = 64;

/** Turns of the event loop a combiner waits, after a batch, for its callers' next calls. */
const HOLD_TURNS = 4;

/** A call's outcome when it ran merged with others: its result, or the error that failed it alone. */
export type Settled<R> = { readonly ok: true; readonly value: R } | { readonly ok: false; readonly error: unknown };

/**
 * How calls of one operation that follow each other in a batch run as one (`counter.incr` of n
 * callers: one read of the value, one add of the sum, each caller's result a running sum). `runMany`
 * runs in the shared transaction and returns one outcome per argument, in order; a call that fails
 * alone must write nothing. It may return outcomes for the first calls only (at least one): the batch
 * then ends after them, and the other calls go into the next batch (a document written twice in one
 * commit, a batch grown large). If it throws, the batch fails as when a call throws (each call then
 * runs alone).
 */
export interface Merge<A, R> {
  /** Calls with the same `operation` next to each other in a batch are merged. */
  readonly operation: object;
  readonly arg: A;
  readonly runMany: (tr: Transaction, args: A[]) => Promise<Settled<R>[]>;
}

/**
 * An operation whose calls merge ({@link Merge}) and that makes a call's transaction body only when
 * the call runs alone: a call that queues and is merged makes none of it (see
 * {@link Combiner.submitMerged}). One object per operation (and handle), not per call.
 */
export interface MergedOperation<A, R> {
  /** Calls with the same `operation` next to each other in a batch are merged (as {@link Merge}'s). */
  readonly operation: object;
  /** As {@link Merge.runMany}. */
  readonly runMany: (tr: Transaction, args: A[]) => Promise<Settled<R>[]>;
  /** The body of the transaction of the call of `arg` when it runs alone (its own, or a batch's step). */
  readonly alone: (arg: A) => (tr: Transaction) => Promise<R>;
}

interface Call {
  /** The call's body; `undefined` for a {@link MergedOperation}'s call, whose `alone` makes it. */
  readonly fn: ((tr: Transaction) => Promise<unknown>) | undefined;
  readonly merge: Pick<MergedOperation<unknown, unknown>, 'operation' | 'runMany'> | undefined;
  readonly arg: unknown;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/** The body a call runs when it is not merged. */
function bodyOf(call: Call): (tr: Transaction) => Promise<unknown> {
  if (call.fn !== undefined) return call.fn;
  return (call.merge as MergedOperation<unknown, unknown>).alone(call.arg);
}

/** Runs `fn` in a transaction of its own (its retry loop): how a combiner starts its transactions. */
export type RunTransaction = <T>(fn: (tr: Transaction) => Promise<T>) => Promise<T>;

/** The calls queued on one thing, and whether a transaction of them is running. */
export class Combiner {
  private queued: Call[] = [];

  constructor(
    private readonly run: RunTransaction,
    private readonly onIdle: () => void,
  ) {}

  /** Whether nothing is queued or running. */
  get idle(): boolean {
    return this.queued.length === 0;
  }

  submit<T>(fn: (tr: Transaction) => Promise<T>, merge: Merge<unknown, T> | undefined): Promise<T> {
    if (this.queued.length === 0) {
      // Nothing running: start at once, as without combining; calls made meanwhile queue behind it.
      this.queued.push(RUNNING_ALONE);
      const result = this.run(fn);
      result.then(this.afterAlone, this.afterAlone);
      return result;
    }
    return new Promise<T>((resolve, reject) => {
      this.queued.push({ fn, merge, arg: merge?.arg, resolve: resolve as (value: unknown) => void, reject });
    });
  }

  /**
   * As {@link submit} for a call of `operation` with `arg`: its body, `operation.alone(arg)`, is made
   * only when the call runs alone (nothing running, a batch of one, a failed batch's calls, a call
   * with no neighbour of its operation); a queued call that is merged makes no body.
   */
  submitMerged<A, T>(operation: MergedOperation<A, T>, arg: A): Promise<T> {
    if (this.queued.length === 0) {
      // Made before the combiner counts as running, so that a throw leaves it idle.
      const body = operation.alone(arg);
      this.queued.push(RUNNING_ALONE);
      const result = this.run(body);
      result.then(this.afterAlone, this.afterAlone);
      return result;
    }
    return new Promise<T>((resolve, reject) => {
      this.queued.push({
        fn: undefined,
        merge: operation as MergedOperation<unknown, unknown>,
        arg,
        resolve: resolve as (value: unknown) => void,
        reject,
      });
    });
  }

  /** Once a call that found nothing running has settled: runs what queued behind it. */
  private readonly afterAlone = (): void => {
    this.queued.shift();
    if (this.queued.length === 0) this.onIdle();
    else void this.drain();
  };

  /** Runs batches until nothing is queued. */
  private async drain(): Promise<void> {
    for (;;) {
      // Calls stay queued while their batch runs, so that `submit` sees a running combiner.
      const batch = this.queued.slice(0, MAX_BATCH);
      const ran = batch.length === 1 ? await this.runAlone(batch[0]) : await this.runTogether(batch);
      this.queued.splice(0, ran);
      if (ran > 1 && this.queued.length < ran) await this.holdForCallers(ran);
      if (this.queued.length === 0) {
        this.onIdle();
        return;
      }
    }
  }

  /**
   * The callers of a batch often call again as soon as they have their results, over the next turns
   * of the event loop: when fewer calls are queued than the batch had, waiting for them (while calls
   * keep arriving, until as many as the batch had, at most {@link HOLD_TURNS} turns) lets them share
   * the next batch, instead of the first of them running alone and the rest behind it. With nothing
   * queued, a hold keeps the calls made meanwhile queued.
   */
  private async holdForCallers(batchSize: number): Promise<void> {
    const held = this.queued.length === 0;
    if (held) this.queued.push(RUNNING_ALONE);
    for (let turn = 0; turn < HOLD_TURNS; turn++) {
      const before = this.queued.length;
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (this.queued.length === before || this.queued.length - (held ? 1 : 0) >= batchSize) break;
    }
    if (held) this.queued.shift();
  }

  /** Runs `call` in a transaction of its own; returns 1, the calls it ran. */
  private async runAlone(call: Call): Promise<number> {
    try {
      call.resolve(await this.run(bodyOf(call)));
    } catch (err) {
      call.reject(err);
    }
    return 1;
  }

  /** Runs `batch`, or the first calls of it when a merged step ends it early; returns how many ran. */
  private async runTogether(batch: readonly Call[]): Promise<number> {
    let results: Settled<unknown>[];
    try {
      results = await this.run(async (tr): Promise<Settled<unknown>[]> => {
        const out: Settled<unknown>[] = [];
        let i = 0;
        while (i < batch.length) {
          const merge = batch[i].merge;
          let end = i + 1;
          while (merge !== undefined && end < batch.length && batch[end].merge?.operation === merge.operation) end++;
          if (merge !== undefined && end - i > 1) {
            const args = batch.slice(i, end).map((call) => call.arg);
            const outcomes = await merge.runMany(tr, args);
            if (outcomes.length === 0 || outcomes.length > args.length) throw new Error('a merged run returned the wrong number of outcomes');
            out.push(...outcomes);
            if (outcomes.length < args.length) break;
          } else {
            out.push({ ok: true, value: await bodyOf(batch[i])(tr) });
          }
          i = end;
        }
        return out;
      });
    } catch {
      // Some call, or the commit, failed for good; nothing was committed: each call on its own.
      for (const call of batch) await this.runAlone(call);
      return batch.length;
    }
    for (let i = 0; i < results.length; i++) {
      const outcome = results[i];
      if (outcome.ok) batch[i].resolve(outcome.value);
      else batch[i].reject(outcome.error);
    }
    return results.length;
  }
}

/**
 * Holds a combiner's queue while the call that found nothing running runs, or while a batch's callers
 * get a turn to call again (it is no queued call).
 */
const RUNNING_ALONE: Call = {
  fn: () => Promise.resolve(undefined),
  merge: undefined,
  arg: undefined,
  resolve: () => undefined,
  reject: () => undefined,
};

/** An owner's combiners by key, and the size past which an idle one makes them sweep (see {@link combinerFor}). */
interface Registry {
  readonly byKey: Map<string, Combiner>;
  sweepAbove: number;
}

const combiners = new WeakMap<object, Registry>();
const lastingCombiners = new WeakMap<object, Map<string, Combiner>>();

/**
 * Combiners an owner keeps registered while they have nothing queued (see {@link combinerFor}): past
 * this many, the idle ones are forgotten.
 */
export const IDLE_COMBINERS_KEPT = 256;

/**
 * The combiner of the thing named `key` among `owner`'s (a collection's structures, say): created on
 * first use with `run` to start its transactions. One that has nothing queued stays registered, so
 * that a lone caller's next call finds it rather than making a combiner (and its closures) per call.
 * When an owner has more than {@link IDLE_COMBINERS_KEPT} registered and one goes idle, every idle one
 * is forgotten; the busy ones stay, and the next sweep waits until twice as many are registered, so
 * sweeps cost O(1) a call however many are busy.
 */
export function combinerFor(owner: object, key: string, run: RunTransaction): Combiner {
  let registry = combiners.get(owner);
  if (registry === undefined) {
    registry = { byKey: new Map(), sweepAbove: IDLE_COMBINERS_KEPT };
    combiners.set(owner, registry);
  }
  let combiner = registry.byKey.get(key);
  if (combiner === undefined) {
    const owned = registry;
    combiner = new Combiner(run, () => {
      if (owned.byKey.size > owned.sweepAbove) forgetIdle(owned);
    });
    registry.byKey.set(key, combiner);
  }
  return combiner;
}

function forgetIdle(registry: Registry): void {
  for (const [key, combiner] of registry.byKey) if (combiner.idle) registry.byKey.delete(key);
  registry.sweepAbove = Math.max(IDLE_COMBINERS_KEPT, 2 * registry.byKey.size);
}

/** What a lasting combiner does when it has nothing queued: nothing (it stays registered). */
const STAY = (): void => undefined;

/**
 * The combiner of the thing named `key` among `owner`'s, as {@link combinerFor}, for a thing whose
 * calls come for as long as its owner lives (a collection's document writes, and its reads): it is
 * kept when idle, so its callers may hold on to it, and a call that finds nothing running makes no
 * combiner of its own. Every caller asking for the same `owner` and `key` gets the same one (the
 * handles of one collection share it), created on first use with `run`.
 */
export function lastingCombinerFor(owner: object, key: string, run: RunTransaction): Combiner {
  let byKey = lastingCombiners.get(owner);
  if (byKey === undefined) {
    byKey = new Map();
    lastingCombiners.set(owner, byKey);
  }
  let combiner = byKey.get(key);
  if (combiner === undefined) {
    combiner = new Combiner(run, STAY);
    byKey.set(key, combiner);
  }
  return combiner;
}
