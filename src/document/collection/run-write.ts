import type { Database } from '../../kv/contract/database';
import type { Transaction } from '../../kv/contract/types';
import { casOf } from '../keys/version';
import type { MutationResult } from '../types';

/**
 * Runs a document write in the caller's transaction (the cas is then `undefined`: the caller commits)
 * or in one of its own with retries, whose versionstamp is the cas, unless `fn` says the document is
 * gone (a removed document has no version).
 */
export async function runWrite(
  kv: Database,
  tr: Transaction | undefined,
  fn: (tr: Transaction) => Promise<void | 'removed'>,
): Promise<MutationResult> {
  if (tr !== undefined) {
    await kv.transact(fn, { tr });
    return { cas: undefined };
  }
  let versionstamp: Promise<Buffer> | undefined;
  const outcome = await kv.transact(async (own) => {
    versionstamp = own.getVersionstamp();
    // Attempts that fail reject theirs; only the committed attempt's is awaited.
    versionstamp.catch(() => undefined);
    return fn(own);
  });
  return { cas: outcome === 'removed' ? undefined : casOf(await (versionstamp as Promise<Buffer>)) };
}
