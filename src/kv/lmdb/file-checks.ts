import { existsSync, statSync } from 'fs';
import { join } from 'path';
import { type KvError, kvError } from '../contract/errors';
import { inspectDataFile, inspectHeader, type DataFileReport } from './data-file';

/**
 * The checks of a store's data file that run before LMDB maps it, on every open: LMDB trusts its file,
 * so a damaged one would kill the process with SIGBUS or SIGSEGV instead of failing the open.
 *
 * - An empty or too short data file (LMDB would silently start a new, empty store in an emptied one).
 * - Both meta pages: LMDB's magic number, format version and page size, and roots inside the file.
 * - A file shorter than its last page in use is walked page by page (see `inspectDataFile`): LMDB may
 *   leave the last pages unwritten when they are free, but a page in use past the end is truncation.
 *
 * Damage inside pages that are not roots (garbage written over the middle of the file) is found only
 * by walking every page: {@link checkDataFile}, which `checkLmdbStore` runs.
 */

/** The data file of the store in `folder`. */
export function dataFilePath(folder: string): string {
  return join(folder, 'data.mdb');
}

/** Another process creating the store writes its meta pages within this time of creating the file. */
const CREATION_MS = 1000;
/** How often a check that found damage runs, in case it read the file in the middle of a commit. */
const ATTEMPTS = 3;
const RETRY_MS = 20;

/**
 * @throws KvError file_corrupt (1522) when the data file of the store in `folder` is damaged in a way
 *   that can be seen without reading every page.
 */
export function assertOpenable(folder: string): void {
  const file = dataFilePath(folder);
  if (!existsSync(file)) return;
  waitForCreation(file);
  const problems = repeatWhileChanging(file, (path) => {
    const header = inspectHeader(path);
    const { meta } = header;
    if (header.problems.length > 0 || !meta) return header;
    if (BigInt(header.fileBytes) >= (meta.lastPage + 1n) * BigInt(meta.pageSize)) return header;
    return inspectDataFile(path);
  });
  if (problems.length > 0) throw damaged(folder, problems);
}

/** Walks every page of the data file of the store in `folder` (see `inspectDataFile`). */
export function checkDataFile(folder: string): DataFileReport {
  let report: DataFileReport | undefined;
  repeatWhileChanging(dataFilePath(folder), (path) => (report = inspectDataFile(path)));
  return report!;
}

/** file_corrupt (1522) for the store in `folder`, listing the first problems. */
export function damaged(folder: string, problems: readonly string[]): KvError {
  const shown = problems.slice(0, 5).join('; ');
  const more = problems.length > 5 ? `; and ${problems.length - 5} more` : '';
  return kvError('file_corrupt', `the store at ${folder} is damaged: ${shown}${more}`);
}

/** A data file that another process has just created is empty until it writes the meta pages. */
function waitForCreation(file: string): void {
  const deadline = Date.now() + CREATION_MS;
  while (statSync(file).size === 0 && Date.now() < deadline) pause(RETRY_MS);
}

/**
 * Runs `inspect` until it finds no problem, at most {@link ATTEMPTS} times, and returns the problems of
 * the last run: while other processes commit, plain reads of the file can mix pages of two commits (a
 * meta page read while it is written, a page reused after the meta page that led to it was read), and
 * such a mix does not repeat; damage does.
 */
function repeatWhileChanging(file: string, inspect: (file: string) => { problems: readonly string[] }): readonly string[] {
  let problems: readonly string[] = [];
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    if (attempt > 0) pause(RETRY_MS);
    problems = inspect(file).problems;
    if (problems.length === 0) return problems;
  }
  return problems;
}

function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
