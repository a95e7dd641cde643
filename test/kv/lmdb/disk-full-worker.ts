/**
 * The lmdb engine on a disk that fills up, run as `node disk-full-worker.js <store folder> <sync|fast>
 * <filler file> <filler bytes>` in a child process, so that a crash or an unhandled rejection fails
 * the test instead of killing jest.
 *
 * It writes the filler file (to leave little space), then commits from 8 concurrent writers until each
 * one's commit fails; commits once more on the full disk; deletes the filler; commits once more; and
 * closes. Last, it fills the disk to the last byte and opens a new store next to the first. It prints one JSON line, a {@link DiskFullReport}. Every step is bounded: one that does not
 * settle within {@link STEP_MS} is reported as `'pending'`.
 */
import { closeSync, openSync, unlinkSync, writeFileSync, writeSync } from 'fs';
import { isKvError } from '../../../src/kv/contract/errors';
import { openLmdbDatabase, type LmdbDurability } from '../../../src/kv/lmdb';

const STEP_MS = 20_000;
const WRITERS = 8;

/** How one step ended. */
export type StepOutcome = 'ok' | 'pending' | { code: number | undefined; name: string; retryable: boolean; message: string };

export interface DiskFullReport {
  /** Keys whose commit resolved while the disk filled up. */
  acked: string[];
  /** Keys whose commit failed, with how, one per writer. */
  failed: Array<{ key: string; outcome: StepOutcome }>;
  /** A commit on the full disk. */
  whileFull: StepOutcome;
  /** A commit once the filler was deleted. */
  afterFreeing: StepOutcome;
  close: StepOutcome;
  /** Opening a new store on a disk without a free byte. */
  openWhileFull: StepOutcome;
}

async function step(action: () => Promise<unknown>): Promise<StepOutcome> {
  let timer: NodeJS.Timeout | undefined;
  const pending = new Promise<'pending'>((resolve) => {
    timer = setTimeout(() => resolve('pending'), STEP_MS);
  });
  try {
    return await Promise.race([action().then(() => 'ok' as const), pending]);
  } catch (err) {
    return {
      code: isKvError(err) ? err.code : undefined,
      name: err instanceof Error ? err.name : typeof err,
      retryable: isKvError(err) && err.retryable,
      message: err instanceof Error ? err.message : String(err),
    };
  } finally {
    clearTimeout(timer);
  }
}

/** Appends to `file` until the disk (or the file size limit) refuses another byte. */
function fillUp(file: string): void {
  const fd = openSync(file, 'w');
  const chunk = Buffer.alloc(1 << 20);
  try {
    for (let size = chunk.length; size > 0;) {
      try {
        writeSync(fd, chunk, 0, size);
      } catch {
        size >>= 1;
      }
    }
  } finally {
    closeSync(fd);
  }
}

async function main(): Promise<void> {
  const [path, durability, filler, fillerBytes] = process.argv.slice(2);
  writeFileSync(filler, Buffer.alloc(Number(fillerBytes)));
  const db = openLmdbDatabase({ path, durability: durability as LmdbDurability });
  const report: DiskFullReport = { acked: [], failed: [], whileFull: 'pending', afterFreeing: 'pending', close: 'pending', openWhileFull: 'pending' };
  await Promise.all(
    Array.from({ length: WRITERS }, async (_, writer) => {
      for (let i = 0; ; i++) {
        const key = `w${writer}/${String(i).padStart(5, '0')}`;
        const outcome = await step(() => db.set(key, Buffer.alloc(20_000 + writer * 1000, writer)));
        if (outcome !== 'ok') return report.failed.push({ key, outcome });
        report.acked.push(key);
      }
    }),
  );
  report.whileFull = await step(() => db.set('on-full-disk', Buffer.alloc(20_000)));
  unlinkSync(filler);
  report.afterFreeing = await step(() => db.set('after-freeing', Buffer.alloc(20_000)));
  report.close = await step(() => db.close());
  fillUp(filler);
  report.openWhileFull = await step(async () => openLmdbDatabase({ path: `${path}-new` }).close());
  unlinkSync(filler);
  writeSync(1, `${JSON.stringify(report)}\n`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
