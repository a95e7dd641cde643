import { Buffer } from 'node:buffer';
import { addReadConflictRangeHandedOver } from '../../kv/client/hand-over';
import { keyAfter } from '../../kv/contract/bytes';
import type { KeyValue, ReadTransaction, Transaction } from '../../kv/contract/types';
import { decodeRecord, type ItemRecord } from './item';
import type { QueueKeys } from './keys';
import { ownWrites, type OwnWrites, type Pushes } from './own-writes';

/**
 * Finding the items a pop, lease or peek takes: the head of the queue in pop order, which is
 *
 * 1. scheduled items already visible (`at <= now`: expired leases, nacked and delayed items), earliest
 *    first, then
 * 2. ready items, highest priority first, in the commit order of their pushes within a priority.
 *
 * Reads are snapshot reads; the read conflicts are added afterwards for exactly what the result
 * depends on, so that a strict take conflicts like plain reads of the head would and a spreading take
 * conflicts only on the items it takes (docs/queue.md, "Pop").
 */

/** An item at the head, as read. */
export interface Candidate {
  readonly key: Buffer;
  readonly record: ItemRecord;
}

export interface TakeRequest {
  readonly tr: Transaction;
  readonly keys: QueueKeys;
  /** The queue's `DocumentKeys.identity`, to find this transaction's own delayed pushes. */
  readonly identity: string;
  /** What the transaction's attempt pushed so far. */
  readonly pushes: Pushes;
  /**
   * The same record with the attempt's read version, asked for already when the take is likely to need
   * it (see {@link takeHead}); `undefined`: asked for only if it turns out to be needed.
   */
  readonly own: Promise<OwnWrites> | undefined;
  readonly now: number;
  /** Items wanted. */
  readonly count: number;
  /** 1: strict, the first `count` items. k > 1: `count` items among the first `count * k`. */
  readonly spread: number;
  /** Items leased this many times are exhausted: taken for the dead-letter queue, not delivered. */
  readonly maxAttempts: number;
  readonly random: () => number;
}

export interface Taken {
  /** Items to deliver, in pop order. */
  readonly items: Candidate[];
  /** Exhausted items met on the way, to move to the dead-letter queue. */
  readonly exhausted: Candidate[];
}

interface Area {
  readonly begin: Buffer;
  readonly end: Buffer;
  /** The last key of the last page read, if any: the next page starts after it. */
  read: Buffer | undefined;
  /** Every item of the area has been returned. */
  done: boolean;
  /** The last key returned, if any. */
  last: Buffer | undefined;
  prefetched: Promise<KeyValue[]> | undefined;
}

/** The head of the queue in pop order, a page at a time, over snapshot reads. */
class HeadCursor {
  /** The visible scheduled items, then the readable ranges of the ready area (`QueueKeys.readyRanges`). */
  private readonly areas: Area[];
  private page: readonly KeyValue[] = NO_PAIRS;
  private index = 0;
  /** The page being returned is the area's last (it came back short). */
  private lastPage = false;
  private current = 0;
  /** The ready items returned, as runs of one priority each (highest first): the last key of each. */
  private readonly priorities: { readonly priority: number; last: Buffer }[] = [];
  private readonly keys: QueueKeys;

  /**
   * @param own the attempt's own writes with its read version, when it pushed any: the head is then
   *   read up to the read version's bounds, short of the keys its pushes will take (unreadable until
   *   commit). Without pushes there are no such keys and nothing beyond the read version to see, so the
   *   areas are read to their ends without waiting for the read version.
   */
  constructor(
    private readonly snapshot: ReadTransaction,
    keys: QueueKeys,
    identity: string,
    now: number,
    own: OwnWrites | undefined,
    private readonly pageSize: number,
  ) {
    this.keys = keys;
    const earliestOwn = own?.earliestDelayed.get(identity);
    const visibleUpTo = earliestOwn === undefined ? now : Math.min(now, earliestOwn - 1);
    // Neither range is empty: each end is its begin with more tuple elements after it.
    const scheduled = area(keys.scheduled, keys.scheduledAfter(visibleUpTo), false);
    const ownPriorities = own?.priorities.get(identity);
    if (own === undefined) this.areas = [scheduled, area(keys.ready, keys.readyEnd, false)];
    else if (ownPriorities === undefined) this.areas = [scheduled, area(keys.ready, keys.readyBound(own.readVersion), false)];
    else {
      this.areas = [scheduled];
      for (const [begin, end] of keys.readyRanges(own.readVersion, ownPriorities)) this.areas.push(area(begin, end, Buffer.compare(begin, end) >= 0));
    }
    // Most heads have no visible scheduled item: fetch the first page of both areas at once.
    scheduled.prefetched = this.fetch(scheduled);
    const ready = this.areas[1];
    if (!ready.done) ready.prefetched = this.fetch(ready);
  }

  /** The next pair of the page in hand, without waiting; `undefined` when it is used up (see {@link nextPage}). */
  next(): KeyValue | undefined {
    if (this.index >= this.page.length) return undefined;
    const a = this.areas[this.current];
    const pair = this.page[this.index++];
    a.last = pair.key;
    if (this.index === this.page.length && this.lastPage) a.done = true;
    if (this.current > 0) this.noteReady(pair.key);
    return pair;
  }

  /**
   * Once the page in hand is used up: the next page to read (to hand to {@link usePage}), past the
   * areas read to their end, or `undefined` at the end of the head. The caller awaits it itself: no
   * async frame of the cursor's own per page.
   */
  nextPage(): Promise<KeyValue[]> | undefined {
    for (;;) {
      const a = this.areas[this.current];
      if (a === undefined) return undefined;
      if (a.done || this.lastPage) {
        a.done = true;
        this.nextArea();
        continue;
      }
      const page = a.prefetched ?? this.fetch(a);
      a.prefetched = undefined;
      return page;
    }
  }

  /** Takes the page {@link nextPage} returned (when it is empty, {@link next} finds nothing in it). */
  usePage(page: KeyValue[]): void {
    this.page = page;
    this.index = 0;
    this.lastPage = page.length < this.pageSize;
    if (page.length > 0) this.areas[this.current].read = page[page.length - 1].key;
  }

  private noteReady(key: Buffer): void {
    const priority = this.keys.priorityOf(key);
    const run = this.priorities[this.priorities.length - 1];
    if (run !== undefined && run.priority === priority) run.last = key;
    else this.priorities.push({ priority, last: key });
  }

  private nextArea(): void {
    this.current++;
    this.page = NO_PAIRS;
    this.index = 0;
    this.lastPage = false;
  }

  /**
   * Adds the read conflicts of a strict take: the visible scheduled items from the start to what it
   * used (all of them when it went past them), and in the ready area, per priority it returned items
   * of, from the priority's first key to the last item used, or to the priority's read-version bound
   * when it went past the priority. So a strict take conflicts with every take of an item it passed or
   * took, and never with a push: a push's key lies beyond its priority's bound, and priorities it
   * returned no items of are not covered.
   */
  addStrictConflicts(tr: Transaction, readVersion: bigint | undefined): void {
    // In key order (the ready area sorts before the scheduled one), as a commit's check takes them best.
    // The bounds are the queue's keys (cached, never modified: keys.ts) or made here: handed over.
    const readyDone = this.readyDone();
    const runs = this.priorities;
    for (let i = 0; i < runs.length; i++) {
      const { priority, last } = runs[i];
      const passed = i < runs.length - 1 || readyDone;
      addReadConflictRangeHandedOver(tr, this.keys.priorityStart(priority), passed ? this.keys.readyBound(readVersion!, priority) : keyAfter(last));
    }
    const scheduled = this.areas[0];
    if (scheduled.done) addReadConflictRangeHandedOver(tr, scheduled.begin, scheduled.end);
    else if (scheduled.last !== undefined) addReadConflictRangeHandedOver(tr, scheduled.begin, keyAfter(scheduled.last));
    else if (this.current === 0) addReadConflictRangeHandedOver(tr, scheduled.begin, scheduled.end);
  }

  /** Whether {@link addStrictConflicts} needs the read version: the take went past a priority's items. */
  passedAPriority(): boolean {
    return this.priorities.length > 1 || (this.priorities.length === 1 && this.readyDone());
  }

  private readyDone(): boolean {
    for (const a of this.areas) if (!a.done) return false;
    return true;
  }

  /** Settles the prefetches it did not use, so that none rejects unobserved. */
  close(): void {
    for (const a of this.areas) a.prefetched?.catch(() => undefined);
  }

  private fetch(a: Area): Promise<KeyValue[]> {
    // The next page's start is made only when there is a next page to read.
    return this.snapshot.getRangeAll(a.read === undefined ? a.begin : keyAfter(a.read), a.end, { limit: this.pageSize });
  }
}

const NO_PAIRS: readonly KeyValue[] = [];

function area(begin: Buffer, end: Buffer, empty: boolean): Area {
  return { begin, end, read: undefined, done: empty, last: undefined, prefetched: undefined };
}

/**
 * The attempt's own writes with its read version, asked for now when a take of `count` items is likely
 * to need them: before its reads when the attempt pushed, after them when a strict take goes past a
 * priority's items. A strict take of one item goes past a priority only past exhausted items (the
 * first deliverable item ends it, and an empty head returns no ready item at all), so a take of one
 * that pushed nothing (most pops) does not ask: the read version's promise is saved, and the rare take
 * that meets exhausted items asks afterwards, a turn later.
 */
export function likelyOwnWrites(tr: Transaction, pushes: Pushes, count: number, spread: number): Promise<OwnWrites> | undefined {
  return pushes.nextUserVersion > 0 || (spread <= 1 && count > 1) ? ownWrites(tr) : undefined;
}

/**
 * Chooses the items to take and adds the read conflicts that make taking them safe. Writes nothing:
 * the caller clears (or moves) what it takes.
 *
 * Strict (`spread` 1): the first `count` deliverable items; the read conflicts cover the head up to the
 * last item taken (the whole visible area when it ran out), so two strict takes of one queue conflict,
 * and a take that found the queue empty conflicts with a nack that made an item visible meanwhile.
 * Spreading: reads `count * spread` candidates, takes a random aligned window of `count` of them and
 * adds a read conflict on each key taken only, so two takes conflict only when they pick the same window.
 */
export async function takeHead(request: TakeRequest): Promise<Taken> {
  const { tr, count, spread, maxAttempts } = request;
  const strict = spread <= 1;
  const wanted = strict ? count : count * spread;
  // An attempt that pushed nothing (most takes) reads the head without waiting for its read version.
  const own = request.pushes.nextUserVersion === 0 ? undefined : await (request.own ?? ownWrites(tr));
  const cursor = new HeadCursor(tr.snapshot(), request.keys, request.identity, request.now, own, wanted);
  const items: Candidate[] = [];
  const exhausted: Candidate[] = [];
  try {
    while (items.length < wanted) {
      const pair = cursor.next();
      if (pair === undefined) {
        const page = cursor.nextPage();
        if (page === undefined) break;
        cursor.usePage(await page);
        continue;
      }
      const record = decodeRecord(pair.value);
      (record.attempts >= maxAttempts ? exhausted : items).push({ key: pair.key, record });
    }
  } finally {
    cursor.close();
  }
  if (strict) {
    // Resolved by now when it was asked for before the reads; else a turn more (see likelyOwnWrites).
    cursor.addStrictConflicts(tr, cursor.passedAPriority() ? (own ?? (await (request.own ?? ownWrites(tr)))).readVersion : undefined);
    return { items, exhausted };
  }
  const windows = Math.ceil(items.length / count);
  const start = Math.min(windows - 1, Math.floor(request.random() * windows)) * count;
  const chosen = windows === 0 ? [] : items.slice(start, start + count);
  for (const c of chosen) tr.addReadConflictKey(c.key);
  for (const c of exhausted) tr.addReadConflictKey(c.key);
  return { items: chosen, exhausted };
}

/** When the next scheduled item becomes visible (after `now`), if there is one. Reads 1 key, snapshot. */
export async function nextVisibleAt(tr: Transaction, keys: QueueKeys, now: number): Promise<number | undefined> {
  const [first] = await tr.snapshot().getRangeAll(keys.scheduledAfter(now), keys.scheduledEnd, { limit: 1 });
  if (first === undefined) return undefined;
  const position = keys.position(first.key);
  return position.area === 'scheduled' ? position.at : undefined;
}
