import { ErrorCodes, isKvError, type ErrorName } from '../../src/kv/contract/errors';

/**
 * Asserts that `action` fails with the KV error `codeOrName`, whether it throws synchronously or
 * rejects. Engines may report a bad mutation when it is made (the memory engine) or at commit (FDB,
 * whose bindings defer it), so tests put both in `action`: `() => { tr.set(k, v); return tr.commit(); }`.
 */
export async function expectKvError(action: Promise<unknown> | (() => unknown), codeOrName: number | ErrorName): Promise<void> {
  const code = typeof codeOrName === 'number' ? codeOrName : ErrorCodes[codeOrName];
  let outcome: { ok: true; value: unknown } | { ok: false; error: unknown };
  try {
    outcome = { ok: true, value: await (typeof action === 'function' ? action() : action) };
  } catch (error) {
    outcome = { ok: false, error };
  }
  if (outcome.ok) throw new Error(`expected KV error ${code}, but it succeeded with ${String(outcome.value)}`);
  if (!isKvError(outcome.error, code)) {
    const got = isKvError(outcome.error) ? `KV error ${outcome.error.code}` : String(outcome.error);
    throw new Error(`expected KV error ${code}, got ${got}`, { cause: outcome.error });
  }
}

/** How a promise has settled after `ms` milliseconds: its value, its error, or `'pending'`. */
export async function settledWithin<T>(
  promise: Promise<T>,
  ms: number,
): Promise<{ state: 'fulfilled'; value: T } | { state: 'rejected'; error: unknown } | { state: 'pending' }> {
  let timer: NodeJS.Timeout | undefined;
  const pending = new Promise<{ state: 'pending' }>((resolve) => {
    timer = setTimeout(() => resolve({ state: 'pending' }), ms);
  });
  try {
    return await Promise.race([
      promise.then(
        (value) => ({ state: 'fulfilled' as const, value }),
        (error: unknown) => ({ state: 'rejected' as const, error }),
      ),
      pending,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
