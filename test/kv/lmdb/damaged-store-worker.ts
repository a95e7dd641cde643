/**
 * Opens or checks a possibly damaged store, run as `node damaged-store-worker.js <open|check> <store
 * folder>` in a child process, so that a SIGBUS or SIGSEGV fails the test instead of killing jest. It
 * prints one JSON line: for `open`, `{ keys }` (every pair read back) or `{ error }`; for `check`, the
 * `LmdbStoreReport` or `{ error }`.
 */
import { writeSync } from 'fs';
import { isKvError } from '../../../src/kv/contract/errors';
import { checkLmdbStore, openLmdbDatabase } from '../../../src/kv/lmdb';

async function open(path: string): Promise<unknown> {
  const db = openLmdbDatabase({ path });
  try {
    const pairs = await db.transact((tr) => tr.getRangeAll(Buffer.alloc(0), Buffer.from([0xff])));
    return { keys: pairs.length };
  } finally {
    await db.close();
  }
}

async function main(): Promise<void> {
  const [mode, path] = process.argv.slice(2);
  let result: unknown;
  try {
    result = mode === 'open' ? await open(path) : await checkLmdbStore(path);
  } catch (err) {
    result = { error: { code: isKvError(err) ? err.code : undefined, message: err instanceof Error ? err.message : String(err) } };
  }
  writeSync(1, `${JSON.stringify(result)}\n`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
