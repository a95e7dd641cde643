import { cpSync, mkdtempSync, openSync, rmSync, statSync, truncateSync, writeFileSync, writeSync, closeSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { ErrorCodes } from '../../src/kv/contract/errors';
import { backupLmdbStore, checkLmdbStore, openLmdbDatabase } from '../../src/kv/lmdb';
import { expectKvError } from '../support/kv-assertions';
import { seededRandom } from '../../src/kv/engine-parts/seeded-random';
import { compileScript, compileWorker, startWorker, type Worker } from './lmdb/child-processes';

/**
 * Damaged stores: copies of one real store, each damaged one way, opened and checked in a child process
 * (`damaged-store-worker.ts`) so that a SIGBUS or SIGSEGV fails the test rather than killing jest.
 */

jest.setTimeout(120_000);

const PAIRS = 3001;
const PAGE = 8192;

let root: string;
let pristine: string;
let checker: string;
let streamer: string;
let copies = 0;
const workers: Worker[] = [];

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'doclayer-lmdb-damaged-'));
  checker = compileScript(join(root, 'compiled'), 'damaged-store-worker.ts');
  streamer = compileWorker(join(root, 'compiled'));
  pristine = join(root, 'pristine');
  const db = openLmdbDatabase({ path: pristine });
  for (let i = 0; i < PAIRS; i += 100) {
    await db.transact((tr) => {
      for (let j = i; j < Math.min(PAIRS, i + 100); j++) {
        // Every seventh value is large enough for overflow pages.
        tr.set(`doc/${String(j).padStart(6, '0')}`, Buffer.alloc(j % 7 === 0 ? 20_000 : 200, j % 251));
      }
    });
  }
  await db.close();
});

afterEach(() => {
  for (const worker of workers.splice(0)) worker.kill();
});

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

/** A copy of the pristine store whose data file `damage` then changes. */
function damagedCopy(damage: (dataFile: string) => void): string {
  const copy = join(root, `copy-${copies++}`);
  cpSync(pristine, copy, { recursive: true });
  damage(join(copy, 'data.mdb'));
  return copy;
}

function overwrite(file: string, at: number, bytes: Buffer): void {
  const fd = openSync(file, 'r+');
  try {
    writeSync(fd, bytes, 0, bytes.length, at);
  } finally {
    closeSync(fd);
  }
}

function randomBytes(length: number, seed: number): Buffer {
  const random = seededRandom(seed);
  const out = Buffer.allocUnsafe(length);
  for (let i = 0; i < length; i++) out[i] = Math.floor(random() * 256);
  return out;
}

/** Runs the worker in `mode` on `path`; its JSON line. */
async function inChild(mode: 'open' | 'check', path: string): Promise<Record<string, unknown>> {
  const worker = startWorker(checker, [mode, path]);
  workers.push(worker);
  await worker.succeeded(60_000);
  return JSON.parse(worker.lines[0]) as Record<string, unknown>;
}

const damages: Array<[string, (file: string) => void]> = [
  ['truncated to half its size', (file) => truncateSync(file, Math.floor(statSync(file).size / 2))],
  ['truncated to 100 bytes', (file) => truncateSync(file, 100)],
  ['with both meta pages zeroed', (file) => overwrite(file, 0, Buffer.alloc(2 * PAGE))],
  ['overwritten with random bytes', (file) => writeFileSync(file, Buffer.alloc(statSync(file).size, randomBytes(65_536, 1)))],
  ['emptied', (file) => truncateSync(file, 0)],
];

describe('opening a damaged lmdb store', () => {
  it.each(damages)('fails with file_corrupt (1522) for a data file %s, without crashing', async (_, damage) => {
    const copy = damagedCopy(damage);
    expect(await inChild('open', copy)).toMatchObject({
      error: { code: ErrorCodes.file_corrupt, message: expect.stringContaining('damaged') as unknown },
    });
  });

  it('opens an intact copy and reads every pair', async () => {
    expect(
      await inChild(
        'open',
        damagedCopy(() => undefined),
      ),
    ).toEqual({ keys: PAIRS });
  });
});

describe('checkLmdbStore', () => {
  it.each([
    ...damages,
    [
      'with 64 KiB of random bytes in the middle',
      (file: string) => overwrite(file, Math.floor(statSync(file).size / 2), randomBytes(65_536, 2)),
    ] as const,
  ])('reports damage in a data file %s', async (_, damage) => {
    const report = await inChild('check', damagedCopy(damage));
    expect(report.ok).toBe(false);
    // Reading damaged pages through LMDB could crash: no key is read.
    expect(report.keys).toBeUndefined();
    expect((report.problems as string[]).length).toBeGreaterThan(0);
  });

  it('reports an intact store as sound, with every pair read', async () => {
    const report = await checkLmdbStore(damagedCopy(() => undefined));
    expect(report).toMatchObject({ ok: true, problems: [], keys: PAIRS });
    expect(report.pagesVisited).toBeGreaterThan(PAIRS / 7);
  });

  it('fails with file_not_found (1511) for a folder without a store', async () => {
    await expectKvError(checkLmdbStore(join(root, 'nothing-here')), 'file_not_found');
  });
});

describe('backupLmdbStore', () => {
  it('writes a consistent compacted copy while another process keeps committing', async () => {
    const path = join(root, 'busy');
    const busy = openLmdbDatabase({ path });
    await busy.set('before', 'x');
    await busy.close();
    // Each of its transactions writes tx/<seq>/a, /b and /c: a consistent copy has all three or none.
    const writer = startWorker(streamer, ['stream', path, 'fast', '4']);
    workers.push(writer);
    await writer.waitFor((lines) => lines.length >= 200, 60_000, '200 commits');
    const dest = join(root, 'busy-backup');
    await backupLmdbStore(path, dest);
    await writer.waitFor((lines) => lines.length >= 400, 60_000, '200 more commits');
    writer.kill();

    const report = await checkLmdbStore(dest);
    expect(report).toMatchObject({ ok: true, problems: [] });
    const copy = openLmdbDatabase({ path: dest });
    try {
      const pairs = await copy.transact((tr) => tr.getRangeAll('tx/', 'tx0'));
      const parts = new Map<string, string[]>();
      for (const { key } of pairs) {
        const [, seq, part] = key.toString().split('/');
        parts.set(seq, [...(parts.get(seq) ?? []), part]);
      }
      expect(parts.size).toBeGreaterThanOrEqual(200);
      for (const [seq, found] of parts) expect([seq, found]).toEqual([seq, ['a', 'b', 'c']]);
      expect((await copy.get('before'))?.toString()).toBe('x');
      // The copy is a working store.
      await copy.set('after', 'y');
      expect(statSync(join(dest, 'data.mdb')).size).toBeLessThanOrEqual(statSync(join(path, 'data.mdb')).size);
    } finally {
      await copy.close();
    }
  });

  it('refuses a destination that already holds a data file, with invalid_option_value (2006)', async () => {
    const dest = join(root, 'taken');
    await backupLmdbStore(pristine, dest);
    await expectKvError(backupLmdbStore(pristine, dest), 'invalid_option_value');
    expect((await checkLmdbStore(dest)).keys).toBe(PAIRS);
  });
});
