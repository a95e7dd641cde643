import { Buffer } from 'node:buffer';
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

/**
 * Receipt slots: the keys at which pushes and pops without a caller's transaction (and without a
 * dedupe id) write their tokens and receipts, reused by this process's calls one after another. A
 * fresh token per call made every call insert a key that stayed for a minute or two (a store growing
 * by a key per push or pop, and an insert costs more than an update); a slot's key is written again
 * by the next call that holds it, so a process keeps about as many receipt keys per minute bucket as
 * it has calls running at once.
 *
 * A slot is held by one call from before its first attempt until it settles (its last attempt is
 * resolved), so no other call writes its key meanwhile. Its key may hold the receipt an earlier
 * holder left: a receipt carries its call's nonce, and a retry takes a receipt for its own only when
 * the kind and the nonce are its own ({@link receiptBody}).
 */
export class ReceiptSlot {
  /** The call's nonce: unique within this process. */
  readonly nonce = tokenCount++;

  constructor(
    /** The minute bucket of the call's receipt (when it started). */
    readonly bucket: number,
    /** The slot's token: a random process prefix (not the one of {@link newToken}) and the slot's number. */
    readonly token: Buffer,
    readonly index: number,
  ) {}
}

const slotPrefix = randomBytes(8);
const slotTokens: Buffer[] = [];
const freeSlots: number[] = [];

/** A free slot for a call starting at `now` (the most recently released one: its key is the likeliest to exist). */
export function acquireReceiptSlot(now: number): ReceiptSlot {
  let index = freeSlots.pop();
  if (index === undefined) {
    index = slotTokens.length;
    const token = Buffer.allocUnsafe(16);
    slotPrefix.copy(token, 0);
    token.writeBigUInt64BE(BigInt(index), 8);
    slotTokens.push(token);
  }
  return new ReceiptSlot(bucketOf(now), slotTokens[index], index);
}

/** Gives the slot back once its call has settled. */
export function releaseReceiptSlot(slot: ReceiptSlot): void {
  freeSlots.push(slot.index);
}

/** A receipt of `kind` for the call holding `slot`: the kind, the call's nonce (8 bytes), then `body`. */
export function receiptValue(kind: number, slot: ReceiptSlot, body?: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(RECEIPT_HEADER + (body?.length ?? 0));
  out[0] = kind;
  out.writeBigUInt64BE(slot.nonce, 1);
  if (body !== undefined) out.set(body, RECEIPT_HEADER);
  return out;
}

/** The body of the receipt `value` if the call holding `slot` wrote it (a receipt of `kind` with its nonce), else `undefined`. */
export function receiptBody(value: Buffer, kind: number, slot: ReceiptSlot): Buffer | undefined {
  if (value.length < RECEIPT_HEADER || value[0] !== kind || value.readBigUInt64BE(1) !== slot.nonce) return undefined;
  return value.subarray(RECEIPT_HEADER);
}

const RECEIPT_HEADER = 9;

/** The token of a merged run of calls (a fresh one per run): each call of it remembers it. */
export interface RunToken {
  readonly bucket: number;
  readonly token: Buffer;
}

/** Per call in a run receipt: its nonce (8 bytes) and the length of its body (4 bytes). */
const RUN_ENTRY_HEADER = 12;
/** Largest run receipt: within FDB's value limit (100,000 bytes); a larger run's calls write their own receipts. */
const MAX_RUN_RECEIPT_BYTES = 90_000;

/**
 * One receipt of `kind` for the calls of a merged run, each entry the call's nonce and its body (empty
 * for none), so that the run writes one key instead of one per call; `undefined` when it would not
 * fit in one value.
 */
export function runReceiptValue(
  kind: number,
  entries: readonly { readonly slot: ReceiptSlot; readonly body: Uint8Array | undefined }[],
): Buffer | undefined {
  let size = 1;
  for (const { body } of entries) size += RUN_ENTRY_HEADER + (body?.length ?? 0);
  if (size > MAX_RUN_RECEIPT_BYTES) return undefined;
  const out = Buffer.allocUnsafe(size);
  out[0] = kind;
  let at = 1;
  for (const { slot, body } of entries) {
    const length = body?.length ?? 0;
    out.writeBigUInt64BE(slot.nonce, at);
    out.writeUInt32BE(length, at + 8);
    if (body !== undefined) out.set(body, at + RUN_ENTRY_HEADER);
    at += RUN_ENTRY_HEADER + length;
  }
  return out;
}

/** The body the run receipt `value` holds for the call holding `slot`, else `undefined`. */
export function runReceiptBody(value: Buffer, kind: number, slot: ReceiptSlot): Buffer | undefined {
  if (value[0] !== kind) return undefined;
  for (let at = 1; at + RUN_ENTRY_HEADER <= value.length;) {
    const length = value.readUInt32BE(at + 8);
    if (value.readBigUInt64BE(at) === slot.nonce) return value.subarray(at + RUN_ENTRY_HEADER, at + RUN_ENTRY_HEADER + length);
    at += RUN_ENTRY_HEADER + length;
  }
  return undefined;
}

/** What a token records. The first byte says which operation wrote it. */
export const TokenKind = {
  pushed: 0x70, // 'p' (+ the call's nonce in a receipt slot's)
  popped: 0x52, // 'R' + the call's nonce + the popped record, or nothing more when the pop only dead-lettered (a receipt slot's)
  poppedRun: 0x50, // 'P' + per call of a merged run of pops: its nonce, the length of its record, the record (runReceiptValue)
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
