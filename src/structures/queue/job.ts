import { Buffer } from 'node:buffer';
import { DocumentError } from '../../document/errors';
import { unpack, Versionstamp } from '../../tuple';
import type { Candidate } from './head';
import type { QueueKeys } from './keys';

/**
 * Job ids (docs/queue.md, "Job ids, progress and events"). A job is an item from its push until it
 * leaves the queue; its id is the 12-byte versionstamp of its push, written as 24 hex digits. An item
 * at its push key (a ready item, or a delayed push) has it as the key's last element; once the item
 * moves (a lease, a nack, the dead-letter queue) its record carries it (item.ts). So the id never
 * changes, costs nothing to assign (the push reads nothing) and sorts by push order.
 */

const JOB_ID_PATTERN = /^[0-9a-f]{24}$/;

/** The 12 bytes of the job id of an item taken from `keys`: from its record, else from its key. */
export function jobIdBytes(keys: QueueKeys, item: Candidate): Buffer {
  if (item.record.jobId !== undefined) return item.record.jobId;
  const last = lastElement(keys, item.key);
  // Items moved before job ids existed carry none and sit under a lease's uuid: their key is all there is.
  return last instanceof Versionstamp ? last.toBytes() : legacyId(item.key);
}

/** The job id of an item, as a string. */
export function jobIdOf(keys: QueueKeys, item: Candidate): string {
  return jobIdBytes(keys, item).toString('hex');
}

/** A job id given by a caller, checked. @throws DocumentError INVALID_ARGUMENT */
export function parseJobId(id: string): Buffer {
  if (typeof id !== 'string' || !JOB_ID_PATTERN.test(id)) {
    throw new DocumentError('INVALID_ARGUMENT', `a job id is 24 hex digits, got ${JSON.stringify(id)}`);
  }
  return Buffer.from(id, 'hex');
}

/** The versionstamp of a job id, for keys that hold it. */
export function jobVersionstamp(id: Buffer): Versionstamp {
  return Versionstamp.fromBytes(id);
}

function lastElement(keys: QueueKeys, key: Buffer): unknown {
  // `keys.ready` is the item body's prefix followed by the one-byte tuple of the ready area (0).
  const items = unpack(key.subarray(keys.ready.length - 1));
  return items[items.length - 1];
}

/**
 * 12 bytes that stand for an item moved before job ids existed: the tail of its key (its lease's
 * uuid), stable until the item moves again.
 */
function legacyId(key: Buffer): Buffer {
  const out = Buffer.alloc(12);
  key.subarray(Math.max(0, key.length - 12)).copy(out, 12 - Math.min(12, key.length));
  return out;
}
