import { Buffer } from 'node:buffer';
import { existsSync } from 'fs';
import { keyAfter } from '../contract/bytes';
import { isKvError, kvError } from '../contract/errors';
import { decodeConflictRecord } from './conflict-record';
import { checkDataFile, dataFilePath } from './file-checks';
import { LmdbStore, type StoreSnapshot } from './lmdb-store';

/** What {@link checkLmdbStore} found. */
export interface LmdbStoreReport {
  /** The folder of the store. */
  readonly path: string;
  /** True when no problem was found. */
  readonly ok: boolean;
  /** Each problem found, one line each; at most about a hundred (a badly damaged file has many). */
  readonly problems: readonly string[];
  /**
   * How many pairs the user keyspace holds, each read back through LMDB; `undefined` when the pages
   * are damaged, as reading them through LMDB could crash the process.
   */
  readonly keys: number | undefined;
  /** The size of the data file, and how many of its pages the walk reached. */
  readonly fileBytes: number;
  readonly pagesVisited: number;
}

/** Pairs read per step of the walk through the keyspace. */
const CHUNK = 10_000;

/**
 * Checks the store in the folder `path` for damage, and reports it rather than throwing. Other
 * processes may keep the store open and write to it meanwhile.
 *
 * First every page of the data file is walked with plain file reads (see `inspectDataFile`: page
 * numbers, page types, bounds, key order, overflow runs, entry counts). Only if they are sound is the
 * store opened: its format stamp, last version and conflict-log horizon must be readable, every pair of
 * the user keyspace is read in key order in one snapshot, and every conflict-log record must decode.
 *
 * The document layer checks its own structure on top of this one, through the ordinary KV API: this
 * check says that every key and value of the store can be read, not what they mean.
 *
 * Keys read: every key of the store, in one LMDB read transaction. Keys written: none (opening a new
 * store would create it, so a missing one is an error instead).
 *
 * @throws KvError file_not_found (1511) when `path` holds no store.
 */
export async function checkLmdbStore(path: string): Promise<LmdbStoreReport> {
  if (!existsSync(dataFilePath(path))) throw kvError('file_not_found', `there is no store at ${path}`);
  const file = checkDataFile(path);
  const report = { path, fileBytes: file.fileBytes, pagesVisited: file.pagesVisited };
  if (file.problems.length > 0) return { ...report, ok: false, problems: file.problems, keys: undefined };
  let store: LmdbStore;
  try {
    store = LmdbStore.open(path, 0n);
  } catch (err) {
    if (!isKvError(err)) throw err;
    return { ...report, ok: false, problems: [err.message], keys: undefined };
  }
  try {
    const snapshot = store.snapshot();
    try {
      const problems: string[] = [];
      const keys = readEverything(snapshot, problems);
      return { ...report, ok: problems.length === 0, problems, keys };
    } finally {
      snapshot.release();
    }
  } finally {
    await store.close();
  }
}

/** Reads the store's state, its keyspace and its conflict log; returns how many pairs the keyspace holds. */
function readEverything(snapshot: StoreSnapshot, problems: string[]): number {
  for (const [what, read] of [
    ['last version', () => snapshot.lastVersion()],
    ['conflict-log horizon', () => snapshot.horizon()],
  ] as const) {
    try {
      read();
    } catch (err) {
      problems.push(`the store's ${what} cannot be read: ${String(err)}`);
    }
  }
  let keys = 0;
  for (let begin: Buffer = Buffer.alloc(0); ;) {
    const pairs = snapshot.scan(begin, undefined, false, CHUNK);
    keys += pairs.length;
    if (pairs.length < CHUNK) break;
    begin = keyAfter(pairs[pairs.length - 1][0]);
  }
  for (let after: bigint | undefined; ;) {
    const entries = snapshot.conflictRecords(after, CHUNK);
    for (const entry of entries) {
      try {
        decodeConflictRecord(entry.record);
      } catch (err) {
        problems.push(`the conflict-log record of version ${entry.version} cannot be decoded: ${String(err)}`);
      }
    }
    if (entries.length < CHUNK) break;
    after = entries[entries.length - 1].version;
  }
  return keys;
}
