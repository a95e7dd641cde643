import type { Watch } from '../kv/contract/types';

/**
 * Waits for `watch` to fire, or for `signal` to abort (then the watch is cancelled). Resolves `true`
 * when woken by the watch, `false` when aborted. A watch that fails (its transaction did not
 * commit, or the engine dropped it) also wakes the waiter: it reads again and sets a new one.
 */
export async function waitForChange(watch: Watch, signal: AbortSignal | undefined): Promise<boolean> {
  if (signal?.aborted) {
    watch.cancel();
    return false;
  }
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<false>((resolve) => {
    onAbort = () => resolve(false);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([
      watch.promise.then(
        () => true,
        () => true,
      ),
      aborted,
    ]);
  } finally {
    watch.cancel();
    if (onAbort !== undefined) signal?.removeEventListener('abort', onAbort);
  }
}

/** `tr.watch(key)` whose failure (when its attempt does not commit) is handled by whoever awaits it. */
export function quietWatch(watch: Watch): Watch {
  watch.promise.catch(() => undefined);
  return watch;
}
