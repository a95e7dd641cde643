/**
 * Tuple pack/unpack throughput against `fdb-tuple` (node-foundationdb's encoder) on the same tuples.
 *
 *   node -r ts-node/register/transpile-only bench/tuple.ts
 *
 * `runTupleBench()` returns the rows so that a combined runner can print every benchmark in one table.
 */
import * as fdbTuple from 'fdb-tuple';
import { pack, unpack, type Tuple } from '../src/tuple';

/** One measured operation: operations per second for this library and for the comparison. */
export interface BenchRow {
  operation: string;
  /** ops/s of doclayer */
  ours: number;
  /** ops/s of the library compared against (here `fdb-tuple`) */
  comparison: number;
  /** ours / comparison */
  ratio: number;
}

type FdbTuple = Parameters<typeof fdbTuple.pack>[0];

// A fixed PRNG (mulberry32) so every run measures the same tuples.
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Keys as a document layer writes them: mostly document paths (collection id, document id, field,
 * array index), plus index entries with nested values, short string keys, counters and binary ids.
 * Only types both libraries encode the same way (fdb-tuple writes unsafe integers as doubles).
 */
function workload(count: number): Tuple[] {
  const rand = prng(42);
  const int = (max: number) => Math.floor(rand() * max);
  const hex = (n: number) => {
    let s = '';
    for (let i = 0; i < n; i++) s += '0123456789abcdef'[int(16)];
    return s;
  };
  const docId = () => `${hex(8)}-${hex(4)}-${hex(4)}-${hex(4)}-${hex(12)}`;
  const fields = ['name', 'email', 'createdAt', 'tags', 'address', 'zip', 'city', 'score'];
  const words = ['users', 'orders', 'invoices', 'état', 'köln', 'events', 'sessions', 'items'];
  const out: Tuple[] = [];
  for (let i = 0; i < count; i++) {
    const kind = i % 10;
    if (kind < 5) out.push([int(64), docId(), fields[int(fields.length)], int(1000)]);
    else if (kind < 7) {
      out.push([int(64), 'idx', fields[int(fields.length)], [words[int(words.length)], int(1e6), null], docId()]);
    } else if (kind === 7) out.push([words[int(words.length)], hex(int(12) + 1)]);
    else if (kind === 8) out.push([int(2 ** 40) - 2 ** 39, -int(300), rand() * 1000, true]);
    else out.push(['blob', Buffer.from(hex(16), 'hex'), null, false]);
  }
  return out;
}

/** Operations per second of one timed round of repeated `run` calls, each doing `inputs` operations. */
function round(inputs: number, run: () => void, ms: number): number {
  let ops = 0;
  const start = process.hrtime.bigint();
  const deadline = start + BigInt(Math.round(ms * 1e6));
  let now = start;
  while (now < deadline) {
    run();
    ops += inputs;
    now = process.hrtime.bigint();
  }
  return ops / (Number(now - start) / 1e9);
}

/**
 * Best-of-rounds rates of `ours` and `theirs`, alternating between them so that both see the same
 * machine load; the best round is the one least disturbed by other processes.
 */
function duel(inputs: number, ours: () => void, theirs: () => void, budgetMs: number): [number, number] {
  const rounds = 6;
  const ms = budgetMs / (2 * rounds);
  let a = 0;
  let b = 0;
  for (let r = 0; r < rounds; r++) {
    a = Math.max(a, round(inputs, ours, ms));
    b = Math.max(b, round(inputs, theirs, ms));
  }
  return [a, b];
}

/** Measures pack and unpack for doclayer and fdb-tuple on the same tuples; about 2.5 s per row. */
export async function runTupleBench(budgetMs = 2500): Promise<BenchRow[]> {
  const tuples = workload(2000);
  const theirs = tuples as unknown as FdbTuple[];
  const packed = tuples.map((t) => pack(t));
  for (let i = 0; i < tuples.length; i++) {
    if (!packed[i].equals(fdbTuple.pack(theirs[i]))) throw new Error(`encodings differ for tuple ${i}`);
  }

  let sink = 0;
  const packOurs = () => {
    for (let i = 0; i < tuples.length; i++) sink += pack(tuples[i]).length;
  };
  const packTheirs = () => {
    for (let i = 0; i < theirs.length; i++) sink += fdbTuple.pack(theirs[i]).length;
  };
  const unpackOurs = () => {
    for (let i = 0; i < packed.length; i++) sink += unpack(packed[i]).length;
  };
  const unpackTheirs = () => {
    for (let i = 0; i < packed.length; i++) sink += fdbTuple.unpack(packed[i]).length;
  };
  // Warm both up so neither is measured while the JIT is still compiling it.
  duel(tuples.length, packOurs, packTheirs, 400);
  duel(tuples.length, unpackOurs, unpackTheirs, 400);

  const rows: BenchRow[] = [];
  for (const [operation, ours, comparison] of [
    ['tuple pack', packOurs, packTheirs],
    ['tuple unpack', unpackOurs, unpackTheirs],
  ] as const) {
    const [a, b] = duel(tuples.length, ours, comparison, budgetMs);
    rows.push({ operation, ours: a, comparison: b, ratio: a / b });
  }
  if (sink === 0) throw new Error('nothing was measured');
  return rows;
}

function printRows(rows: BenchRow[]): void {
  const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
  console.log('| operation | doclayer ops/s | fdb-tuple ops/s | ratio |');
  console.log('| --- | ---: | ---: | ---: |');
  for (const r of rows) {
    console.log(`| ${r.operation} | ${fmt(r.ours)} | ${fmt(r.comparison)} | ${r.ratio.toFixed(2)}x |`);
  }
}

if (require.main === module) {
  runTupleBench().then(printRows, (err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
