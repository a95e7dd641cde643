/**
 * The lmdb engine's throughput, each figure beside the same work done on raw `lmdb` (the package the
 * engine is built on, with no transactions, conflict checks or versions) in the same run:
 *
 * - point reads and range reads, through `Database.transact`;
 * - durable commits one after another, and 100 concurrent small transactions (group commit), with
 *   durability 'sync' (the default: a commit resolves once flushed) and 'fast' (once visible).
 *
 * The goals: 100 concurrent durable commits at least 20x the rate of durable commits one after another
 * (their row's comparison is the one-after-another row), and point reads within 2x of raw `lmdb` gets.
 *
 *   node -r ts-node/register/transpile-only bench/kv-lmdb.ts
 */
import { mkdtempSync, rmSync } from 'fs';
import { open, type Database as RawLmdb } from 'lmdb';
import { tmpdir } from 'os';
import { join } from 'path';
import type { Database } from '../src/kv/contract/database';
import { openLmdbDatabase, type LmdbDurability } from '../src/kv/lmdb';
import { seededRandom } from '../src/kv/engine-parts/seeded-random';
import type { KvBenchRow } from './kv';
import { measure } from './measure';

/** Durable commits take milliseconds: read the clock after every few calls so budgets hold. */
const CALLS_PER_CLOCK_READ = 4;

const KEYS = 10_000;
const VALUE_BYTES = 100;
const RANGE_KEYS = 100;
const READS_PER_TRANSACTION = 100;
const CONCURRENT = 100;

const keys = Array.from({ length: KEYS }, (_, i) => Buffer.from(`bench/${String(i).padStart(6, '0')}`));
const value = Buffer.alloc(VALUE_BYTES, 'v');
const rangeEnd = (first: number): Buffer => Buffer.concat([keys[first + RANGE_KEYS - 1], Buffer.from([0])]);

/** Slices each side of a comparison is measured in, alternating, so both see the same machine load. */
const SLICES = 10;

/** Measures `ours` and `theirs` alike, after a warm-up of each, in alternating slices. */
async function compare(
  operation: string,
  opsPerCall: number,
  ours: () => unknown,
  theirs: () => unknown,
  budgetMs: number,
  theirsOpsPerCall = opsPerCall,
): Promise<KvBenchRow> {
  await measure(ours, opsPerCall, budgetMs / 10, CALLS_PER_CLOCK_READ);
  await measure(theirs, theirsOpsPerCall, budgetMs / 10, CALLS_PER_CLOCK_READ);
  let a = { operations: 0, seconds: 0 };
  let b = { operations: 0, seconds: 0 };
  for (let i = 0; i < SLICES; i++) {
    const x = await measure(ours, opsPerCall, budgetMs / SLICES, CALLS_PER_CLOCK_READ);
    const y = await measure(theirs, theirsOpsPerCall, budgetMs / SLICES / 2, CALLS_PER_CLOCK_READ);
    a = { operations: a.operations + x.operations, seconds: a.seconds + x.operations / x.perSecond };
    b = { operations: b.operations + y.operations, seconds: b.seconds + y.operations / y.perSecond };
  }
  const oursRate = a.operations / a.seconds;
  const theirsRate = b.operations / b.seconds;
  return { operation, ours: oursRate, comparison: theirsRate, ratio: oursRate / theirsRate, operations: a.operations };
}

async function load(db: Database): Promise<void> {
  for (let first = 0; first < KEYS; first += 1000) {
    await db.transact((tr) => {
      for (let i = first; i < first + 1000; i++) tr.set(keys[i], value);
    });
  }
}

/** The engine's rows (about 15 s at the default budget); every store lives in a temporary folder. */
export async function runLmdbKvBench(budgetMs = 1500): Promise<KvBenchRow[]> {
  const dir = mkdtempSync(join(tmpdir(), 'doclayer-bench-lmdb-'));
  const rawRoot = open<Buffer, Buffer>({ path: join(dir, 'raw'), keyEncoding: 'binary', encoding: 'binary' });
  const raw: RawLmdb<Buffer, Buffer> = rawRoot;
  const stores: Database[] = [];
  const openStore = async (durability: LmdbDurability) => {
    const db = openLmdbDatabase({ path: join(dir, `engine-${durability}`), durability });
    stores.push(db);
    await load(db);
    return db;
  };
  try {
    raw.transactionSync(() => keys.forEach((k) => raw.putSync(k, value)));
    const random = seededRandom(42);
    const pick = () => Math.floor(random() * KEYS);
    const rows: KvBenchRow[] = [];

    const db = await openStore('sync');
    rows.push(
      await compare(
        'lmdb: point read (1 get per transaction) vs raw lmdb get',
        1,
        () => db.transact((tr) => tr.get(keys[pick()])),
        () => raw.get(keys[pick()]),
        budgetMs,
      ),
    );
    rows.push(
      await compare(
        `lmdb: point reads (${READS_PER_TRANSACTION} gets per transaction) vs raw lmdb get`,
        READS_PER_TRANSACTION,
        () =>
          db.transact(async (tr) => {
            for (let i = 0; i < READS_PER_TRANSACTION; i++) await tr.get(keys[pick()]);
          }),
        () => raw.get(keys[pick()]),
        budgetMs,
        1,
      ),
    );
    rows.push(
      await compare(
        `lmdb: range read (${RANGE_KEYS} keys per transaction) vs raw lmdb getRange`,
        1,
        () => {
          const first = pick() % (KEYS - RANGE_KEYS);
          return db.transact((tr) => tr.getRangeAll(keys[first], rangeEnd(first)));
        },
        () => {
          const first = pick() % (KEYS - RANGE_KEYS);
          return [...raw.getRange({ start: keys[first], end: rangeEnd(first) })];
        },
        budgetMs,
      ),
    );

    for (const durability of ['sync', 'fast'] as const) {
      const engine = durability === 'sync' ? db : await openStore('fast');
      const oneCommit = () => engine.transact((tr) => tr.set(keys[pick()], value));
      const rawPut =
        durability === 'sync'
          ? async () => {
              await raw.put(keys[pick()], value);
              await raw.flushed;
            }
          : () => raw.put(keys[pick()], value);
      const sequential = await compare(
        `lmdb (${durability}): commits one after another vs raw lmdb put${durability === 'sync' ? ' + flushed' : ''}`,
        1,
        oneCommit,
        rawPut,
        budgetMs,
      );
      rows.push(sequential);
      await measure(() => Promise.all(Array.from({ length: CONCURRENT }, oneCommit)), CONCURRENT, budgetMs / 10, CALLS_PER_CLOCK_READ);
      const concurrent = await measure(() => Promise.all(Array.from({ length: CONCURRENT }, oneCommit)), CONCURRENT, budgetMs, CALLS_PER_CLOCK_READ);
      rows.push({
        operation: `lmdb (${durability}): ${CONCURRENT} concurrent commits (group commit) vs one after another`,
        ours: concurrent.perSecond,
        comparison: sequential.ours,
        ratio: concurrent.perSecond / sequential.ours,
        operations: concurrent.operations,
      });
    }
    return rows;
  } finally {
    await Promise.all(stores.map((store) => store.close()));
    await rawRoot.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (require.main === module) {
  runLmdbKvBench().then(
    (rows) => {
      const fmt = (n: number | undefined) => (n === undefined ? '' : Math.round(n).toLocaleString('en-US'));
      console.log('| operation | doclayer ops/s | measured ops | comparison ops/s | ratio |');
      console.log('| --- | ---: | ---: | ---: | ---: |');
      for (const r of rows) {
        console.log(
          `| ${r.operation} | ${fmt(r.ours)} | ${fmt(r.operations)} | ${fmt(r.comparison)} | ${r.ratio === undefined ? '' : r.ratio.toFixed(3)} |`,
        );
      }
    },
    (err: unknown) => {
      console.error(err);
      process.exitCode = 1;
    },
  );
}
