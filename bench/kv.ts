/**
 * KV engine throughput: point reads, point writes, 100-key range reads and small read-modify-write
 * transactions per second, each run through `Database.transact` one after another (the latency-bound
 * rate a single client sees). The comparison column is the same work on a bare `sorted-btree` map
 * with no transactions at all: the floor the engine's MVCC, conflict tracking and retry loop add to.
 * The lmdb engine's rows (`kv-lmdb.ts`) compare with raw `lmdb` instead, and add group commit.
 *
 *   node -r ts-node/register/transpile-only bench/kv.ts
 *
 * `runKvBench()` returns the rows so that a combined runner can print every benchmark in one table;
 * `benchKvEngine(name, open)` measures any other engine (lmdb, fdb) on the same workload.
 */
import BTree from 'sorted-btree';
import { compareBytes } from '../src/kv/contract/bytes';
import type { Database } from '../src/kv/contract/database';
import { openMemoryDatabase } from '../src/kv/memory/memory-engine';
import { seededRandom } from '../src/kv/engine-parts/seeded-random';
import { runLmdbKvBench } from './kv-lmdb';
import { measure } from './measure';

/** One measured operation, in operations per second. */
export interface KvBenchRow {
  operation: string;
  /** ops/s of doclayer's engine */
  ours: number;
  /**
   * ops/s of the comparison the operation names: by default the same work on a bare sorted-btree,
   * without transactions; for the lmdb engine, raw `lmdb` (or, for group commit, its own commits one
   * after another)
   */
  comparison?: number;
  /** ours / comparison */
  ratio?: number;
  /** how many operations the `ours` figure was measured over */
  operations: number;
}

export type DatabaseFactory = () => Promise<Database> | Database;

/** Keys preloaded before measuring, and the size of their values. */
const KEYS = 10_000;
const VALUE_BYTES = 100;
const RANGE_KEYS = 100;
const READS_PER_TRANSACTION = 100;

const keys = Array.from({ length: KEYS }, (_, i) => Buffer.from(`bench/${String(i).padStart(6, '0')}`));
const keyOf = (i: number): Buffer => keys[i];
/** The end of a range of `RANGE_KEYS` keys from `first`: its last key plus a 0 byte. */
const rangeEnd = (first: number): Buffer => Buffer.concat([keys[first + RANGE_KEYS - 1], Buffer.from([0])]);

interface Workload {
  operation: string;
  /** Operations one call performs (a transaction of 100 reads counts 100). */
  opsPerCall: number;
  ours: (db: Database, pick: () => number) => Promise<unknown>;
  bare: (tree: BTree<Buffer, Buffer>, pick: () => number) => unknown;
}

const value = Buffer.alloc(VALUE_BYTES, 'v');

const workloads: Workload[] = [
  {
    operation: 'point read (1 get per transaction)',
    opsPerCall: 1,
    ours: (db, pick) => db.transact((tr) => tr.get(keyOf(pick()))),
    bare: (tree, pick) => tree.get(keyOf(pick())),
  },
  {
    operation: `point reads (${READS_PER_TRANSACTION} gets per transaction)`,
    opsPerCall: READS_PER_TRANSACTION,
    ours: (db, pick) =>
      db.transact(async (tr) => {
        for (let i = 0; i < READS_PER_TRANSACTION; i++) await tr.get(keyOf(pick()));
      }),
    bare: (tree, pick) => {
      for (let i = 0; i < READS_PER_TRANSACTION; i++) tree.get(keyOf(pick()));
    },
  },
  {
    operation: 'point write (1 set per transaction)',
    opsPerCall: 1,
    ours: (db, pick) => db.transact((tr) => tr.set(keyOf(pick()), value)),
    bare: (tree, pick) => tree.set(keyOf(pick()), value),
  },
  {
    operation: `range read (${RANGE_KEYS} keys per transaction)`,
    opsPerCall: 1,
    ours: (db, pick) => {
      const first = pick() % (KEYS - RANGE_KEYS);
      const end = rangeEnd(first);
      return db.transact((tr) => tr.getRangeAll(keyOf(first), end));
    },
    bare: (tree, pick) => {
      const first = pick() % (KEYS - RANGE_KEYS);
      const out: [Buffer, Buffer][] = [];
      for (const entry of tree.entries(keyOf(first))) {
        if (out.length === RANGE_KEYS) break;
        out.push(entry);
      }
      return out;
    },
  },
  {
    operation: 'read-modify-write (2 gets + 2 sets per transaction)',
    opsPerCall: 1,
    ours: (db, pick) =>
      db.transact(async (tr) => {
        const a = keyOf(pick());
        const b = keyOf(pick());
        const [va, vb] = [await tr.get(a), await tr.get(b)];
        tr.set(a, vb ?? value);
        tr.set(b, va ?? value);
      }),
    bare: (tree, pick) => {
      const a = keyOf(pick());
      const b = keyOf(pick());
      const [va, vb] = [tree.get(a), tree.get(b)];
      tree.set(a, vb ?? value);
      tree.set(b, va ?? value);
    },
  },
];

/**
 * Measures every workload on the database `open` returns (preloaded with 10,000 keys of 100 bytes) and
 * on a bare sorted-btree holding the same data; about `budgetMs` per workload for the engine.
 */
export async function benchKvEngine(engineName: string, open: DatabaseFactory, budgetMs = 1500): Promise<KvBenchRow[]> {
  const db = await open();
  const tree = new BTree<Buffer, Buffer>(undefined, compareBytes);
  for (let first = 0; first < KEYS; first += 1000) {
    await db.transact((tr) => {
      for (let i = first; i < first + 1000; i++) tr.set(keyOf(i), value);
    });
  }
  for (let i = 0; i < KEYS; i++) tree.set(keyOf(i), value);

  const rows: KvBenchRow[] = [];
  try {
    for (const w of workloads) {
      const random = seededRandom(42);
      const pick = () => Math.floor(random() * KEYS);
      // Warm both up so that neither is measured while the JIT is still compiling it.
      await measure(() => w.ours(db, pick), w.opsPerCall, 150);
      await measure(() => w.bare(tree, pick), w.opsPerCall, 50);
      const ours = await measure(() => w.ours(db, pick), w.opsPerCall, budgetMs);
      const bare = await measure(() => w.bare(tree, pick), w.opsPerCall, budgetMs / 5);
      rows.push({
        operation: `${engineName}: ${w.operation}`,
        ours: ours.perSecond,
        comparison: bare.perSecond,
        ratio: ours.perSecond / bare.perSecond,
        operations: ours.operations,
      });
    }
  } finally {
    await db.close();
  }
  return rows;
}

/**
 * The KV benchmark on every engine present: the memory engine (about 12 s), then the lmdb engine
 * against raw `lmdb` (about 15 s; see `kv-lmdb.ts`).
 */
export async function runKvBench(budgetMs = 1500): Promise<KvBenchRow[]> {
  return [...(await benchKvEngine('memory', () => openMemoryDatabase(), budgetMs)), ...(await runLmdbKvBench(budgetMs))];
}

function printRows(rows: KvBenchRow[]): void {
  const fmt = (n: number | undefined) => (n === undefined ? '' : Math.round(n).toLocaleString('en-US'));
  console.log('| operation | doclayer ops/s | measured ops | comparison ops/s | ratio |');
  console.log('| --- | ---: | ---: | ---: | ---: |');
  for (const r of rows) {
    console.log(
      `| ${r.operation} | ${fmt(r.ours)} | ${fmt(r.operations)} | ${fmt(r.comparison)} | ${r.ratio === undefined ? '' : r.ratio.toFixed(3)} |`,
    );
  }
}

if (require.main === module) {
  runKvBench().then(printRows, (err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
