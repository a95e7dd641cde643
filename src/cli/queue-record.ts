import type { Collection } from '../collection';
import { docIdElement } from '../document/keys/ids';
import type { DocId, JsonValue } from '../document/types';
import type { Transaction } from '../kv/contract/types';
import { DEFAULT_EVENT_SETTINGS } from '../structures/queue/events';
import { decodePayload, decodeRecord } from '../structures/queue/item';
import { QueueKeys } from '../structures/queue/keys';
import type { Queue, QueueEventSettings, RateLimit, RepeatEvery } from '../structures/queue/queue';

/**
 * A queue in an export (`export-format.ts`): its items' values as its JSON form, and what that form
 * leaves out, as {@link QueueDetails}: each item's priority or visibility time, the queue's event
 * settings, its rate limit and what is left of its repeatable jobs. Read here from the queue's keys
 * (docs/queue.md, "Layout") and written back through the queue's own API.
 *
 * Not carried, by choice or because the API cannot set it (docs and README say so): attempt counts
 * (an imported item has had no lease); leases (a leased item is exported as an item visible at its
 * lease's deadline, what it becomes in the source when its holder never acks: no consumer of the new
 * database holds it, and no one gets it before the holder's time is up); job ids, job records' progress
 * and the event log (history of the source; with events on, the import's pushes start a new one); the
 * rate limit's window count; a repeatable job's occurrences so far (it is re-created as what is left
 * of it: from its next occurrence, with its remaining `limit`), and a finished one.
 */

/** What a queue's record carries besides its items' values; each field absent when it is the default. */
export interface QueueDetails {
  /**
   * Per item, in the order of the record's value (the next to pop last): its priority or the time it
   * is visible from; absent when every item is a ready item of priority 0.
   */
  readonly items?: readonly QueueItemDetails[];
  /** The event settings (`configure`), when not the defaults. */
  readonly events?: QueueEventSettings;
  readonly rateLimit?: RateLimit;
  readonly repeats?: readonly QueueRepeat[];
}

/** One item's place: `{}` for a ready item of priority 0. */
export interface QueueItemDetails {
  /** A ready item's priority, when above 0. */
  readonly priority?: number;
  /** A scheduled item's visibility time (delayed, nacked, or a lease's deadline), ms since the epoch. */
  readonly visibleAt?: number;
}

/** A repeatable job as `repeat(name, every, value, { startAt, endAt, limit })` re-creates it. */
export interface QueueRepeat {
  readonly name: string;
  readonly cron?: string;
  readonly tz?: string;
  readonly everyMs?: number;
  readonly value: JsonValue;
  /** Its next occurrence not yet enqueued. */
  readonly startAt: number;
  readonly endAt?: number;
  /** Occurrences left. */
  readonly limit?: number;
}

/**
 * The queue at `id` as a record's value and details, read in `tr`: its ready and scheduled areas
 * (values included), its settings key, its rate limit key and its schedules. The value is the JSON
 * form (`queue/json-form.ts`), by the clock of `now`, which also splits the items the details list.
 */
export async function readQueue(
  tr: Transaction,
  collection: Collection,
  id: DocId,
  now: number,
): Promise<{ value: JsonValue[]; details: QueueDetails | undefined }> {
  const queue = collection.queue(id);
  const doc = await collection.structureAccess().keysToRead(tr, docIdElement(id));
  if (doc === undefined) return { value: [], details: undefined };
  const keys = new QueueKeys(doc);
  const [ready, scheduled, events, rateLimit, repeats] = await Promise.all([
    tr.getRangeAll(keys.ready, keys.readyEnd),
    tr.getRangeAll(keys.scheduled, keys.scheduledEnd),
    queue.eventSettings({ tr }),
    queue.rateLimit({ tr }),
    repeatsOf(queue, tr),
  ]);
  // Pop order: visible scheduled items (earliest first), ready items (by priority, then push), the rest.
  const visible: Item[] = [];
  const later: Item[] = [];
  for (const { key, value } of scheduled) {
    const position = keys.position(key);
    if (position.area !== 'scheduled') continue;
    const item = { value: decodePayload(decodeRecord(value).payload), details: { visibleAt: position.at } };
    (position.at <= now ? visible : later).push(item);
  }
  const readyItems = ready.map(({ key, value }): Item => {
    const priority = keys.priorityOf(key);
    return { value: decodePayload(decodeRecord(value).payload), details: priority === 0 ? {} : { priority } };
  });
  const items = [...visible, ...readyItems, ...later].reverse();
  const details: QueueDetails = {
    ...(items.some((item) => item.details.priority !== undefined || item.details.visibleAt !== undefined)
      ? { items: items.map((item) => item.details) }
      : {}),
    ...(sameSettings(events, DEFAULT_EVENT_SETTINGS) ? {} : { events }),
    ...(rateLimit === undefined ? {} : { rateLimit: { max: rateLimit.max, intervalMs: rateLimit.intervalMs } }),
    ...(repeats.length === 0 ? {} : { repeats }),
  };
  return { value: items.map((item) => item.value), details: Object.keys(details).length === 0 ? undefined : details };
}

interface Item {
  readonly value: JsonValue;
  readonly details: QueueItemDetails;
}

function sameSettings(a: QueueEventSettings, b: QueueEventSettings): boolean {
  return a.events === b.events && a.maxAgeMs === b.maxAgeMs && a.maxEvents === b.maxEvents;
}

/** The queue's repeatable jobs that have occurrences left, as what re-creates them from the next. */
async function repeatsOf(queue: Queue, tr: Transaction): Promise<QueueRepeat[]> {
  const out: QueueRepeat[] = [];
  for await (const info of queue.repeats({ tr })) {
    if (info.next === undefined) continue;
    const limit = info.limit === undefined ? undefined : info.limit - info.count;
    if (limit !== undefined && limit <= 0) continue;
    out.push({
      name: info.name,
      ...(info.cron === undefined ? {} : { cron: info.cron }),
      ...(info.tz === undefined ? {} : { tz: info.tz }),
      ...(info.everyMs === undefined ? {} : { everyMs: info.everyMs }),
      value: info.value,
      startAt: info.next,
      ...(info.endAt === undefined ? {} : { endAt: info.endAt }),
      ...(limit === undefined ? {} : { limit }),
    });
  }
  return out;
}

/**
 * A handle to re-create a queue with: its clock is {@link QueueWriter.at}, so that a push with
 * `delayMs: 1` at `at = visibleAt - 1` makes an item visible at exactly `visibleAt` (past or future),
 * and a repeatable job re-created at its `startAt` keeps that occurrence even when it is past.
 */
export class QueueWriter {
  private clock = 0;
  readonly queue: Queue;

  constructor(collection: Collection, id: DocId) {
    this.queue = collection.queue(id, { now: () => this.clock });
  }

  /**
   * Pushes `values` (a run of items in pop order with the same details) in `tr`. Reads and writes
   * what `pushMany` does (the kind key; the items, size, pushed and version keys).
   */
  async push(values: readonly JsonValue[], details: QueueItemDetails, tr: Transaction): Promise<void> {
    this.clock = details.visibleAt === undefined ? Date.now() : details.visibleAt - 1;
    if (details.visibleAt !== undefined) await this.queue.pushMany(values, { tr, delayMs: 1 });
    else await this.queue.pushMany(values, { tr, priority: details.priority ?? 0 });
  }

  /**
   * Applies the settings of `details` in `tr` (the queue is created if it is not): its event settings
   * (`configure`), rate limit (`setRateLimit`) and repeatable jobs (`repeat`); see their reads and writes.
   */
  async configure(details: QueueDetails, tr: Transaction): Promise<void> {
    this.clock = Date.now();
    if (details.events !== undefined) await this.queue.configure(details.events, { tr });
    if (details.rateLimit !== undefined) await this.queue.setRateLimit(details.rateLimit, { tr });
    for (const repeat of details.repeats ?? []) {
      const every: RepeatEvery =
        repeat.cron === undefined ? { everyMs: repeat.everyMs ?? 0 } : { cron: repeat.cron, ...(repeat.tz === undefined ? {} : { tz: repeat.tz }) };
      this.clock = repeat.startAt;
      await this.queue.repeat(repeat.name, every, repeat.value, {
        tr,
        startAt: repeat.startAt,
        ...(repeat.endAt === undefined ? {} : { endAt: repeat.endAt }),
        ...(repeat.limit === undefined ? {} : { limit: repeat.limit }),
      });
    }
  }
}

type JsonObject = { [field: string]: JsonValue };

const DETAIL_FIELDS = ['items', 'events', 'rateLimit', 'repeats'];
const ITEM_FIELDS = ['priority', 'visibleAt'];
const EVENT_FIELDS = ['events', 'maxAgeMs', 'maxEvents'];
const RATE_LIMIT_FIELDS = ['max', 'intervalMs'];
const REPEAT_FIELDS = ['name', 'cron', 'tz', 'everyMs', 'value', 'startAt', 'endAt', 'limit'];

/**
 * The details of a queue's record of `itemCount` items, or why `value` is not details. Checks their
 * shape only: the queue's API checks the values (a priority's range, a rate limit's bounds, a cron
 * expression) when the record is written, and refuses the record then.
 */
export function queueDetailsOf(value: JsonValue, itemCount: number): QueueDetails | { reason: string } {
  const problem = (what: string): { reason: string } => ({ reason: `a queue's "queue" field: ${what}` });
  if (!isObject(value)) return problem('an object with items, events, rateLimit and repeats');
  const unknown = unknownField(value, DETAIL_FIELDS);
  if (unknown !== undefined) return problem(`unknown field ${JSON.stringify(unknown)}`);
  const { items, events, rateLimit, repeats } = value;
  if (items !== undefined) {
    if (!Array.isArray(items) || items.length !== itemCount) return problem(`"items" is an array of one entry per item (${itemCount})`);
    const bad = items.findIndex(
      (item) =>
        !isObject(item) ||
        unknownField(item, ITEM_FIELDS) !== undefined ||
        (item.priority !== undefined && item.visibleAt !== undefined) ||
        !optional(item.priority, isNumber) ||
        !optional(item.visibleAt, isNumber),
    );
    if (bad >= 0) return problem(`item ${bad} is {}, {"priority":<integer>} or {"visibleAt":<ms since the epoch>}`);
  }
  if (
    events !== undefined &&
    !(
      isObject(events) &&
      hasExactly(events, EVENT_FIELDS) &&
      typeof events.events === 'boolean' &&
      isNumber(events.maxAgeMs) &&
      isNumber(events.maxEvents)
    )
  ) {
    return problem('"events" is {"events":<boolean>,"maxAgeMs":<number>,"maxEvents":<number>}');
  }
  if (
    rateLimit !== undefined &&
    !(isObject(rateLimit) && hasExactly(rateLimit, RATE_LIMIT_FIELDS) && isNumber(rateLimit.max) && isNumber(rateLimit.intervalMs))
  ) {
    return problem('"rateLimit" is {"max":<number>,"intervalMs":<number>}');
  }
  if (repeats !== undefined) {
    if (!Array.isArray(repeats) || !repeats.every(isRepeat)) {
      return problem('"repeats" is an array of {"name", "cron" (and "tz") or "everyMs", "value", "startAt", "endAt"?, "limit"?}');
    }
  }
  return value;
}

function isRepeat(value: JsonValue): boolean {
  return (
    isObject(value) &&
    unknownField(value, REPEAT_FIELDS) === undefined &&
    typeof value.name === 'string' &&
    value.value !== undefined &&
    (value.cron === undefined ? isNumber(value.everyMs) && value.tz === undefined : typeof value.cron === 'string' && value.everyMs === undefined) &&
    optional(value.tz, (tz) => typeof tz === 'string') &&
    isNumber(value.startAt) &&
    optional(value.endAt, isNumber) &&
    optional(value.limit, isNumber)
  );
}

function isObject(value: JsonValue | undefined): value is JsonObject {
  return value !== null && value !== undefined && typeof value === 'object' && !Array.isArray(value);
}

function isNumber(value: JsonValue | undefined): boolean {
  return typeof value === 'number' && Number.isFinite(value);
}

function optional(value: JsonValue | undefined, test: (value: JsonValue) => boolean): boolean {
  return value === undefined || test(value);
}

function unknownField(value: JsonObject, fields: readonly string[]): string | undefined {
  return Object.keys(value).find((field) => !fields.includes(field));
}

function hasExactly(value: JsonObject, fields: readonly string[]): boolean {
  return unknownField(value, fields) === undefined && fields.every((field) => value[field] !== undefined);
}
