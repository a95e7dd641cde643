/**
 * `npm run bench:queries`: a query through a secondary index against the same query as a full scan,
 * and the sequential round trips of an indexed page on an engine with simulated network latency.
 *
 *   npm run bench:queries            (QUERY_DOCS=20000 for a quicker run)
 *
 * - 100,000 documents in one collection (memory engine), an index on `group`; the query selects the
 *   100 documents of one group. The full scan is the same query written so that no index serves it
 *   (`$nor` of the opposite) and run with `allowScan`: it returns the same 100 documents. Ratios are of
 *   medians measured in one run (the machine is shared: absolute times are noisy, ratios less so).
 * - Round trips: the same store seen through an engine wrapper that makes every read wait 1 ms, reads
 *   issued together sharing one wait (as requests pipelined to a cluster do), and counts the
 *   sequential waits of one page of the indexed query, by kind.
 */
import { open, type Collection } from '../src';
import { Database } from '../src/kv/contract/database';
import type { Engine, ReadTransaction, Transaction } from '../src/kv/contract/types';
import { MemoryEngine } from '../src/kv/memory/memory-engine';
import { LmdbEngine } from '../src/kv/lmdb/lmdb-engine';
import { mkdtempSync, rmSync } from 'fs';
import { loadavg, tmpdir } from 'os';
import { join } from 'path';
import { writeResultsSection } from './results-section';

const DOCS = Number(process.env.QUERY_DOCS ?? 100_000);
/** `memory` (default) or `lmdb`. */
const ENGINE = process.env.QUERY_ENGINE ?? 'memory';
const GROUPS = DOCS / 100;
const LATENCY_MS = 1;

/** Sequential round trips of 1 ms: requests made before the pending one goes out share it. */
class Latency {
  trips = 0;
  private pending: Promise<void> | undefined;

  trip(): Promise<void> {
    this.pending ??= new Promise<void>((resolve) =>
      setTimeout(() => {
        this.pending = undefined;
        this.trips++;
        resolve();
      }, LATENCY_MS),
    );
    return this.pending;
  }
}

/** `engine` whose reads (and read version, and commits of writes) each wait one shared round trip. */
function withLatency(engine: Engine, latency: Latency): Engine {
  const wrap = (inner: Transaction): Transaction => {
    let readVersion: Promise<void> | undefined;
    const read = async <T>(call: () => Promise<T>): Promise<T> => {
      await (readVersion ??= latency.trip());
      await latency.trip();
      return call();
    };
    const reader = (target: ReadTransaction): ReadTransaction => ({
      get: (key) => read(() => target.get(key)),
      getKey: (selector) => read(() => target.getKey(selector)),
      getRangeAll: (begin, end, options) => read(() => target.getRangeAll(begin, end, options)),
      getRange: (begin, end, options) => ({
        async *[Symbol.asyncIterator]() {
          // One round trip for the whole range: a page's ranges are small enough for one batch.
          const all = await read(() => target.getRangeAll(begin, end, options));
          yield* all;
        },
      }),
      getReadVersion: async () => {
        await (readVersion ??= latency.trip());
        return target.getReadVersion();
      },
      // A cluster sends the metadata version with the read version: no round trip of its own.
      getMetadataVersion: async () => {
        await (readVersion ??= latency.trip());
        return target.getMetadataVersion();
      },
    });
    const reads = reader(inner);
    return new Proxy(inner, {
      get(target, prop, receiver) {
        if (
          prop === 'get' ||
          prop === 'getKey' ||
          prop === 'getRangeAll' ||
          prop === 'getRange' ||
          prop === 'getReadVersion' ||
          prop === 'getMetadataVersion'
        ) {
          // eslint-disable-next-line @typescript-eslint/unbound-method
          return reads[prop];
        }
        if (prop === 'snapshot') return () => reader(target.snapshot());
        const value = Reflect.get(target, prop, receiver) as unknown;
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
  };
  return {
    name: `${engine.name} with ${LATENCY_MS} ms round trips`,
    createTransaction: () => wrap(engine.createTransaction()),
    close: () => engine.close(),
  };
}

async function load(c: Collection): Promise<void> {
  const batch = 500;
  for (let start = 0; start < DOCS; start += batch) {
    const kv = c.structureAccess().kv;
    await kv.transact(async (tr) => {
      for (let i = start; i < Math.min(start + batch, DOCS); i++) {
        await c.upsert(`doc${String(i).padStart(6, '0')}`, { group: i % GROUPS, name: `item ${i}`, price: (i * 7) % 1000, tags: ['a', 'b'] }, { tr });
      }
    });
  }
}

/**
 * Medians of `runs` runs of `fn`, in ms: wall time, and this process's CPU time (user and system, its
 * GC threads included), which the machine's other load inflates less than wall time.
 */
async function median(runs: number, fn: () => Promise<unknown>): Promise<{ wall: number; cpu: number }> {
  const walls: number[] = [];
  const cpus: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    const c0 = process.cpuUsage();
    await fn();
    const cpu = process.cpuUsage(c0);
    walls.push(Number(process.hrtime.bigint() - t0) / 1e6);
    cpus.push((cpu.user + cpu.system) / 1000);
  }
  const mid = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  return { wall: mid(walls), cpu: mid(cpus) };
}

async function main(): Promise<void> {
  const folder = ENGINE === 'lmdb' ? mkdtempSync(join(tmpdir(), 'doclayer-bench-queries-')) : undefined;
  const engine: Engine = folder === undefined ? new MemoryEngine() : new LmdbEngine({ path: folder });
  const kv = new Database(engine);
  const docs = await open({ database: kv });
  const c = docs.collection('bench.orders');
  await c.createIndex('by_group', { fields: ['group'] });
  const loadStart = Date.now();
  await load(c);
  console.log(`loaded ${DOCS} documents with the index in ${((Date.now() - loadStart) / 1000).toFixed(1)} s`);

  const indexed = { group: 7 };
  const scanned = { $nor: [{ group: { $ne: 7 } }] };
  const viaIndex = await c.find(indexed).toArray();
  const viaScan = await c.find(scanned, { allowScan: true }).toArray();
  if (viaIndex.length !== 100 || viaScan.length !== 100 || viaIndex.some((d, i) => d.id !== viaScan[i].id)) {
    throw new Error(`the two queries disagree: ${viaIndex.length} vs ${viaScan.length} documents`);
  }
  const explained = await c.explain(indexed);
  const index = await median(41, () => c.find(indexed).toArray());
  const scan = await median(5, () => c.find(scanned, { allowScan: true }).toArray());
  const ratio = scan.wall / index.wall;
  const cpuRatio = scan.cpu / index.cpu;
  const loadAverage = loadavg()[0];
  console.log(
    `indexed: ${index.wall.toFixed(2)} ms (${explained.keysRead} keys, ${explained.documentsRead} documents read); full scan: ${scan.wall.toFixed(1)} ms; ratio ${ratio.toFixed(0)}x (CPU time: ${index.cpu.toFixed(2)} ms vs ${scan.cpu.toFixed(1)} ms, ${cpuRatio.toFixed(0)}x; load ${loadAverage.toFixed(1)})`,
  );

  // The same store through the latency wrapper: count the sequential round trips of one page.
  const latency = new Latency();
  const slowKv = new Database(withLatency(engine, latency));
  const slowDocs = await open({ database: slowKv });
  const slow = slowDocs.collection('bench.orders');
  await slow.find({ group: 1 }).toArray(); // warms the layer's manifest cache, as a running app has it
  const before = latency.trips;
  const t0 = Date.now();
  const page = await slow.find({ group: 7 }, { limit: 100 }).page();
  const pageMs = Date.now() - t0;
  const trips = latency.trips - before;
  console.log(`indexed page of ${page.items.length} with ${LATENCY_MS} ms round trips: ${trips} sequential round trips (${pageMs} ms)`);

  const lines = [
    `${DOCS.toLocaleString('en')} documents (${engine.name} engine), an index on \`group\`; the query selects 100 of them. One run, medians; the machine is shared (load average ${loadAverage.toFixed(1)} after the measurements), so compare ratios, not times. CPU time is this process's (user and system), which other processes' load inflates less than wall time (but still, through shared caches and cores).`,
    '',
    '| query | time (median) | CPU time (median) | keys read | documents read |',
    '| --- | ---: | ---: | ---: | ---: |',
    `| \`find({ group: 7 })\` through the index | ${index.wall.toFixed(2)} ms | ${index.cpu.toFixed(2)} ms | ${explained.keysRead} | ${explained.documentsRead} |`,
    `| the same query as a full scan (\`allowScan\`) | ${scan.wall.toFixed(1)} ms | ${scan.cpu.toFixed(1)} ms | 0 | ${DOCS.toLocaleString('en')} |`,
    `| **ratio** | **${ratio.toFixed(0)}x** (target >= 500x) | ${cpuRatio.toFixed(0)}x | | |`,
    '',
    `With ${LATENCY_MS} ms simulated round trips (every read waits one, reads issued together share it), one indexed page of ${page.items.length} documents took **${trips} sequential round trips** (${pageMs} ms): the read version, the index range, then the ${page.items.length} documents read in parallel. The metadata version, which a cluster sends with the read version, shows the layer's cached index catalog is current, so no catalog read precedes the data reads: those are 2 sequential round trips (index range, then documents), the issue's target.`,
  ];
  writeResultsSection(ENGINE === 'memory' ? 'bench:queries' : `bench:queries (${ENGINE})`, lines);
  await slowDocs.close();
  await docs.close();
  await kv.close();
  if (folder !== undefined) rmSync(folder, { recursive: true, force: true });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
