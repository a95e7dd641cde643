import { DocumentError } from '../../document/errors';

/**
 * Retry backoff (docs/queue.md, "Retry backoff"): how long an item that failed waits before it is
 * visible again, from how many times it has been attempted. `nack` applies it when given no
 * `delayMs`; a consumer applies it to an item whose handler threw, moving the item to the scheduled
 * area (its attempts counted in the stored record) instead of leaving it at the head.
 */
export type BackoffPolicy =
  /** The same delay after every failure. */
  | { readonly type: 'fixed'; readonly delayMs: number }
  /**
   * `delayMs * 2^(attempts - 1)`, at most `maxDelayMs` (default {@link DEFAULT_MAX_BACKOFF_MS}); with `jitter` (from 0, the
   * default, to 1) a random part of it is taken off: the delay is uniform in
   * `[d * (1 - jitter), d]`, so that items that failed together do not all come back together.
   */
  | { readonly type: 'exponential'; readonly delayMs: number; readonly maxDelayMs?: number; readonly jitter?: number };

/** The longest exponential delay when the policy sets no `maxDelayMs`: 2^31 - 1 ms, about 24.8 days. */
export const DEFAULT_MAX_BACKOFF_MS = 2 ** 31 - 1;

/** The policy, checked. @throws DocumentError INVALID_ARGUMENT */
export function checkedBackoff(policy: BackoffPolicy | undefined): BackoffPolicy | undefined {
  if (policy === undefined) return undefined;
  if (policy === null || typeof policy !== 'object') throw invalid(`backoff is an object, got ${String(policy)}`);
  milliseconds(policy.delayMs, 'backoff.delayMs');
  if (policy.type === 'fixed') return { type: 'fixed', delayMs: policy.delayMs };
  if (policy.type !== 'exponential')
    throw invalid(`backoff.type is 'fixed' or 'exponential', got ${JSON.stringify((policy as { type: unknown }).type)}`);
  if (policy.maxDelayMs !== undefined) milliseconds(policy.maxDelayMs, 'backoff.maxDelayMs');
  const jitter = policy.jitter ?? 0;
  if (typeof jitter !== 'number' || !(jitter >= 0 && jitter <= 1)) throw invalid(`backoff.jitter is a number from 0 to 1, got ${String(jitter)}`);
  return { type: 'exponential', delayMs: policy.delayMs, maxDelayMs: policy.maxDelayMs, jitter };
}

/**
 * The delay before the next attempt of an item attempted `attempts` times (1 after its first failure),
 * in whole milliseconds. `random` in [0, 1) draws the jitter.
 */
export function backoffDelay(policy: BackoffPolicy, attempts: number, random: () => number): number {
  if (policy.type === 'fixed') return policy.delayMs;
  const cap = policy.maxDelayMs ?? DEFAULT_MAX_BACKOFF_MS;
  // 2^1023 is the largest power of two a double holds; the cap applies long before.
  const full = Math.min(cap, policy.delayMs * 2 ** Math.min(Math.max(attempts, 1) - 1, 1023));
  const jitter = policy.jitter ?? 0;
  return jitter === 0 ? full : Math.round(full - full * jitter * random());
}

function milliseconds(value: unknown, what: string): void {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0)
    throw invalid(`${what} is a non-negative integer, got ${String(value)}`);
}

function invalid(message: string): DocumentError {
  return new DocumentError('INVALID_ARGUMENT', message);
}
