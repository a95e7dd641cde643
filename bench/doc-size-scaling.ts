/**
 * How sub-document get time grows with the document's size: doclayer (one range read of the subtree)
 * against the naive design (bench/naive-document-store.ts: read and parse the whole document), on
 * documents of 10 to 100,000 leaves, on one memory engine. `npm run bench` draws the result as
 * bench/doc-size-scaling.svg.
 *
 *   node -r ts-node/register/transpile-only bench/doc-size-scaling.ts
 */
import { open, type JsonValue } from '../src';
import { openMemoryDatabase } from '../src/kv/memory/memory-engine';
import { NaiveDocumentStore } from './naive-document-store';

export const SCALING_SIZES = [10, 100, 1_000, 10_000, 100_000] as const;

/** Milliseconds per sub-document get at one document size. */
export interface ScalingPoint {
  leaves: number;
  oursMs: number;
  naiveMs: number;
}

/** As bench/document.ts: a small `meta` object (4 leaves) and an array of short strings. */
function documentOf(leaves: number): JsonValue {
  return { meta: { name: 'bench', version: 1, tags: ['a', 'b'] }, v: Array.from({ length: leaves - 4 }, (_, i) => `item-${i}`) };
}

/** The best (least disturbed) of `rounds` mean times of `op`, each round `budgetMs` and at least `minOps` calls. */
async function msPerOp(op: (i: number) => Promise<unknown>, budgetMs: number, minOps: number, rounds = 3): Promise<number> {
  let best = Infinity;
  let calls = 0;
  for (let r = 0; r < rounds; r++) {
    let ops = 0;
    const start = process.hrtime.bigint();
    let elapsed = 0;
    while (elapsed < budgetMs || ops < minOps) {
      await op(calls++);
      ops++;
      elapsed = Number(process.hrtime.bigint() - start) / 1e6;
    }
    best = Math.min(best, elapsed / ops);
  }
  return best;
}

export async function runScalingBench(budgetMs = 300): Promise<ScalingPoint[]> {
  const db = openMemoryDatabase();
  const docs = await open({ database: db, prefix: ['s'] });
  const ours = docs.collection('scaling');
  const naive = new NaiveDocumentStore(db, Buffer.from('n/'));
  const points: ScalingPoint[] = [];
  try {
    for (const leaves of SCALING_SIZES) {
      const doc = documentOf(leaves);
      await ours.insert(doc, { id: leaves });
      await naive.insert(leaves, doc as never);
      const items = leaves - 4;
      const path = (i: number): [string, number] => ['v', (i * 7919) % items];
      await ours.get(leaves, path(0));
      await naive.getPath(leaves, path(0));
      const minOps = leaves >= 100_000 ? 3 : 20;
      const oursMs = await msPerOp((i) => ours.get(leaves, path(i)), budgetMs, minOps);
      const naiveMs = await msPerOp((i) => naive.getPath(leaves, path(i)), budgetMs, minOps);
      points.push({ leaves, oursMs, naiveMs });
    }
  } finally {
    await docs.close();
    await db.close();
  }
  return points;
}

if (require.main === module) {
  runScalingBench().then(
    (points) => {
      console.log('| leaves | doclayer ms/get | naive ms/get | ratio |');
      console.log('| ---: | ---: | ---: | ---: |');
      for (const p of points)
        console.log(
          `| ${p.leaves.toLocaleString('en-US')} | ${p.oursMs.toFixed(4)} | ${p.naiveMs.toFixed(4)} | ${(p.naiveMs / p.oursMs).toFixed(1)}x |`,
        );
    },
    (err: unknown) => {
      console.error(err);
      process.exitCode = 1;
    },
  );
}
