import type { JsonValue } from '../../src/document/types';

/**
 * A plain JavaScript model of the persistent Queue (docs/queue.md), for the reference-model test: the
 * same operations on arrays, with the same clock. Items are ready (by priority, highest first, then in
 * push order) or scheduled (at a visibility time; ties broken as the keys break them: lease ids before
 * versionstamps, lease ids by their bytes, versionstamps in push order).
 */

export interface ModelLease {
  id: string;
  value: JsonValue;
  deadline: number;
  attempts: number;
}

interface Item {
  value: JsonValue;
  area: 'ready' | 'scheduled';
  /** Push order: ready items and delayed pushes. */
  seq: number;
  /** Ready items: higher first, then push order. */
  priority: number;
  at: number;
  /** The lease id that names a scheduled item's key, if a lease moved it (else it is a delayed push). */
  uuid: string | undefined;
  leased: boolean;
  attempts: number;
}

type LeaseStatus = 'held' | 'acked' | 'nacked' | 'dead-lettered' | 'lost';

export type LeaseOutcome<T> = { ok: T } | { error: 'LEASE_EXPIRED' };

export class QueueModel {
  private items: Item[] = [];
  private seq = 0;
  private leases = new Map<string, LeaseStatus>();
  readonly deadLetters: JsonValue[] = [];
  /** Whether the queue's document exists (created by a push or a dead-letter move, removed by clear). */
  exists = false;
  deadLetterExists = false;

  constructor(
    readonly maxAttempts: number,
    private readonly now: () => number,
  ) {}

  push(values: JsonValue[], delayMs = 0, priority = 0): void {
    const now = this.now();
    for (const value of values) {
      this.items.push({
        value,
        area: delayMs > 0 ? 'scheduled' : 'ready',
        seq: this.seq++,
        priority,
        at: delayMs > 0 ? now + delayMs : 0,
        uuid: undefined,
        leased: false,
        attempts: 0,
      });
    }
    this.exists = true;
  }

  /** Items in pop order as of now: visible scheduled, ready, later scheduled. */
  popOrder(): JsonValue[] {
    return this.ordered().map((i) => i.value);
  }

  /** The JSON form with every scheduled item visible (the tests' clock is far behind `Date.now()`). */
  jsonForm(): JsonValue[] {
    const scheduled = this.items.filter((i) => i.area === 'scheduled').sort(byPosition);
    const ready = this.items.filter((i) => i.area === 'ready').sort(readyOrder);
    return [...scheduled, ...ready].map((i) => i.value).reverse();
  }

  size(): number {
    return this.items.length;
  }

  peek(): JsonValue | undefined {
    return this.visible().find((i) => i.attempts < this.maxAttempts)?.value;
  }

  /**
   * Takes up to `count` deliverable items as the queue's takeHead does, moving exhausted ones met on
   * the way to the dead-letter queue. `random` is the value the queue's random source returned.
   */
  private take(count: number, spread: number, random: number | undefined): Item[] {
    const wanted = spread <= 1 ? count : count * spread;
    const deliverable: Item[] = [];
    for (const item of this.visible()) {
      if (deliverable.length >= wanted) break;
      if (item.attempts >= this.maxAttempts) {
        this.remove(item);
        this.deadLetters.push(item.value);
        this.deadLetterExists = true;
      } else {
        deliverable.push(item);
      }
    }
    let chosen = deliverable;
    if (spread > 1) {
      const windows = Math.ceil(deliverable.length / count);
      const start = windows === 0 ? 0 : Math.min(windows - 1, Math.floor((random ?? 0) * windows)) * count;
      chosen = deliverable.slice(start, start + count);
    }
    for (const item of chosen) this.remove(item);
    return chosen;
  }

  pop(spread = 1, random?: number): JsonValue | undefined {
    if (!this.exists) return undefined;
    return this.take(1, spread, random)[0]?.value;
  }

  /** Leases: `ids` are the ids the real queue gave, in order. */
  lease(count: number, visibilityMs: number, ids: string[], spread = 1, random?: number): ModelLease[] {
    if (!this.exists) return [];
    const taken = this.take(count, spread, random);
    const deadline = this.now() + visibilityMs;
    return taken.map((item, i) => {
      const id = ids[i];
      item.area = 'scheduled';
      item.at = deadline;
      item.uuid = id;
      item.leased = true;
      item.attempts++;
      this.items.push(item);
      this.leases.set(id, 'held');
      return { id, value: item.value, deadline, attempts: item.attempts };
    });
  }

  ack(id: string): LeaseOutcome<void> {
    const status = this.leases.get(id);
    if (status === 'acked') return { ok: undefined };
    const item = this.held(id);
    if (item === undefined) return { error: 'LEASE_EXPIRED' };
    this.remove(item);
    this.leases.set(id, 'acked');
    return { ok: undefined };
  }

  nack(id: string, delayMs: number): LeaseOutcome<'requeued' | 'dead-lettered'> {
    const status = this.leases.get(id);
    if (status === 'nacked') return { ok: 'requeued' };
    if (status === 'dead-lettered') return { ok: 'dead-lettered' };
    const item = this.held(id);
    if (item === undefined) return { error: 'LEASE_EXPIRED' };
    if (item.attempts >= this.maxAttempts) {
      this.remove(item);
      this.deadLetters.push(item.value);
      this.deadLetterExists = true;
      this.leases.set(id, 'dead-lettered');
      return { ok: 'dead-lettered' };
    }
    item.at = this.now() + delayMs;
    item.leased = false;
    this.leases.set(id, 'nacked');
    return { ok: 'requeued' };
  }

  extend(id: string, ms: number): LeaseOutcome<number> {
    const item = this.held(id);
    if (item === undefined) return { error: 'LEASE_EXPIRED' };
    item.at = this.now() + ms;
    return { ok: item.at };
  }

  clear(): void {
    this.items = [];
    for (const id of this.leases.keys()) this.leases.set(id, 'lost');
    this.exists = false;
  }

  /** The item a lease holds, if it still holds it now. */
  private held(id: string): Item | undefined {
    const item = this.items.find((i) => i.uuid === id && i.leased);
    if (item === undefined || this.leases.get(id) !== 'held' || this.now() >= item.at) return undefined;
    return item;
  }

  private visible(): Item[] {
    const now = this.now();
    return this.ordered().filter((i) => i.area === 'ready' || i.at <= now);
  }

  private ordered(): Item[] {
    const now = this.now();
    const scheduled = this.items.filter((i) => i.area === 'scheduled').sort(byPosition);
    const ready = this.items.filter((i) => i.area === 'ready').sort(readyOrder);
    return [...scheduled.filter((i) => i.at <= now), ...ready, ...scheduled.filter((i) => i.at > now)];
  }

  private remove(item: Item): void {
    this.items.splice(this.items.indexOf(item), 1);
  }
}

/** The order of ready keys: priority, highest first, then push order. */
function readyOrder(a: Item, b: Item): number {
  return b.priority - a.priority || a.seq - b.seq;
}

/** The order of scheduled keys: visibility time, then lease ids (by bytes) before delayed pushes (in push order). */
function byPosition(a: Item, b: Item): number {
  if (a.at !== b.at) return a.at - b.at;
  if (a.uuid !== undefined && b.uuid !== undefined) return a.uuid < b.uuid ? -1 : a.uuid > b.uuid ? 1 : 0;
  if (a.uuid !== undefined) return -1;
  if (b.uuid !== undefined) return 1;
  return a.seq - b.seq;
}
