import type { DocLayer } from '../../src';
import type { Transaction } from '../../src/kv/contract/types';
import { Barrier } from '../support/barrier';
import type { KvCounts as Counts } from '../../src/kv/counting-engine';

/**
 * Helpers of the structure tests (`test/structures/*.test.ts`), which run on every engine through
 * `documentSuite` (test/document/document-suite.ts).
 */

/** Runs functions in `docs.transact`, counting how many times the retry loops ran them. */
export function counted(docs: DocLayer): { run<T>(fn: (tr: Transaction) => Promise<T>): Promise<T>; attempts(): number } {
  let attempts = 0;
  return {
    run: (fn) =>
      docs.transact(async (tr) => {
        attempts++;
        return fn(tr);
      }),
    attempts: () => attempts,
  };
}

/**
 * A barrier for `parties` transactions that may be retried: the first `parties` arrivals wait for each
 * other (so every first attempt has read before any commits), later arrivals (retries) pass.
 */
export function firstAttemptsBarrier(parties: number): () => Promise<void> {
  const barrier = new Barrier(parties);
  let arrivals = 0;
  return async () => {
    if (arrivals++ < parties) await barrier.arrive();
  };
}

/**
 * Runs `ops` at once, each in its own transaction, all reading before any commits (first attempts);
 * returns how many attempts ran beyond one each: the retries that conflicts caused.
 */
export async function retriesOf(docs: DocLayer, ops: readonly ((tr: Transaction) => Promise<unknown>)[]): Promise<number> {
  const allRead = firstAttemptsBarrier(ops.length);
  const tx = counted(docs);
  await Promise.all(
    ops.map((op) =>
      tx.run(async (tr) => {
        await op(tr);
        await allRead();
      }),
    ),
  );
  return tx.attempts() - ops.length;
}

/** The error a promise rejects with (fails the test when it resolves). */
export async function errorOf(promise: Promise<unknown>): Promise<Error & { code?: string }> {
  try {
    await promise;
  } catch (err) {
    return err as Error & { code?: string };
  }
  throw new Error('expected a rejection');
}

/** Everything written in some attempts: keys set or changed by atomic ops, clears and range clears. */
export function writesOf(counts: Counts): number {
  return counts.keysWritten + counts.clears + counts.clearRanges;
}
