/**
 * The change feed's costs, in one run (docs/changes.md):
 *
 * 1. What a write pays for the feed: the same writes to a collection with the feed on and one with it
 *    off, on the memory and lmdb engines, alternating rounds (best of 3 each) so both see the same
 *    machine load; keys written per write counted by the counting engine. Then the compaction those
 *    writes leave behind, per write.
 * 2. Follower latency on lmdb, from the writer's commit to delivery: a follower in this process (woken
 *    by the engine's in-process watch), and one in another process (woken by the engine's poll of
 *    other processes' commits); median and p99.
 *
 *   npm run bench:changes
 */
import { spawn } from 'child_process';
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { performance } from 'perf_hooks';
import { MutateInSpec, open, type Collection, type DocLayer } from '../src';
import { Database } from '../src/kv/contract/database';
import { CountingEngine } from '../src/kv/counting-engine';
import { openLmdbDatabase } from '../src/kv/lmdb';
import { openMemoryDatabase } from '../src/kv/memory/memory-engine';

const IDS = 1000;
const ROUNDS = 3;
const BUDGET_MS = 1500;
const CONCURRENCY = 16;

type Write = (c: Collection, i: number) => Promise<unknown>;

const WRITES: readonly { name: string; write: Write }[] = [
  { name: 'upsert (6 leaves)', write: (c, i) => c.upsert(`d${i % IDS}`, { name: 'bench', n: i, tags: ['a', 'b'], nested: { ok: true } }) },
  { name: 'field update (mutateIn)', write: (c, i) => c.mutateIn(`d${i % IDS}`, [MutateInSpec.upsert('n', i)]) },
];

/** Writes per second, `CONCURRENCY` writers at once, for `BUDGET_MS / ROUNDS`. */
async function rate(c: Collection, write: Write): Promise<number> {
  let next = 0;
  const deadline = performance.now() + BUDGET_MS / ROUNDS;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < deadline) await write(c, next++);
    }),
  );
  return next / ((performance.now() - start) / 1000);
}

/** Keys written (sets, versionstamped writes, atomic ops, clears, range clears) by one write. */
async function keysWritten(counter: CountingEngine, c: Collection, write: Write): Promise<number> {
  const { counts } = await counter.measure(() => write(c, 7));
  return counts.sets + counts.versionstamped + counts.atomicOps + counts.clears + counts.clearRanges;
}

interface CostRow {
  engine: string;
  write: string;
  off: number;
  on: number;
  keysOff: number;
  keysOn: number;
}

async function writeCost(engine: string, database: Database): Promise<{ rows: CostRow[]; compactionUsPerWrite: number; writes: number }> {
  const counter = new CountingEngine(database.engine);
  const docs = await open({ database: new Database(counter) });
  await docs.createCollection('app.on', { history: true });
  await docs.createCollection('app.off');
  const on = docs.collection('app.on');
  const off = docs.collection('app.off');
  for (let i = 0; i < IDS; i++) await Promise.all([on.upsert(`d${i}`, {}), off.upsert(`d${i}`, {})]);
  await docs.compactChanges();
  const rows: CostRow[] = [];
  let writes = 0;
  for (const { name, write } of WRITES) {
    let bestOn = 0;
    let bestOff = 0;
    for (let r = 0; r < ROUNDS; r++) {
      const a = await rate(off, write);
      const b = await rate(on, write);
      bestOff = Math.max(bestOff, a);
      bestOn = Math.max(bestOn, b);
      writes += (b * BUDGET_MS) / ROUNDS / 1000;
    }
    rows.push({
      engine,
      write: name,
      off: bestOff,
      on: bestOn,
      keysOff: await keysWritten(counter, off, write),
      keysOn: await keysWritten(counter, on, write),
    });
  }
  const started = performance.now();
  const report = await docs.compactChanges();
  const compactionUsPerWrite = ((performance.now() - started) * 1000) / Math.max(1, report.superseded);
  await docs.close();
  await database.close();
  return { rows, compactionUsPerWrite, writes };
}

function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

/**
 * Commit-to-delivery latencies (ms) of `count` writes, one every few ms, to a follower in this
 * process. A commit's time is when upsert's promise settles; the follower may be woken before the
 * writer's code after it runs, which counts as 0.
 */
async function inProcessLatency(docs: DocLayer, count: number): Promise<number[]> {
  const c = docs.collection('app.feed');
  const delivered = new Map<string, number>();
  const abort = new AbortController();
  const follower = (async () => {
    for await (const change of c.changes({ follow: true, signal: abort.signal })) {
      if (change.kind === 'drop') continue;
      delivered.set(String(change.id), performance.now());
      if (delivered.size === count) abort.abort();
    }
  })();
  const committed = new Map<string, number>();
  for (let i = 0; i < count; i++) {
    const id = `p${i}`;
    await c.upsert(id, { i });
    committed.set(id, performance.now());
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await follower;
  return [...committed].map(([id, at]) => Math.max(0, (delivered.get(id) as number) - at));
}

/** The same, with the follower in another process. */
async function crossProcessLatency(docs: DocLayer, path: string, count: number): Promise<number[]> {
  const c = docs.collection('app.feed');
  const [last] = await (async () => {
    const all = [];
    for await (const change of c.changes()) all.push(change.token);
    return [all.at(-1)];
  })();
  const child = spawn(
    process.execPath,
    ['-r', 'ts-node/register/transpile-only', join(__dirname, 'changes-follower.ts'), path, ...(last ? [last] : [])],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const delivered = new Map<string, number>();
  let ready: () => void = () => undefined;
  const readyPromise = new Promise<void>((resolve) => (ready = resolve));
  let partial = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      if (line === 'ready') ready();
      else {
        const [id, at] = line.split(' ');
        delivered.set(id, Number(at));
      }
    }
  });
  await readyPromise;
  await new Promise((resolve) => setTimeout(resolve, 500));
  const committed = new Map<string, number>();
  for (let i = 0; i < count; i++) {
    const id = `x${i}`;
    await c.upsert(id, { i });
    committed.set(id, performance.timeOrigin + performance.now());
    await new Promise((resolve) => setTimeout(resolve, 5 + (i % 7)));
  }
  const deadline = Date.now() + 10_000;
  while (delivered.size < count && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  child.kill('SIGTERM');
  return [...committed].filter(([id]) => delivered.has(id)).map(([id, at]) => Math.max(0, (delivered.get(id) as number) - at));
}

function summary(latencies: number[]): string {
  const sorted = [...latencies].sort((a, b) => a - b);
  return `median ${quantile(sorted, 0.5).toFixed(2)} ms, p99 ${quantile(sorted, 0.99).toFixed(2)} ms (${sorted.length} changes)`;
}

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'doclayer-bench-changes-'));
  try {
    const results = [await writeCost('memory', openMemoryDatabase()), await writeCost('lmdb', openLmdbDatabase({ path: join(root, 'cost') }))];
    console.log('\n| engine | write | feed off (ops/s) | feed on (ops/s) | on / off | keys written off → on |');
    console.log('| --- | --- | ---: | ---: | ---: | --- |');
    for (const { rows } of results) {
      for (const row of rows) {
        const f = (n: number) => Math.round(n).toLocaleString('en-US');
        console.log(
          `| ${row.engine} | ${row.write} | ${f(row.off)} | ${f(row.on)} | ${(row.on / row.off).toFixed(2)}x | ${row.keysOff} → ${row.keysOn} |`,
        );
      }
    }
    for (const [i, engine] of ['memory', 'lmdb'].entries()) {
      console.log(`compaction (${engine}): ${results[i].compactionUsPerWrite.toFixed(1)} µs per superseded entry`);
    }
    const path = join(root, 'latency');
    const docs = await open({ path });
    await docs.createCollection('app.feed', { history: true });
    console.log(`follower latency, lmdb, same process: ${summary(await inProcessLatency(docs, 300))}`);
    console.log(`follower latency, lmdb, another process: ${summary(await crossProcessLatency(docs, path, 300))}`);
    await docs.close();
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

void main();
