/**
 * What secondary indexes cost writers, and how fast an online build goes, in one run (ratios within
 * the run; the machine is shared, so absolute rates move between runs):
 *
 * - upsert of a 10-field document (each upsert replaces an existing one) with 0, 1, 3 and 10 indexes,
 *   as a ratio to 0 indexes; and 0 indexes against a document layer without the index layer at all
 *   (what every write pays for reading the metadata version and, when it moved, the index catalog);
 * - mutateIn of a path no index reads, with 10 indexes against none (goal: within 1.1x);
 * - an online build of 20,000 documents (memory) and 10,000 (LMDB) while 4 writers upsert
 *   concurrently: documents indexed per second, and the writers' rate meanwhile.
 *
 *   npm run bench:indexes
 *
 * Writes its section of bench/results.md.
 */
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { MutateInSpec, open, type Collection, type DocLayer, type JsonValue } from '../src';
import { DocumentCollection } from '../src/document/collection/collection';
import { DocumentLayer } from '../src/document/doc-layer';
import { Layout } from '../src/document/keys/layout';
import { openMemoryDatabase } from '../src/kv/memory/memory-engine';
import { STRUCTURE_JSON_FORMS } from '../src/structures/json-forms';
import { writeResultsSection } from './results-section';

const DOCS = 1000;
const BUDGET_MS = 3000;

function documentOf(i: number): JsonValue {
  return Object.fromEntries(Array.from({ length: 10 }, (_, f) => [`f${f}`, f % 2 === 0 ? (i * 7 + f) % 1000 : `v${(i + f) % 97}`]));
}

/**
 * Operations per second of each op, measured in interleaved slices of `slice` operations until each
 * has run `budgetMs` in all: drift in the machine's load falls on every op alike.
 */
async function rates(ops: readonly ((i: number) => Promise<unknown>)[], budgetMs: number, slice = 50): Promise<number[]> {
  const spent = ops.map(() => 0n);
  const done = ops.map(() => 0);
  const budget = BigInt(budgetMs * 1e6);
  while (spent.some((t) => t < budget)) {
    for (const [j, op] of ops.entries()) {
      const start = process.hrtime.bigint();
      for (let k = 0; k < slice; k++) await op(done[j]++);
      spent[j] += process.hrtime.bigint() - start;
    }
  }
  return ops.map((_, j) => done[j] / (Number(spent[j]) / 1e9));
}

async function indexed(db: DocLayer, name: string, indexes: number): Promise<Collection> {
  const c = db.collection(name);
  for (let i = 0; i < DOCS; i++) await c.upsert(i, documentOf(i));
  for (let k = 0; k < indexes; k++) await c.createIndex(`i${k}`, { fields: [`f${k}`] });
  return c;
}

interface Row {
  readonly what: string;
  readonly rate: number;
  readonly ratio?: string;
}

async function writeOverhead(): Promise<Row[]> {
  const db = await open();
  const kv = openMemoryDatabase();
  const bare = new DocumentLayer(
    kv,
    new Layout(['doclayer']),
    true,
    { autoCreate: true, now: Date.now },
    {
      forms: STRUCTURE_JSON_FORMS,
      collection: (context, scope, name) => new DocumentCollection(context, scope, name),
    },
  );
  const plain = bare.collection('plain');
  for (let i = 0; i < DOCS; i++) await plain.upsert(i, documentOf(i));
  const configs = [0, 1, 3, 10];
  const collections = await Promise.all(configs.map((k) => indexed(db, `c${k}`, k)));
  const upserts = await rates(
    [(i: number) => plain.upsert(i % DOCS, documentOf(i)), ...collections.map((c) => (i: number) => c.upsert(i % DOCS, documentOf(i + 1)))],
    BUDGET_MS,
  );
  const upsertBest = new Map<string, number>([['bare', upserts[0]], ...configs.map((k, j): [string, number] => [String(k), upserts[j + 1]])]);
  const mutates = await rates(
    [0, 10].map((k) => {
      const c = collections[configs.indexOf(k)];
      return (i: number) => c.mutateIn(i % DOCS, [MutateInSpec.upsert('other', i)]);
    }),
    BUDGET_MS,
  );
  const mutateBest = new Map<string, number>([
    ['0', mutates[0]],
    ['10', mutates[1]],
  ]);
  await db.close();
  await bare.close();
  const base = upsertBest.get('0') as number;
  const rows: Row[] = [
    { what: 'upsert, 10 fields, no index layer', rate: upsertBest.get('bare') as number },
    { what: 'upsert, 10 fields, 0 indexes (vs no index layer)', rate: base, ratio: ratio(base, upsertBest.get('bare') as number) },
  ];
  for (const k of [1, 3, 10]) {
    const r = upsertBest.get(String(k)) as number;
    rows.push({ what: `upsert, 10 fields, ${k} index${k === 1 ? '' : 'es'} (vs 0)`, rate: r, ratio: ratio(r, base) });
  }
  const m0 = mutateBest.get('0') as number;
  const m10 = mutateBest.get('10') as number;
  rows.push({ what: 'mutateIn of a non-indexed path, 0 indexes', rate: m0 });
  rows.push({ what: 'mutateIn of a non-indexed path, 10 indexes (vs 0; goal >= 0.91x, i.e. within 1.1x)', rate: m10, ratio: ratio(m10, m0) });
  return rows;
}

async function buildRate(engine: 'memory' | 'lmdb', docs: number): Promise<Row[]> {
  const dir = engine === 'lmdb' ? mkdtempSync(join(tmpdir(), 'doclayer-bench-indexes-')) : undefined;
  const db = await open(dir === undefined ? {} : { path: dir });
  try {
    const c = db.collection('build');
    for (let i = 0; i < docs; i += 200) {
      await db.transact(async (tr) => {
        for (let j = i; j < Math.min(docs, i + 200); j++) await c.upsert(j, documentOf(j), { tr });
      });
    }
    let writing = true;
    let writes = 0;
    const writers = Array.from({ length: 4 }, async (_, w) => {
      for (let i = w; writing; i += 4) {
        await c.upsert((i * 7919) % docs, documentOf(i));
        writes++;
      }
    });
    const start = process.hrtime.bigint();
    const built = await c.createIndex('byF0', { fields: ['f0', 'f1'] });
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    writing = false;
    await Promise.all(writers);
    if (built.state !== 'ready') throw new Error('the build did not finish');
    return [
      { what: `online build of ${docs.toLocaleString('en-US')} documents, 4 writers running (${engine}): documents/s`, rate: docs / seconds },
      { what: `the 4 writers' upserts meanwhile (${engine}): upserts/s`, rate: writes / seconds },
    ];
  } finally {
    await db.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  }
}

function ratio(a: number, b: number): string {
  return `${(a / b).toFixed(2)}x`;
}

function format(n: number): string {
  return n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(2);
}

async function main(): Promise<void> {
  const started = Date.now();
  const rows = [...(await writeOverhead()), ...(await buildRate('memory', 20_000)), ...(await buildRate('lmdb', 10_000))];
  const lines = [
    `Written by \`npm run bench:indexes\` on ${new Date().toISOString().slice(0, 10)} (Node.js ${process.version}), in ${Math.round((Date.now() - started) / 1000)} s, memory engine unless named.`,
    'Each write figure: 3 s of operations in slices of 50, interleaved with the figures it is compared to (the machine is shared: compare ratios, not rates).',
    '',
    '| operation | ops/s | ratio |',
    '| --- | ---: | ---: |',
    ...rows.map((r) => `| ${r.what} | ${format(r.rate)} | ${r.ratio ?? ''} |`),
  ];
  console.log(lines.join('\n'));
  writeResultsSection('bench:indexes', lines);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
