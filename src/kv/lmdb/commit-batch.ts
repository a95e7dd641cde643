import { compareBytes, keyAfter } from '../contract/bytes';
import { type KvError, kvError } from '../contract/errors';
import { Limits } from '../contract/limits';
import { applyAtomicOp } from '../client/atomic-ops';
import type { FaultInjector } from '../engine-parts/fault-injector';
import type { Mutation } from '../client/mutation';
import { coalesceRanges } from '../client/range-set';
import type { KeyRange } from '../contract/key-range';
import { fillVersionstamp, versionstampOf } from '../client/versionstamp-template';
import { encodeConflictRecord } from './conflict-record';
import type { StoreWriter } from './lmdb-store';
import type { StoredConflictLog } from './stored-conflict-log';
import { nextVersion } from './versions';

/** What a writing transaction sends to commit. */
export interface CommitRequest {
  /** The read version, if the transaction read anything. */
  readonly readVersion: bigint | undefined;
  /** When the read version was taken, on the engine's clock (ms). */
  readonly readTakenAt: number | undefined;
  /** How many read conflicts the transaction recorded. */
  readonly readConflictCount: number;
  /**
   * Read conflict ranges as recorded (in any order, overlapping), made when asked: the check makes and
   * coalesces them only when a commit after the read version could conflict with them.
   */
  readonly readConflicts: () => readonly KeyRange[];
  /** Coalesced write conflict ranges (the keys of versionstamped keys are added at commit). */
  readonly writeConflicts: readonly KeyRange[];
  readonly mutations: readonly Mutation[];
  /** The transaction's approximate size, to bound a batch. */
  readonly bytes: number;
}

export type CommitOutcome =
  | {
      readonly committed: true;
      readonly version: bigint;
      readonly versionstamp: Buffer;
      /** An injected fault: the commit is applied, and reported as commit_unknown_result (1021). */
      readonly reportUnknownResult: boolean;
    }
  | { readonly committed: false; readonly error: KvError };

export interface BatchContext {
  readonly now: number;
  readonly conflicts: StoredConflictLog;
  readonly faults: FaultInjector | undefined;
  /**
   * Told the batch's version and write conflict ranges (coalesced), and the store's version before
   * it, when some transaction of it commits.
   */
  readonly recorded?: (version: bigint, ranges: readonly KeyRange[], previous: bigint) => void;
  /**
   * The oldest read version at which a transaction of this process may still be checked after this
   * batch (one holding a read snapshot, or queued for a later batch), if any: the conflict log's
   * mirror keeps only the commits after it. Without it, every commit of the last 5 s is kept.
   */
  readonly oldestRead?: () => bigint | undefined;
}

/**
 * Commits a batch of transactions inside one exclusive LMDB write transaction: FDB's resolver and
 * commit proxy in one synchronous step. The batch shares one commit version, the store's last one
 * advanced as the clock says; each transaction that commits gets the next batch order, so versionstamps
 * (version, order) stay unique and increase in commit order.
 *
 * Each transaction in turn, as the memory engine orders it: an injected `tooOld`; with read conflicts, a
 * read version too old to check (over 5 s, or older than the conflict log) is transaction_too_old
 * (1007), and a read conflict range written after the read version (by any process, or by an earlier
 * transaction of this batch) is not_committed (1020); an injected `notCommitted`; then its mutations
 * are applied and its write ranges recorded. Last, the batch appends one record to the store's conflict
 * log, saves the new version and prunes the log.
 *
 * @returns one outcome per request, in order. Throws only on a store failure (the caller then rolls the
 *   write transaction back).
 */
export function commitBatch(writer: StoreWriter, requests: readonly CommitRequest[], context: BatchContext): CommitOutcome[] {
  const { now, conflicts, faults } = context;
  // Read only when a transaction of the batch has read conflicts to check (blind writes have none).
  const storeHorizon = () => conflicts.storeHorizon(writer);
  const previous = conflicts.catchUp(writer);
  const version = nextVersion(previous, now);
  // Each committed transaction's write conflict ranges, coalesced.
  const written: (readonly KeyRange[])[] = [];
  const outcomes: CommitOutcome[] = [];
  let order = 0;
  for (const request of requests) {
    const fault = faults?.next();
    const refusal = fault === 'tooOld' ? kvError('transaction_too_old', 'injected fault') : check(request, context, storeHorizon);
    if (refusal) {
      outcomes.push({ committed: false, error: refusal });
      continue;
    }
    if (fault === 'notCommitted') {
      outcomes.push({ committed: false, error: kvError('not_committed', 'injected fault') });
      continue;
    }
    const versionstamp = versionstampOf(version, order++);
    const stamped = applyMutations(writer, request.mutations, versionstamp);
    const ranges = stamped.length === 0 ? request.writeConflicts : coalesceRanges([...request.writeConflicts, ...stamped]);
    conflicts.record(version, now, ranges);
    written.push(ranges);
    outcomes.push({ committed: true, version, versionstamp, reportUnknownResult: fault === 'unknownResult' });
  }
  if (order > 0) {
    // A combined call's batch is often one transaction: its ranges are the batch's.
    const ranges = written.length === 1 ? written[0] : coalesceRanges(written.flat());
    writer.appendConflictRecord(version, encodeConflictRecord({ time: now, ranges }));
    context.recorded?.(version, ranges, previous);
    writer.setLastVersion(version);
    conflicts.prune(writer, now, version, context.oldestRead === undefined ? -1n : context.oldestRead());
  }
  return outcomes;
}

/** Why `request` may not commit, if it may not. */
function check(request: CommitRequest, context: BatchContext, horizon: () => bigint): KvError | undefined {
  const { readVersion, readTakenAt } = request;
  if (readVersion === undefined || readTakenAt === undefined || request.readConflictCount === 0) return undefined;
  const age = context.now - readTakenAt;
  if (age > Limits.maxTransactionAgeMs || context.conflicts.isTooOld(readVersion, horizon())) {
    return kvError('transaction_too_old', `the read version is ${Math.round(age)} ms old`);
  }
  // A transaction that ran alone (no commit of any process, nor of this batch, since its read version)
  // has nothing to conflict with: its ranges are not even coalesced.
  const { conflicts } = context;
  const conflict = conflicts.hasCommitsAfter(readVersion) ? conflicts.findConflict(readVersion, coalesceRanges(request.readConflicts())) : undefined;
  if (!conflict) return undefined;
  return kvError(
    'not_committed',
    `[${conflict.range.begin.toString('hex')}, ${conflict.range.end.toString('hex')}) was written at ` +
      `version ${conflict.version}, after read version ${readVersion}`,
  );
}

/**
 * Applies mutations in order, filling versionstamp placeholders with `versionstamp`.
 *
 * @returns the write conflict ranges of the keys that versionstamped keys became (FDB's commit proxy
 *   adds them, as they are unknown before the commit).
 */
function applyMutations(writer: StoreWriter, mutations: readonly Mutation[], versionstamp: Buffer): KeyRange[] {
  const stampedKeys: KeyRange[] = [];
  for (let i = 0; i < mutations.length; i++) {
    const m = mutations[i];
    switch (m.type) {
      case 'set':
        writer.set(m.key, m.value);
        break;
      case 'clear':
        writer.clear(m.key);
        break;
      case 'clearRange':
        i = replaceRange(writer, mutations, i, versionstamp);
        break;
      case 'atomic': {
        const value = applyAtomicOp(m.op, writer.get(m.key), m.operand);
        if (value === undefined) writer.clear(m.key);
        else writer.set(m.key, value);
        break;
      }
      case 'setVersionstampedKey': {
        const key = fillVersionstamp(m.key, versionstamp);
        writer.set(key, m.value);
        stampedKeys.push({ begin: key, end: keyAfter(key) });
        break;
      }
      case 'setVersionstampedValue':
        writer.set(m.key, fillVersionstamp(m.value, versionstamp));
        break;
    }
  }
  return stampedKeys;
}

/**
 * Applies the range clear `mutations[at]` together with the run of sets right after it inside its
 * range, in ascending key order (a document rewrite: the clear of the document, its version, then its
 * keys in key order), as one {@link StoreWriter.replaceRange}: each key the run sets again costs one
 * put, or none when it already holds that value, instead of a delete and an insert. The run ends at
 * the first mutation that is no set (a clear, an atomic operation, which reads), or whose key is
 * outside the range or not after the previous one; what follows it is applied after the replacement,
 * as it would be after the clear and the run.
 *
 * @returns the index of the run's last mutation (the clear's when the run is empty).
 */
function replaceRange(writer: StoreWriter, mutations: readonly Mutation[], at: number, versionstamp: Buffer): number {
  const clear = mutations[at] as Extract<Mutation, { type: 'clearRange' }>;
  const keys: Buffer[] = [];
  const values: Buffer[] = [];
  // The ascending run of sets from the first at or after the range's beginning; its keys at or past
  // the range's end (the last ones, as they ascend) are then left out.
  for (let i = at + 1; i < mutations.length; i++) {
    const m = mutations[i];
    if (m.type !== 'set' && m.type !== 'setVersionstampedValue') break;
    if (keys.length === 0 ? compareBytes(m.key, clear.begin) < 0 : compareBytes(m.key, keys[keys.length - 1]) <= 0) break;
    keys.push(m.key);
    values.push(m.type === 'set' ? m.value : fillVersionstamp(m.value, versionstamp));
  }
  while (keys.length > 0 && compareBytes(keys[keys.length - 1], clear.end) >= 0) {
    keys.pop();
    values.pop();
  }
  if (keys.length === 0) writer.clearRange(clear.begin, clear.end);
  else writer.replaceRange(clear.begin, clear.end, keys, values);
  return at + keys.length;
}
