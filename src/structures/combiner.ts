import type { Transaction } from '../kv/contract/types';
import type { StructureAccess } from '../document/structure-port';
import { combinerFor, type Merge, type MergedOperation, type RunTransaction } from '../document/combiner';
import { settleReadsNow } from '../kv/client/hand-over';
import { pack, type TupleItem } from '../tuple';

/**
 * Combining concurrent writes to one structure (docs/structures.md, "Hot structures"): calls on one
 * structure made without a caller's transaction share transactions, as src/document/combiner.ts
 * describes (what each caller sees, failures, retries, merged operations).
 */

export { MAX_BATCH, type Merge, type MergedOperation, type Settled } from '../document/combiner';

/** The key of a structure among its collection's combiners: its id element, packed. */
export function structureKey(element: TupleItem): string {
  return typeof element === 'string' ? `s${element}` : pack([element]).toString('latin1');
}

/**
 * Runs `fn` in `tr`, or without one in a transaction combined with the concurrent calls on the same
 * structure (see above), the structure named by its {@link structureKey} (which a handle makes once).
 */
export function runCombined<T>(
  access: StructureAccess,
  key: string,
  tr: Transaction | undefined,
  fn: (tr: Transaction) => Promise<T>,
  merge?: Merge<unknown, T>,
): Promise<T> {
  if (tr !== undefined) return access.run(tr, fn);
  return combinerFor(access, key, runnerOf(access)).submit(fn, merge);
}

/**
 * Runs the call of `operation` with `arg` combined with the concurrent calls on the structure named
 * `key`: its body made only if it runs alone ({@link Combiner.submitMerged}).
 */
export function runMerged<A, T>(access: StructureAccess, key: string, operation: MergedOperation<A, T>, arg: A): Promise<T> {
  return combinerFor(access, key, runnerOf(access)).submitMerged(operation, arg);
}

/** How each collection's structures start their transactions: one function per collection, not per call. */
const runners = new WeakMap<StructureAccess, RunTransaction>();

function runnerOf(access: StructureAccess): RunTransaction {
  let run = runners.get(access);
  if (run === undefined) {
    // A combined call's body is the structure's operation alone: its reads settle at once, and the
    // call takes one turn of the event loop, its commit's.
    run = (body) =>
      access.run(undefined, (tr) => {
        settleReadsNow(tr);
        return body(tr);
      });
    runners.set(access, run);
  }
  return run;
}
