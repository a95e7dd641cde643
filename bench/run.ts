/**
 * Runs every benchmark in one process and prints one table: operation, ours, comparison, ratio.
 * Each benchmark also runs on its own (`npm run bench:tuple`, `npm run bench:kv`, `npm run bench:document`).
 */
import { runDocumentBench } from './document';
import { runKvBench } from './kv';
import { runTupleBench } from './tuple';

interface Row {
  operation: string;
  ours: number;
  comparison?: number;
  ratio?: number;
}

function rate(n: number | undefined): string {
  return n === undefined ? '' : Math.round(n).toLocaleString('en-US');
}

async function main(): Promise<void> {
  const rows: Row[] = [...(await runTupleBench()), ...(await runKvBench()), ...(await runDocumentBench())];
  console.log('\n| operation | ours (ops/s) | comparison (ops/s) | ratio |');
  console.log('| --- | ---: | ---: | ---: |');
  for (const r of rows) {
    const ratio = r.ratio === undefined ? '' : `${r.ratio.toFixed(2)}x`;
    console.log(`| ${r.operation} | ${rate(r.ours)} | ${rate(r.comparison)} | ${ratio} |`);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
