import { Limits } from '../contract/limits';

/**
 * Commit versions as FoundationDB hands them out: about 1,000,000 per second of the clock, strictly
 * increasing. The last one lives in the store, so versions keep increasing across processes (which
 * share the machine's clock) and across reopening.
 */

/** FDB's rate, with the clock in ms. */
const VERSIONS_PER_MS = 1000;

/** The MVCC window in versions, matching {@link Limits.maxTransactionAgeMs} at FDB's rate. */
export const WINDOW_VERSIONS = BigInt(Limits.maxTransactionAgeMs * VERSIONS_PER_MS);

/** The version the clock reads at `ms`. */
export function versionAt(ms: number): bigint {
  return BigInt(Math.max(0, Math.floor(ms * VERSIONS_PER_MS)));
}

/** The version of a commit at `now` after the last one, `last`: the clock's, but always past `last`. */
export function nextVersion(last: bigint, now: number): bigint {
  const fromClock = versionAt(now);
  return fromClock > last ? fromClock : last + 1n;
}
