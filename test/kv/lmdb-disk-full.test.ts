import { execFileSync, spawn } from 'child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'fs';
import { constants, tmpdir } from 'os';
import { join } from 'path';
import { ErrorCodes } from '../../src/kv/contract/errors';
import { openLmdbDatabase } from '../../src/kv/lmdb';
import { closeIdleGates } from '../../src/kv/lmdb/lmdb-store';
import { writeFailure } from '../../src/kv/lmdb/store-failure';
import { compileScript, Worker } from './lmdb/child-processes';
import type { DiskFullReport, StepOutcome } from './lmdb/disk-full-worker';

/**
 * The lmdb engine on a full disk. The engine runs in a child process (`disk-full-worker.ts`), so that
 * a crash or an unhandled rejection of the `lmdb` package fails the test rather than killing jest.
 *
 * The disk is a 24 MiB tmpfs mounted for the test, which needs root on Linux; where none can be
 * mounted, the child runs under a file size limit instead (`ulimit -f`), which fails LMDB's writes the
 * same way but leaves the disk with free space, so the error is io_error rather than "disk full".
 */

jest.setTimeout(120_000);

const REPO = join(__dirname, '../..');
const TMPFS_BYTES = 24 * 1024 * 1024;
const FILLER_BYTES = 16 * 1024 * 1024;

let root: string;
let script: string;
let tmpfs: string | undefined;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'doclayer-lmdb-disk-full-'));
  script = compileScript(join(root, 'compiled'), 'disk-full-worker.ts');
  const mountPoint = join(root, 'tmpfs');
  mkdirSync(mountPoint);
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${TMPFS_BYTES}`, 'tmpfs', mountPoint], { stdio: 'ignore' });
    tmpfs = mountPoint;
  } catch {
    tmpfs = undefined;
  }
});

afterAll(async () => {
  // The gates of the stores this process closed are still open, on the tmpfs.
  await closeIdleGates();
  if (tmpfs) execFileSync('umount', [tmpfs]);
  rmSync(root, { recursive: true, force: true });
});

/** Runs the worker on a new store, on the tmpfs if there is one, and returns its report. */
async function fillTheDisk(name: string, durability: 'sync' | 'fast'): Promise<{ report: DiskFullReport; store: string }> {
  const folder = tmpfs ?? join(root, 'limited');
  mkdirSync(folder, { recursive: true });
  const store = join(folder, name);
  const args = [script, store, durability, join(folder, `${name}.filler`), String(tmpfs ? FILLER_BYTES : 0)];
  const env = { ...process.env, NODE_PATH: join(REPO, 'node_modules') };
  const child = tmpfs
    ? spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] })
    : // 8,192 blocks of 512 bytes: a 4 MiB data file; the ignored SIGXFSZ turns the limit into failed writes.
      spawn('/bin/sh', ['-c', `trap '' XFSZ; ulimit -f 8192; exec "${process.execPath}" "$@"`, 'sh', ...args], {
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
  const worker = new Worker(child);
  await worker.succeeded(100_000);
  return { report: JSON.parse(worker.lines[0]) as DiskFullReport, store };
}

function expectDiskFull(outcome: StepOutcome): void {
  expect(outcome).toMatchObject({ code: tmpfs ? ErrorCodes.file_not_writable : ErrorCodes.io_error, retryable: false });
  if (tmpfs) expect((outcome as { message: string }).message).toContain('the disk is full');
}

describe('LmdbEngine on a full disk', () => {
  describe.each(['sync', 'fast'] as const)("with durability '%s'", (durability) => {
    it('fails the commits that do not fit with a typed error, applies none of them, and commits again once space is freed', async () => {
      const { report, store } = await fillTheDisk(`store-${durability}`, durability);
      expect(report.acked.length).toBeGreaterThan(0);
      expect(report.failed).toHaveLength(8);
      for (const { outcome } of report.failed) expectDiskFull(outcome);
      // A commit on the full disk may fit in the pages the failed ones left allocated; it must settle.
      if (report.whileFull !== 'ok') expectDiskFull(report.whileFull);
      if (tmpfs) expect(report.afterFreeing).toBe('ok');
      // Under a file size limit nothing frees space.
      else if (report.afterFreeing !== 'ok') expectDiskFull(report.afterFreeing);
      expect(report.close).toBe('ok');
      if (tmpfs)
        expect(report.openWhileFull).toMatchObject({
          code: ErrorCodes.file_not_writable,
          message: expect.stringContaining('the disk is full') as unknown,
        });

      const db = openLmdbDatabase({ path: store });
      try {
        const keys = (await db.transact((tr) => tr.getRangeAll('w0', 'w9'))).map(({ key }) => key.toString());
        expect(keys.sort()).toEqual([...report.acked].sort());
        if (report.afterFreeing === 'ok') expect(await db.get('after-freeing')).toBeDefined();
      } finally {
        await db.close();
        // The next test needs the space.
        rmSync(store, { recursive: true, force: true });
        rmSync(`${store}-new`, { recursive: true, force: true });
      }
    });
  });
});

describe('writeFailure', () => {
  const folder = tmpdir();
  const lmdbError = (code: number) => Object.assign(new Error(`LMDB error ${code}`), { code });

  it('says the disk is full for ENOSPC and EDQUOT', () => {
    for (const errno of [constants.errno.ENOSPC, constants.errno.EDQUOT]) {
      const error = writeFailure(lmdbError(errno), folder);
      expect(error).toMatchObject({ code: ErrorCodes.file_not_writable, retryable: false, maybeCommitted: false });
      expect(error.message).toContain('the disk is full');
    }
  });

  it('says the memory map is full for MDB_MAP_FULL', () => {
    expect(writeFailure(lmdbError(-30792), folder)).toMatchObject({
      code: ErrorCodes.file_not_writable,
      message: expect.stringContaining('memory map') as unknown,
    });
  });

  it('says the store is damaged for MDB_CORRUPTED and MDB_PAGE_NOTFOUND', () => {
    for (const code of [-30796, -30797]) expect(writeFailure(lmdbError(code), folder).code).toBe(ErrorCodes.file_corrupt);
  });

  it('reports an EIO on a disk with free space as io_error', () => {
    expect(writeFailure(lmdbError(constants.errno.EIO), folder).code).toBe(ErrorCodes.io_error);
  });
});
