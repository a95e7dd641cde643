import { existsSync, mkdtempSync, readdirSync, readlinkSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { closeIdleGates, GATE_FOLDER, LmdbStore } from '../../src/kv/lmdb/lmdb-store';

/**
 * The gates a process keeps open for the stores it closed (src/kv/lmdb/lmdb-store.ts, "Closing"): a
 * bounded number, and none after closeIdleGates. Counted as this process's open file descriptors,
 * which Linux lists in /proc/self/fd.
 */

const root = mkdtempSync(join(tmpdir(), 'doclayer-lmdb-gates-'));

afterAll(async () => {
  await closeIdleGates();
  rmSync(root, { recursive: true, force: true });
});

/** How many files under this test's folder this process has open. */
function openFiles(): number {
  let count = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      if (readlinkSync(join('/proc/self/fd', fd)).startsWith(root)) count++;
    } catch {
      // Closed since the listing.
    }
  }
  return count;
}
// Elsewhere there is no list of a process's open files to count: the test cannot observe what it checks.
const onLinux = existsSync('/proc/self/fd') ? it : it.skip;

onLinux('keeps at most 16 gates of closed stores open, and closeIdleGates closes them all', async () => {
  await closeIdleGates();
  const before = openFiles();
  for (let i = 0; i < 40; i++) {
    const path = join(root, `store-${i}`);
    await LmdbStore.open(path, 1n).close();
    expect(existsSync(join(path, GATE_FOLDER, 'lock.mdb'))).toBe(true);
  }
  // Each kept gate holds three files (its lock file, and its data file twice, as LMDB opens it); 40
  // kept would be 120.
  const kept = openFiles() - before;
  expect(kept).toBe(3 * 16);
  await closeIdleGates();
  expect(openFiles()).toBe(0);
});

onLinux('shares one gate between the stores of one folder that this process has open', async () => {
  await closeIdleGates();
  const path = join(root, 'shared');
  const first = LmdbStore.open(path, 1n);
  const afterFirst = openFiles();
  const second = LmdbStore.open(path, 1n);
  // The second store of the folder opens no file of its own: neither its environment nor its gate.
  expect(openFiles()).toBe(afterFirst);
  await first.close();
  // The gate stays open for the second store, which still commits.
  await second.write((writer) => writer.set(Buffer.from('k'), Buffer.from('v')));
  await second.close();
});
