import { DocumentError } from '../../document/errors';
import type { Transaction } from '../../kv/contract/types';
import { ContextSlot, DocTransaction } from '../../document/doc-transaction';

/**
 * What one attempt of a transaction pushed, for the pushes and reads that follow in it:
 *
 * - user versions: every item a transaction pushes gets the commit's versionstamp, so items pushed in
 *   one transaction are told apart (and kept in push order) by the 2-byte user version after it;
 * - the earliest visibility time of its delayed pushes per queue: until commit the keys a
 *   versionstamped write may take are unreadable (FDB's accessed_unreadable), so reads of the
 *   scheduled area stop before them;
 * - the priorities above 0 it pushed to, per queue: ready-area reads stop at the read version's bound
 *   in priority 0, and skip the part of each such priority its pushes may take (`QueueKeys.readyRanges`).
 *
 * The record lives in the attempt's document context (`doc-transaction.ts`), so it never outlives the
 * attempt that made it.
 */

/** Items one transaction can push: the user version has 2 bytes. */
export const MAX_PUSHES_PER_TRANSACTION = 65_536;

/** What one attempt pushed so far, known without waiting. */
export interface Pushes {
  nextUserVersion: number;
  /**
   * Per queue (`DocumentKeys.identity`): the earliest `at` of a delayed push in this attempt. A shared
   * empty map until the attempt's first delayed push (most attempts make none: a take makes this
   * record too), then this attempt's own.
   */
  earliestDelayed: ReadonlyMap<string, number>;
  /** Per queue (`DocumentKeys.identity`): the priorities above 0 pushed to in this attempt (empty as above). */
  priorities: ReadonlyMap<string, Set<number>>;
}

const NONE_DELAYED: ReadonlyMap<string, number> = new Map();
const NO_PRIORITIES: ReadonlyMap<string, Set<number>> = new Map();

/** {@link Pushes}, with the attempt's read version. */
export interface OwnWrites extends Pushes {
  readonly readVersion: bigint;
}

interface Record {
  /** Its read version is 0 until {@link read} has it. */
  readonly pushes: Pushes & { readVersion: bigint };
  /** The same object once the read version is in it: asked for by the first {@link ownWrites}. */
  read: Promise<OwnWrites> | undefined;
}

const OWN_WRITES = new ContextSlot<Record>('queue pushes', () => ({
  pushes: { readVersion: 0n, nextUserVersion: 0, earliestDelayed: NONE_DELAYED, priorities: NO_PRIORITIES },
  read: undefined,
}));

/** The record of `tr`'s current attempt and its read version (fetched if it is not yet). */
export function ownWrites(tr: Transaction): Promise<OwnWrites> {
  const record = DocTransaction.of(tr).local(OWN_WRITES);
  if (record.read === undefined) {
    const { pushes } = record;
    record.read = tr.getReadVersion().then((readVersion) => {
      pushes.readVersion = readVersion;
      return pushes;
    });
    // A take that knows the attempt pushed nothing may never wait for it.
    record.read.catch(() => undefined);
  }
  return record.read;
}

/**
 * What `tr`'s current attempt pushed so far, without waiting: what a push needs (its user versions)
 * and what tells a take whether it must wait for the read version ({@link ownWrites}).
 */
export function pushesSoFar(tr: Transaction): Pushes {
  return DocTransaction.of(tr).local(OWN_WRITES).pushes;
}

/**
 * The first of `count` consecutive user versions for pushes in this attempt.
 *
 * @throws DocumentError INVALID_ARGUMENT beyond {@link MAX_PUSHES_PER_TRANSACTION} pushes.
 */
export function takeUserVersions(record: Pushes, count: number): number {
  const first = record.nextUserVersion;
  if (first + count > MAX_PUSHES_PER_TRANSACTION) {
    throw new DocumentError('INVALID_ARGUMENT', `a transaction can push at most ${MAX_PUSHES_PER_TRANSACTION} items`);
  }
  record.nextUserVersion = first + count;
  return first;
}

export function noteDelayedPush(record: Pushes, queue: string, at: number): void {
  const earliest = record.earliestDelayed.get(queue);
  if (earliest !== undefined && at >= earliest) return;
  const own = record.earliestDelayed === NONE_DELAYED ? new Map<string, number>() : (record.earliestDelayed as Map<string, number>);
  record.earliestDelayed = own.set(queue, at);
}

export function notePriorityPush(record: Pushes, queue: string, priority: number): void {
  if (priority === 0) return;
  let pushed = record.priorities.get(queue);
  if (pushed === undefined) {
    const own = record.priorities === NO_PRIORITIES ? new Map<string, Set<number>>() : (record.priorities as Map<string, Set<number>>);
    record.priorities = own.set(queue, (pushed = new Set()));
  }
  pushed.add(priority);
}
