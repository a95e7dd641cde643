/**
 * Node-RED processes for the end-to-end tests. {@link preparePackage} lays out doclayer as npm would
 * install it (package.json with its `node-red` field, the `node-red/` folder as shipped, `dist/` from
 * the TypeScript sources, transpiled without type checking) so that Node-RED loads the doclayer atomic
 * node through the package's own registration; {@link startRuntime} runs `runtime-worker.ts` on it.
 */
import { spawn } from 'child_process';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'fs';
import { join, resolve } from 'path';
import { Worker } from '../../kv/lmdb/child-processes';
import { transpileTree } from '../../support/transpile';
import type { PhaseResult, WorkerOptions } from './runtime-worker';

const REPO = resolve(__dirname, '../../..');

/** The `node-red` field doclayer's package.json registers the atomic node with. */
export const NODE_RED_FIELD = {
  version: '>=3.0.0',
  nodes: { 'doclayer-atomic': 'node-red/doclayer-atomic.js' },
};

/** Lays out the package in `root/package` and the worker in `root/worker`; returns their paths. */
export function preparePackage(root: string): { packageDir: string; worker: string } {
  const packageDir = join(root, 'package');
  const { version } = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string };
  mkdirSync(join(packageDir, 'node-red'), { recursive: true });
  writeFileSync(join(packageDir, 'package.json'), JSON.stringify({ name: 'doclayer', version, 'node-red': NODE_RED_FIELD }));
  for (const file of ['doclayer-atomic.js', 'doclayer-atomic.html']) {
    copyFileSync(join(REPO, 'node-red', file), join(packageDir, 'node-red', file));
  }
  const src = join(REPO, 'src');
  transpileTree([join(src, 'node-red', 'index.ts'), join(src, 'node-red', 'atomic-node.ts')], src, join(packageDir, 'dist'));
  const workerSource = join(__dirname, 'runtime-worker.ts');
  transpileTree([workerSource], __dirname, join(root, 'worker'));
  return { packageDir, worker: join(root, 'worker', 'runtime-worker.js') };
}

/** A Node-RED process running `worker` with `options`. */
export function startRuntime(worker: string, options: WorkerOptions): Worker {
  const child = spawn(process.execPath, [worker, JSON.stringify(options)], {
    env: { ...process.env, NODE_PATH: join(REPO, 'node_modules') },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  return new Worker(child);
}

/** The results the worker reported, one per phase. */
export function resultsOf(worker: Worker): PhaseResult[] {
  return worker.lines.filter((line) => line.startsWith('result ')).map((line) => JSON.parse(line.slice('result '.length)) as PhaseResult);
}
