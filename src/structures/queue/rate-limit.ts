import { Buffer } from 'node:buffer';
import { DocTransaction } from '../../document/doc-transaction';
import { corruptData, DocumentError } from '../../document/errors';
import { concat, META_RATE_LIMIT, META_RATE_SLOTS, type DocumentKeys } from '../../document/keys/layout';
import type { Transaction } from '../../kv/contract/types';
import { pack, unpack } from '../../tuple';
import { packPrefixed, unpackFrom } from '../../tuple/pack';
import type { Taken } from './head';
import { KnownSettings, NO_RATE_LIMIT, type MetadataVersion } from './known-settings';

/**
 * Rate limits of a queue (docs/queue.md, "Rate limits"): at most `max` items taken per fixed window of
 * `intervalMs`, by every process sharing the store, exactly.
 *
 * ```
 * <docPrefix> 0x00 'r'                          the limit: tuple(max, intervalMs)
 * <docPrefix> 0x00 'w' <tuple(window, slot)>    a slot claimed in window floor(now / intervalMs)
 * ```
 *
 * A take reads the limit and (snapshot) the window's claimed slots, delivers at most as many items as
 * slots are free, and claims one free slot per item (the first free ones from a random slot on), with
 * a read conflict on each slot key it sets: a window never holds more than `max` slot keys, each set
 * by one committed take, and two takes conflict only when they claim the same slot.
 */

/** At most `max` items taken from the queue per window of `intervalMs` milliseconds. */
export interface RateLimit {
  /** Items per window: an integer from 1 to 10,000. */
  readonly max: number;
  /** The window's length in milliseconds: an integer from 1 to 86,400,000 (a day). */
  readonly intervalMs: number;
}

/** The largest `max`: a take late in a window reads up to `max` slot keys. */
export const MAX_RATE_LIMIT = 10_000;
export const MAX_INTERVAL_MS = 86_400_000;

const EMPTY = Buffer.alloc(0);

/** The most a held-back take's wake-up is delayed past the window's end, to spread the takers. */
export const WAKE_JITTER_MS = 20;

/**
 * The limit as given, checked.
 *
 * @throws DocumentError INVALID_ARGUMENT.
 */
export function checkedRateLimit(limit: RateLimit): RateLimit {
  if (typeof limit !== 'object' || limit === null) throw new DocumentError('INVALID_ARGUMENT', 'a rate limit is { max, intervalMs }');
  const { max, intervalMs } = limit;
  if (!Number.isSafeInteger(max) || max < 1 || max > MAX_RATE_LIMIT) {
    throw new DocumentError('INVALID_ARGUMENT', `max is an integer from 1 to ${MAX_RATE_LIMIT}, got ${String(max)}`);
  }
  if (!Number.isSafeInteger(intervalMs) || intervalMs < 1 || intervalMs > MAX_INTERVAL_MS) {
    throw new DocumentError('INVALID_ARGUMENT', `intervalMs is an integer from 1 to ${MAX_INTERVAL_MS}, got ${String(intervalMs)}`);
  }
  return { max, intervalMs };
}

/** The rate-limit keys of one queue document. */
export class RateLimitKeys {
  /** `'r'`: the limit. */
  readonly limit: Buffer;
  /** `'w'`: the prefix of slots; a slot key is `slots ++ tuple(window, slot)`. */
  readonly slots: Buffer;
  readonly slotsEnd: Buffer;

  constructor(readonly doc: DocumentKeys) {
    this.limit = doc.meta(META_RATE_LIMIT);
    this.slots = doc.meta(META_RATE_SLOTS);
    this.slotsEnd = concat(this.slots, 0xff);
  }

  slot(window: number, slot: number): Buffer {
    return packPrefixed(this.slots, [window, slot]);
  }

  /** The first key of `window`'s slots: `[window(w), window(w + 1))` holds them. */
  window(window: number): Buffer {
    return packPrefixed(this.slots, [window]);
  }

  slotOf(key: Buffer): number {
    const [, slot] = unpackFrom(key, this.slots.length);
    if (typeof slot !== 'number') throw corruptData(`queue rate-limit slot ${key.toString('hex')}`);
    return slot;
  }
}

function encodeRateLimit(limit: RateLimit): Buffer {
  return pack([limit.max, limit.intervalMs]);
}

function decodeRateLimit(value: Buffer): RateLimit {
  const [max, intervalMs] = unpack(value);
  if (typeof max !== 'number' || typeof intervalMs !== 'number' || !(max >= 1) || !(intervalMs >= 1)) {
    throw corruptData(`queue rate limit ${value.toString('hex')}`);
  }
  return { max, intervalMs };
}

/** The window `now` falls in. */
export function windowOf(now: number, limit: RateLimit): number {
  return Math.floor(now / limit.intervalMs);
}

/** What a take may deliver under the queue's limit at its `now`, and how it claims it. */
export interface Allowance {
  /** Items the take may deliver: the free slots it found, at most the count asked for (Infinity without a limit). */
  readonly free: number;
  /**
   * When a take held back by the limit should try again, in ms (Infinity without a limit): when the
   * window ends, plus a jitter of up to a tenth of the interval (at most {@link WAKE_JITTER_MS}), so
   * that the takers a full window held back do not all race for the next window's slots at once.
   */
  readonly resetInMs: number;
  /**
   * Claims `count` (at most `free`) of the free slots found, in `tr`: a read conflict on each slot key
   * and a set of it; on a handle's first claim in a window, clears the windows before the previous one.
   */
  claim(tr: Transaction, count: number): void;
}

export const UNLIMITED: Allowance = { free: Infinity, resetInMs: Infinity, claim: () => undefined };

/** A take under the limit: the head items it may deliver, and its allowance to claim slots for them. */
export interface LimitedTaken extends Taken {
  readonly allowance: Allowance;
  /**
   * The limit held items back (there were items, and no free slot for some): milliseconds until the
   * window ends, when a waiting take should try again. Otherwise `undefined`.
   */
  readonly heldBackMs: number | undefined;
}

/** The head items `taken` cut to what `allowance` lets the take deliver. */
export function withinLimit(taken: Taken, allowance: Allowance): LimitedTaken {
  if (taken.items.length <= allowance.free) return { items: taken.items, exhausted: taken.exhausted, allowance, heldBackMs: undefined };
  return { items: taken.items.slice(0, allowance.free), exhausted: taken.exhausted, allowance, heldBackMs: allowance.resetInMs };
}

/** Slots a take reads first: a run from a random slot, enough for `count` items in a window not yet full. */
function segmentLength(count: number, max: number): number {
  return Math.min(max, Math.max(4 * count, 32));
}

/**
 * One queue handle's view of its rate limit: it reads the limit with every take (so all handles in
 * all processes apply the stored one) unless the queue is known to have none at the transaction's
 * metadata version (see known-settings.ts), and remembers the last limit seen so that the next take can read
 * the window's slots together with the limit instead of one round trip after it.
 *
 * A take of `count` items reads a run of slots from a random one first (about `4 * count` keys), and
 * claims free slots from it; only when that run has fewer free slots than wanted (late in a window)
 * does it read the rest of the window (one round trip more), so a take's work does not grow with `max`.
 */
export class RateLimiter {
  /** The limit the last take saw: `null` none, `undefined` not read yet. */
  private seen: RateLimit | null | undefined;
  private sweptBelow = -Infinity;
  private cachedKeys: RateLimitKeys | undefined;
  private readonly known: KnownSettings;

  /**
   * @param database what the queue's database is known by (its `Database`): handles over one share
   *   what they know of queues without a limit.
   */
  constructor(
    private readonly random: () => number,
    database: object,
  ) {
    this.known = KnownSettings.of(database);
  }

  keys(doc: DocumentKeys): RateLimitKeys {
    const cached = this.cachedKeys;
    if (cached !== undefined && cached.doc.prefix.equals(doc.prefix)) return cached;
    this.cachedKeys = new RateLimitKeys(doc);
    return this.cachedKeys;
  }

  /** Whether the queue is known to have no limit at the metadata version `tr` has already read (no wait). */
  knownUnlimited(tr: Transaction, doc: DocumentKeys): boolean {
    return this.known.hasNow(tr, doc.identity, NO_RATE_LIMIT);
  }

  /** Whether the queue had no limit at the latest metadata version known (`KnownSettings.likely`): a guess. */
  likelyUnlimited(doc: DocumentKeys): boolean {
    return this.known.likely(doc.identity, NO_RATE_LIMIT);
  }

  /**
   * What a take of up to `count` items at `now` may deliver. Reads the metadata version (no round trip
   * on a cluster, already read by other layers), and nothing more for a queue known to have no limit
   * at that version; otherwise the limit (1 point read, with a read conflict: only `set`/`remove`
   * write it) and, under a limit, snapshot range reads of the window's
   * slots: a run of about `4 * count` slots from a random one (issued with the limit read when this
   * handle already knows the limit), and the rest of the window only if that run lacks free slots.
   */
  allowance(tr: Transaction, doc: DocumentKeys, now: number, count: number): Promise<Allowance> {
    // Not an async function: a queue known to have no limit costs one promise reaction, no more.
    return KnownSettings.version(tr).then((version) =>
      this.known.has(version, doc.identity, NO_RATE_LIMIT) ? UNLIMITED : this.limitedAllowance(tr, doc, now, count, version),
    );
  }

  private async limitedAllowance(tr: Transaction, doc: DocumentKeys, now: number, count: number, version: MetadataVersion): Promise<Allowance> {
    const keys = this.keys(doc);
    const known = this.seen;
    const limitRead = tr.get(keys.limit);
    const start = (max: number) => Math.min(max - 1, Math.floor(this.random() * max));
    let guess: { start: number; end: number; used: Promise<number[]> } | undefined;
    if (known) {
      const from = start(known.max);
      const end = Math.min(known.max, from + segmentLength(count, known.max));
      guess = { start: from, end, used: this.readSlots(tr, keys, windowOf(now, known), from, end) };
    }
    let value: Buffer | undefined;
    try {
      value = await limitRead;
    } catch (err) {
      guess?.used.catch(() => undefined);
      throw err;
    }
    const limit = value === undefined ? null : decodeRateLimit(value);
    this.seen = limit;
    if (limit === null) this.known.learn(version, doc.identity, NO_RATE_LIMIT);
    if (limit === null || !(known?.max === limit.max && known.intervalMs === limit.intervalMs)) guess?.used.catch(() => undefined);
    if (limit === null) return UNLIMITED;
    const window = windowOf(now, limit);
    if (guess === undefined || !(known?.max === limit.max && known.intervalMs === limit.intervalMs)) {
      const from = start(limit.max);
      const end = Math.min(limit.max, from + segmentLength(count, limit.max));
      guess = { start: from, end, used: this.readSlots(tr, keys, window, from, end) };
    }
    const taken = new Set(await guess.used);
    // Free slots in slot order from the run's start, wrapping: the run's first.
    const free: number[] = [];
    for (let slot = guess.start; slot < guess.end; slot++) if (!taken.has(slot)) free.push(slot);
    if (free.length < count && guess.end - guess.start < limit.max) {
      const [after, before] = await Promise.all([
        this.readSlots(tr, keys, window, guess.end, limit.max),
        this.readSlots(tr, keys, window, 0, guess.start),
      ]);
      for (const slot of [...after, ...before]) taken.add(slot);
      for (let slot = guess.end; slot < limit.max; slot++) if (!taken.has(slot)) free.push(slot);
      for (let slot = 0; slot < guess.start; slot++) if (!taken.has(slot)) free.push(slot);
    }
    return this.allowanceIn(keys, limit, window, free.slice(0, count), now);
  }

  /** The limit stored, if any. Reads the limit key (1 point read). */
  async get(tr: Transaction, doc: DocumentKeys): Promise<RateLimit | undefined> {
    const value = await tr.get(this.keys(doc).limit);
    return value === undefined ? undefined : decodeRateLimit(value);
  }

  /**
   * Stores `limit`. Reads the limit key; writes it, and when it changes, clears every slot: the count
   * starts again in the current window (windows of another length are not comparable, and slots of a
   * larger max would not all be read).
   */
  async set(tr: Transaction, doc: DocumentKeys, limit: RateLimit): Promise<void> {
    const keys = this.keys(doc);
    const before = await this.get(tr, doc);
    if (before !== undefined && before.max === limit.max && before.intervalMs === limit.intervalMs) return;
    tr.clearRange(keys.slots, keys.slotsEnd);
    tr.set(keys.limit, encodeRateLimit(limit));
    if (before === undefined) {
      // Takes that trust "no limit" (known-settings.ts) learn of it by the version.
      tr.bumpMetadataVersion();
      DocTransaction.of(tr).metadataVersionBumped();
      this.known.forget(doc.identity, NO_RATE_LIMIT);
    }
  }

  /** Removes the limit and its slots; whether there was one. Reads the limit key. */
  async remove(tr: Transaction, doc: DocumentKeys): Promise<boolean> {
    const keys = this.keys(doc);
    if ((await tr.get(keys.limit)) === undefined) return false;
    tr.clear(keys.limit);
    tr.clearRange(keys.slots, keys.slotsEnd);
    return true;
  }

  /** The claimed slots of `window` in `[from, to)`, by a snapshot range read. */
  private async readSlots(tr: Transaction, keys: RateLimitKeys, window: number, from: number, to: number): Promise<number[]> {
    if (from >= to) return [];
    const pairs = await tr.snapshot().getRangeAll(keys.slot(window, from), keys.slot(window, to));
    return pairs.map((p) => keys.slotOf(p.key));
  }

  /** An allowance to claim slots of `free` (the free slots found, in the order to claim them). */
  private allowanceIn(keys: RateLimitKeys, limit: RateLimit, window: number, free: readonly number[], now: number): Allowance {
    return {
      free: free.length,
      resetInMs: (window + 1) * limit.intervalMs - now + this.random() * Math.min(limit.intervalMs / 10, WAKE_JITTER_MS),
      claim: (tr, count) => {
        const n = Math.min(count, free.length);
        if (n <= 0) return;
        for (let i = 0; i < n; i++) {
          const key = keys.slot(window, free[i]);
          tr.addReadConflictKey(key);
          tr.set(key, EMPTY);
        }
        if (window - 1 > this.sweptBelow) {
          this.sweptBelow = window - 1;
          tr.clearRange(keys.slots, keys.window(window - 1));
        }
      },
    };
  }
}
