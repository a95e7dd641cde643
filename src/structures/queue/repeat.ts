import { Buffer } from 'node:buffer';
import { corruptData, DocumentError } from '../../document/errors';
import { concat, META_SCHEDULES, type DocumentKeys } from '../../document/keys/layout';
import type { JsonValue, TransactionOption } from '../../document/types';
import { keyAfter } from '../../kv/contract/bytes';
import type { Transaction, Watch } from '../../kv/contract/types';
import { pack, unpack, type TupleItem } from '../../tuple';
import { packPrefixed, unpackFrom } from '../../tuple/pack';
import type { StructureScope, StructureWriteOptions } from '../structure';
import type { Consumer, ConsumerStats } from './consumer';
import { parseCron, type CronSchedule } from './cron';
import { decodePayload, encodePayload } from './item';
import { waitForChange } from './wait';

/**
 * Repeatable jobs (docs/queue.md, "Repeatable jobs"): named schedules stored in the queue's document,
 * each enqueuing its value as a delayed item at every occurrence of a cron expression or an interval.
 *
 * ```
 * <docPrefix> 0x00 'c'                  changed: an int64 every upsert and removal adds to (watched)
 * <docPrefix> 0x00 'c' <tuple(name)>    a schedule: its definition, its next occurrence, its count
 * ```
 *
 * Exactly once: the occurrence at `next` is enqueued by the transaction that reads the schedule's key
 * (a plain read, so it conflicts), writes the item (visible at `next`) and advances `next`. Two
 * schedulers enqueuing the same occurrence conflict and one wins; the loser's retry, like a retry
 * after commit_unknown_result, reads `next` advanced and does nothing.
 */

/** When a schedule fires: a cron expression (in `tz`, default UTC), or every `everyMs` milliseconds. */
export type RepeatEvery = { readonly cron: string; readonly tz?: string } | { readonly everyMs: number };

export interface RepeatOptions extends StructureWriteOptions {
  /** No occurrence before this time (ms since the epoch, or a Date). For `everyMs`, the occurrences are `startAt + k * everyMs`. */
  startAt?: number | Date;
  /** No occurrence after this time: the schedule then finishes. */
  endAt?: number | Date;
  /** Occurrences to enqueue in all; the schedule then finishes. */
  limit?: number;
}

/** A schedule as stored, with its state. */
export interface RepeatInfo<T = JsonValue> {
  readonly name: string;
  readonly cron?: string;
  readonly tz?: string;
  readonly everyMs?: number;
  readonly value: T;
  readonly startAt?: number;
  readonly endAt?: number;
  readonly limit?: number;
  /** Occurrences enqueued so far. */
  readonly count: number;
  /** The next occurrence not yet enqueued (ms since the epoch); `undefined` once the schedule finished. */
  readonly next: number | undefined;
}

export interface RunSchedulesOptions extends TransactionOption {
  /** Enqueue occurrences up to this far ahead of now, as delayed items (default 1,000 ms). */
  lookaheadMs?: number;
}

export interface RunSchedulesResult {
  /** Items enqueued by this pass. */
  readonly enqueued: number;
  /** The earliest occurrence not yet enqueued, over every schedule (`undefined`: none is left). */
  readonly nextAt: number | undefined;
}

export interface SchedulerOptions {
  /** Stops the scheduler. */
  signal?: AbortSignal;
  /** As {@link RunSchedulesOptions.lookaheadMs}. */
  lookaheadMs?: number;
}

/** A running scheduler. */
export interface Scheduler {
  /** Resolves when it stopped; rejects with the error that stopped it (a closed database, say). */
  readonly done: Promise<void>;
  stop(): Promise<void>;
}

/** @internal What the schedules need of their queue. */
export interface RepeatHost {
  readonly now: () => number;
  readonly random: () => number;
  readonly maxKeyBytes: number;
  write<R>(opts: StructureWriteOptions, fn: (scope: StructureScope) => Promise<R>): Promise<R>;
  read<R>(opts: TransactionOption, fn: (tr: Transaction, keys: DocumentKeys | undefined) => Promise<R>): Promise<R>;
  /** Writes a delayed item visible at `at` in the scope's transaction (the queue's delayed push). */
  enqueue(scope: StructureScope, payload: Buffer, at: number): Promise<void>;
}

const FORMAT = 1;
const CRON = 0;
const EVERY = 1;
export const DEFAULT_LOOKAHEAD_MS = 1_000;
/** Occurrences one schedule enqueues per pass at most (an interval of 1 ms would otherwise fill a transaction). */
export const MAX_PER_PASS = 100;
/** Schedules listed per transaction of a pass. */
const PAGE = 50;
/**
 * Bytes a pass writes per transaction before it commits and goes on in another: FDB allows 10 MB, and
 * the transaction may be shared with other calls on the queue (structures/combiner.ts).
 */
const WRITE_BUDGET = 1_000_000;
/**
 * The longest a scheduler sleeps before it runs a pass again: a timer cannot wait past 2^31 - 1 ms
 * (Node fires it at once), and a wall clock set forward (or a machine resumed) is noticed within it.
 */
export const MAX_SLEEP_MS = 60_000;
/** FDB's largest value. */
const MAX_VALUE_BYTES = 100_000;

/** A schedule decoded. */
interface Schedule {
  readonly kind: typeof CRON | typeof EVERY;
  /** The cron expression or the interval. */
  readonly spec: string | number;
  readonly tz: string | undefined;
  readonly startAt: number | undefined;
  readonly endAt: number | undefined;
  readonly limit: number | undefined;
  /** For an interval: occurrences are anchor + k * spec. */
  readonly anchor: number;
  readonly next: number | undefined;
  readonly count: number;
  readonly payload: Buffer;
}

function scheduleKeys(doc: DocumentKeys): { changed: Buffer; begin: Buffer; end: Buffer; key: (name: string) => Buffer } {
  const changed = doc.meta(META_SCHEDULES);
  return { changed, begin: keyAfter(changed), end: concat(changed, 0xff), key: (name) => packPrefixed(changed, [name]) };
}

function encodeSchedule(s: Schedule): Buffer {
  const opt = (v: number | string | undefined): TupleItem => (v === undefined ? null : v);
  return pack([FORMAT, s.kind, s.spec, opt(s.tz), opt(s.startAt), opt(s.endAt), opt(s.limit), s.anchor, opt(s.next), s.count, s.payload]);
}

function decodeSchedule(value: Buffer): Schedule {
  const items = unpack(value);
  const [format, kind, spec, tz, startAt, endAt, limit, anchor, next, count, payload] = items;
  const num = (v: TupleItem): number | undefined => (v === null ? undefined : typeof v === 'number' ? v : NaN);
  const ok =
    format === FORMAT &&
    (kind === CRON ? typeof spec === 'string' : kind === EVERY && typeof spec === 'number') &&
    (tz === null || typeof tz === 'string') &&
    typeof anchor === 'number' &&
    typeof count === 'number' &&
    payload instanceof Uint8Array &&
    [startAt, endAt, limit, next].every((v) => !Number.isNaN(num(v)));
  if (!ok) throw corruptData('queue data: a repeatable job schedule');
  return {
    kind: kind as typeof CRON | typeof EVERY,
    spec: spec as string | number,
    tz: tz === null ? undefined : tz,
    startAt: num(startAt),
    endAt: num(endAt),
    limit: num(limit),
    anchor,
    next: num(next),
    count,
    payload: Buffer.from(payload),
  };
}

/** Whether two schedules have the same definition (their state aside). */
function sameDefinition(a: Schedule, b: Schedule): boolean {
  return (
    a.kind === b.kind &&
    a.spec === b.spec &&
    a.tz === b.tz &&
    a.startAt === b.startAt &&
    a.endAt === b.endAt &&
    a.limit === b.limit &&
    a.payload.equals(b.payload)
  );
}

const crons = new Map<string, CronSchedule>();

function cronOf(expression: string, tz: string | undefined): CronSchedule {
  const id = `${tz ?? 'UTC'} ${expression}`;
  let cron = crons.get(id);
  if (cron === undefined) {
    cron = parseCron(expression, tz);
    if (crons.size > 1000) crons.clear();
    crons.set(id, cron);
  }
  return cron;
}

/** The first occurrence strictly after `t` (and before the schedule's end), if any. */
function occurrenceAfter(s: Schedule, t: number): number | undefined {
  let next: number | undefined;
  if (s.kind === CRON) next = cronOf(s.spec as string, s.tz).next(Math.max(t, (s.startAt ?? -Infinity) - 1));
  else {
    const every = s.spec as number;
    next = t < s.anchor ? s.anchor : s.anchor + (Math.floor((t - s.anchor) / every) + 1) * every;
  }
  return next === undefined || (s.endAt !== undefined && next > s.endAt) ? undefined : next;
}

function timeOf(value: number | Date | undefined, what: string): number | undefined {
  if (value === undefined) return undefined;
  const ms = value instanceof Date ? value.getTime() : value;
  if (!Number.isSafeInteger(ms) || ms < 0)
    throw new DocumentError('INVALID_ARGUMENT', `${what} is a Date or whole milliseconds since the epoch, got ${String(value)}`);
  return ms;
}

function lookaheadOf(value: number | undefined): number {
  if (value === undefined) return DEFAULT_LOOKAHEAD_MS;
  if (!Number.isSafeInteger(value) || value < 0)
    throw new DocumentError('INVALID_ARGUMENT', `lookaheadMs is a non-negative integer, got ${String(value)}`);
  return value;
}

/**
 * Validates a schedule's definition, before anything is read.
 *
 * @throws DocumentError INVALID_ARGUMENT, and as `encodePayload` for the value.
 */
function definitionOf(name: string, every: RepeatEvery, value: JsonValue, opts: RepeatOptions): Omit<Schedule, 'anchor' | 'next' | 'count'> {
  if (typeof name !== 'string' || name === '') throw new DocumentError('INVALID_ARGUMENT', 'a repeatable job name is a non-empty string');
  if (typeof every !== 'object' || every === null) throw new DocumentError('INVALID_ARGUMENT', 'repeat takes { cron } or { everyMs }');
  const startAt = timeOf(opts.startAt, 'startAt');
  const endAt = timeOf(opts.endAt, 'endAt');
  if (startAt !== undefined && endAt !== undefined && endAt < startAt) throw new DocumentError('INVALID_ARGUMENT', 'endAt is before startAt');
  const limit = opts.limit;
  if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 1))
    throw new DocumentError('INVALID_ARGUMENT', `limit is a positive integer, got ${String(limit)}`);
  const payload = encodePayload(value);
  if ('cron' in every && every.cron !== undefined) {
    if ('everyMs' in every) throw new DocumentError('INVALID_ARGUMENT', 'repeat takes { cron } or { everyMs }, not both');
    const cron = parseCron(every.cron, every.tz);
    return { kind: CRON, spec: cron.source, tz: every.tz, startAt, endAt, limit, payload };
  }
  const everyMs = (every as { everyMs?: unknown }).everyMs;
  if (typeof everyMs !== 'number' || !Number.isSafeInteger(everyMs) || everyMs < 1) {
    throw new DocumentError('INVALID_ARGUMENT', `everyMs is a positive integer of milliseconds, got ${String(everyMs)}`);
  }
  if ((every as { tz?: unknown }).tz !== undefined) throw new DocumentError('INVALID_ARGUMENT', 'tz goes with cron, not with everyMs');
  return { kind: EVERY, spec: everyMs, tz: undefined, startAt, endAt, limit, payload };
}

function infoOf<T>(name: string, s: Schedule): RepeatInfo<T> {
  const info: { -readonly [K in keyof RepeatInfo<T>]: RepeatInfo<T>[K] } = {
    name,
    value: decodePayload(s.payload) as T,
    count: s.count,
    next: s.next,
  };
  if (s.kind === CRON) {
    info.cron = s.spec as string;
    if (s.tz !== undefined) info.tz = s.tz;
  } else info.everyMs = s.spec as number;
  if (s.startAt !== undefined) info.startAt = s.startAt;
  if (s.endAt !== undefined) info.endAt = s.endAt;
  if (s.limit !== undefined) info.limit = s.limit;
  return info;
}

/** A schedule after enqueuing what is due at `now` (see {@link Repeatables.runSchedules}). */
function due(s: Schedule, now: number, lookaheadMs: number, most: number): { times: number[]; after: Schedule } {
  const times: number[] = [];
  let next = s.next;
  let count = s.count;
  const take = (t: number) => {
    times.push(t);
    count++;
    next = s.limit !== undefined && count >= s.limit ? undefined : occurrenceAfter(s, t);
  };
  // Late by less than the lookahead is on time (clocks may differ by that much). Of the occurrences
  // missed (later than that), the oldest is enqueued, visible at once, and the others are skipped.
  const missedUpTo = now - lookaheadMs;
  if (next !== undefined && next <= missedUpTo) {
    take(next);
    if (next !== undefined && next <= missedUpTo) next = occurrenceAfter(s, missedUpTo);
  }
  while (next !== undefined && next <= now + lookaheadMs && times.length < most) take(next);
  return { times, after: { ...s, next, count } };
}

/**
 * The schedules of one queue. Every operation takes `{ tr }` or runs in transactions of its own.
 */
export class Repeatables<T> {
  constructor(private readonly host: RepeatHost) {}

  /**
   * Creates or replaces the schedule `name`. The same definition again (kind, expression or interval,
   * tz, value, startAt, endAt, limit) changes nothing, so calling it at every start is safe; another
   * definition replaces it and starts over (count 0, next from now).
   *
   * Reads: the kind key, the schedule's key. Writes: the schedule's key, the changed key (add).
   */
  async repeat(name: string, every: RepeatEvery, value: T, opts: RepeatOptions): Promise<RepeatInfo<T>> {
    const definition = definitionOf(name, every, value as JsonValue, opts);
    return this.host.write(opts, async (scope) => {
      const keys = scheduleKeys(scope.keys);
      const key = keys.key(name);
      if (key.length > this.host.maxKeyBytes) {
        throw new DocumentError(
          'KEY_TOO_LARGE',
          `the repeatable job name makes a key of ${key.length} bytes, over the engine's limit of ${this.host.maxKeyBytes}`,
        );
      }
      const stored = scope.existed ? await scope.tr.get(key) : undefined;
      const now = this.host.now();
      const fresh: Schedule = { ...definition, anchor: definition.startAt ?? now, next: undefined, count: 0 };
      if (stored !== undefined) {
        const old = decodeSchedule(stored);
        if (sameDefinition(old, fresh)) return infoOf<T>(name, old);
      }
      // The first occurrence at or after now (and startAt); for an interval without startAt, everyMs from now.
      const first = occurrenceAfter(fresh, fresh.kind === EVERY && fresh.startAt === undefined ? now : now - 1);
      const schedule: Schedule = { ...fresh, next: first };
      const encoded = encodeSchedule(schedule);
      if (encoded.length > MAX_VALUE_BYTES) {
        throw new DocumentError('DOCUMENT_TOO_LARGE', `the repeatable job takes ${encoded.length} bytes stored; at most ${MAX_VALUE_BYTES}`);
      }
      scope.create();
      scope.tr.set(key, encoded);
      scope.tr.add(keys.changed, 1);
      return infoOf<T>(name, schedule);
    });
  }

  /**
   * Removes the schedule `name`; items it already enqueued stay. Reads: the kind key, the schedule's
   * key. Writes: its clear, the changed key (add).
   *
   * @returns whether it existed.
   */
  async removeRepeat(name: string, opts: TransactionOption): Promise<boolean> {
    if (typeof name !== 'string' || name === '') throw new DocumentError('INVALID_ARGUMENT', 'a repeatable job name is a non-empty string');
    return this.host.write(opts, async (scope) => {
      if (!scope.existed) return false;
      const keys = scheduleKeys(scope.keys);
      const key = keys.key(name);
      if ((await scope.tr.get(key)) === undefined) return false;
      scope.tr.clear(key);
      scope.tr.add(keys.changed, 1);
      return true;
    });
  }

  /** The schedules in name order, a page of range reads at a time (each in its own transaction without `tr`). */
  async *repeats(opts: TransactionOption): AsyncGenerator<RepeatInfo<T>, void, undefined> {
    let from: Buffer | undefined;
    for (;;) {
      const page = await this.host.read(opts, async (tr, doc) => {
        if (doc === undefined) return { entries: [], prefixLength: 0 };
        const keys = scheduleKeys(doc);
        return { entries: await tr.getRangeAll(from ?? keys.begin, keys.end, { limit: PAGE }), prefixLength: keys.changed.length };
      });
      const { entries } = page;
      for (const { key, value } of entries) yield infoOf<T>(nameOf(key, page.prefixLength), decodeSchedule(value));
      if (entries.length < PAGE) return;
      from = keyAfter(entries[entries.length - 1].key);
    }
  }

  /**
   * One pass over the schedules: each occurrence due up to `now + lookaheadMs` is enqueued as a delayed
   * item visible at its time, once (see the class comment). Missed occurrences (at or before
   * `now - lookaheadMs`): the oldest is enqueued, visible at once, and the others are skipped.
   *
   * Reads: the kind key, the schedules (snapshot range reads, a page of 50 per transaction), and each
   * due schedule's key (a plain read: it conflicts with another pass enqueuing it and with its
   * upsert or removal). Writes per due schedule: its key, and per occurrence an item (as a delayed
   * push: 1 versionstamped key, size and pushed by add, the version key). Without `tr`, a transaction
   * per page, and more when one would write over 1 MB; with `tr`, what fits in 1 MB, and `nextAt`
   * then says the rest is due.
   */
  async runSchedules(opts: RunSchedulesOptions): Promise<RunSchedulesResult> {
    const lookaheadMs = lookaheadOf(opts.lookaheadMs);
    const { enqueued, nextAt } = await this.pass(opts.tr, lookaheadMs, false);
    return { enqueued, nextAt };
  }

  /** A pass; with `watching`, also a watch on the changed key, set in its first transaction. */
  private async pass(tr: Transaction | undefined, lookaheadMs: number, watching: boolean): Promise<RunSchedulesResult & { watch?: Watch }> {
    let enqueued = 0;
    let nextAt: number | undefined;
    let watch: Watch | undefined;
    let from: Buffer | undefined;
    // A caller's transaction has one budget for the whole pass; transactions of its own have one each.
    let budget = WRITE_BUDGET;
    const earliest = (t: number | undefined) => {
      if (t !== undefined && (nextAt === undefined || t < nextAt)) nextAt = t;
    };
    for (;;) {
      const first = from === undefined;
      const step = await this.host.write({ tr }, async (scope) => {
        const keys = scheduleKeys(scope.keys);
        if (watching && first) {
          // Each attempt watches anew: a failed attempt's watch fails with it.
          watch?.cancel();
          watch = scope.tr.watch(keys.changed);
          watch.promise.catch(() => undefined);
        }
        return scope.existed
          ? this.passPage(scope, from ?? keys.begin, keys.end, lookaheadMs, budget)
          : { enqueued: 0, nextAt: undefined, written: 0, rest: undefined };
      });
      enqueued += step.enqueued;
      earliest(step.nextAt);
      if (tr !== undefined) budget -= step.written;
      if (step.rest === undefined) break;
      if (tr !== undefined && step.rest.overBudget) {
        // In a caller's transaction: stop at the budget; what is left is due now.
        earliest(this.host.now());
        break;
      }
      from = step.rest.from;
    }
    return { enqueued, nextAt, watch };
  }

  /** One transaction's part of a pass: the schedules of a page from `from`, until the write budget is spent. */
  private async passPage(
    scope: StructureScope,
    from: Buffer,
    end: Buffer,
    lookaheadMs: number,
    budget: number,
  ): Promise<{ enqueued: number; nextAt: number | undefined; written: number; rest: { from: Buffer; overBudget: boolean } | undefined }> {
    const { tr } = scope;
    const page = await tr.snapshot().getRangeAll(from, end, { limit: PAGE });
    const now = this.host.now();
    let enqueued = 0;
    let nextAt: number | undefined;
    const earliest = (t: number | undefined) => {
      if (t !== undefined && (nextAt === undefined || t < nextAt)) nextAt = t;
    };
    let written = 0;
    for (let i = 0; i < page.length; i++) {
      const listed = decodeSchedule(page[i].value).next;
      if (listed === undefined || listed > now + lookaheadMs) {
        earliest(listed);
        continue;
      }
      if (written >= budget) return { enqueued, nextAt, written, rest: { from: page[i].key, overBudget: true } };
      // A plain read: the conflict that makes each occurrence exactly once.
      const value = await tr.get(page[i].key);
      if (value === undefined) continue;
      const before = decodeSchedule(value);
      // Within the budget, and one occurrence at least (a schedule's key and an item fit in any transaction).
      const most = Math.min(MAX_PER_PASS, Math.max(1, Math.floor((budget - written) / (before.payload.length + 64))));
      const { times, after } = due(before, now, lookaheadMs, most);
      for (const at of times) await this.host.enqueue(scope, after.payload, at);
      if (times.length > 0 || after.next !== before.next) {
        const encoded = encodeSchedule(after);
        tr.set(page[i].key, encoded);
        written += encoded.length + times.length * after.payload.length;
      }
      enqueued += times.length;
      earliest(after.next);
    }
    const rest = page.length === PAGE ? { from: keyAfter(page[page.length - 1].key), overBudget: false } : undefined;
    return { enqueued, nextAt, written, rest };
  }

  /**
   * Runs passes until stopped: after each, sleeps until the next occurrence is within the lookahead
   * (less a random part of it, so that schedulers of one queue seldom wake together), or until a
   * schedule is upserted or removed (a watch on the changed key), or {@link MAX_SLEEP_MS} at most.
   */
  scheduler(opts: SchedulerOptions = {}): Scheduler {
    const lookaheadMs = lookaheadOf(opts.lookaheadMs);
    const stopping = new AbortController();
    const onAbort = () => stopping.abort();
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    if (opts.signal?.aborted) stopping.abort();
    const loop = async () => {
      while (!stopping.signal.aborted) {
        // Retryable errors are retried inside the pass; any other stops the scheduler (see `done`).
        const outcome = await this.pass(undefined, lookaheadMs, true);
        const wakeAt = outcome.nextAt === undefined ? Infinity : outcome.nextAt - lookaheadMs + (this.host.random() * lookaheadMs) / 2;
        await waitForChange(outcome.watch, Math.min(wakeAt - this.host.now(), MAX_SLEEP_MS), stopping.signal);
      }
    };
    const done = loop().finally(() => opts.signal?.removeEventListener('abort', onAbort));
    return {
      done,
      stop: () => {
        stopping.abort();
        return done;
      },
    };
  }
}

/** A consumer that runs a scheduler beside it: stopping one stops both (see `Queue.consume`). */
export function withScheduler(consumer: Consumer, scheduler: Scheduler, onError: ((error: unknown) => void) | undefined): Consumer {
  const schedulerDone = scheduler.done.catch((err: unknown) => {
    try {
      onError?.(err);
    } catch {
      // As the consumer's own error callback.
    }
  });
  const done: Promise<ConsumerStats> = consumer.done.finally(async () => {
    await scheduler.stop().catch(() => undefined);
    await schedulerDone;
  });
  return {
    stats: consumer.stats,
    done,
    stop: async () => {
      void scheduler.stop().catch(() => undefined);
      await consumer.stop().catch(() => undefined);
      return done;
    },
  };
}

function nameOf(key: Buffer, prefixLength: number): string {
  const [name] = unpackFrom(key, prefixLength);
  if (typeof name !== 'string') throw corruptData('queue data: a repeatable job key');
  return name;
}
