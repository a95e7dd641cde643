/**
 * `npm run bench:lmdb-processes`: processes sharing one LMDB folder, each incrementing one counter (a
 * read-modify-write of one key, `counter.incr()`), against one process doing the same, in one run:
 * ratio = the processes' combined rate / one process's rate. Contention across processes is resolved
 * by optimistic conflicts and retries (FDB's), so this shows how much of one process's rate survives.
 *
 *   npm run bench:lmdb-processes -- [--processes 4] [--callers 1,32] [--ms 1000] [--rounds 3] [--durability fast|sync]
 *
 * For each caller count, one process on one new store and `--processes` processes on another are
 * started once and kept; each opens its store and increments once before any clock starts. Then the
 * two sides take turns, `--rounds` times, each running `--ms` (all of a side's processes start
 * together), and each side keeps its best round, as `bench:redis` does: the round least disturbed by
 * the other jobs of a shared machine. Run whole (no options), it writes its table into
 * bench/results.md. Compare the ratios of one run.
 */
import { fork, type ChildProcess } from 'child_process';
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { open } from '../src';
import { writeResultsSection } from './results-section';

type Durability = 'fast' | 'sync';

/**
 * In a child: open, increment once, say 'ready'; then for each message `ms` (a number), increment for
 * that long with `callers` loops and send the count; on 'close', close the store and exit.
 */
async function child(path: string, callers: number, durability: Durability): Promise<void> {
  const docs = await open({ path, durability });
  const counter = docs.collection().counter('hits');
  await counter.incr();
  process.on('message', (message: unknown) => {
    if (message === 'close') {
      void docs.close().then(() => process.exit(0));
      return;
    }
    const end = Date.now() + Number(message);
    let count = 0;
    void Promise.all(
      Array.from({ length: callers }, async () => {
        while (Date.now() < end) {
          await counter.incr();
          count++;
        }
      }),
    ).then(() => process.send?.(count));
  });
  process.send?.('ready');
}

function message(proc: ChildProcess): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`a bench process exited with ${String(code)}`));
    proc.once('exit', onExit);
    proc.once('message', (value) => {
      proc.off('exit', onExit);
      resolve(value);
    });
  });
}

/** Processes on one new store, each opened and ready. */
class Side {
  private constructor(
    private readonly dir: string,
    private readonly procs: ChildProcess[],
  ) {}

  static async start(processes: number, callers: number, durability: Durability): Promise<Side> {
    const dir = mkdtempSync(join(tmpdir(), 'doclayer-bench-processes-'));
    const args = ['child', join(dir, 'store'), String(callers), durability];
    const procs = Array.from({ length: processes }, () => fork(__filename, args, { execArgv: process.execArgv }));
    const side = new Side(dir, procs);
    try {
      await Promise.all(procs.map(message));
    } catch (err) {
      await side.stop();
      throw err;
    }
    return side;
  }

  /** Increments per second of all its processes together, over `ms`. */
  async round(ms: number): Promise<number> {
    const counts = await Promise.all(
      this.procs.map((proc) => {
        const done = message(proc);
        proc.send(ms);
        return done;
      }),
    );
    return (counts as number[]).reduce((a, b) => a + b, 0) / (ms / 1000);
  }

  async stop(): Promise<void> {
    await Promise.all(
      this.procs.map(
        (proc) =>
          new Promise<void>((resolve) => {
            if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
            proc.once('exit', () => resolve());
            proc.send('close');
          }),
      ),
    );
    rmSync(this.dir, { recursive: true, force: true });
  }
}

function option(args: string[], name: string): string | undefined {
  const at = args.indexOf(`--${name}`);
  return at < 0 ? undefined : args[at + 1];
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const processes = Number(option(args, 'processes') ?? 4);
  const callerCounts = (option(args, 'callers') ?? '1,32').split(',').map(Number);
  const ms = Number(option(args, 'ms') ?? 1000);
  const rounds = Number(option(args, 'rounds') ?? 3);
  const durability = (option(args, 'durability') ?? 'fast') as Durability;
  if (durability !== 'fast' && durability !== 'sync') throw new Error(`--durability is fast or sync, not ${String(durability)}`);
  const rows: string[] = [];
  for (const callers of callerCounts) {
    const single = await Side.start(1, callers, durability);
    const many = await Side.start(processes, callers, durability).catch(async (err: unknown) => {
      await single.stop();
      throw err;
    });
    let one = 0;
    let all = 0;
    try {
      for (let round = 0; round < rounds; round++) {
        one = Math.max(one, await single.round(ms));
        all = Math.max(all, await many.round(ms));
      }
    } finally {
      await Promise.all([single.stop(), many.stop()]);
    }
    const row = `| counter incr, '${durability}', ${callers} caller${callers === 1 ? '' : 's'} per process | ${Math.round(one).toLocaleString('en-US')} | ${Math.round(all).toLocaleString('en-US')} | ${(all / one).toFixed(2)}x |`;
    console.log(row);
    rows.push(row);
  }
  if (args.length === 0) {
    const file = writeResultsSection('bench:lmdb-processes', [
      `${processes} processes on one LMDB folder against 1 process, each incrementing one counter; ratio = their combined rate / one process's rate (target: >= 0.25x). Best of ${rounds} alternating rounds of ${ms} ms per side, in one run on a shared 2-core machine.`,
      '',
      `| operation | 1 process (ops/s) | ${processes} processes (ops/s) | ratio |`,
      '| --- | ---: | ---: | ---: |',
      ...rows,
      '',
    ]);
    console.log(`written to ${file}`);
  }
}

if (process.argv[2] === 'child') {
  const [, , , path, callers, durability] = process.argv;
  child(path, Number(callers), durability as Durability).catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
} else {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
