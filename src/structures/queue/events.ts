import { Buffer } from 'node:buffer';
import { ContextSlot, DocTransaction } from '../../document/doc-transaction';
import { corruptData, DocumentError } from '../../document/errors';
import { concat, META_EVENTS, META_JOBS, META_NOTIFY, type DocumentKeys } from '../../document/keys/layout';
import type { JsonValue } from '../../document/types';
import { keyAfter } from '../../kv/contract/bytes';
import { lastLessThan } from '../../kv/contract/key-selector';
import type { KeyValue, Transaction } from '../../kv/contract/types';
import { pack, unpack, Versionstamp, type TupleItem } from '../../tuple';
import { packPrefixed, packPrefixedWithVersionstamp } from '../../tuple/pack';
import { decodePayload } from './item';
import { EVENTS_OFF, KnownSettings } from './known-settings';

/**
 * A queue's lifecycle events and job records (docs/queue.md, "Job ids, progress and events"), written
 * only when the queue's stored settings switch them on (`queue.configure({ events: true })`), in the
 * transaction of the change they record:
 *
 * ```
 * <docPrefix> 0x00 'n'                   settings: tuple(1, on, maxAgeMs, maxEvents)
 * <docPrefix> 0x00 'e'                   the event head: an atomic add by every transaction writing events (watched)
 * <docPrefix> 0x00 'e' <tuple(vs)>       events, in commit order: tuple(type, job, at, ...fields)
 * <docPrefix> 0x00 'j' <tuple(jobVs)>    job records of jobs in the queue: tuple(leased, attempts, at, progress)
 * ```
 *
 * An event's key is the versionstamp of its commit, the 2-byte user version ordering the events of
 * one transaction. The job an event is about is its job id, or, for a push (whose id is this very
 * commit's versionstamp, unknown until it commits), the user version of the item's key: the reader
 * completes it with the event key's own commit version.
 *
 * Every operation of a queue reads the settings key (1 point read, issued with its first reads; it
 * conflicts only with `configure`), unless the queue is known to have its events off at the
 * transaction's metadata version (known-settings.ts): `configure` turning events on from off bumps the
 * metadata version, so an operation that trusted "off" conflicts with it and retries.
 */

/** The kinds of event, with what each adds to {@link QueueEventBase}. */
export type QueueEvent =
  | (QueueEventBase & { readonly type: 'waiting' })
  | (QueueEventBase & { readonly type: 'delayed'; readonly visibleAt: number })
  | (QueueEventBase & { readonly type: 'active'; readonly attempts: number; readonly deadline: number })
  | (QueueEventBase & { readonly type: 'progress'; readonly progress: JsonValue })
  | (QueueEventBase & { readonly type: 'completed' })
  | (QueueEventBase & { readonly type: 'retried'; readonly attempts: number; readonly visibleAt: number })
  | (QueueEventBase & { readonly type: 'failed'; readonly attempts: number; readonly error: string })
  | (QueueEventBase & { readonly type: 'dead-lettered'; readonly attempts: number });

export type QueueEventType = QueueEvent['type'];

export interface QueueEventBase {
  /** Where this event is in the log: pass it as `events({ from })` to continue after it. */
  readonly cursor: string;
  readonly jobId: string;
  /** When it happened, in ms since the epoch, by the writing handle's clock. */
  readonly at: number;
}

/** The stored settings of a queue's events. */
export interface QueueEventSettings {
  /** Whether operations write events and job records. */
  readonly events: boolean;
  /** Events older than this are trimmed (default 24 hours). */
  readonly maxAgeMs: number;
  /** At most this many of the newest events are kept (default 10,000). */
  readonly maxEvents: number;
}

export const DEFAULT_EVENT_SETTINGS: QueueEventSettings = { events: false, maxAgeMs: 86_400_000, maxEvents: 10_000 };

/** How often (ms) a handle trims its queue's event log, at most, while it writes events. */
export const TRIM_INTERVAL_MS = 10_000;
/** Events cleared by age in one trim, at most (the count trim has no such bound: it is one range clear). */
const AGE_TRIM_PAGE = 1_000;

// Event type codes: one table, both directions.
const TYPES: readonly QueueEventType[] = ['waiting', 'delayed', 'active', 'progress', 'completed', 'retried', 'failed', 'dead-lettered'];
const typeCode = (type: QueueEventType): number => TYPES.indexOf(type);

/** The keys of a queue's events, job records and settings. */
export class EventKeys {
  readonly settings: Buffer;
  readonly head: Buffer;
  readonly begin: Buffer;
  readonly end: Buffer;
  readonly jobs: Buffer;

  constructor(readonly doc: DocumentKeys) {
    this.settings = doc.meta(META_NOTIFY);
    this.head = doc.meta(META_EVENTS);
    this.begin = keyAfter(this.head);
    this.end = concat(this.head, 0xff);
    this.jobs = doc.meta(META_JOBS);
  }

  event(vs: Versionstamp): Buffer {
    return packPrefixed(this.head, [vs]);
  }

  eventTemplate(userVersion: number): Buffer {
    return packPrefixedWithVersionstamp(this.head, [Versionstamp.incomplete(userVersion)]);
  }

  /** The first event key a commit after `readVersion` can write. */
  eventBound(readVersion: bigint): Buffer {
    const tr = Buffer.alloc(10);
    tr.writeBigUInt64BE(readVersion + 1n, 0);
    return this.event(Versionstamp.complete(tr, 0));
  }

  job(id: Buffer): Buffer {
    return packPrefixed(this.jobs, [Versionstamp.fromBytes(id)]);
  }

  jobTemplate(userVersion: number): Buffer {
    return packPrefixedWithVersionstamp(this.jobs, [Versionstamp.incomplete(userVersion)]);
  }

  /** The 12-byte versionstamp of an event key. */
  versionstampOf(key: Buffer): Buffer {
    const [vs] = unpack(key.subarray(this.head.length));
    if (!(vs instanceof Versionstamp)) throw corruptData(`queue data: an event key ${key.toString('hex')}`);
    return vs.toBytes();
  }
}

// ---- settings

export function encodeSettings(s: QueueEventSettings): Buffer {
  return pack([1, s.events, s.maxAgeMs, s.maxEvents]);
}

export function decodeSettings(value: Buffer | undefined): QueueEventSettings {
  if (value === undefined) return DEFAULT_EVENT_SETTINGS;
  const [format, events, maxAgeMs, maxEvents] = unpack(value);
  if (format !== 1 || typeof events !== 'boolean' || typeof maxAgeMs !== 'number' || typeof maxEvents !== 'number') {
    throw corruptData('queue data: event settings');
  }
  return { events, maxAgeMs, maxEvents };
}

/** Settings from a caller's partial ones, checked. @throws DocumentError INVALID_ARGUMENT */
export function settingsWith(base: QueueEventSettings, change: Partial<QueueEventSettings>): QueueEventSettings {
  if (change === null || typeof change !== 'object') throw new DocumentError('INVALID_ARGUMENT', 'configure takes an object');
  const { events = base.events, maxAgeMs = base.maxAgeMs, maxEvents = base.maxEvents } = change;
  if (typeof events !== 'boolean') throw new DocumentError('INVALID_ARGUMENT', `events is a boolean, got ${String(events)}`);
  for (const [name, n] of [
    ['maxAgeMs', maxAgeMs],
    ['maxEvents', maxEvents],
  ] as const) {
    if (!Number.isSafeInteger(n) || n < 1) throw new DocumentError('INVALID_ARGUMENT', `${name} is a positive integer, got ${String(n)}`);
  }
  return { events, maxAgeMs, maxEvents };
}

// ---- job records

/** A job's record while it is in the queue. */
export interface JobRecord {
  readonly leased: boolean;
  readonly attempts: number;
  /** Visible from (not leased), or the lease's deadline (leased); 0: at once. */
  readonly at: number;
  /** The last progress reported, as stored (a packed payload), if any. */
  readonly progress: Buffer | undefined;
}

export function encodeJobRecord(r: JobRecord): Buffer {
  return pack([r.leased, r.attempts, r.at, r.progress ?? null]);
}

export function decodeJobRecord(value: Buffer): JobRecord {
  const [leased, attempts, at, progress] = unpack(value);
  if (
    typeof leased !== 'boolean' ||
    typeof attempts !== 'number' ||
    typeof at !== 'number' ||
    !(progress === null || progress instanceof Uint8Array)
  ) {
    throw corruptData('queue data: a job record');
  }
  return { leased, attempts, at, progress: progress === null ? undefined : Buffer.from(progress) };
}

// ---- events as stored

/** The job an event is about: its id, or the user version of an item pushed by the event's own commit. */
type JobRef = Buffer | number;

function encodeEvent(type: QueueEventType, job: JobRef, at: number, fields: readonly TupleItem[]): Buffer {
  const ref = typeof job === 'number' ? job : Versionstamp.fromBytes(job);
  return pack([typeCode(type), ref, at, ...fields]);
}

/** An event read back from its key and value. */
export function decodeEvent(keys: EventKeys, pair: KeyValue): QueueEvent {
  const vs = keys.versionstampOf(pair.key);
  const [code, ref, at, a, b] = unpack(pair.value);
  const type = typeof code === 'number' ? TYPES[code] : undefined;
  if (type === undefined || typeof at !== 'number') throw corruptData('queue data: an event');
  let jobId: string;
  if (typeof ref === 'number') {
    const id = Buffer.from(vs);
    id.writeUInt16BE(ref, 10);
    jobId = id.toString('hex');
  } else if (ref instanceof Versionstamp) jobId = ref.toBytes().toString('hex');
  else throw corruptData('queue data: an event');
  const base = { cursor: vs.toString('hex'), jobId, at };
  const num = (x: unknown): number => {
    if (typeof x !== 'number') throw corruptData('queue data: an event');
    return x;
  };
  switch (type) {
    case 'waiting':
    case 'completed':
      return { ...base, type };
    case 'delayed':
      return { ...base, type, visibleAt: num(a) };
    case 'active':
      return { ...base, type, attempts: num(a), deadline: num(b) };
    case 'progress':
      if (!(a instanceof Uint8Array)) throw corruptData('queue data: an event');
      return { ...base, type, progress: decodePayload(a) };
    case 'retried':
      return { ...base, type, attempts: num(a), visibleAt: num(b) };
    case 'failed':
      return { ...base, type, attempts: num(a), error: typeof b === 'string' ? b : '' };
    case 'dead-lettered':
      return { ...base, type, attempts: num(a) };
  }
}

/** The versionstamp an event cursor names. @throws DocumentError INVALID_ARGUMENT */
export function parseCursor(cursor: string): Versionstamp {
  if (typeof cursor !== 'string' || !/^[0-9a-f]{24}$/.test(cursor)) {
    throw new DocumentError(
      'INVALID_ARGUMENT',
      `an event cursor is 24 hex digits (an event's cursor), 'start' or 'now', got ${JSON.stringify(cursor)}`,
    );
  }
  return Versionstamp.fromBytes(Buffer.from(cursor, 'hex'));
}

// ---- writing

/** Longest error message an event keeps. */
const MAX_ERROR_CHARS = 1_000;

/**
 * What one attempt of a transaction writes to one queue's event log: the events in call order (their
 * own user versions), one add to the head key, the job records. Got from {@link QueueEventLog.sink}
 * only when the queue's events are on.
 */
export class EventSink {
  constructor(
    private readonly tr: Transaction,
    readonly keys: EventKeys,
    private readonly now: number,
    /** What this attempt wrote to the log so far, shared by every sink of the attempt. */
    private readonly written: EventsWritten,
  ) {}

  /**
   * Items pushed by this transaction at user versions `first`, `first + 1`, ... of its versionstamp
   * (their job ids), or with the ids `jobIds` they carry.
   */
  pushed(first: number, count: number, at: number | undefined, jobIds?: readonly (Buffer | undefined)[]): void {
    const record = encodeJobRecord({ leased: false, attempts: 0, at: at ?? 0, progress: undefined });
    for (let i = 0; i < count; i++) {
      // A dead-lettered item keeps the id it had in its first queue.
      const job = jobIds?.[i] ?? first + i;
      if (at === undefined) this.emit('waiting', job, []);
      else this.emit('delayed', job, [at]);
      if (typeof job === 'number') this.tr.setVersionstampedKey(this.keys.jobTemplate(job), record);
      else this.tr.set(this.keys.job(job), record);
    }
  }

  leased(jobId: Buffer, attempts: number, deadline: number): void {
    this.emit('active', jobId, [attempts, deadline]);
    this.tr.set(this.keys.job(jobId), encodeJobRecord({ leased: true, attempts, at: deadline, progress: undefined }));
  }

  /**
   * A lease moved to a new deadline: the job record only (no event), keeping its progress. Reads the
   * record, so an extend conflicts with a concurrent progress report of the job.
   */
  async extended(jobId: Buffer, attempts: number, deadline: number): Promise<void> {
    const before = await this.tr.get(this.keys.job(jobId));
    const progress = before === undefined ? undefined : decodeJobRecord(before).progress;
    this.tr.set(this.keys.job(jobId), encodeJobRecord({ leased: true, attempts, at: deadline, progress }));
  }

  /** Acked, popped, or consumed: the job left the queue. */
  completed(jobId: Buffer): void {
    this.emit('completed', jobId, []);
    this.tr.clear(this.keys.job(jobId));
  }

  retried(jobId: Buffer, attempts: number, visibleAt: number): void {
    this.emit('retried', jobId, [attempts, visibleAt]);
    this.tr.set(this.keys.job(jobId), encodeJobRecord({ leased: false, attempts, at: visibleAt, progress: undefined }));
  }

  /** A handler failed on the job (the job stays, or goes to the dead-letter queue: a separate event). */
  failed(jobId: Buffer, attempts: number, error: string): void {
    this.emit('failed', jobId, [attempts, error.slice(0, MAX_ERROR_CHARS)]);
  }

  deadLettered(jobId: Buffer, attempts: number): void {
    this.emit('dead-lettered', jobId, [attempts]);
    this.tr.clear(this.keys.job(jobId));
  }

  /** Progress, already written to the job record by the caller. */
  progress(jobId: Buffer, progress: Buffer): void {
    this.emit('progress', jobId, [progress]);
  }

  private emit(type: QueueEventType, job: JobRef, fields: readonly TupleItem[]): void {
    const written = this.written;
    if (written.nextUserVersion > 0xffff) throw new DocumentError('INVALID_ARGUMENT', 'a transaction can write at most 65,536 events per queue');
    this.tr.setVersionstampedKey(this.keys.eventTemplate(written.nextUserVersion++), encodeEvent(type, job, this.now, fields));
    if (!written.announced) {
      written.announced = true;
      this.tr.add(this.keys.head, 1);
    }
  }
}

/** An attempt's events in one queue's log so far: the next user version of its versionstamp, and whether it bumped the head. */
interface EventsWritten {
  nextUserVersion: number;
  announced: boolean;
}

/** Per attempt, of each queue (by `DocumentKeys.identity`): its settings, whether its events are on, its sink. */
interface QueueSlot {
  /** The settings key read (only by `configure` and `eventSettings`, or when events are not known off). */
  settings?: Promise<QueueEventSettings>;
  /** The settings when events are on, `undefined` when off. */
  on?: Promise<QueueEventSettings | undefined>;
  sink?: Promise<EventSink | undefined>;
  /**
   * What this attempt's sinks wrote, kept when `configure` drops the sink: a later sink goes on from
   * the next user version (else it would write over the events before it), and does not trim (those
   * events are at versionstamped keys this transaction cannot read back, which a trim's key selector
   * or range read could land on: accessed_unreadable). The next attempt or transaction trims.
   */
  written?: EventsWritten;
}

const EVENT_STATE = new ContextSlot<Map<string, QueueSlot>>('queue events', () => new Map());

/**
 * A queue handle's side of its event log: reads the settings once per attempt unless the queue is
 * known to have its events off (known-settings.ts), hands out the sink, and trims the log (at most
 * every {@link TRIM_INTERVAL_MS} per handle).
 */
export class QueueEventLog {
  private cachedKeys: EventKeys | undefined;
  private trimmedAt = -Infinity;
  private readonly known: KnownSettings;

  /**
   * @param database what the queue's database is known by (its `Database`): handles over one share
   *   what they know of queues whose events are off.
   */
  constructor(
    private readonly now: () => number,
    database: object,
  ) {
    this.known = KnownSettings.of(database);
  }

  keys(doc: DocumentKeys): EventKeys {
    const cached = this.cachedKeys;
    if (cached !== undefined && cached.doc.prefix.equals(doc.prefix)) return cached;
    this.cachedKeys = new EventKeys(doc);
    return this.cachedKeys;
  }

  /**
   * Starts finding out in this attempt whether the queue's events are on, so that a later {@link sink}
   * waits on nothing: the metadata version (no round trip on a cluster), and the settings key (1 point
   * read) unless the events are known off at that version.
   */
  prime(tr: Transaction, doc: DocumentKeys): void {
    // A queue whose events were off at the latest metadata version known (most): only the version is
    // read now, and by the time the operation asks (`knownOff`) it is in and most likely says so too;
    // if not, `sink` reads the settings then.
    if (this.known.likely(doc.identity, EVENTS_OFF)) KnownSettings.prefetch(tr);
    else this.eventsOn(tr, doc).catch(() => undefined);
  }

  /** The stored settings (the settings key read, once per attempt). */
  settings(tr: Transaction, doc: DocumentKeys): Promise<QueueEventSettings> {
    const slot = this.slot(tr, doc);
    slot.settings ??= tr.get(this.keys(doc).settings).then(decodeSettings);
    return slot.settings;
  }

  /**
   * Writes `next` over the settings `before` (as read by {@link settings}) for this attempt and its
   * later operations. Turning events on from off also bumps the metadata version: operations that
   * trusted "events off" at the old version conflict with it (known-settings.ts).
   */
  store(tr: Transaction, doc: DocumentKeys, before: QueueEventSettings, next: QueueEventSettings): void {
    tr.set(this.keys(doc).settings, encodeSettings(next));
    if (next.events && !before.events) {
      tr.bumpMetadataVersion();
      DocTransaction.of(tr).metadataVersionBumped();
      this.known.forget(doc.identity, EVENTS_OFF);
    }
    const slot = this.slot(tr, doc);
    slot.settings = Promise.resolve(next);
    slot.on = Promise.resolve(next.events ? next : undefined);
    slot.sink = undefined;
  }

  /** The sink of this attempt's events to the queue, or `undefined` when its events are off. */
  sink(tr: Transaction, doc: DocumentKeys): Promise<EventSink | undefined> {
    const slot = this.slot(tr, doc);
    slot.sink ??= this.eventsOn(tr, doc).then(async (settings) => {
      if (settings === undefined) return undefined;
      const keys = this.keys(doc);
      const now = this.now();
      let written = slot.written;
      if (written === undefined) {
        written = slot.written = { nextUserVersion: 0, announced: false };
        if (now - this.trimmedAt >= TRIM_INTERVAL_MS) {
          this.trimmedAt = now;
          await trim(tr, keys, settings, now);
        }
      }
      return new EventSink(tr, keys, now, written);
    });
    return slot.sink;
  }

  /**
   * Whether the queue's events are known off in this attempt without waiting: at the metadata version
   * already read, and not written by this attempt (then {@link sink} is `undefined`). `false` means ask {@link sink}.
   */
  knownOff(tr: Transaction, doc: DocumentKeys): boolean {
    // As {@link eventsOn} decides: known off unless this attempt read or wrote the settings.
    return this.slot(tr, doc).settings === undefined && this.known.hasNow(tr, doc.identity, EVENTS_OFF);
  }

  /** The settings if the queue's events are on, `undefined` if off: known off at the metadata version, or read. */
  private eventsOn(tr: Transaction, doc: DocumentKeys): Promise<QueueEventSettings | undefined> {
    const slot = this.slot(tr, doc);
    if (slot.on !== undefined) return slot.on;
    const on: Promise<QueueEventSettings | undefined> = KnownSettings.version(tr).then((version) => {
      if (slot.settings === undefined && this.known.has(version, doc.identity, EVENTS_OFF)) return undefined;
      return this.settings(tr, doc).then((settings) => {
        if (settings.events) return settings;
        // Not once this attempt has written the settings ({@link store}): its "off" is no truth at `version`.
        if (slot.on === on) this.known.learn(version, doc.identity, EVENTS_OFF);
        return undefined;
      });
    });
    slot.on = on;
    return on;
  }

  private slot(tr: Transaction, doc: DocumentKeys): QueueSlot {
    const state = DocTransaction.of(tr).local(EVENT_STATE);
    let slot = state.get(doc.identity);
    if (slot === undefined) {
      slot = {};
      state.set(doc.identity, slot);
    }
    return slot;
  }
}

/**
 * Trims the log to its retention, with snapshot reads (no conflicts) and range clears: by count, one
 * key selector read (the newest `maxEvents + 1`-th event) and a clear of it and everything older; by
 * age, the oldest event's time read, and when it is too old, up to {@link AGE_TRIM_PAGE} oldest events
 * read and those too old cleared.
 */
async function trim(tr: Transaction, keys: EventKeys, settings: QueueEventSettings, now: number): Promise<void> {
  const snapshot = tr.snapshot();
  const [kept, oldest] = await Promise.all([
    snapshot.getKey(lastLessThan(keys.end, -settings.maxEvents)),
    snapshot.getRangeAll(keys.begin, keys.end, { limit: 1 }),
  ]);
  let from = keys.begin;
  if (Buffer.compare(kept, keys.begin) >= 0 && Buffer.compare(kept, keys.end) < 0) {
    from = keyAfter(kept);
    tr.clearRange(keys.begin, from);
  }
  const cutoff = now - settings.maxAgeMs;
  if (oldest.length === 0 || eventTime(oldest[0].value) >= cutoff) return;
  const page = await snapshot.getRangeAll(from, keys.end, { limit: AGE_TRIM_PAGE });
  let end = from;
  for (const pair of page) {
    if (eventTime(pair.value) >= cutoff) break;
    end = keyAfter(pair.key);
  }
  if (Buffer.compare(end, from) > 0) tr.clearRange(from, end);
}

function eventTime(value: Buffer): number {
  const [, , at] = unpack(value);
  return typeof at === 'number' ? at : 0;
}
