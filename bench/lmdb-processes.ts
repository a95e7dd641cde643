/**
 * `npm run bench:lmdb-processes`: processes sharing one LMDB folder, each incrementing one counter (a
 * read-modify-write of one key, `counter.incr()`), against one process doing the same, in one run:
 * ratio = the processes' combined rate / one process's rate. Contention across processes is resolved
 * by optimistic conflicts and retries (FDB's), so this shows how much of one process's rate survives.
 *
 *   npm run bench:lmdb-processes -- [--processes 4] [--callers 1,32] [--ms 3000] [--durability fast|sync]
 *
 * Each child opens the store and increments once before the clock starts; all start together. Run
 * whole (no options), it writes its table into bench/results.md. Rates are noisy on a shared machine:
 * compare the ratios of one run.
 */
import { fork, type ChildProcess } from 'child_process';
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { open } from '../src';
import { writeResultsSection } from './results-section';

type Durability = 'fast' | 'sync';

/** In a child: open, increment once, say 'ready'; on 'go', increment for `ms` with `callers` loops; send the count. */
async function child(path: string, ms: number, callers: number, durability: Durability): Promise<void> {
  const docs = await open({ path, durability });
  const counter = docs.collection().counter('hits');
  await counter.incr();
  process.send?.('ready');
  await new Promise((resolve) => process.once('message', resolve));
  let count = 0;
  const end = Date.now() + ms;
  await Promise.all(
    Array.from({ length: callers }, async () => {
      while (Date.now() < end) {
        await counter.incr();
        count++;
      }
    }),
  );
  await docs.close();
  process.send?.(count);
}

function message(proc: ChildProcess): Promise<unknown> {
  return new Promise((resolve, reject) => {
    proc.once('message', resolve);
    proc.once('exit', (code) => reject(new Error(`a bench process exited with ${String(code)}`)));
  });
}

/** `processes` processes on one new store; their combined increments per second. */
async function run(processes: number, callers: number, ms: number, durability: Durability): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'doclayer-bench-processes-'));
  try {
    const args = ['child', join(dir, 'store'), String(ms), String(callers), durability];
    const procs = Array.from({ length: processes }, () => fork(__filename, args, { execArgv: process.execArgv }));
    await Promise.all(procs.map(message));
    const counts = await Promise.all(
      procs.map((proc) => {
        const done = message(proc);
        proc.send('go');
        return done;
      }),
    );
    return (counts as number[]).reduce((a, b) => a + b, 0) / (ms / 1000);
  } finally {
    rmSync(dir, { recursive: true, force: true });
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
  const ms = Number(option(args, 'ms') ?? 3000);
  const durability = (option(args, 'durability') ?? 'fast') as Durability;
  if (durability !== 'fast' && durability !== 'sync') throw new Error(`--durability is fast or sync, not ${String(durability)}`);
  const rows: string[] = [];
  for (const callers of callerCounts) {
    const one = await run(1, callers, ms, durability);
    const many = await run(processes, callers, ms, durability);
    const row = `| counter incr, '${durability}', ${callers} caller${callers === 1 ? '' : 's'} per process | ${Math.round(one).toLocaleString('en-US')} | ${Math.round(many).toLocaleString('en-US')} | ${(many / one).toFixed(2)}x |`;
    console.log(row);
    rows.push(row);
  }
  if (args.length === 0) {
    const file = writeResultsSection('bench:lmdb-processes', [
      `${processes} processes on one LMDB folder against 1 process, each incrementing one counter; ratio = their combined rate / one process's rate (target: >= 0.25x).`,
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
  const [, , , path, ms, callers, durability] = process.argv;
  child(path, Number(ms), Number(callers), durability as Durability).catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
} else {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
