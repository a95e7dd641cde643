import { DocumentError } from '../../document/errors';
import type { DocumentKeys } from '../../document/keys/layout';
import type { JsonValue } from '../../document/types';
import { keyAfter } from '../../kv/contract/bytes';
import type { KeyValue, Transaction } from '../../kv/contract/types';
import { decodeJobRecord, encodeJobRecord, type QueueEventLog } from './events';
import { decodePayload, decodeRecord, encodePayload } from './item';
import { jobIdOf } from './job';
import type { QueueKeys } from './keys';

/**
 * Jobs by state (docs/queue.md, "Counts and listing"), and a job's record and progress. A job's state
 * follows from where its item is and the time, so counts and listings read the items:
 *
 * - waiting: ready items, and scheduled items already visible (nacked, delayed, expired leases);
 * - delayed: scheduled items not yet visible and not leased (delayed pushes, nacks with a delay);
 * - active: leased items whose deadline has not passed;
 * - dead: the items of the dead-letter queue.
 *
 * Leased and delayed items share the scheduled area and only their values say which is which, so
 * counting reads the whole scheduled area (values included) and the size key; the ready items are
 * counted as the size less the scheduled ones, without reading them.
 */

export type JobState = 'waiting' | 'delayed' | 'active' | 'dead';

export const JOB_STATES: readonly JobState[] = ['waiting', 'delayed', 'active', 'dead'];

/** Jobs per state. */
export interface QueueCounts {
  readonly waiting: number;
  readonly delayed: number;
  readonly active: number;
  /** The dead-letter queue's size. */
  readonly dead: number;
}

/** A job listed by `queue.jobs()`. */
export interface QueueJob<T = JsonValue> {
  readonly id: string;
  readonly state: JobState;
  /** Leases it had (this one included, for an active job). */
  readonly attempts: number;
  readonly value: T;
  /** A delayed job's visibility time, an active job's deadline (ms since the epoch). */
  readonly at?: number;
}

/** What `queue.job(id)` knows of a job in the queue (from its job record: events must be on). */
export interface QueueJobInfo {
  readonly id: string;
  readonly state: Exclude<JobState, 'dead'>;
  readonly attempts: number;
  /** A delayed job's visibility time, an active job's deadline. */
  readonly at?: number;
  /** The last progress reported in this attempt, if any. */
  readonly progress?: JsonValue;
}

/** Scheduled items read per page by counts and listings. */
export const SCAN_PAGE = 1_000;

/** The state of a scheduled item at `now`. */
function scheduledState(leased: boolean, at: number, now: number): JobState {
  if (at <= now) return 'waiting';
  return leased ? 'active' : 'delayed';
}

/** Counts the scheduled items of a page by state (into `into`). */
export function countScheduled(
  keys: QueueKeys,
  page: readonly KeyValue[],
  now: number,
  into: { delayed: number; active: number; visible: number },
): void {
  for (const pair of page) {
    const position = keys.position(pair.key);
    if (position.area !== 'scheduled') continue;
    const state = scheduledState(decodeRecord(pair.value).leased, position.at, now);
    if (state === 'active') into.active++;
    else if (state === 'delayed') into.delayed++;
    else into.visible++;
  }
}

/** A listed job from a scheduled or ready item, if it is in `state` at `now`. */
export function listedJob<T>(keys: QueueKeys, pair: KeyValue, state: JobState, now: number): QueueJob<T> | undefined {
  const record = decodeRecord(pair.value);
  const position = keys.position(pair.key);
  const found = position.area === 'ready' ? 'waiting' : scheduledState(record.leased, position.at, now);
  // The dead-letter queue's items are all dead, whatever their state there.
  if (found !== state && state !== 'dead') return undefined;
  const id = jobIdOf(keys, { key: pair.key, record });
  const value = decodePayload(record.payload) as T;
  return found === 'waiting' || state === 'dead' || position.area !== 'scheduled'
    ? { id, state, attempts: record.attempts, value }
    : { id, state, attempts: record.attempts, value, at: position.at };
}

/**
 * The ranges a listing of `state` reads, in pop order; for `dead`, every item of the dead-letter queue
 * (`keys` are then its keys). `ready` are the readable ranges of the ready area and `earliestOwn` the
 * earliest delayed push of the reading transaction (`own-writes.ts`): the keys of its own pushes are
 * unreadable until it commits.
 */
export function listingRanges(
  keys: QueueKeys,
  state: JobState,
  now: number,
  ready: readonly (readonly [Buffer, Buffer])[],
  earliestOwn: number | undefined,
): (readonly [Buffer, Buffer])[] {
  const own = earliestOwn ?? Infinity;
  const later = [keys.scheduledAfter(now), own === Infinity ? keys.scheduledEnd : keys.scheduledAfter(own - 1)] as const;
  if (state === 'delayed' || state === 'active') return [later];
  const head = [[keys.scheduled, keys.scheduledAfter(Math.min(now, own - 1))] as const, ...ready];
  return state === 'dead' ? [...head, later] : head;
}

/** The key after the last of a page, where the next page starts. */
export function nextFrom(page: readonly KeyValue[]): Buffer {
  return keyAfter(page[page.length - 1].key);
}

/** A job's info from its record. */
export function jobInfo(id: string, value: Buffer, now: number): QueueJobInfo {
  const record = decodeJobRecord(value);
  const state = scheduledState(record.leased, record.at, now);
  const base = { id, state: state as QueueJobInfo['state'], attempts: record.attempts };
  const withAt = state === 'waiting' ? base : { ...base, at: record.at };
  return record.progress === undefined ? withAt : { ...withAt, progress: decodePayload(record.progress) };
}

/**
 * Writes a job's progress into its record and a `progress` event, if the queue's events are on and the
 * job is in the queue. Reads the settings and the job record (which conflicts with whatever moves the
 * job meanwhile: then the retry finds the job gone, or moved on).
 *
 * @throws DocumentError INVALID_VALUE, VALUE_TOO_DEEP, DOCUMENT_TOO_LARGE for the value.
 */
export async function writeProgress(tr: Transaction, log: QueueEventLog, doc: DocumentKeys, jobId: Buffer, progress: Buffer): Promise<boolean> {
  const keys = log.keys(doc);
  const [sink, value] = await Promise.all([log.sink(tr, doc), tr.get(keys.job(jobId))]);
  if (sink === undefined || value === undefined) return false;
  tr.set(keys.job(jobId), encodeJobRecord({ ...decodeJobRecord(value), progress }));
  sink.progress(jobId, progress);
  return true;
}

/** A progress value, checked and packed as an item is. */
export function encodeProgress(value: JsonValue): Buffer {
  return encodePayload(value);
}

/** A listing's state, checked. @throws DocumentError INVALID_ARGUMENT */
export function jobState(state: unknown): JobState {
  if (!JOB_STATES.includes(state as JobState)) {
    throw new DocumentError('INVALID_ARGUMENT', `state is one of ${JOB_STATES.join(', ')}, got ${JSON.stringify(state)}`);
  }
  return state as JobState;
}
