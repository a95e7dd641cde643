import type { Watch } from '../../kv/contract/types';

/**
 * Waiting for a queue to change: a blocked pop or an idle consumer sleeps until its watch on the
 * queue's `pushed` key fires, `ms` pass (the time left, or when the next scheduled item becomes
 * visible: no write announces that), or `signal` aborts; then it cancels the watch. A watch that fails
 * or is cancelled (too many watches, a closed database) shortens the wait to at most
 * {@link FALLBACK_MS}, so that a waiter neither hangs nor spins.
 */

export const FALLBACK_MS = 100;

/** The longest a Node timer waits: a longer delay fires at once (so a far visibility time would spin). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Resolves once any of the three happens; never rejects. */
export function waitForChange(watch: Watch | undefined, ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) {
    watch?.cancel();
    return Promise.resolve();
  }
  return new Promise<void>((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      if (timer !== undefined) clearTimeout(timer);
      signal?.removeEventListener('abort', finish);
      watch?.cancel();
      resolve();
    };
    const sleep = (delay: number) => {
      if (finished) return;
      if (timer !== undefined) clearTimeout(timer);
      if (Number.isFinite(delay)) timer = setTimeout(finish, Math.min(Math.max(0, delay), MAX_TIMER_MS));
    };
    sleep(ms);
    signal?.addEventListener('abort', finish, { once: true });
    const fallback = () => sleep(Math.min(Math.max(ms, 0), FALLBACK_MS));
    watch?.promise.then((changed) => (changed ? finish() : fallback()), fallback);
  });
}

/** Sleeps `ms`, or less if `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return waitForChange(undefined, ms, signal);
}
