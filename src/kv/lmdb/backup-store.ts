import { existsSync, mkdirSync, rmSync } from 'fs';
import { kvError } from '../contract/errors';
import { dataFilePath } from './file-checks';
import { LmdbStore } from './lmdb-store';
import { copyFailure } from './store-failure';

/**
 * Writes a consistent, compacted copy of the store in the folder `path` into the folder `dest` (created
 * if missing), while other processes keep reading and writing the store: the copy is the store as of
 * one moment, with only the pages in use. The copy is itself a store: open it with `openLmdbDatabase`.
 * On failure nothing is left at `dest` but the folder.
 *
 * Keys read: every key of the store, in one LMDB read transaction. Keys written: none in the store.
 *
 * @throws KvError file_not_found (1511) when `path` holds no store; invalid_option_value (2006) when
 *   `dest` already holds a data file; file_not_writable (1514) when the disk of `dest` is full; io_error
 *   (1510) when the copy fails otherwise; the errors of opening the store (a damaged one: file_corrupt,
 *   1522).
 */
export async function backupLmdbStore(path: string, dest: string): Promise<void> {
  if (!existsSync(dataFilePath(path))) throw kvError('file_not_found', `there is no store at ${path}`);
  const target = dataFilePath(dest);
  if (existsSync(target)) throw kvError('invalid_option_value', `${dest} already holds a data file; back up into a new or empty folder`);
  mkdirSync(dest, { recursive: true });
  const store = LmdbStore.open(path, 0n);
  try {
    await store.copyTo(dest);
  } catch (err) {
    rmSync(target, { force: true });
    throw copyFailure(err, dest);
  } finally {
    await store.close();
  }
}
