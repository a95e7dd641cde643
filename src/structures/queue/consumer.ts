import { DocumentError } from '../../document/errors';
import type { JsonValue } from '../../document/types';
import type { Transaction, Watch } from '../../kv/contract/types';
import { Combiner, type Merge, type Settled } from '../../document/combiner';
import { sleep, waitForChange } from './wait';
import { checkedBackoff, type BackoffPolicy } from './backoff';

/**
 * Transactional consumers (docs/queue.md, "Consumers"): each worker loops on one transaction at a
 * time that pops up to `batchSize` items and runs the handler on each in that same transaction, so the
 * handler's writes and the pops commit together or not at all.
 *
 * Workers of one consumer that are ready at the same time share a transaction (as concurrent calls on
 * one structure do, src/document/combiner.ts) and their pops merge into one take: one read of the
 * queue's kind and of its head for `batchSize` items per worker, taken strictly in queue order, the
 * first `batchSize` to the first worker and so on; then each worker's handlers run on its own items,
 * one worker after another, in that transaction. So 8 workers commit a few transactions of several
 * items instead of one each, without conflicting with each other. Keys read: the kind, the head (and,
 * on an empty queue, the scheduled area's next item); written: each taken item's clear, the size, and
 * what the handlers write. A worker whose handler throws fails the shared attempt, which commits
 * nothing; each worker's part then runs alone, so only the failing worker's items stay. Workers share
 * only once a handler's time has been measured in a transaction of a worker's own, and not while
 * handlers are slow (over {@link SLOW_HANDLER_MS} per item on average, or over {@link SHARED_BUDGET_MS}
 * for a shared transaction's handlers in all, far within FDB's 5 s): workers then run their own
 * transactions and their handlers overlap, as the concurrency asks for.
 *
 * A handler runs on an item only while no other worker of the consumer runs it and the item's failures
 * are below `maxAttempts`: a worker marks the items of its batch before running handlers, and one that
 * finds an item marked by another aborts its attempt (it commits nothing) and waits for that worker's
 * outcome; the mark is dropped once the outcome is known (committed, or the failure counted). So,
 * without a backoff policy, a poisoned item's handler runs exactly `maxAttempts` times in one consumer
 * (docs/queue.md, "Consumers"). A handler that throws in a shared transaction counts there: its
 * worker's part does not run it again alone.
 */

/** Average handler time per item above which workers stop sharing transactions. */
export const SLOW_HANDLER_MS = 1;

/** The most a shared transaction's handlers may take in all, by the average, for workers to share one. */
export const SHARED_BUDGET_MS = 250;

/**
 * Runs on each item inside the transaction that pops it; its writes commit with the pop. `job` says
 * which job the item is and reports progress (in a transaction of its own: see {@link JobHandle}).
 */
export type QueueHandler<T> = (item: T, tr: Transaction, job: JobHandle) => Promise<void> | void;

/** The job a consumer's handler is running (docs/queue.md, "Job ids, progress and events"). */
export interface JobHandle {
  /** The job id: the same in events, `queue.job(id)`, leases and the dead-letter queue. */
  readonly id: string;
  /** Leases the item had before (expired or nacked ones); a consumer's own failures are counted in memory. */
  readonly attempts: number;
  /**
   * Reports progress: written at once in a transaction of its own (the handler's commits only when
   * the handler is done), so `queue.job(id)` and `queue.events()` see it while the handler runs. Needs
   * the queue's events on (`queue.configure({ events: true })`); resolves `false` otherwise, or when the
   * job is no longer in the queue. A retried handler reports its progress again.
   */
  progress(value: JsonValue): Promise<boolean>;
}

export interface ConsumeOptions<T> {
  /** Workers, each running its own transactions (default 1). */
  concurrency?: number;
  /** Items popped and handled per transaction (default 1). */
  batchSize?: number;
  /**
   * Each transaction takes a random one of the first `spread` batches at the head instead of the first
   * (see `PopOptions.spread`). Default: 1 for one worker and for workers sharing a transaction (strict
   * FIFO), else `4 * concurrency`, so that
   * workers seldom take the same batch. With 1 and several workers they all want the head batch: all
   * but one conflict each time, and a worker can lose many times in a row.
   */
  spread?: number;
  /** Stops the consumer, as {@link Consumer.stop} does. */
  signal?: AbortSignal;
  /**
   * Handler failures after which an item goes to the dead-letter queue instead of being handled again
   * (default: the queue's `maxAttempts`). Without a backoff policy counted by this consumer, in memory,
   * so the handler runs on a failing item exactly `maxAttempts` times in this consumer (its workers
   * never run it at once); with one, in the item's stored attempts (leases count too).
   */
  maxAttempts?: number;
  /**
   * With a policy (default: the queue's `backoff`), an item whose handler threw is moved, in a
   * transaction of its own after the failed one, to the scheduled area at now + the policy's delay for
   * its attempts, counted in the stored item; without one it stays at the head and is retried after a
   * short pause (docs/queue.md, "Retry backoff").
   */
  backoff?: BackoffPolicy;
  /** Called with each handler error (and the item) or other failure of a batch (item `undefined`). */
  onError?: (error: unknown, item: T | undefined) => void;
  /**
   * Runs a scheduler of the queue's repeatable jobs beside the workers (default true; see
   * `Queue.scheduler`): its failure goes to `onError` and stops it, not the workers.
   */
  schedules?: boolean;
  /**
   * @internal The clock, in ms, that times handlers for the decision to share transactions (default
   * `performance.now`): tests give one they move so the decision does not depend on the machine's load.
   */
  handlerClock?: () => number;
}

export interface ConsumerStats {
  /** Items handled in transactions known to have committed. */
  consumed: number;
  /** Transactions known to have committed with at least one item. */
  batches: number;
  /** Transaction attempts retried (conflicts, injected faults, commit_unknown_result). */
  retries: number;
  /** Batches that failed: the handler threw, or the commit failed for good. */
  failures: number;
  /** Items moved to the dead-letter queue by this consumer (exhausted leases, or failing items). */
  deadLettered: number;
}

/** A running consumer. */
export interface Consumer {
  /** Live counters. */
  readonly stats: Readonly<ConsumerStats>;
  /**
   * Resolves when every worker has stopped; rejects if a worker met an error it could not blame on an
   * item (the database closed, say), after stopping the others.
   */
  readonly done: Promise<ConsumerStats>;
  /** Lets each worker finish the batch it is in (its transaction commits or fails), then stops. */
  stop(): Promise<ConsumerStats>;
}

/** One item of a batch: an id of its position (the key, in hex), its job id and attempts, and its value. */
export interface BatchItem<T> {
  readonly id: string;
  readonly jobId: string;
  readonly attempts: number;
  readonly value: T;
}

export interface Batch<T> {
  readonly items: BatchItem<T>[];
  readonly deadLettered: number;
  /** Ids of the items moved to the dead-letter queue because `poisoned` said so. */
  readonly poisoned?: string[];
  /**
   * When nothing was there: a watch on the queue's pushed key, and when the next delayed item shows;
   * no watch when the rate limit held items back (then wakeInMs is when its window ends).
   */
  readonly idle?: { readonly watch?: Watch; readonly wakeInMs: number };
}

/** @internal What a consumer needs of its queue. */
export interface ConsumerSource<T> {
  readonly maxAttempts: number;
  readonly backoff: BackoffPolicy | undefined;
  /** Moves a failed item (by its batch id) to the scheduled area after its backoff, or dead-letters it. */
  deferFailed(id: string, backoff: BackoffPolicy, maxAttempts: number, error?: unknown): Promise<'deferred' | 'dead-lettered' | 'gone'>;
  /** Runs `fn` in a transaction of its own, retried on retryable errors. */
  runOwn<R>(fn: (tr: Transaction) => Promise<R>): Promise<R>;
  /**
   * Pops up to `count` items in `tr`; those `poisoned` says so go to the dead-letter queue instead
   * (`undefined` while no item has failed: no item's id is made then).
   */
  takeBatch(tr: Transaction, count: number, spread: number, poisoned: ((id: string) => boolean) | undefined): Promise<Batch<T>>;
  /** Reports a job's progress in a transaction of its own. */
  progress(jobId: string, value: JsonValue): Promise<boolean>;
  /**
   * Records that a handler failed on jobs (a `failed` event each, with the consumer's count of
   * failures, when events are on), in a transaction of its own.
   */
  failed(jobs: readonly { readonly jobId: string; readonly attempts: number }[], error: unknown): Promise<void>;
}

function positiveInteger(value: number | undefined, fallback: number, what: string): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 1) throw new DocumentError('INVALID_ARGUMENT', `${what} is a positive integer, got ${String(value)}`);
  return value;
}

/** Starts a consumer. @throws DocumentError INVALID_ARGUMENT */
export function startConsumer<T>(source: ConsumerSource<T>, handler: QueueHandler<T>, options: ConsumeOptions<T> = {}): Consumer {
  if (typeof handler !== 'function') throw new DocumentError('INVALID_ARGUMENT', 'consume takes a handler function');
  const concurrency = positiveInteger(options.concurrency, 1, 'concurrency');
  const batchSize = positiveInteger(options.batchSize, 1, 'batchSize');
  // Workers sharing a transaction never conflict with each other: they take the head strictly unless
  // told otherwise; on their own they spread by default.
  const sharedSpread = positiveInteger(options.spread, 1, 'spread');
  const spread = positiveInteger(options.spread, concurrency === 1 ? 1 : 4 * concurrency, 'spread');
  const maxAttempts = positiveInteger(options.maxAttempts, source.maxAttempts, 'maxAttempts');
  const backoff = options.backoff === undefined ? source.backoff : checkedBackoff(options.backoff);
  const stats: ConsumerStats = { consumed: 0, batches: 0, retries: 0, failures: 0, deadLettered: 0 };
  const stopping = new AbortController();
  // Handler failures per item position, while the item stays there.
  const failures = new Map<string, number>();
  const isPoisoned = (id: string) => (failures.get(id) ?? 0) >= maxAttempts;
  const poisoned = () => (failures.size === 0 ? undefined : isPoisoned);
  // Items that failed and then left the queue (handled, or dead-lettered), by when they left: their
  // count stays poisoned while a worker's attempt that began before then (whose take may still hold
  // them) runs, so that no stale take runs the handler on them again.
  const gone: { readonly id: string; readonly at: number }[] = [];
  let departures = 0;
  // Parts in an attempt, each with the departures it has seen (`Part.since`).
  const live = new Set<Part<T>>();
  const retire = (ids: readonly string[]): void => {
    if (ids.length === 0) return;
    departures++;
    for (const id of ids) {
      failures.set(id, Infinity);
      gone.push({ id, at: departures });
    }
    forget();
  };
  /** Forgets the items that left before every running attempt began. */
  const forget = (): void => {
    if (gone.length === 0) return;
    let oldest = departures;
    for (const part of live) oldest = Math.min(oldest, part.since);
    while (gone.length > 0 && gone[0].at <= oldest) failures.delete(gone.shift()!.id);
  };
  // The part whose handlers run on an item (or whose failure on it is not yet counted), by the item's
  // id: no other worker runs a handler on it meanwhile. One worker needs no marks; nor do workers
  // while all of them share transactions (those run one after another, each part on items of its
  // own), so that their items need no ids: the first transaction of a worker's own marks the items of
  // the shared one in flight, and the shared ones mark theirs while any item is marked.
  const handling = concurrency > 1 ? new Map<string, Part<T>>() : undefined;
  // Workers' transactions of their own in flight.
  let ownRuns = 0;

  /**
   * Marks `items` as `part`'s, all or none; throws {@link ItemBusy} when another part holds one (the
   * attempt then aborts and the worker waits for that part) or one has failed `maxAttempts` times
   * since the take saw it (the worker's next take dead-letters it).
   */
  const mark = (part: Part<T>, items: readonly BatchItem<T>[]): void => {
    if (handling === undefined) return;
    if (ownRuns === 0 && handling.size === 0) {
      if (failures.size > 0) for (const item of items) if (isPoisoned(item.id)) throw new ItemBusy(item.id, undefined);
      return;
    }
    for (const item of items) {
      const holder = handling.get(item.id);
      if (holder !== undefined && holder !== part) throw new ItemBusy(item.id, holder);
      if (failures.size > 0 && isPoisoned(item.id)) throw new ItemBusy(item.id, undefined);
    }
    for (const item of items) {
      handling.set(item.id, part);
      part.held.push(item.id);
    }
  };

  /** Marks the items of the parts that run without marks (in a shared transaction), before a worker's own transaction starts. */
  const markShared = (): void => {
    if (handling === undefined) return;
    for (const part of live) {
      if (part.held.length > 0) continue;
      for (const item of part.taken) {
        if (handling.has(item.id)) continue;
        handling.set(item.id, part);
        part.held.push(item.id);
      }
    }
  };

  /** Drops `part`'s marks and wakes the workers waiting for it. */
  const release = (part: Part<T>): void => {
    if (handling !== undefined) for (const id of part.held) if (handling.get(id) === part) handling.delete(id);
    part.held = [];
    const waiters = part.waiters;
    part.waiters = undefined;
    if (waiters !== undefined) for (const wake of waiters) wake();
  };

  /** Once `part`'s outcome is counted: it is no longer live, and lets go of its items. */
  const settle = (part: Part<T>): void => {
    live.delete(part);
    release(part);
    forget();
  };

  /** Resolves once `busy.holder` no longer holds the item (at once if it already let go). */
  const outcomeOf = (busy: ItemBusy<T>): Promise<void> | undefined => {
    const holder = busy.holder;
    if (holder === undefined || handling?.get(busy.id) !== holder) return undefined;
    return new Promise<void>((resolve) => (holder.waiters ??= []).push(resolve));
  };
  const report = (error: unknown, item: T | undefined) => {
    try {
      options.onError?.(error, item);
    } catch {
      // A failing error callback must not stop the worker.
    }
  };

  // The handler's time per item: a moving average, undefined until measured.
  let handlerMs: number | undefined;
  const clock = options.handlerClock ?? (() => performance.now());
  const sharing = () => handlerMs !== undefined && handlerMs <= SLOW_HANDLER_MS && handlerMs * batchSize * concurrency <= SHARED_BUDGET_MS;

  /** Runs the handler on each of a part's items in `tr`, one after another, and times them. */
  const handle = async (tr: Transaction, part: Part<T>, items: BatchItem<T>[]): Promise<void> => {
    part.taken = items;
    if (items.length === 0) return;
    mark(part, items);
    const started = shared !== undefined ? clock() : undefined;
    for (const item of items) {
      part.failing = item;
      // A handler that returns no promise costs no turn of the microtask queue.
      const result = handler(item.value, tr, jobHandle(source, item));
      if (result !== undefined) await result;
    }
    part.failing = undefined;
    // A moving average of the handler's time per item.
    if (started !== undefined) {
      const perItem = (clock() - started) / items.length;
      handlerMs = handlerMs === undefined ? perItem : handlerMs + (perItem - handlerMs) / 8;
    }
  };

  /** A worker's part in a transaction of its own: its take, then its handlers. */
  const runPart = async (tr: Transaction, part: Part<T>, takeSpread: number): Promise<Batch<T>> => {
    const thrown = part.thrown;
    part.thrown = undefined;
    // Its handler threw in a shared transaction (the combiner now runs each part alone): that run is
    // the one counted, not run again.
    if (thrown !== undefined) throw thrown.error;
    part.attempts++;
    part.since = departures;
    release(part);
    part.failing = undefined;
    part.taken = [];
    const b = await source.takeBatch(tr, batchSize, takeSpread, poisoned());
    await handle(tr, part, b.items);
    return b;
  };

  /**
   * The parts of workers ready at once, in a shared transaction: one take of `batchSize` items per
   * worker at the head (one read of the kind and of the head for all of them), the i-th worker's
   * handlers on the i-th `batchSize` items, in worker order; each worker gets its own batch. A
   * handler that throws fails the shared attempt (the combiner then runs each part alone).
   */
  const runParts = async (tr: Transaction, parts: Part<T>[]): Promise<Settled<Batch<T>>[]> => {
    for (const part of parts) {
      part.attempts++;
      part.since = departures;
      release(part);
      part.thrown = undefined;
      part.failing = undefined;
      part.taken = [];
    }
    const b = await source.takeBatch(tr, batchSize * parts.length, sharedSpread, poisoned());
    const out: Settled<Batch<T>>[] = new Array<Settled<Batch<T>>>(parts.length);
    // Workers left without an item wait on the take's watch together (each cancel drops one waiter).
    const idle = b.idle === undefined ? undefined : sharedIdle(b.idle, parts.length);
    for (let i = 0; i < parts.length; i++) {
      const items = b.items.length <= i * batchSize ? [] : b.items.slice(i * batchSize, (i + 1) * batchSize);
      try {
        await handle(tr, parts[i], items);
      } catch (err) {
        // The attempt fails and each part runs alone: only the part whose handler threw keeps its marks.
        if (!(err instanceof ItemBusy)) parts[i].thrown = { error: err };
        for (const part of parts) if (part !== parts[i] || err instanceof ItemBusy) release(part);
        throw err;
      }
      // The dead-lettered and poisoned items are the first worker's to count.
      const first = i === 0 ? { deadLettered: b.deadLettered, poisoned: b.poisoned } : { deadLettered: 0 };
      // A worker without an item while others have some takes again at once (and then waits if the
      // queue is empty); when nobody got one, each waits as its own take would.
      out[i] = { ok: true, value: idle === undefined ? { items, ...first } : { items, ...first, idle: idle[i] } };
    }
    return out;
  };

  // Workers ready at once share transactions while handlers are fast (see above); their takes merge.
  const shared =
    concurrency > 1
      ? new Combiner(
          (fn) => source.runOwn(fn),
          () => undefined,
        )
      : undefined;
  const merged = { operation: {}, runMany: (tr: Transaction, parts: Part<T>[]) => runParts(tr, parts) };
  /** A worker's part in transactions of its own, which mark their items (see `handling`). */
  const runOwnPart = async (part: Part<T>): Promise<Batch<T>> => {
    if (ownRuns++ === 0) markShared();
    try {
      return await source.runOwn((tr) => runPart(tr, part, spread));
    } finally {
      ownRuns--;
    }
  };
  const run = (part: Part<T>): Promise<Batch<T>> =>
    shared !== undefined && sharing()
      ? shared.submit((tr) => runPart(tr, part, sharedSpread), { ...merged, arg: part } as Merge<unknown, Batch<T>>)
      : handling === undefined
        ? source.runOwn((tr) => runPart(tr, part, spread))
        : runOwnPart(part);

  const worker = async (): Promise<void> => {
    const pause = new FailurePause();
    while (!stopping.signal.aborted) {
      const part: Part<T> = { attempts: 0, failing: undefined, taken: [], held: [], waiters: undefined, thrown: undefined, since: departures };
      let batch: Batch<T>;
      live.add(part);
      try {
        batch = await run(part);
      } catch (err) {
        if (err instanceof ItemBusy) {
          // The aborted attempt committed nothing; the take runs again once the item's outcome is known.
          stats.retries += part.attempts;
          settle(part);
          const outcome = outcomeOf(err as ItemBusy<T>);
          if (outcome !== undefined) await outcome;
          continue;
        }
        stats.retries += Math.max(0, part.attempts - 1);
        const failing = part.failing;
        const blamed = failing !== undefined ? [failing] : part.taken;
        if (blamed.length === 0) {
          settle(part);
          throw err;
        }
        stats.failures++;
        report(err, failing?.value);
        if (backoff !== undefined && failing !== undefined) {
          // The handler's item waits out its backoff in the scheduled area; the worker goes on at once.
          const deferred = await source.deferFailed(failing.id, backoff, maxAttempts, err).finally(() => settle(part));
          if (deferred === 'dead-lettered') stats.deadLettered++;
          continue;
        }
        for (const item of blamed) failures.set(item.id, (failures.get(item.id) ?? 0) + 1);
        settle(part);
        const failed = blamed.map((item) => ({ jobId: item.jobId, attempts: failures.get(item.id) ?? 1 }));
        await source.failed(failed, err).catch((e: unknown) => report(e, undefined));
        await sleep(pause.next(), stopping.signal);
        continue;
      }
      // The items' outcome is known: a stale take of one that failed before sees it gone, then the
      // workers waiting for them go on.
      if (batch.poisoned !== undefined) retire(batch.poisoned);
      if (failures.size > 0) retire(batch.items.filter((item) => failures.has(item.id)).map((item) => item.id));
      settle(part);
      stats.retries += part.attempts - 1;
      pause.reset();
      stats.deadLettered += batch.deadLettered;
      if (batch.items.length > 0) {
        stats.consumed += batch.items.length;
        stats.batches++;
      } else if (batch.idle !== undefined) {
        await waitForChange(batch.idle.watch, batch.idle.wakeInMs, stopping.signal);
      }
    }
  };

  const onAbort = () => stopping.abort();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  if (options.signal?.aborted) stopping.abort();
  const done = Promise.all(
    Array.from({ length: concurrency }, () =>
      worker().catch((err: unknown) => {
        stopping.abort();
        throw err;
      }),
    ),
  ).then(
    () => {
      options.signal?.removeEventListener('abort', onAbort);
      return { ...stats };
    },
    (err: unknown) => {
      options.signal?.removeEventListener('abort', onAbort);
      throw err;
    },
  );
  return {
    stats,
    done,
    stop: () => {
      stopping.abort();
      return done;
    },
  };
}

/** What a worker knows of its current transaction attempt, for blaming a failure on items. */
interface Part<T> {
  /** Attempts run (shared or alone) for this batch. */
  attempts: number;
  /** The item whose handler is running (or threw). */
  failing: BatchItem<T> | undefined;
  /** The items taken in the current attempt. */
  taken: BatchItem<T>[];
  /** Ids of the items this part has marked as its own (see `mark`). */
  held: string[];
  /** Workers waiting for this part to let go of an item. */
  waiters: (() => void)[] | undefined;
  /** The departures (items gone, see `retire`) when its current attempt began. */
  since: number;
  /** The error its handler threw in a shared attempt, which its run alone reports instead of running. */
  thrown: { readonly error: unknown } | undefined;
}

/**
 * Aborts a worker's attempt that took an item another worker of the consumer is handling (`holder`),
 * or one that has failed `maxAttempts` times since the take (no holder). Never leaves the consumer.
 */
class ItemBusy<T = unknown> extends Error {
  constructor(
    readonly id: string,
    readonly holder: Part<T> | undefined,
  ) {
    super('the item is being handled by another worker of this consumer');
  }
}

/**
 * `waiters` views of one idle result: the same wake time and watch, whose cancel stops the watch
 * only once every waiter has cancelled (a waiter woken by its timer or its stop does not cut the
 * others' wait short).
 */
function sharedIdle(idle: NonNullable<Batch<unknown>['idle']>, waiters: number): NonNullable<Batch<unknown>['idle']>[] {
  const { watch, wakeInMs } = idle;
  if (watch === undefined || waiters === 1) return Array.from({ length: waiters }, () => idle);
  let left = waiters;
  return Array.from({ length: waiters }, () => {
    let cancelled = false;
    return {
      wakeInMs,
      watch: {
        promise: watch.promise,
        cancel: () => {
          if (cancelled) return;
          cancelled = true;
          if (--left === 0) watch.cancel();
        },
      },
    };
  });
}

function jobHandle<T>(source: ConsumerSource<T>, item: BatchItem<T>): JobHandle {
  return new Job(source, item);
}

/**
 * The handle a handler gets: its id is read from the item when asked for (the item makes it on first
 * use, queue.ts `batchItem`), so a handler that never asks costs no job id. A class, not an object
 * literal with a getter (which V8 makes slowly, once per item); `toJSON` shows what a plain object would.
 */
class Job<T> implements JobHandle {
  readonly attempts: number;

  constructor(
    private readonly source: ConsumerSource<T>,
    private readonly item: BatchItem<T>,
  ) {
    this.attempts = item.attempts;
  }

  get id(): string {
    return this.item.jobId;
  }

  progress(value: JsonValue): Promise<boolean> {
    return this.source.progress(this.item.jobId, value);
  }

  toJSON(): { id: string; attempts: number } {
    return { id: this.id, attempts: this.attempts };
  }
}

/**
 * The pause after a failed batch: 10 ms doubling to 1 s, jittered in [0.5, 1] of the step as FDB's
 * retry backoff is, so that a failing item is retried without spinning.
 */
class FailurePause {
  private stepMs = 10;

  next(): number {
    const ms = this.stepMs * (0.5 + Math.random() * 0.5);
    this.stepMs = Math.min(this.stepMs * 2, 1000);
    return ms;
  }

  reset(): void {
    this.stepMs = 10;
  }
}
