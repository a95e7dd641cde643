import { constants } from 'os';
import { type KvError, kvError } from '../contract/errors';
import { freeBytes } from './free-space';

/**
 * What a failure of LMDB means to a caller: the typed error a failed write, read, open or copy of
 * the store becomes. The `lmdb` package reports LMDB's return codes as an Error with a numeric `code`: a
 * positive errno, or one of LMDB's own codes (negative, see `lmdb.h`).
 *
 * - The disk is full: file_not_writable (1514). LMDB reports a short write as EIO, not ENOSPC, so an
 *   EIO on a filesystem with almost no free space left counts as full too. A store whose memory map
 *   cannot grow (MDB_MAP_FULL; the package grows it on demand, so only when the address space is
 *   exhausted) is full in the same way.
 * - The store's pages are damaged: file_corrupt (1522).
 * - Anything else the disk or LMDB reports: io_error (1510). After MDB_PANIC (LMDB met a failure it
 *   cannot recover from inside this process, such as the death of another process holding its flush
 *   lock during a write), the store must be closed and opened again.
 *
 * None is retryable: retrying a write on a full disk fails again.
 */

const MDB_MAP_FULL = -30792;
const MDB_INVALID = -30793;
const MDB_VERSION_MISMATCH = -30794;
const MDB_PANIC = -30795;
const MDB_CORRUPTED = -30796;
const MDB_PAGE_NOTFOUND = -30797;

const DISK_FULL = new Set<number>([constants.errno.ENOSPC, constants.errno.EDQUOT, constants.errno.EFBIG]);
const DAMAGED = new Set<number>([MDB_INVALID, MDB_VERSION_MISMATCH, MDB_CORRUPTED, MDB_PAGE_NOTFOUND]);

/**
 * Below this much free space, an EIO from a write is taken for a full disk: a short write leaves the
 * space it took allocated, so after one the filesystem is (nearly) full.
 */
const NEARLY_FULL_BYTES = 16 * 1024 * 1024;

/** The numeric code the package puts on its errors, if any. */
export function lmdbCode(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

/** The typed error for a write transaction on the store in `folder` that LMDB failed (and rolled back). */
export function writeFailure(err: unknown, folder: string): KvError {
  const code = lmdbCode(err);
  const detail = `${folder}: ${describe(err)}`;
  if (code !== undefined && DISK_FULL.has(code)) return diskFull(detail);
  if (code === MDB_MAP_FULL) return kvError('file_not_writable', `the store's memory map is full and could not grow (${detail})`);
  if (code === constants.errno.EIO) {
    const free = freeBytes(folder);
    if (free !== undefined && free < NEARLY_FULL_BYTES) return diskFull(`${free} bytes free; ${detail}`);
  }
  if (code !== undefined && DAMAGED.has(code)) return kvError('file_corrupt', `the store is damaged (${detail})`);
  if (code === MDB_PANIC) {
    return kvError('io_error', `an earlier failure left the store unusable in this process; close and reopen it (${detail})`);
  }
  return kvError('io_error', `the write to the store failed (${detail})`);
}

/** The typed error for an LMDB failure to begin a read of the store in `folder`. */
export function readFailure(err: unknown, folder: string): KvError {
  const code = lmdbCode(err);
  const detail = `${folder}: ${describe(err)}`;
  if (code !== undefined && DAMAGED.has(code)) return kvError('file_corrupt', `the store is damaged (${detail})`);
  if (code === MDB_PANIC) return kvError('io_error', `an earlier failure left the store unusable in this process; close and reopen it (${detail})`);
  return kvError('io_error', `the read of the store failed (${detail})`);
}

/** The typed error for an LMDB failure to open the store in `folder`. */
export function openFailure(err: unknown, folder: string): KvError {
  const code = lmdbCode(err);
  const detail = `${folder}: ${describe(err)}`;
  if (code !== undefined && DISK_FULL.has(code)) return kvError('file_not_writable', `the disk is full (${detail})`);
  if (code !== undefined && DAMAGED.has(code)) return kvError('file_corrupt', `the store is damaged (${detail})`);
  return kvError('io_error', `the store cannot be opened (${detail})`);
}

/**
 * The typed error for a failed copy of the store into `folder`. The package reports it with LMDB's
 * message only, so a full disk is recognized by the free space left.
 */
export function copyFailure(err: unknown, folder: string): KvError {
  const free = freeBytes(folder);
  const detail = `${folder}: ${describe(err)}`;
  if (free !== undefined && free < NEARLY_FULL_BYTES)
    return kvError('file_not_writable', `the disk is full; the copy was removed (${free} bytes free; ${detail})`);
  return kvError('io_error', `the copy failed and was removed (${detail})`);
}

function diskFull(detail: string): KvError {
  return kvError('file_not_writable', `the disk is full; nothing of this commit was written (${detail})`);
}

function describe(err: unknown): string {
  const code = lmdbCode(err);
  const message = err instanceof Error ? err.message : String(err);
  return code === undefined ? message : `${message} (code ${code})`;
}
