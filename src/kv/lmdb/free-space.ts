import { statfsSync } from 'fs';
import { dirname } from 'path';
import { kvError } from '../contract/errors';

/**
 * Free space on the filesystem of a store. LMDB writes its data file with `pwrite`, which fails
 * cleanly when the disk is full, but it shares its lock file through a memory map: touching a page of
 * that map that the filesystem cannot allocate kills the process with SIGBUS. Opening a store is when
 * LMDB touches the most of it, so a store is not opened on a (nearly) full disk.
 */

/** Opening a store needs room for its lock file (65,744 bytes with 1,024 readers) and first pages. */
export const MIN_FREE_BYTES_TO_OPEN = 1024 * 1024;

/**
 * Free bytes on the filesystem of `path` (or of its nearest existing parent) for this process: root
 * may use the blocks reserved for it. `undefined` when the filesystem does not say.
 */
export function freeBytes(path: string): number | undefined {
  for (let at = path; ; at = dirname(at)) {
    try {
      const stats = statfsSync(at);
      const blocks = process.getuid?.() === 0 ? stats.bfree : stats.bavail;
      return blocks * stats.bsize;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || dirname(at) === at) return undefined;
    }
  }
}

/** @throws KvError file_not_writable (1514) when the filesystem of `folder` is (nearly) full. */
export function assertRoomToOpen(folder: string): void {
  const free = freeBytes(folder);
  if (free !== undefined && free < MIN_FREE_BYTES_TO_OPEN) {
    throw kvError(
      'file_not_writable',
      `the disk is full: ${free} bytes free where the store ${folder} is; opening it needs ${MIN_FREE_BYTES_TO_OPEN}`,
    );
  }
}
