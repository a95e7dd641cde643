/**
 * `npm run bench`: every benchmark in one process, then one table (operation, ours, comparison,
 * ratio) printed and written to bench/results.md, and the doc-size scaling curve drawn to
 * bench/doc-size-scaling.svg (both shown by the README). Each benchmark also runs on its own
 * (`npm run bench:tuple`, `bench:kv`, `bench:document`, ...).
 */
import { writeFileSync } from 'fs';
import { cpus } from 'os';
import { join } from 'path';
import { runDocumentBench } from './document';
import { runScalingBench, type ScalingPoint } from './doc-size-scaling';
import { runKvBench } from './kv';
import { runStructuresBench } from './structures';
import { otherSections } from './results-section';
import { logLogChart } from './svg-chart';
import { runTupleBench } from './tuple';

interface Row {
  operation: string;
  ours: number;
  comparison?: number;
  ratio?: number;
}

const RESULTS = join(__dirname, 'results.md');
const CHART = join(__dirname, 'doc-size-scaling.svg');

function rate(n: number | undefined): string {
  if (n === undefined) return '';
  return n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(2);
}

function table(rows: readonly Row[]): string[] {
  return [
    '| operation | ours (ops/s) | comparison (ops/s) | ratio |',
    '| --- | ---: | ---: | ---: |',
    ...rows.map((r) => `| ${r.operation} | ${rate(r.ours)} | ${rate(r.comparison)} | ${r.ratio === undefined ? '' : `${r.ratio.toFixed(2)}x`} |`),
  ];
}

/** The scaling points as rows of the table: sub-document gets per second at each size. */
function scalingRows(points: readonly ScalingPoint[]): Row[] {
  return points.map((p) => ({
    operation: `sub-document get by document size, ${p.leaves.toLocaleString('en-US')} leaves (vs naive whole-JSON)`,
    ours: 1000 / p.oursMs,
    comparison: 1000 / p.naiveMs,
    ratio: p.naiveMs / p.oursMs,
  }));
}

function chart(points: readonly ScalingPoint[]): string {
  return logLogChart({
    title: 'Sub-document get time vs document size',
    xLabel: 'leaves in the document',
    yLabel: 'ms per get (log scale)',
    series: [
      { name: 'naive (whole JSON)', color: '#d62728', points: points.map((p) => ({ x: p.leaves, y: p.naiveMs })) },
      { name: 'doclayer', color: '#1f77b4', points: points.map((p) => ({ x: p.leaves, y: p.oursMs })) },
    ],
  });
}

async function main(): Promise<void> {
  const started = Date.now();
  const scaling = await runScalingBench();
  const rows: Row[] = [
    ...(await runTupleBench()),
    ...(await runKvBench()),
    ...(await runDocumentBench()),
    ...scalingRows(scaling),
    ...(await runStructuresBench()),
  ];
  const lines = table(rows);
  console.log(`\n${lines.join('\n')}`);
  const kept = otherSections();
  const machine = `${cpus().length} × ${cpus()[0]?.model.trim() ?? 'unknown CPU'}, Node.js ${process.version}, ${process.platform}`;
  writeFileSync(
    RESULTS,
    [
      '# Benchmark results',
      '',
      `Written by \`npm run bench\` on ${new Date().toISOString().slice(0, 10)} (${machine}), in ${Math.round((Date.now() - started) / 1000)} s.`,
      'Rates are operations per second; the comparison is what each operation names (see the bench files), and',
      'ratio is ours / comparison. The scaling curve is [doc-size-scaling.svg](doc-size-scaling.svg).',
      '',
      ...lines,
      '',
      ...(kept === '' ? [] : [kept]),
    ].join('\n'),
  );
  writeFileSync(CHART, chart(scaling));
  console.log(`\nwrote ${RESULTS} and ${CHART}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
