import { Buffer } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import { DocumentError } from '../../document/errors';
import type { StructureAccess } from '../../document/structure-port';
import { docIdElement } from '../../document/keys/ids';
import type { DocumentKeys } from '../../document/keys/layout';
import type { DocId, JsonValue, TransactionOption } from '../../document/types';
import { int64LE, keyAfter } from '../../kv/contract/bytes';
import { addHandedOver, clearHandedOver, setHandedOver, setVersionstampedKeyHandedOver } from '../../kv/client/hand-over';
import type { KeyValue, Transaction, Watch } from '../../kv/contract/types';
import { pack, unpack, Uuid } from '../../tuple';
import { decodeInt64 } from '../int64';
import type { Merge, Settled } from '../combiner';
import { Structure, type StructureScope } from '../structure';
import { likelyOwnWrites, nextVisibleAt, takeHead, type Candidate, type Taken } from './head';
import { decodePayload, decodeRecord, encodePayload, encodeRecord, freshRecord } from './item';
import { QueueKeys } from './keys';
import { extendedTo, findLease, heldAt, leaseKey, type Lease } from './lease';
import { noteDelayedPush, notePriorityPush, ownWrites, pushesSoFar, takeUserVersions } from './own-writes';
import { checkedPriority } from './priority';
import { backoffDelay, checkedBackoff, type BackoffPolicy } from './backoff';
import {
  acquireReceiptSlot,
  bucketOf,
  newToken,
  receiptBody,
  receiptValue,
  releaseReceiptSlot,
  runReceiptBody,
  runReceiptValue,
  TokenKind,
  TokenSweeper,
  tokenValue,
  type ReceiptSlot,
  type RunToken,
} from './tokens';
import { startConsumer, type Batch, type BatchItem, type ConsumeOptions, type Consumer, type ConsumerSource, type QueueHandler } from './consumer';
import { FALLBACK_MS, waitForChange } from './wait';
import {
  decodeEvent,
  parseCursor,
  DEFAULT_EVENT_SETTINGS,
  QueueEventLog,
  settingsWith,
  type EventSink,
  type QueueEvent,
  type QueueEventSettings,
} from './events';
import { jobIdBytes, parseJobId } from './job';
import {
  countScheduled,
  encodeProgress,
  jobInfo,
  jobState,
  listedJob,
  listingRanges,
  nextFrom,
  SCAN_PAGE,
  writeProgress,
  type JobState,
  type QueueCounts,
  type QueueJob,
  type QueueJobInfo,
} from './jobs';
import { KnownSettings } from './known-settings';
import { checkedRateLimit, RateLimiter, UNLIMITED, withinLimit, type LimitedTaken, type RateLimit } from './rate-limit';
import type { StructureWriteOptions } from '../structure';
import {
  Repeatables,
  withScheduler,
  type RepeatEvery,
  type RepeatInfo,
  type RepeatOptions,
  type RunSchedulesOptions,
  type RunSchedulesResult,
  type Scheduler,
  type SchedulerOptions,
} from './repeat';

/** The operands of the commonest adds to the size and pushed keys, made once (an add copies its operand). */
const PLUS_ONE = int64LE(1);
const MINUS_ONE = int64LE(-1);

export type { Lease } from './lease';
export type { QueueEvent, QueueEventType, QueueEventSettings } from './events';
export type { JobState, QueueCounts, QueueJob, QueueJobInfo } from './jobs';
export type { JobHandle } from './consumer';
export type { ConsumeOptions, Consumer, ConsumerStats, QueueHandler } from './consumer';
export type { RateLimit } from './rate-limit';
export type { BackoffPolicy } from './backoff';
export type { RepeatEvery, RepeatInfo, RepeatOptions, RunSchedulesOptions, RunSchedulesResult, Scheduler, SchedulerOptions } from './repeat';

/** Options of {@link Queue.events}. */
export interface EventsOptions extends TransactionOption {
  /** Where to start: an event's `cursor` (the events after it), `'start'` or `'now'` (default). */
  from?: string;
  /** Stops the iteration (also while it waits). */
  signal?: AbortSignal;
  /** Events per range read (default 100). */
  pageSize?: number;
}

/** Options of {@link Queue.jobs}. */
export interface JobsOptions extends TransactionOption {
  state: JobState;
  /** At most this many jobs (default: all). */
  limit?: number;
  /** Items per range read (default 100). */
  pageSize?: number;
}

/** Options of a queue handle. Every handle of one queue should be given the same. */
export interface QueueOptions {
  /**
   * Leases an item may have: an item whose lease expires (or is nacked) after its `maxAttempts`-th
   * lease goes to the dead-letter queue instead of being delivered again. Default 5.
   */
  maxAttempts?: number;
  /** The id of the dead-letter queue, in the same collection. Default `` `${id}.dead` ``. */
  deadLetter?: DocId;
  /** The clock for visibility times and lease deadlines, in ms since the epoch. Default `Date.now`. */
  now?: () => number;
  /** Randomness for spreading pops and backoff jitter, in [0, 1). Default `Math.random`. */
  random?: () => number;
  /**
   * How long a failed item waits before it is visible again (docs/queue.md, "Retry backoff"): applied
   * by `nack` without `delayMs`, and by consumers to an item whose handler threw. Default none: a nack
   * makes the item visible at once, and a consumer's failing item stays at the head.
   */
  backoff?: BackoffPolicy;
}

/** Options of a push; `expiry` (see {@link StructureWriteOptions}) applies when the push creates the queue. */
export interface PushOptions extends StructureWriteOptions {
  /** Makes the item visible only this many milliseconds from now (default 0: at once). Not with `priority`. */
  delayMs?: number;
  /**
   * An integer from 0 (the default) to 2^31 - 1: higher priorities are popped first, FIFO within one
   * priority (docs/queue.md, "Priorities"). Strict: a lower priority waits while a higher one has items.
   */
  priority?: number;
  /**
   * Pushes at most once per id within one to two minutes: a push that finds a push with the same id
   * does nothing. Makes a push inside your own transaction safe to run again after
   * commit_unknown_result (without `tr`, pushes are idempotent anyway).
   */
  dedupeId?: string;
}

export interface PopOptions extends TransactionOption {
  /**
   * Waits up to this many milliseconds for an item when the queue is empty (by a watch: no polling).
   * Not with `tr`: a transaction cannot wait.
   */
  wait?: number;
  /** Ends a wait early (the pop then returns `undefined`). */
  signal?: AbortSignal;
  /**
   * Contention spreading: takes a random one of the first `spread` items instead of the first, so that
   * concurrent pops rarely conflict. Default 1 (strict FIFO).
   */
  spread?: number;
}

export interface LeaseOptions extends TransactionOption {
  /** How long the lease lasts, in ms (default 30,000). */
  visibilityMs?: number;
  /** As {@link PopOptions.spread}: a random one of the first `spread` batches of `count` items. */
  spread?: number;
}

export interface NackOptions extends TransactionOption {
  /** Makes the item visible again only after this many milliseconds (default: from `backoff`, else 0). */
  delayMs?: number;
  /** The delay from the item's attempts, when no `delayMs` is given (default: the queue's `backoff`). */
  backoff?: BackoffPolicy;
}

export interface IterateOptions extends TransactionOption {
  /** Items per range read (default 100); each page is a transaction of its own unless `tr` is given. */
  pageSize?: number;
}

/** What a pop without the caller's transaction brings to a merged run (see `popMany`). */
interface PopCall {
  readonly receipt: ReceiptSlot;
  readonly state: PopState;
  readonly waiting: boolean;
}

/** A pop's attempts so far, in its own transactions or merged ones, and the merged runs it was in. */
interface PopState {
  attempts: number;
  /** The runs that wrote a run receipt (`TokenKind.poppedRun`) with an entry for this call. */
  readonly runs: RunToken[];
}

/** One attempt of a push's writes (see `pushWrite`). */
interface PushWrite {
  readonly scope: StructureScope;
  readonly keys: QueueKeys;
  readonly payloads: readonly Buffer[];
  readonly at: number | undefined;
  readonly priority: number;
  readonly dedupeId: string | undefined;
  readonly bucket: number;
  readonly receipt: ReceiptSlot | undefined;
  readonly now: number;
}

/** What one pop attempt found: the item, or nothing (and, for a waiting pop, what to wait on). */
interface PopOutcome<T> {
  readonly found: boolean;
  readonly value?: T;
  readonly watch?: Watch;
  readonly wakeInMs?: number;
}

/** What a push without the caller's transaction brings to a merged run (see `pushMerged`). */
interface PushCall {
  readonly payloads: readonly Buffer[];
  readonly at: number | undefined;
  readonly priority: number;
  readonly state: PushState;
}

/** A push's attempts so far, and the token of the merged run it joined, if any. */
interface PushState {
  attempts: number;
  run: { readonly bucket: number; readonly token: Buffer } | undefined;
}

/** The merge keys of pops and pushes of handles with default options (see `Queue.popOperation`). */
const DEFAULT_POP = {};
const DEFAULT_PUSH = {};

const DEFAULT_MAX_ATTEMPTS = 5;
const DEFAULT_VISIBILITY_MS = 30_000;
const MAX_BATCH = 1_000;
const DEFAULT_PAGE_SIZE = 100;

/**
 * A persistent FIFO queue of JSON values (`T` describes them; they are checked as document values when
 * pushed). It is a document whose JSON form (`collection.get(id)`) is an array of the items not yet
 * consumed, the next to pop last, as Couchbase's CouchbaseQueue. See docs/queue.md for the layout,
 * the costs and what conflicts with what. Make one with `collection.queue(id, options)`.
 *
 * Every method takes an optional transaction (`{ tr }`): it then runs inside it, neither committing
 * nor retrying. Without one it runs in a transaction of its own, retried on conflicts, and `push`,
 * `pop`, `lease`, `ack`, `nack` and `extend` are then exactly-once under commit_unknown_result: an
 * attempt that was applied is recognised by its token (see docs/queue.md, "Retries").
 *
 * Every operation reads the kind key (1 point read, conflicting only with the queue's creation and
 * removal) except `ack`, `nack` and `extend`, which read the leased item's key instead. Every change
 * sets the document's version key (a blind versionstamped write). Every operation also reads the
 * metadata version (no round trip on a cluster) and, unless the queue is known to have its events off
 * at that version (known-settings.ts), its event settings (1 point read, issued with its first reads;
 * it conflicts only with `configure`), and with events on writes events and job records in the same
 * transaction (see docs/queue.md, "Job ids, progress and events", for what each operation writes).
 */
export class Queue<T = JsonValue> extends Structure {
  readonly kind = 'queue' as const;
  private readonly maxAttempts: number;
  private readonly deadLetterId: DocId;
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly backoff: BackoffPolicy | undefined;
  private readonly sweeper = new TokenSweeper();
  /** Events, job records and their settings (events.ts). */
  private readonly eventLog = new QueueEventLog(() => this.now(), this.access.kv);
  private readonly limiter: RateLimiter;
  private cachedKeys: QueueKeys | undefined;
  private deadLetterQueue: Queue<T> | undefined;
  private repeatables: Repeatables<T> | undefined;
  /**
   * The merge keys of pops and pushes: shared by the handles with default options, else this handle's
   * own (a merged run applies the options of its first call's handle).
   */
  private readonly popOperation: object;
  private readonly pushOperation: object;
  /** The merged steps of pushes and pops: one function each per handle, not a closure per call. */
  private readonly runPushes = (t: Transaction, calls: readonly PushCall[]) => this.pushMerged(t, calls);
  private readonly runPops = (t: Transaction, calls: readonly PopCall[]) => this.popMany(t, calls);

  /**
   * Use `collection.queue(id)`. Touches nothing.
   *
   * @throws DocumentError INVALID_ARGUMENT for an invalid id or option.
   */
  constructor(
    access: StructureAccess,
    id: DocId,
    private readonly options: QueueOptions = {},
  ) {
    super(access, id);
    this.maxAttempts = positiveInteger(options.maxAttempts, DEFAULT_MAX_ATTEMPTS, 'maxAttempts');
    this.deadLetterId = options.deadLetter ?? `${String(id)}.dead`;
    docIdElement(this.deadLetterId);
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
    this.limiter = new RateLimiter(this.random, access.kv);
    this.backoff = checkedBackoff(options.backoff);
    const defaults = Object.values(options).every((v) => v === undefined);
    this.popOperation = defaults ? DEFAULT_POP : {};
    this.pushOperation = defaults ? DEFAULT_PUSH : {};
  }

  /** The dead-letter queue: where items go after `maxAttempts` leases or consumer failures. */
  get deadLetters(): Queue<T> {
    this.deadLetterQueue ??= new Queue<T>(this.access, this.deadLetterId, {
      ...this.options,
      deadLetter: `${String(this.deadLetterId)}.dead`,
    });
    return this.deadLetterQueue;
  }

  /**
   * Appends an item. Never conflicts with other pushes or with pops: the item's key is the commit's
   * versionstamp (`setVersionstampedKey`), and the size and pushed keys change by atomic add.
   *
   * Reads: the kind key; with `dedupeId`, 2 token keys (conflicting only with a push of the same id);
   * in its own transaction, on a retry, its token. Writes: the item, size (add), pushed (add), the
   * version key, and in its own transaction or with `dedupeId` a token (concurrent pushes merged
   * into one transaction write one token for all, see `pushMerged`). With `delayMs` the item goes to
   * the scheduled area, at its visibility time; with `priority` p > 0 to `tuple(0, -p, versionstamp)`,
   * ahead of lower priorities (docs/queue.md, "Priorities"). Conflicts with no pop at any priority.
   *
   * What can repeat: nothing without `tr`. With `tr` and no `dedupeId`, running the caller's
   * transaction again after commit_unknown_result pushes again.
   *
   * @throws DocumentError WRONG_KIND, INVALID_VALUE, VALUE_TOO_DEEP, DOCUMENT_TOO_LARGE (an item over
   *   99,900 bytes encoded), INVALID_ARGUMENT.
   */
  push(value: T, opts: PushOptions = {}): Promise<void> {
    return this.pushAll([value], opts);
  }

  /**
   * Appends items in order, in one transaction (at most 65,536 per transaction). As {@link push}, with
   * one item key per value and one token for all.
   */
  async pushMany(values: readonly T[], opts: PushOptions = {}): Promise<void> {
    if (!Array.isArray(values)) throw new DocumentError('INVALID_ARGUMENT', 'pushMany takes an array of values');
    if (values.length === 0) return;
    await this.pushAll(values, opts);
  }

  /**
   * Removes and returns the oldest visible item, or `undefined` when there is none.
   *
   * Strict (default): reads the head (2 limit-1 range reads issued together: visible scheduled items,
   * ready items), clears the item. Conflicts with every other strict pop, lease or peek-then-write that
   * takes the same head item, and (when it found nothing) with a concurrent nack that makes an item
   * visible at once; never with pushes, whose keys lie beyond the read version's bound.
   * With `spread: k`: reads the first k items (snapshot), takes a random one and adds a read conflict on
   * it alone, so two pops conflict only when they pick the same item (about 1/k); FIFO is relaxed to
   * "one of the k oldest".
   * Writes: the item's clear, size (add), the version key; in its own transaction a receipt (the item)
   * under a token, read back by a retry after commit_unknown_result, so the item is returned even then.
   * Exhausted items met at the head (leased `maxAttempts` times) are moved to the dead-letter queue.
   *
   * With `wait`, an empty queue is waited on by a watch of its pushed key (and a timer for the next
   * delayed item or expiring lease) and the pop retried when it fires; `undefined` when the time runs
   * out or `signal` aborts.
   *
   * What can repeat: nothing without `tr`. With `tr`, a caller's retry pops another item (the first
   * one was taken by the attempt that committed, with the caller's other writes).
   *
   * @throws DocumentError WRONG_KIND, INVALID_ARGUMENT.
   */
  pop(opts: PopOptions = {}): Promise<T | undefined> {
    return opts.wait === undefined ? this.popNow(opts.tr, opts.spread) : this.popWaiting(opts, opts.wait);
  }

  /** {@link pop} without `wait`: one async frame per call (a waiting pop's loop needs its own). */
  private async popNow(tr: Transaction | undefined, spreadOption: number | undefined): Promise<T | undefined> {
    const spread = positiveInteger(spreadOption, 1, 'spread');
    // As popOnce does, without its frame.
    const receipt = tr === undefined ? acquireReceiptSlot(this.now()) : undefined;
    try {
      return (await this.popAttempts(tr, receipt, spread, false)).value;
    } finally {
      if (receipt !== undefined) releaseReceiptSlot(receipt);
    }
  }

  private async popWaiting(opts: PopOptions, wait: number): Promise<T | undefined> {
    const spread = positiveInteger(opts.spread, 1, 'spread');
    if (opts.tr !== undefined) throw new DocumentError('INVALID_ARGUMENT', 'pop cannot wait inside a transaction');
    if (!(wait >= 0) || !Number.isFinite(wait)) {
      throw new DocumentError('INVALID_ARGUMENT', `wait is a number of milliseconds, got ${String(wait)}`);
    }
    const until = Date.now() + wait;
    for (;;) {
      const outcome = await this.popOnce(undefined, spread, true);
      if (outcome.found) return outcome.value;
      const left = until - Date.now();
      if (left <= 0 || opts.signal?.aborted) {
        outcome.watch?.cancel();
        return undefined;
      }
      await waitForChange(outcome.watch, Math.min(left, outcome.wakeInMs ?? Infinity), opts.signal);
    }
  }

  /**
   * The item a strict pop would return now, without removing it.
   *
   * Reads: the kind key, the head as a strict pop does (with the same read conflicts).
   *
   * @throws DocumentError WRONG_KIND.
   */
  async peek(opts: TransactionOption = {}): Promise<T | undefined> {
    // The head is read with the kind check (its result unused if there is no queue).
    return this.readWith(
      opts,
      (tr, doc) => this.takeIn(tr, doc, 1, 1, this.now()),
      async (_tr, doc, taken) => {
        if (doc === undefined || taken === undefined || taken.items.length === 0) return undefined;
        return decodePayload(taken.items[0].record.payload) as T;
      },
    );
  }

  /**
   * Items not yet consumed: ready, delayed and leased (until acked) ones.
   *
   * Reads: the kind key, the size key (1 point read, which conflicts with every push, pop and ack: in a
   * transaction that also writes, read it only if you need it).
   *
   * @throws DocumentError WRONG_KIND.
   */
  async size(opts: TransactionOption = {}): Promise<number> {
    // The size read is issued with the kind check.
    return this.readWith(
      opts,
      (tr, doc) => tr.get(this.queueKeys(doc).size),
      async (_tr, doc, size) => (doc === undefined ? 0 : Number(decodeInt64(size))),
    );
  }

  /**
   * The items in pop order as of the call (visible scheduled items, ready items, then delayed and
   * leased items by visibility time), read in pages of `pageSize` by range reads, each page in its own
   * transaction unless `tr` is given (then pages are plain reads in it, conflicting with any change of
   * what they cover). Items pushed by `tr` itself are not seen.
   *
   * @throws DocumentError WRONG_KIND, INVALID_ARGUMENT.
   */
  async *iterate(opts: IterateOptions = {}): AsyncGenerator<T, void, undefined> {
    const pageSize = positiveInteger(opts.pageSize, DEFAULT_PAGE_SIZE, 'pageSize');
    const now = this.now();
    let area = 0;
    let from: Buffer | undefined;
    while (area < 3) {
      const page = await this.read(opts, async (tr, doc) => {
        if (doc === undefined) return undefined;
        const keys = this.queueKeys(doc);
        const own = await ownWrites(tr);
        const earliestOwn = own.earliestDelayed.get(doc.identity) ?? Infinity;
        // Areas: visible scheduled items, ready items (the readable ranges, in key order), the others.
        const ranges: [Buffer, Buffer][][] = [
          [[keys.scheduled, keys.scheduledAfter(Math.min(now, earliestOwn - 1))]],
          keys.readyRanges(own.readVersion, own.priorities.get(doc.identity)),
          [[keys.scheduledAfter(now), earliestOwn === Infinity ? keys.scheduledEnd : keys.scheduledAfter(earliestOwn - 1)]],
        ];
        const out: KeyValue[] = [];
        for (const [begin, end] of ranges[area]) {
          const start = from === undefined || Buffer.compare(from, begin) < 0 ? begin : from;
          if (Buffer.compare(start, end) >= 0) continue;
          out.push(...(await tr.getRangeAll(start, end, { limit: pageSize - out.length })));
          if (out.length >= pageSize) break;
        }
        return out;
      });
      if (page === undefined) return;
      for (const { value } of page) yield decodePayload(decodeRecord(value).payload) as T;
      if (page.length < pageSize) {
        area++;
        from = undefined;
      } else {
        from = keyAfter(page[page.length - 1].key);
      }
    }
  }

  /** `for await (const item of queue)`: {@link iterate} with its defaults. */
  [Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    return this.iterate();
  }

  /**
   * Leases up to `count` (at most 1,000) visible items for work outside the database: each moves to
   * the scheduled area at its deadline, marked leased, with a fresh lease id. Ack it before the
   * deadline, or it becomes visible again by itself (no write needed) and the next pop or lease takes
   * it; after `maxAttempts` leases an expired item goes to the dead-letter queue instead.
   *
   * Reads and conflicts: as a pop of `count` items (strict, or spread). Writes per item: a clear and a
   * set (the move), plus the version key; in its own transaction a receipt (the lease ids) read back by
   * a retry after commit_unknown_result, so the leases are returned even then.
   *
   * @throws DocumentError WRONG_KIND, INVALID_ARGUMENT.
   */
  async lease(count: number, opts: LeaseOptions = {}): Promise<Lease<T>[]> {
    if (!Number.isSafeInteger(count) || count < 1 || count > MAX_BATCH) {
      throw new DocumentError('INVALID_ARGUMENT', `count is an integer from 1 to ${MAX_BATCH}, got ${String(count)}`);
    }
    const visibilityMs = positiveInteger(opts.visibilityMs, DEFAULT_VISIBILITY_MS, 'visibilityMs');
    const spread = positiveInteger(opts.spread, 1, 'spread');
    const receipt = this.receiptFor(opts.tr);
    let attempt = 0;
    let now = 0;
    return this.writeWith(
      opts,
      // The head is read with the kind check; not on a retry that first looks for its receipt.
      (t, doc) => {
        now = this.now();
        return receipt === undefined || attempt === 0 ? this.takeLimited(t, doc, count, spread, now) : Promise.resolve(undefined);
      },
      async (scope, prefetched) => {
        attempt++;
        if (!scope.existed) return [];
        const { tr } = scope;
        const keys = this.queueKeys(scope.keys);
        if (receipt !== undefined && attempt > 1) {
          const earlier = await tr.get(keys.token(receipt.bucket, receipt.token));
          if (earlier !== undefined) return this.leasesOfReceipt(tr, keys, earlier);
        }
        const taken = prefetched ?? (await this.take(scope, count, spread, now));
        const deadline = now + visibilityMs;
        const leases: Lease<T>[] = [];
        const events = taken.items.length > 0 ? await this.eventLog.sink(tr, scope.keys) : undefined;
        for (const item of taken.items) {
          const id = randomUUID();
          const attempts = item.record.attempts + 1;
          const jobId = jobIdBytes(keys, item);
          tr.clear(item.key);
          tr.set(keys.scheduledKey(deadline, new Uuid(id)), encodeRecord(true, attempts, item.record.payload, jobId));
          events?.leased(jobId, attempts, deadline);
          leases.push({ id, jobId: jobId.toString('hex'), value: decodePayload(item.record.payload) as T, deadline, attempts });
        }
        taken.allowance.claim(tr, leases.length);
        const finishing = this.finishTake(scope, keys, taken.exhausted, []);
        if (finishing !== undefined) await finishing;
        if (leases.length > 0) this.changed(tr, scope.keys);
        if (receipt !== undefined && (leases.length > 0 || taken.exhausted.length > 0)) {
          const body = pack([deadline, ...leases.map((l) => new Uuid(l.id))]);
          tr.set(keys.token(receipt.bucket, receipt.token), tokenValue(TokenKind.leased, body));
          this.sweeper.sweep(tr, keys, now);
        }
        return leases;
      },
    );
  }

  /**
   * Acknowledges a lease: the item is done and leaves the queue. Repeating an ack that succeeded is a
   * no-op (within a minute or two of the lease's deadline).
   *
   * Reads: the item at `(deadline, lease id)` (following extends), which conflicts with a concurrent
   * take of the item after its deadline; no kind read. Writes: the item's clear, size (add), a token for
   * the lease, the version key. Acks of different leases never conflict.
   *
   * What can repeat: nothing; a retry after commit_unknown_result finds its token.
   *
   * @throws DocumentError LEASE_EXPIRED when the lease is no longer held: its deadline passed (by this
   *   handle's clock), it was nacked, or its item was taken again; INVALID_ARGUMENT.
   */
  async ack(lease: Lease<T>, opts: TransactionOption = {}): Promise<void> {
    const { uuid, deadline } = leaseKey(lease);
    await this.onLease(opts.tr, lease.id, async (tr, keys, doc, now) => {
      const state = await findLease(tr, keys, uuid, deadline);
      if (state.kind === 'acked') return;
      const held = heldAt(state, now, lease.id);
      tr.clear(held.key);
      tr.add(keys.size, -1);
      (await this.eventLog.sink(tr, doc))?.completed(jobIdBytes(keys, held));
      tr.set(keys.token(bucketOf(held.deadline), uuid), tokenValue(TokenKind.acked));
      this.sweeper.sweep(tr, keys, now);
      this.changed(tr, doc);
    });
  }

  /**
   * Gives a leased item back: visible again after `delayMs` (default: the backoff policy's delay for
   * the item's attempts, from `opts.backoff` or the queue's, else at once), ahead of ready items once
   * visible; or, when it has had `maxAttempts` leases, moved to the dead-letter queue. Repeating a
   * nack that succeeded returns the same outcome.
   *
   * Reads: as {@link ack}; for a dead-letter move, the dead-letter queue's kind. Writes: the item moved
   * (clear and set, or a push to the dead-letter queue), pushed (add), a token, the version key.
   *
   * @throws DocumentError LEASE_EXPIRED, INVALID_ARGUMENT.
   */
  async nack(lease: Lease<T>, opts: NackOptions = {}): Promise<'requeued' | 'dead-lettered'> {
    const { uuid, deadline } = leaseKey(lease);
    const delayMs = opts.delayMs === undefined ? undefined : nonNegative(opts.delayMs, 'delayMs');
    const backoff = opts.backoff === undefined ? this.backoff : checkedBackoff(opts.backoff);
    return this.onLease(opts.tr, lease.id, async (tr, keys, doc, now) => {
      const state = await findLease(tr, keys, uuid, deadline);
      if (state.kind === 'nacked') return state.deadLettered ? 'dead-lettered' : 'requeued';
      const held = heldAt(state, now, lease.id);
      const token = keys.token(bucketOf(held.deadline), uuid);
      const jobId = jobIdBytes(keys, held);
      const events = await this.eventLog.sink(tr, doc);
      tr.clear(held.key);
      let outcome: 'requeued' | 'dead-lettered';
      if (held.record.attempts >= this.maxAttempts) {
        tr.add(keys.size, -1);
        events?.deadLettered(jobId, held.record.attempts);
        await this.deadLetters.appendIn(tr, [held.record.payload], [jobId]);
        tr.set(token, tokenValue(TokenKind.deadLettered));
        outcome = 'dead-lettered';
      } else {
        const delay = delayMs ?? (backoff === undefined ? 0 : backoffDelay(backoff, held.record.attempts, this.random));
        events?.retried(jobId, held.record.attempts, now + delay);
        tr.set(keys.scheduledKey(now + delay, uuid), encodeRecord(false, held.record.attempts, held.record.payload, jobId));
        tr.add(keys.pushed, 1);
        tr.set(token, tokenValue(TokenKind.nacked));
        outcome = 'requeued';
      }
      this.sweeper.sweep(tr, keys, now);
      this.changed(tr, doc);
      return outcome;
    });
  }

  /**
   * Moves a lease's deadline to `ms` from now (shorter or longer) and returns the lease with it. The
   * lease given keeps working too: ack, nack and extend follow the move.
   *
   * Reads and conflicts: as {@link ack}. Writes: the item moved (clear and set), a token under the old
   * deadline pointing to the new one, the version key.
   *
   * What can repeat: nothing; a retry after commit_unknown_result finds the item at the new deadline.
   *
   * @throws DocumentError LEASE_EXPIRED, INVALID_ARGUMENT.
   */
  async extend(lease: Lease<T>, ms: number, opts: TransactionOption = {}): Promise<Lease<T>> {
    const { uuid, deadline } = leaseKey(lease);
    const to = this.now() + positiveInteger(ms, 1, 'ms');
    return this.onLease(opts.tr, lease.id, async (tr, keys, doc, now) => {
      const state = await findLease(tr, keys, uuid, deadline);
      if (state.kind === 'held' && state.deadline === to) return { ...lease, deadline: to };
      const held = heldAt(state, now, lease.id);
      const jobId = jobIdBytes(keys, held);
      tr.clear(held.key);
      tr.set(keys.scheduledKey(to, uuid), encodeRecord(true, held.record.attempts, held.record.payload, jobId));
      await (await this.eventLog.sink(tr, doc))?.extended(jobId, held.record.attempts, to);
      tr.set(keys.token(bucketOf(held.deadline), uuid), extendedTo(to));
      this.sweeper.sweep(tr, keys, now);
      this.changed(tr, doc);
      return { ...lease, deadline: to, attempts: held.record.attempts };
    });
  }

  /**
   * Starts a transactional consumer: workers that each loop on a transaction which pops up to
   * `batchSize` items and runs `handler(item, tr)` on each, so the handler's writes and the pops commit
   * together: in the database each item is handled exactly once. A handler that throws aborts its
   * transaction (the items stay in the queue), the worker pauses (10 ms doubling to 1 s) and tries
   * again; an item whose handler failed `maxAttempts` times goes to the dead-letter queue. An idle
   * worker waits on a watch, not by polling. Stop it with `stop()` or `signal`: each worker finishes
   * its batch first.
   *
   * What can repeat: the handler's effects outside the database (it runs again on each retry of its
   * transaction); `stats` counts only commits it saw succeed.
   *
   * @throws DocumentError INVALID_ARGUMENT.
   */
  consume(handler: QueueHandler<T>, opts: ConsumeOptions<T> = {}): Consumer {
    const source: ConsumerSource<T> = {
      maxAttempts: this.maxAttempts,
      backoff: this.backoff,
      deferFailed: (id, backoff, maxAttempts, error) => this.deferFailed(id, backoff, maxAttempts, error),
      runOwn: (fn) => this.access.run(undefined, fn),
      takeBatch: (tr, count, spread, poisoned) => this.takeBatch(tr, count, spread, poisoned),
      progress: (jobId, value) => this.progress(jobId, value),
      failed: (jobs, error) => this.recordFailures(jobs, error),
    };
    const consumer = startConsumer(source, handler, opts);
    if (opts.schedules === false) return consumer;
    return withScheduler(consumer, this.schedules.scheduler({ signal: opts.signal }), (err) => opts.onError?.(err, undefined));
  }

  // ---- repeatable jobs (repeat.ts, docs/queue.md "Repeatable jobs")

  /**
   * Creates or replaces the repeatable job `name`: `value` is enqueued as a delayed item at each
   * occurrence of `every` (`{ cron, tz? }` or `{ everyMs }`), by whichever scheduler runs first
   * ({@link scheduler}, {@link consume}, {@link runSchedules}), exactly once. The same definition again
   * changes nothing; another one starts over. Creates the queue if needed.
   *
   * Reads: the kind key, the schedule's key. Writes: the schedule's key, the schedules' changed key (add).
   *
   * @returns the schedule with its next occurrence.
   * @throws DocumentError INVALID_ARGUMENT (naming the cron field that is wrong), INVALID_VALUE,
   *   VALUE_TOO_DEEP, DOCUMENT_TOO_LARGE, KEY_TOO_LARGE, WRONG_KIND.
   */
  repeat(name: string, every: RepeatEvery, value: T, opts: RepeatOptions = {}): Promise<RepeatInfo<T>> {
    return this.schedules.repeat(name, every, value, opts);
  }

  /**
   * The repeatable jobs in name order with their next occurrence (range reads of 50, each page in its
   * own transaction unless `tr` is given).
   *
   * @throws DocumentError WRONG_KIND.
   */
  repeats(opts: TransactionOption = {}): AsyncGenerator<RepeatInfo<T>, void, undefined> {
    return this.schedules.repeats(opts);
  }

  /**
   * Removes the repeatable job `name` (the items it enqueued stay). Reads: the kind key, its key. Writes:
   * its clear, the changed key (add).
   *
   * @returns whether it existed.
   * @throws DocumentError INVALID_ARGUMENT, WRONG_KIND.
   */
  removeRepeat(name: string, opts: TransactionOption = {}): Promise<boolean> {
    return this.schedules.removeRepeat(name, opts);
  }

  /**
   * One scheduler pass: enqueues every occurrence due up to now + `lookaheadMs` (default 1 s) once,
   * as delayed items visible at their times; of missed occurrences, the oldest only. See
   * `Repeatables.runSchedules` for the keys read and written.
   *
   * @throws DocumentError INVALID_ARGUMENT, WRONG_KIND.
   */
  runSchedules(opts: RunSchedulesOptions = {}): Promise<RunSchedulesResult> {
    return this.schedules.runSchedules(opts);
  }

  /**
   * Starts a scheduler: passes ({@link runSchedules}) whenever the next occurrence comes within the
   * lookahead or a schedule changes (a watch), never polling. Any number may run, in any process.
   *
   * @throws DocumentError INVALID_ARGUMENT.
   */
  scheduler(opts: SchedulerOptions = {}): Scheduler {
    return this.schedules.scheduler(opts);
  }

  // ---- job ids, progress, events, counts (events.ts, jobs.ts; docs/queue.md "Job ids, progress and events")

  /**
   * Changes the queue's stored event settings (every handle, in every process, obeys them from its
   * next transaction on) and returns them: `events` switches lifecycle events and job records on or
   * off (default off: they cost a write per event), `maxAgeMs` and `maxEvents` bound the log. Creates
   * the queue if it does not exist; `clear()` removes the settings with the queue.
   *
   * Reads: the kind key, the settings key. Writes: the settings key (which every operation of the
   * queue that does not know its events off reads, so it conflicts with them), the version key; when
   * it turns events on from off, the metadata version (a bump: operations that trusted "events off"
   * conflict with it, see known-settings.ts).
   *
   * @throws DocumentError INVALID_ARGUMENT, WRONG_KIND.
   */
  async configure(settings: Partial<QueueEventSettings>, opts: StructureWriteOptions = {}): Promise<QueueEventSettings> {
    settingsWith(DEFAULT_EVENT_SETTINGS, settings);
    return this.writeWith(opts, this.primeEvents, async (scope) => {
      const before = await this.eventLog.settings(scope.tr, scope.keys);
      const next = settingsWith(before, settings);
      scope.create();
      this.eventLog.store(scope.tr, scope.keys, before, next);
      this.changed(scope.tr, scope.keys);
      return next;
    });
  }

  /** The queue's stored event settings (the defaults for a queue that has none). Reads: the kind key, the settings key. */
  async eventSettings(opts: TransactionOption = {}): Promise<QueueEventSettings> {
    return this.read(opts, async (tr, doc) => (doc === undefined ? DEFAULT_EVENT_SETTINGS : this.eventLog.settings(tr, doc)));
  }

  /**
   * Reports a job's progress (any JSON value, checked as an item is): kept in the job's record (see
   * {@link job}) and written as a `progress` event. Without `tr` it commits at once, in a transaction of
   * its own, so it is seen while a consumer's handler (whose transaction commits at its end) still runs.
   * Returns `false`, writing nothing, when the queue's events are off or the job is no longer in the queue.
   *
   * Reads: the kind key, the settings key (unless the events are known off), the job record (which
   * conflicts with a concurrent lease, ack or nack of the job). Writes: the job record, 1 event, the event head (add).
   * What can repeat: after commit_unknown_result, the `progress` event (the record is the same).
   *
   * @throws DocumentError INVALID_ARGUMENT (not a lease or job id), INVALID_VALUE, VALUE_TOO_DEEP,
   *   DOCUMENT_TOO_LARGE, WRONG_KIND.
   */
  async progress(job: Lease<T> | string, value: JsonValue, opts: TransactionOption = {}): Promise<boolean> {
    const id = parseJobId(typeof job === 'string' ? job : ((job as Partial<Lease<T>> | null)?.jobId ?? ''));
    const progress = encodeProgress(value);
    return this.writeWith(opts, this.primeEvents, async (scope) =>
      scope.existed ? writeProgress(scope.tr, this.eventLog, scope.keys, id, progress) : false,
    );
  }

  /**
   * A job in the queue: its state (by the handle's clock), attempts and last progress, from its job
   * record; `undefined` when it is not in the queue (completed, dead-lettered, never pushed) or the
   * queue's events are off (no records are kept then).
   *
   * Reads: the kind key, the job record.
   *
   * @throws DocumentError INVALID_ARGUMENT, WRONG_KIND.
   */
  async job(id: string, opts: TransactionOption = {}): Promise<QueueJobInfo | undefined> {
    const bytes = parseJobId(id);
    return this.read(opts, async (tr, doc) => {
      const value = doc === undefined ? undefined : await tr.get(this.eventLog.keys(doc).job(bytes));
      return value === undefined ? undefined : jobInfo(id, value, this.now());
    });
  }

  /**
   * The queue's events in commit order, from `from` (an event's `cursor`: the events after it;
   * `'start'`: the oldest kept; `'now'`, the default: those committed from now on). Waits for new
   * events by a watch on the event head key, which every transaction writing events changes (no
   * polling), until `signal` aborts; with `tr`, yields the events visible in it and ends.
   *
   * Reads per page: the event range (`pageSize`, default 100), and when it is empty, a watch of the
   * head key; each page in a transaction of its own unless `tr` is given; first, the kind key. A cursor
   * whose events were trimmed meanwhile continues at the oldest event kept.
   *
   * @throws DocumentError INVALID_ARGUMENT, WRONG_KIND.
   */
  async *events(opts: EventsOptions = {}): AsyncGenerator<QueueEvent, void, undefined> {
    const pageSize = positiveInteger(opts.pageSize, DEFAULT_PAGE_SIZE, 'pageSize');
    let from = opts.from ?? 'now';
    if (from !== 'now' && from !== 'start') parseCursor(from);
    // WRONG_KIND for another kind of document at the id (the pages below read the keys of any).
    await this.read(opts, () => Promise.resolve(undefined));
    while (!opts.signal?.aborted) {
      const page = await this.access.run(opts.tr, async (tr) => {
        const doc = await this.access.keysToRead(tr, this.element);
        if (doc === undefined) return undefined;
        const keys = this.eventLog.keys(doc);
        let resume = from;
        if (from === 'now') {
          // From now on: after the newest event so far.
          const [last] = await tr.snapshot().getRangeAll(keys.begin, keys.end, { limit: 1, reverse: true });
          resume = last === undefined ? 'start' : keys.versionstampOf(last.key).toString('hex');
        }
        const start = resume === 'start' ? keys.begin : keyAfter(keys.event(parseCursor(resume)));
        const pairs = await tr.getRangeAll(start, keys.end, { limit: pageSize });
        const events = pairs.map((pair) => decodeEvent(keys, pair));
        const watch = events.length === 0 && opts.tr === undefined ? tr.watch(keys.head) : undefined;
        watch?.promise.catch(() => undefined);
        return { events, watch, resume };
      });
      if (page === undefined) {
        // No collection yet: whatever comes is new.
        if (opts.tr !== undefined) return;
        from = from === 'now' ? 'start' : from;
        await waitForChange(undefined, FALLBACK_MS * 10, opts.signal);
        continue;
      }
      from = page.resume;
      for (const event of page.events) {
        from = event.cursor;
        yield event;
        if (opts.signal?.aborted) return;
      }
      if (page.events.length < pageSize && opts.tr !== undefined) return;
      if (page.watch !== undefined) await waitForChange(page.watch, Infinity, opts.signal);
    }
  }

  /**
   * Jobs per state (see {@link QueueCounts}): `active` leased and not expired, `delayed` not yet visible
   * and not leased, `waiting` the rest of the queue's items, `dead` the dead-letter queue's size.
   *
   * Reads: the kind key, the size key and the whole scheduled area (values included: delayed, leased
   * and nacked items), in pages of 1,000 items, each page in a transaction of its own unless `tr` is
   * given (a queue changing meanwhile then gives approximate counts); the dead-letter queue's kind and
   * size. Its cost grows with the delayed and leased items, not with the ready ones.
   *
   * @throws DocumentError WRONG_KIND.
   */
  async counts(opts: TransactionOption = {}): Promise<QueueCounts> {
    const now = this.now();
    const seen = { delayed: 0, active: 0, visible: 0 };
    let size = 0;
    let from: Buffer | undefined;
    for (;;) {
      const last = await this.read(opts, async (tr, doc) => {
        if (doc === undefined) return true;
        const keys = this.queueKeys(doc);
        const own = await ownWrites(tr);
        const earliestOwn = own.earliestDelayed.get(doc.identity);
        const end = earliestOwn === undefined ? keys.scheduledEnd : keys.scheduledAfter(earliestOwn - 1);
        const [sizeValue, page] = await Promise.all([
          from === undefined ? tr.get(keys.size) : undefined,
          tr.getRangeAll(from ?? keys.scheduled, end, { limit: SCAN_PAGE }),
        ]);
        if (from === undefined) size = Number(decodeInt64(sizeValue));
        countScheduled(keys, page, now, seen);
        if (page.length < SCAN_PAGE) return true;
        from = nextFrom(page);
        return false;
      });
      if (last) break;
    }
    const dead = await this.deadLetters.size(opts);
    return { waiting: Math.max(0, size - seen.delayed - seen.active), delayed: seen.delayed, active: seen.active, dead };
  }

  /**
   * The jobs of one state, up to `limit`: waiting ones in pop order, delayed and active ones by time,
   * dead ones in the dead-letter queue's pop order. Reads: the kind key and range reads of the areas
   * that hold the state (items of other states in the scheduled area are read and skipped), in pages
   * of `pageSize`, each in a transaction of its own unless `tr` is given.
   *
   * @throws DocumentError INVALID_ARGUMENT, WRONG_KIND.
   */
  async *jobs(opts: JobsOptions): AsyncGenerator<QueueJob<T>, void, undefined> {
    const state = jobState(opts?.state);
    const limit = opts.limit === undefined ? Infinity : positiveInteger(opts.limit, 1, 'limit');
    const pageSize = positiveInteger(opts.pageSize, DEFAULT_PAGE_SIZE, 'pageSize');
    const source = state === 'dead' ? this.deadLetters : this;
    const now = this.now();
    let count = 0;
    for (let range = 0, from: Buffer | undefined; count < limit;) {
      const page = await source.read(opts, async (tr, doc) => {
        if (doc === undefined) return undefined;
        const keys = source.queueKeys(doc);
        const own = await ownWrites(tr);
        const ready = keys.readyRanges(own.readVersion, own.priorities.get(doc.identity));
        const ranges = listingRanges(keys, state, now, ready, own.earliestDelayed.get(doc.identity));
        if (range >= ranges.length) return undefined;
        const [begin, end] = ranges[range];
        const start = from ?? begin;
        const pairs = Buffer.compare(start, end) < 0 ? await tr.getRangeAll(start, end, { limit: pageSize }) : [];
        return { pairs, jobs: pairs.map((pair) => listedJob<T>(keys, pair, state, now)) };
      });
      if (page === undefined) return;
      for (const job of page.jobs) {
        if (job === undefined) continue;
        yield job;
        if (++count >= limit) return;
      }
      if (page.pairs.length < pageSize) {
        range++;
        from = undefined;
      } else from = nextFrom(page.pairs);
    }
  }

  /**
  /**
   * Limits the items taken from the queue to `limit.max` per window of `limit.intervalMs` (fixed windows
   * by each taker's clock), for every handle in every process: pops, leases and consumers take only
   * as many items as the window has free slots (docs/queue.md, "Rate limits"). Creates the queue if it
   * does not exist. A different limit starts the count again in the current window; the same limit
   * set again changes nothing.
   *
   * Reads: the kind key, the rate limit key. Writes: the version key; when the limit changes, the rate
   * limit key and 1 range clear of the slots; a first limit also bumps the database's metadata version,
   * so that takes which know the queue had none learn of it (transactions running at that moment that
   * read the metadata version retry once). Conflicts with every take (they read the limit or the
   * metadata version).
   *
   * @throws DocumentError INVALID_ARGUMENT (max an integer from 1 to 10,000, intervalMs from 1 to
   *   86,400,000), WRONG_KIND.
   */
  async setRateLimit(limit: RateLimit, opts: StructureWriteOptions = {}): Promise<void> {
    const checked = checkedRateLimit(limit);
    await this.write(opts, async (scope) => {
      scope.create();
      await this.limiter.set(scope.tr, scope.keys, checked);
      this.changed(scope.tr, scope.keys);
    });
  }

  /**
   * The queue's rate limit, or `undefined` when it has none (or does not exist).
   *
   * Reads: the kind key, the rate limit key (1 point read each, issued together).
   *
   * @throws DocumentError WRONG_KIND.
   */
  async rateLimit(opts: TransactionOption = {}): Promise<RateLimit | undefined> {
    return this.readWith(
      opts,
      (tr, doc) => this.limiter.get(tr, doc),
      async (_tr, doc, limit) => (doc === undefined ? undefined : limit),
    );
  }

  /**
   * Removes the queue's rate limit and its slots: takes are no longer limited. Returns whether there
   * was one (a retry after commit_unknown_result of an attempt that removed it reports `false`).
   *
   * Reads: the kind key, the rate limit key. Writes (when there was one): its clear, 1 range clear of the
   * slots, the version key.
   *
   * @throws DocumentError WRONG_KIND.
   */
  async removeRateLimit(opts: TransactionOption = {}): Promise<boolean> {
    return this.write(opts, async (scope) => {
      if (!scope.existed) return false;
      const removed = await this.limiter.remove(scope.tr, scope.keys);
      if (removed) this.changed(scope.tr, scope.keys);
      return removed;
    });
  }

  // ---- internals

  /** `failed` events for jobs a consumer's handler failed on, in a transaction of their own (if events are on). */
  private async recordFailures(jobs: readonly { readonly jobId: string; readonly attempts: number }[], error: unknown): Promise<void> {
    const message = errorMessage(error);
    await this.access.run(undefined, async (tr) => {
      const doc = await this.access.keysToRead(tr, this.element);
      const sink = doc === undefined ? undefined : await this.eventLog.sink(tr, doc);
      for (const job of jobs) sink?.failed(parseJobId(job.jobId), job.attempts, message);
    });
  }

  /** A queue this transaction creates has no rate limit and its events off: none of its operations reads them (known-settings.ts). */
  protected override initialize(tr: Transaction, keys: DocumentKeys): void {
    KnownSettings.of(this.access.kv).created(tr, keys.identity);
  }

  /** @internal Appends stored payloads in `tr` (the dead-letter moves of another queue). */
  async appendIn(tr: Transaction, payloads: readonly Buffer[], jobIds?: readonly Buffer[]): Promise<void> {
    await this.write({ tr }, async (scope) => {
      await this.writeItems(scope, payloads, undefined, 0, jobIds);
    });
  }

  /** A prefetch that starts reading the event settings (unless known off) with the kind check (see events.ts). */
  private readonly primeEvents = (tr: Transaction, doc: DocumentKeys): Promise<undefined> => {
    this.eventLog.prime(tr, doc);
    return Promise.resolve(undefined);
  };

  private get schedules(): Repeatables<T> {
    this.repeatables ??= new Repeatables<T>({
      now: this.now,
      random: this.random,
      maxKeyBytes: this.access.kv.maxKeyBytes,
      write: (opts, fn) => this.write(opts, fn),
      read: (opts, fn) => this.read(opts, fn),
      enqueue: async (scope, payload, at) => {
        await this.writeItems(scope, [payload], at);
      },
    });
    return this.repeatables;
  }

  private queueKeys(doc: DocumentKeys): QueueKeys {
    const cached = this.cachedKeys;
    if (cached !== undefined && (cached.doc === doc || cached.doc.prefix.equals(doc.prefix))) return cached;
    this.cachedKeys = new QueueKeys(doc);
    return this.cachedKeys;
  }

  private receiptFor(tr: Transaction | undefined): { bucket: number; token: Buffer } | undefined {
    return tr === undefined ? { bucket: bucketOf(this.now()), token: newToken() } : undefined;
  }

  private async pushAll(values: readonly T[], opts: PushOptions): Promise<void> {
    const payloads = values.map((v) => encodePayload(v as JsonValue));
    const delayMs = nonNegative(opts.delayMs, 'delayMs');
    const priority = checkedPriority(opts.priority);
    if (priority > 0 && delayMs > 0) {
      throw new DocumentError(
        'INVALID_ARGUMENT',
        'a push takes delayMs or priority, not both: a delayed item goes ahead of every ready item once visible',
      );
    }
    if (opts.dedupeId !== undefined && (typeof opts.dedupeId !== 'string' || opts.dedupeId === '')) {
      throw new DocumentError('INVALID_ARGUMENT', 'dedupeId is a non-empty string');
    }
    const now = this.now();
    const at = delayMs > 0 ? now + delayMs : undefined;
    const bucket = bucketOf(now);
    // Without a caller's transaction or a dedupe id: a receipt slot (tokens.ts), held until this call settles.
    const receipt = opts.tr === undefined && opts.dedupeId === undefined ? acquireReceiptSlot(now) : undefined;
    // Shared with the merged runs this call may join, as for pops.
    const state: PushState = { attempts: 0, run: undefined };
    const merge: Merge<PushCall, void> | undefined =
      receipt !== undefined ? { operation: this.pushOperation, arg: { payloads, at, priority, state }, runMany: this.runPushes } : undefined;
    try {
      await this.writeWith(
        opts,
        this.primeEvents,
        // Not async: a first attempt without a dedupe id whose events are known off (most pushes)
        // writes and returns without a promise of its own.
        (scope) => {
          const attempt = ++state.attempts;
          const keys = this.queueKeys(scope.keys);
          keys.assertFits(this.access.kv.maxKeyBytes, opts.dedupeId);
          const { tr } = scope;
          const call: PushWrite = { scope, keys, payloads, at, priority, dedupeId: opts.dedupeId, bucket, receipt, now };
          if (opts.dedupeId !== undefined) {
            return Promise.all([tr.get(keys.token(bucket, opts.dedupeId)), tr.get(keys.token(bucket - 1, opts.dedupeId))]).then(([here, before]) =>
              here !== undefined || before !== undefined ? undefined : this.pushWrite(call),
            );
          }
          if (receipt !== undefined && attempt > 1) {
            // Its own receipt, or the token of the merged run it was in (which may have committed).
            const run = state.run;
            return Promise.all([tr.get(keys.receipt(receipt)), run === undefined ? undefined : tr.get(keys.token(run.bucket, run.token))]).then(
              ([own, merged]) =>
                (own !== undefined && receiptBody(own, TokenKind.pushed, receipt) !== undefined) || merged !== undefined
                  ? undefined
                  : this.pushWrite(call),
            );
          }
          return this.pushWrite(call);
        },
        merge as Merge<unknown, void> | undefined,
      );
    } finally {
      if (receipt !== undefined) releaseReceiptSlot(receipt);
    }
  }

  /** A push's writes: its items, then its token or receipt; a promise only when the items wait for the event sink. */
  private pushWrite(call: PushWrite): void | Promise<void> {
    const writing = this.writeItems(call.scope, call.payloads, call.at, call.priority);
    if (writing !== undefined) return writing.then(() => this.pushToken(call));
    this.pushToken(call);
  }

  /** The token (with a dedupe id) or receipt (in a receipt slot) that a push's retry looks for. */
  private pushToken({ scope: { tr }, keys, dedupeId, bucket, receipt, now }: PushWrite): void {
    if (dedupeId !== undefined) {
      tr.set(keys.token(bucket, dedupeId), tokenValue(TokenKind.pushed));
      this.sweeper.sweep(tr, keys, now);
    } else if (receipt !== undefined) {
      setHandedOver(tr, keys.receipt(receipt), receiptValue(TokenKind.pushed, receipt));
      this.sweeper.sweep(tr, keys, now);
    }
  }

  /**
   * Concurrent pushes without a caller's transaction or dedupe id merged (structures/combiner.ts): the
   * items of all calls written in call order (consecutive user versions of the commit's versionstamp,
   * as pushes one after another in one transaction), with one add to the size and pushed keys per run
   * of calls with the same visibility time and priority, and one token for the merged run, which each call
   * remembers. A retry of the run reads it first and, finding it, pushes nothing again; a call that
   * runs alone afterwards (the merged run failed for good after an unknown commit) reads it too.
   */
  private pushMerged(tr: Transaction, calls: readonly PushCall[]): Promise<Settled<void>[]> {
    const retry = calls.some((c) => c.state.attempts > 0);
    for (const c of calls) c.state.attempts++;
    // The calls of a run are retried together, so they share its token from the first attempt on.
    const now = this.now();
    const run = calls[0].state.run ?? { bucket: bucketOf(now), token: newToken() };
    for (const c of calls) c.state.run = run;
    return this.writeWith({ tr }, this.primeEvents, async (scope) => {
      const keys = this.queueKeys(scope.keys);
      keys.assertFits(this.access.kv.maxKeyBytes);
      const t = scope.tr;
      const runKey = keys.token(run.bucket, run.token);
      if (retry && (await t.get(runKey)) !== undefined) return calls.map((): Settled<void> => ({ ok: true, value: undefined }));
      for (let i = 0; i < calls.length;) {
        const { at, priority } = calls[i];
        let end = i + 1;
        while (end < calls.length && calls[end].at === at && calls[end].priority === priority) end++;
        const payloads = end === i + 1 ? calls[i].payloads : calls.slice(i, end).flatMap((c) => c.payloads);
        const writing = this.writeItems(scope, payloads, at, priority);
        if (writing !== undefined) await writing;
        i = end;
      }
      t.set(runKey, tokenValue(TokenKind.pushed));
      this.sweeper.sweep(t, keys, now);
      return calls.map((): Settled<void> => ({ ok: true, value: undefined }));
    });
  }

  /**
   * Writes pushed items: `undefined` when they are written without waiting (events known off at the
   * metadata version read with the kind check: most pushes), else the promise of the write, made once
   * the event sink is in.
   */
  private writeItems(
    scope: StructureScope,
    payloads: readonly Uint8Array[],
    at: number | undefined,
    priority = 0,
    jobIds?: readonly (Buffer | undefined)[],
  ): Promise<void> | undefined {
    const keys = this.queueKeys(scope.keys);
    keys.assertFits(this.access.kv.maxKeyBytes);
    // No wait for the read version: a push needs only what the attempt pushed before it.
    if (this.eventLog.knownOff(scope.tr, scope.keys)) {
      this.writeItemsWith(scope, keys, undefined, payloads, at, priority, jobIds);
      return undefined;
    }
    return this.eventLog.sink(scope.tr, scope.keys).then((events) => this.writeItemsWith(scope, keys, events, payloads, at, priority, jobIds));
  }

  /** {@link writeItems}, given the event sink (`undefined`: events off). */
  private writeItemsWith(
    scope: StructureScope,
    keys: QueueKeys,
    events: EventSink | undefined,
    payloads: readonly Uint8Array[],
    at: number | undefined,
    priority: number,
    jobIds: readonly (Buffer | undefined)[] | undefined,
  ): void {
    const { tr } = scope;
    const own = pushesSoFar(tr);
    const first = takeUserVersions(own, payloads.length);
    scope.create();
    for (let i = 0; i < payloads.length; i++) {
      const key = at === undefined ? keys.readyTemplate(first + i, priority) : keys.scheduledTemplate(at, first + i);
      const jobId = jobIds?.[i];
      // Both made for this write: handed over, not copied.
      setVersionstampedKeyHandedOver(tr, key, jobId === undefined ? freshRecord(payloads[i]) : encodeRecord(false, 0, payloads[i], jobId));
    }
    events?.pushed(first, payloads.length, at, jobIds);
    if (at !== undefined) noteDelayedPush(own, scope.keys.identity, at);
    else notePriorityPush(own, scope.keys.identity, priority);
    // The queue's own keys and a fresh or constant operand, none ever modified: handed over.
    addHandedOver(tr, keys.size, payloads.length === 1 ? PLUS_ONE : int64LE(payloads.length));
    addHandedOver(tr, keys.pushed, PLUS_ONE);
    this.changed(tr, scope.keys);
  }

  /** The head items to take under the rate limit, with their read conflicts (see `takeHead`). */
  private take(scope: StructureScope, count: number, spread: number, now: number): Promise<LimitedTaken> {
    return this.takeLimited(scope.tr, scope.keys, count, spread, now);
  }

  /** As {@link takeIn}, cut to the free slots of the rate limit read with it (rate-limit.ts). */
  private async takeLimited(tr: Transaction, doc: DocumentKeys, count: number, spread: number, now: number): Promise<LimitedTaken> {
    if (this.limiter.likelyUnlimited(doc)) {
      // No limit at the latest metadata version known (most queues): the take alone. Once its reads
      // are in, so is the attempt's metadata version (asked for before them), which most likely says
      // the same; if it does not, the limiter reads the limit then.
      KnownSettings.prefetch(tr);
      const taken = await this.takeIn(tr, doc, count, spread, now);
      return withinLimit(taken, this.limiter.knownUnlimited(tr, doc) ? UNLIMITED : await this.limiter.allowance(tr, doc, now, count));
    }
    // Both start now; awaited one after the other (no Promise.all: this runs once per take).
    const allowance = this.limiter.allowance(tr, doc, now, count);
    const taken = this.takeIn(tr, doc, count, spread, now);
    // A rejected allowance is observed even when the take rejects first.
    allowance.catch(() => undefined);
    return withinLimit(await taken, await allowance);
  }

  /** As {@link take}, given the transaction and the queue's document keys. */
  private takeIn(tr: Transaction, doc: DocumentKeys, count: number, spread: number, now: number): Promise<Taken> {
    this.eventLog.prime(tr, doc);
    const pushes = pushesSoFar(tr);
    return takeHead({
      tr,
      keys: this.queueKeys(doc),
      identity: doc.identity,
      pushes,
      own: likelyOwnWrites(tr, pushes, count, spread),
      now,
      count,
      spread,
      maxAttempts: this.maxAttempts,
      random: this.random,
    });
  }

  /**
   * Completes a take: exhausted items (and `removed` more, already cleared by the caller) leave the
   * queue; exhausted ones go to the dead-letter queue. `undefined` when it is done without waiting
   * (nothing exhausted, events known off: most takes), else the promise of the rest.
   */
  private finishTake(
    scope: StructureScope,
    keys: QueueKeys,
    exhausted: readonly Candidate[],
    removed: readonly Candidate[],
  ): Promise<void> | undefined {
    const gone = exhausted.length + removed.length;
    if (gone === 0) return undefined;
    const { tr } = scope;
    if (exhausted.length === 0 && this.eventLog.knownOff(tr, scope.keys)) {
      addHandedOver(tr, keys.size, gone === 1 ? MINUS_ONE : int64LE(-gone));
      this.changed(tr, scope.keys);
      return undefined;
    }
    return this.finishTakeWithEvents(scope, keys, exhausted, removed);
  }

  /** {@link finishTake} with events to write or exhausted items to move. */
  private async finishTakeWithEvents(
    scope: StructureScope,
    keys: QueueKeys,
    exhausted: readonly Candidate[],
    removed: readonly Candidate[],
  ): Promise<void> {
    const { tr } = scope;
    for (const item of exhausted) tr.clear(item.key);
    tr.add(keys.size, -(exhausted.length + removed.length));
    const events = this.eventLog.knownOff(tr, scope.keys) ? undefined : await this.eventLog.sink(tr, scope.keys);
    for (const item of removed) events?.completed(jobIdBytes(keys, item));
    for (const item of exhausted) events?.deadLettered(jobIdBytes(keys, item), item.record.attempts);
    if (exhausted.length > 0)
      await this.deadLetters.appendIn(
        tr,
        exhausted.map((c) => c.record.payload),
        exhausted.map((c) => jobIdBytes(keys, c)),
      );
    this.changed(tr, scope.keys);
  }

  private async popOnce(tr: Transaction | undefined, spread: number, waiting: boolean): Promise<PopOutcome<T>> {
    // Held until this call settles (tokens.ts): no other call writes its receipt's key meanwhile.
    const receipt = tr === undefined ? acquireReceiptSlot(this.now()) : undefined;
    try {
      return await this.popAttempts(tr, receipt, spread, waiting);
    } finally {
      if (receipt !== undefined) releaseReceiptSlot(receipt);
    }
  }

  private popAttempts(tr: Transaction | undefined, receipt: ReceiptSlot | undefined, spread: number, waiting: boolean): Promise<PopOutcome<T>> {
    // Shared by this call's own runs and the merged runs it may join (a run after a merged attempt
    // that may have committed reads the receipt first).
    const state: PopState = { attempts: 0, runs: [] };
    let now = 0;
    const merge: Merge<PopCall, PopOutcome<T>> | undefined =
      receipt !== undefined && spread === 1 ? { operation: this.popOperation, arg: { receipt, state, waiting }, runMany: this.runPops } : undefined;
    return this.writeWith(
      { tr },
      // The head is read with the kind check; not on a retry that first looks for its receipt.
      (t, doc) => {
        now = this.now();
        return receipt === undefined || state.attempts === 0 ? this.takeLimited(t, doc, 1, spread, now) : Promise.resolve(undefined);
      },
      // Not async: a first attempt whose take came with the kind check (most pops) returns its outcome
      // without a promise of its own.
      (scope, prefetched) => {
        const attempt = ++state.attempts;
        const keys = this.queueKeys(scope.keys);
        if (!scope.existed) return waiting ? { found: false, watch: watchOf(scope.tr, keys) } : { found: false };
        if ((receipt !== undefined && attempt > 1) || prefetched === undefined)
          return this.popRetried(scope, keys, prefetched, receipt, state, spread, now, waiting);
        return this.popTaken(scope, keys, prefetched, receipt, now, waiting);
      },
      merge as Merge<unknown, PopOutcome<T>> | undefined,
    );
  }

  /** A pop's attempt that looks for its receipt first (a retry), or takes the head only now. */
  private async popRetried(
    scope: StructureScope,
    keys: QueueKeys,
    prefetched: LimitedTaken | undefined,
    receipt: ReceiptSlot | undefined,
    state: PopState,
    spread: number,
    now: number,
    waiting: boolean,
  ): Promise<PopOutcome<T>> {
    if (receipt !== undefined && state.attempts > 1) {
      const [body] = await this.earlierPops(scope.tr, keys, [{ receipt, state }]);
      if (body !== undefined) return body.length > 0 ? { found: true, value: decodePayload(body) as T } : { found: false };
    }
    return this.popTaken(scope, keys, prefetched ?? (await this.take(scope, 1, spread, now)), receipt, now, waiting);
  }

  /**
   * The writes of a pop that took `taken`, and its outcome: without a promise when nothing is left to
   * wait on (events known off, nothing exhausted, an item found or no wait asked for).
   */
  private popTaken(
    scope: StructureScope,
    keys: QueueKeys,
    taken: LimitedTaken,
    receipt: ReceiptSlot | undefined,
    now: number,
    waiting: boolean,
  ): PopOutcome<T> | Promise<PopOutcome<T>> {
    // Keys the head's read returned, never modified: handed over.
    for (const item of taken.items) clearHandedOver(scope.tr, item.key);
    taken.allowance.claim(scope.tr, taken.items.length);
    const finishing = this.finishTake(scope, keys, taken.exhausted, taken.items);
    if (finishing !== undefined) return finishing.then(() => this.popFinished(scope, keys, taken, receipt, now, waiting));
    return this.popFinished(scope, keys, taken, receipt, now, waiting);
  }

  /** {@link popTaken} once the take is finished: the receipt and the outcome. */
  private popFinished(
    scope: StructureScope,
    keys: QueueKeys,
    taken: LimitedTaken,
    receipt: ReceiptSlot | undefined,
    now: number,
    waiting: boolean,
  ): PopOutcome<T> | Promise<PopOutcome<T>> {
    const item = taken.items[0];
    if (receipt !== undefined && (item !== undefined || taken.exhausted.length > 0)) {
      setHandedOver(scope.tr, keys.receipt(receipt), receiptValue(TokenKind.popped, receipt, item?.record.payload));
      this.sweeper.sweep(scope.tr, keys, now);
    }
    if (item !== undefined) return { found: true, value: decodePayload(item.record.payload) as T };
    if (!waiting || taken.exhausted.length > 0) return { found: false };
    if (taken.heldBackMs !== undefined) return { found: false, wakeInMs: taken.heldBackMs };
    return nextVisibleAt(scope.tr, keys, now).then((next) => ({
      found: false,
      watch: watchOf(scope.tr, keys),
      wakeInMs: next === undefined ? undefined : next - now,
    }));
  }

  /**
   * Concurrent strict pops without a caller's transaction merged (structures/combiner.ts): one take of
   * `n` items at the head (the same reads and read conflicts as `n` strict pops one after another), the
   * i-th item to the i-th call, each call's receipt written with its item as its own pop writes it, and
   * the size added once. On a retry every receipt is read back first (together): a call whose receipt
   * is there gets the item it records, the others take fresh items, as each pop's own retry does.
   */
  private popMany(tr: Transaction, calls: readonly PopCall[]): Promise<Settled<PopOutcome<T>>[]> {
    const retry = calls.some((c) => c.state.attempts > 0);
    for (const c of calls) c.state.attempts++;
    let now = 0;
    return this.writeWith(
      { tr },
      (t, doc) => {
        now = this.now();
        return retry ? Promise.resolve(undefined) : this.takeLimited(t, doc, calls.length, 1, now);
      },
      async (scope, prefetched) => {
        const keys = this.queueKeys(scope.keys);
        const t = scope.tr;
        const outcomes: PopOutcome<T>[] = new Array<PopOutcome<T>>(calls.length);
        if (!scope.existed) {
          return calls.map((c): Settled<PopOutcome<T>> => ({
            ok: true,
            value: c.waiting ? { found: false, watch: watchOf(t, keys) } : { found: false },
          }));
        }
        let fresh = calls.map((_, i) => i);
        if (retry) {
          const earlier = await this.earlierPops(t, keys, calls);
          fresh = fresh.filter((i) => {
            const body = earlier[i];
            if (body === undefined) return true;
            outcomes[i] = body.length > 0 ? { found: true, value: decodePayload(body) as T } : { found: false };
            return false;
          });
        }
        if (fresh.length > 0) {
          const taken = prefetched ?? (await this.take(scope, fresh.length, 1, now));
          for (const item of taken.items) clearHandedOver(t, item.key);
          taken.allowance.claim(t, taken.items.length);
          const finishing = this.finishTake(scope, keys, taken.exhausted, taken.items);
          if (finishing !== undefined) await finishing;
          let wakeAt: { next: number | undefined } | undefined;
          const receipts: { readonly call: PopCall; readonly slot: ReceiptSlot; readonly body: Buffer | undefined }[] = [];
          for (let j = 0; j < fresh.length; j++) {
            const call = calls[fresh[j]];
            const item = taken.items[j] as Candidate | undefined;
            if (item !== undefined || taken.exhausted.length > 0) receipts.push({ call, slot: call.receipt, body: item?.record.payload });
            if (item !== undefined) outcomes[fresh[j]] = { found: true, value: decodePayload(item.record.payload) as T };
            else if (!call.waiting || taken.exhausted.length > 0) outcomes[fresh[j]] = { found: false };
            else if (taken.heldBackMs !== undefined) outcomes[fresh[j]] = { found: false, wakeInMs: taken.heldBackMs };
            else {
              wakeAt ??= { next: await nextVisibleAt(t, keys, now) };
              const wakeInMs = wakeAt.next === undefined ? undefined : wakeAt.next - now;
              outcomes[fresh[j]] = { found: false, watch: watchOf(t, keys), wakeInMs };
            }
          }
          this.writeReceipts(t, keys, receipts, now);
          if (taken.items.length > 0 || taken.exhausted.length > 0) this.sweeper.sweep(t, keys, now);
        }
        return outcomes.map((value): Settled<PopOutcome<T>> => ({ ok: true, value }));
      },
    );
  }

  /**
   * The receipts of merged pops: one run receipt for all (a fresh token, one key written instead of
   * one per call; each call remembers the run), or each call's own in its slot when there is one call
   * or they would not fit in one value.
   */
  private writeReceipts(
    tr: Transaction,
    keys: QueueKeys,
    receipts: readonly { readonly call: PopCall; readonly slot: ReceiptSlot; readonly body: Buffer | undefined }[],
    now: number,
  ): void {
    const value = receipts.length > 1 ? runReceiptValue(TokenKind.poppedRun, receipts) : undefined;
    if (value === undefined) {
      for (const { slot, body } of receipts) setHandedOver(tr, keys.receipt(slot), receiptValue(TokenKind.popped, slot, body));
      return;
    }
    const run: RunToken = { bucket: bucketOf(now), token: newToken() };
    tr.set(keys.token(run.bucket, run.token), value);
    for (const { call } of receipts) call.state.runs.push(run);
  }

  /**
   * What earlier attempts of these pops, which may have committed, took: per call the popped record,
   * an empty one (the attempt only dead-lettered), or `undefined` (none of its receipts is there).
   * Reads each call's receipt slot and the run receipts of the merged runs it was in, together.
   */
  private async earlierPops(tr: Transaction, keys: QueueKeys, calls: readonly Pick<PopCall, 'receipt' | 'state'>[]): Promise<(Buffer | undefined)[]> {
    const runs = [...new Set(calls.flatMap((c) => c.state.runs))];
    const [own, ofRuns] = await Promise.all([
      Promise.all(calls.map((c) => tr.get(keys.receipt(c.receipt)))),
      Promise.all(runs.map((r) => tr.get(keys.token(r.bucket, r.token)))),
    ]);
    return calls.map((c, i) => {
      const mine = own[i];
      const body = mine === undefined ? undefined : receiptBody(mine, TokenKind.popped, c.receipt);
      if (body !== undefined) return body;
      for (const run of c.state.runs) {
        const value = ofRuns[runs.indexOf(run)];
        const entry = value === undefined ? undefined : runReceiptBody(value, TokenKind.poppedRun, c.receipt);
        if (entry !== undefined) return entry;
      }
      return undefined;
    });
  }

  private async takeBatch(tr: Transaction, count: number, spread: number, poisoned: ((id: string) => boolean) | undefined): Promise<Batch<T>> {
    let now = 0;
    return this.writeWith(
      { tr },
      // The head is read with the kind check.
      (t, doc) => {
        now = this.now();
        return this.takeLimited(t, doc, count, spread, now);
      },
      async (scope, prefetched) => {
        const keys = this.queueKeys(scope.keys);
        if (!scope.existed) return { items: [], deadLettered: 0, idle: { watch: watchOf(tr, keys), wakeInMs: Infinity } };
        const taken = prefetched ?? (await this.take(scope, count, spread, now));
        const items: BatchItem<T>[] = [];
        const kept: Candidate[] = [];
        const dead: Candidate[] = [...taken.exhausted];
        const poisonedIds: string[] = [];
        for (const item of taken.items) {
          if (poisoned !== undefined) {
            const id = item.key.toString('hex');
            if (poisoned(id)) {
              dead.push(item);
              poisonedIds.push(id);
              continue;
            }
          }
          tr.clear(item.key);
          kept.push(item);
          items.push(batchItem(keys, item));
        }
        taken.allowance.claim(tr, items.length);
        const finishing = this.finishTake(scope, keys, dead, kept);
        if (finishing !== undefined) await finishing;
        if (items.length > 0 || dead.length > 0) return { items, deadLettered: dead.length, poisoned: poisonedIds };
        if (taken.heldBackMs !== undefined) return { items, deadLettered: 0, idle: { wakeInMs: taken.heldBackMs } };
        const next = await nextVisibleAt(tr, keys, now);
        return { items, deadLettered: 0, idle: { watch: watchOf(tr, keys), wakeInMs: next === undefined ? Infinity : next - now } };
      },
    );
  }

  /**
   * A consumer's failed item, after the transaction that failed it aborted: moved, in a transaction of
   * its own, to the scheduled area at now + the backoff for its attempts (counted in its record, so
   * any process sees them), or to the dead-letter queue once attempted `maxAttempts` times.
   *
   * Reads: the kind key, the item's key (which conflicts with any take of the item). Writes: the item's
   * clear and its new key, pushed (add), the version key; or the clear, size (add) and a push to the
   * dead-letter queue. Exactly-once without a token: a retry after an applied attempt finds the item's
   * key empty and does nothing ('gone'), as it does when another consumer took the item meanwhile.
   */
  private deferFailed(id: string, backoff: BackoffPolicy, maxAttempts: number, error?: unknown): Promise<'deferred' | 'dead-lettered' | 'gone'> {
    const key = Buffer.from(id, 'hex');
    const uniq = new Uuid(randomUUID());
    return this.writeWith(undefined, this.primeEvents, async (scope) => {
      const { tr } = scope;
      const keys = this.queueKeys(scope.keys);
      if (!scope.existed || !(keys.isReady(key) || keys.isScheduled(key))) return 'gone';
      const value = await tr.get(key);
      if (value === undefined) return 'gone';
      const record = decodeRecord(value);
      const attempts = record.attempts + 1;
      const jobId = jobIdBytes(keys, { key, record });
      const events = await this.eventLog.sink(tr, scope.keys);
      events?.failed(jobId, attempts, errorMessage(error));
      tr.clear(key);
      this.changed(tr, scope.keys);
      if (attempts >= maxAttempts) {
        tr.add(keys.size, -1);
        events?.deadLettered(jobId, attempts);
        await this.deadLetters.appendIn(tr, [record.payload], [jobId]);
        return 'dead-lettered';
      }
      const at = this.now() + backoffDelay(backoff, attempts, this.random);
      events?.retried(jobId, attempts, at);
      tr.set(keys.scheduledKey(at, uniq), encodeRecord(false, attempts, record.payload, jobId));
      tr.add(keys.pushed, 1);
      return 'deferred';
    });
  }

  /** Runs a lease operation: in `tr` or its own retry loop, with the queue's keys. */
  private onLease<R>(
    tr: Transaction | undefined,
    id: string,
    fn: (tr: Transaction, keys: QueueKeys, doc: DocumentKeys, now: number) => Promise<R>,
  ): Promise<R> {
    const access = this.access;
    return access.run(tr, async (t) => {
      const doc = await access.keysToRead(t, this.element);
      if (doc === undefined) throw new DocumentError('LEASE_EXPIRED', `lease ${id}: the queue does not exist`);
      this.eventLog.prime(t, doc);
      return fn(t, this.queueKeys(doc), doc, this.now());
    });
  }

  /** The leases a committed earlier attempt recorded in its receipt. */
  private async leasesOfReceipt(tr: Transaction, keys: QueueKeys, receipt: Buffer): Promise<Lease<T>[]> {
    const [deadline, ...ids] = unpack(receipt.subarray(1));
    const leases: Lease<T>[] = [];
    for (const id of ids) {
      if (typeof deadline !== 'number' || !(id instanceof Uuid)) continue;
      const value = await tr.get(keys.scheduledKey(deadline, id));
      if (value === undefined) continue;
      const record = decodeRecord(value);
      const jobId = jobIdBytes(keys, { key: keys.scheduledKey(deadline, id), record }).toString('hex');
      leases.push({ id: id.toString(), jobId, value: decodePayload(record.payload) as T, deadline, attempts: record.attempts });
    }
    return leases;
  }
}

/** A watch on the queue's pushed key whose failure (if its transaction fails) is observed. */
function watchOf(tr: Transaction, keys: QueueKeys): Watch {
  const watch = tr.watch(keys.pushed);
  watch.promise.catch(() => undefined);
  return watch;
}

/** What a `failed` event says of a handler's error. */
function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function positiveInteger(value: number | undefined, fallback: number, what: string): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new DocumentError('INVALID_ARGUMENT', `${what} is a positive integer, got ${String(value)}`);
  }
  return value;
}

function nonNegative(value: number | undefined, what: string): number {
  if (value === undefined) return 0;
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new DocumentError('INVALID_ARGUMENT', `${what} is a non-negative integer, got ${String(value)}`);
  }
  return value;
}

/**
 * An item of a consumer's batch. Its id (its key in hex) and job id (an unpack of its key and 24 hex
 * digits) are made on first use: a consumer asks for the id only once a handler has failed, and a
 * handler seldom asks for the job id. A class: V8 makes object literals with a getter slowly, and
 * this runs once per item.
 */
class BatchEntry<T> implements BatchItem<T> {
  readonly attempts: number;
  readonly value: T;
  private madeId: string | undefined;
  private madeJobId: string | undefined;

  constructor(
    private readonly keys: QueueKeys,
    private readonly item: Candidate,
  ) {
    this.attempts = item.record.attempts;
    this.value = decodePayload(item.record.payload) as T;
  }

  get id(): string {
    return (this.madeId ??= this.item.key.toString('hex'));
  }

  get jobId(): string {
    return (this.madeJobId ??= jobIdBytes(this.keys, this.item).toString('hex'));
  }
}

function batchItem<T>(keys: QueueKeys, item: Candidate): BatchItem<T> {
  return new BatchEntry<T>(keys, item);
}
