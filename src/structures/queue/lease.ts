import { Buffer } from 'node:buffer';
import { DocumentError } from '../../document/errors';
import type { JsonValue } from '../../document/types';
import type { Transaction } from '../../kv/contract/types';
import { pack, unpack, Uuid } from '../../tuple';
import { decodeRecord, type ItemRecord } from './item';
import type { QueueKeys } from './keys';
import { bucketOf, TokenKind } from './tokens';

/**
 * Leases (docs/queue.md, "Leases"): a leased item moves to the scheduled area at
 * `(deadline, lease id)`, marked leased, so that it becomes visible again by itself when the deadline
 * passes. The lease id is a fresh random UUID and part of the key: it is the fencing token, since an
 * ack, nack or extend finds the item only under the id and deadline it was leased with, and only
 * while it is still leased there.
 *
 * An extend moves the item to its new deadline and leaves a token `extended(new deadline)` under the
 * old one's bucket, so that a lease object from before the extend still finds the item; ack and nack
 * leave tokens too, so that an ack or nack repeated (by a retry after commit_unknown_result, or by the
 * caller) recognises its own earlier success instead of reporting the lease lost.
 */

/** An item leased for work outside the database. Plain data: it can be stored and sent elsewhere. */
export interface Lease<T = JsonValue> {
  /** The fencing token: a random UUID given to this lease only. */
  readonly id: string;
  /** The job's id (job.ts): the same across its leases, nacks and the dead-letter queue. */
  readonly jobId: string;
  readonly value: T;
  /** When the lease expires: milliseconds since the epoch, by the queue's clock. */
  readonly deadline: number;
  /** How many times the item has been leased, this lease included. */
  readonly attempts: number;
}

/** Where a lease stands, as found from its id and a deadline it had. */
export type LeaseState =
  | { readonly kind: 'held'; readonly key: Buffer; readonly deadline: number; readonly record: ItemRecord }
  | { readonly kind: 'acked' }
  | { readonly kind: 'nacked'; readonly deadLettered: boolean }
  | { readonly kind: 'lost' };

/** The id and deadline of a lease, checked. @throws DocumentError INVALID_ARGUMENT */
export function leaseKey(lease: Pick<Lease<unknown>, 'id' | 'deadline'>): { uuid: Uuid; deadline: number } {
  if (lease === null || typeof lease !== 'object') throw new DocumentError('INVALID_ARGUMENT', 'a lease is an object from lease()');
  if (!Number.isSafeInteger(lease.deadline)) {
    throw new DocumentError('INVALID_ARGUMENT', `a lease's deadline is an integer, got ${String(lease.deadline)}`);
  }
  try {
    return { uuid: new Uuid(lease.id), deadline: lease.deadline };
  } catch {
    throw new DocumentError('INVALID_ARGUMENT', `a lease's id is a UUID, got ${JSON.stringify(lease.id)}`);
  }
}

/**
 * Finds the lease: its item at `(deadline, id)` if still leased there, else what its token says
 * (following extends to their new deadline).
 *
 * Reads: 1 point read of the item's key; when the item is not there, 1 point read of the token per
 * step of the trail. The item key's read conflicts with whatever takes or moves the item.
 */
export async function findLease(tr: Transaction, keys: QueueKeys, uuid: Uuid, deadline: number): Promise<LeaseState> {
  const seen = new Set<number>();
  for (let at = deadline; !seen.has(at);) {
    seen.add(at);
    const key = keys.scheduledKey(at, uuid);
    const value = await tr.get(key);
    if (value !== undefined) {
      const record = decodeRecord(value);
      if (record.leased) return { kind: 'held', key, deadline: at, record };
    }
    const token = await tr.get(keys.token(bucketOf(at), uuid));
    if (token === undefined) return { kind: 'lost' };
    switch (token[0]) {
      case TokenKind.acked:
        return { kind: 'acked' };
      case TokenKind.nacked:
        return { kind: 'nacked', deadLettered: false };
      case TokenKind.deadLettered:
        return { kind: 'nacked', deadLettered: true };
      case TokenKind.extended: {
        const [next] = unpack(token.subarray(1));
        if (typeof next !== 'number') return { kind: 'lost' };
        at = next;
        break;
      }
      default:
        return { kind: 'lost' };
    }
  }
  return { kind: 'lost' };
}

/** The held lease, unless it has expired by `now`. @throws DocumentError LEASE_EXPIRED */
export function heldAt(state: LeaseState, now: number, id: string): Extract<LeaseState, { kind: 'held' }> {
  if (state.kind === 'held' && now < state.deadline) return state;
  const why =
    state.kind === 'held'
      ? `expired at ${state.deadline} (now ${now})`
      : state.kind === 'acked'
        ? 'was acked'
        : state.kind === 'nacked'
          ? 'was nacked'
          : 'expired and its item was taken again, or the queue was cleared';
  throw new DocumentError('LEASE_EXPIRED', `lease ${id} ${why}`);
}

/** The token value an extend leaves under the deadline it moved the item from. */
export function extendedTo(deadline: number): Buffer {
  return Buffer.concat([Buffer.of(TokenKind.extended), pack([deadline])]);
}
