import { randomBytes } from 'node:crypto';
import type { Transaction } from '../../kv/contract/types';
import type { QueueKeys } from './keys';

/**
 * Idempotency tokens and receipts (docs/queue.md, "Retries"). An operation that runs in its own retry
 * loop writes a token in the same transaction as its effect; when `commit_unknown_result` makes the
 * loop run it again, the next attempt reads its token first and, finding it, knows the earlier attempt
 * committed (a receipt also holds what that attempt returned). Lease operations write a token per
 * lease, so that a repeated ack, nack or extend recognises its own earlier success.
 *
 * Tokens live in minute buckets, `tokens ++ tuple(bucket, token)`, and a bucket is cleared once it is
 * two minutes old (by a blind range clear, at most once a minute per handle): a retry finds its token
 * if it runs within a minute of the first attempt, and a dedupe id deduplicates for one to two minutes.
 */

export const BUCKET_MS = 60_000;

export function bucketOf(ms: number): number {
  return Math.floor(ms / BUCKET_MS);
}

// Tokens only need to be unique: a random process prefix and a counter, instead of 16 random bytes
// each (which cost a call into the system's generator per push).
const processPrefix = randomBytes(8);
let tokenCount = 0n;

/** A fresh 16-byte token, unique across processes (8 random bytes) and within one (a counter). */
export function newToken(): Buffer {
  const token = Buffer.allocUnsafe(16);
  processPrefix.copy(token, 0);
  token.writeBigUInt64BE(tokenCount++, 8);
  return token;
}

/** What a token records. The first byte says which operation wrote it. */
export const TokenKind = {
  pushed: 0x70, // 'p'
  popped: 0x72, // 'r' + the popped record, or nothing when the pop only dead-lettered
  leased: 0x6c, // 'l' + tuple of [deadline, lease uuid] pairs
  acked: 0x61, // 'a'
  nacked: 0x6e, // 'n'
  deadLettered: 0x64, // 'd': nacked after the last attempt
  extended: 0x65, // 'e' + tuple(new deadline)
} as const;

export function tokenValue(kind: number, body?: Uint8Array): Buffer {
  if (body === undefined) return Buffer.of(kind);
  const out = Buffer.allocUnsafe(1 + body.length);
  out[0] = kind;
  out.set(body, 1);
  return out;
}

/** Clears the token buckets at least two minutes old, once per bucket per sweeper. */
export class TokenSweeper {
  private sweptBelow = -Infinity;

  sweep(tr: Transaction, keys: QueueKeys, now: number): void {
    const below = bucketOf(now) - 1;
    if (below <= this.sweptBelow) return;
    this.sweptBelow = below;
    tr.clearRange(keys.tokens, keys.tokensBefore(below));
  }
}
