/**
 * Builds `dist/` (`npm run build`) unless it is newer than every source: `npm start` runs this before
 * `node dist/cli/main.js demo`, so that a fresh clone builds once and later starts begin at once.
 *
 *   node -r ts-node/register/transpile-only scripts/build-if-needed.ts
 */
import { spawnSync } from 'child_process';
import { existsSync, readdirSync, statSync } from 'fs';
import { join, resolve } from 'path';

const ROOT = resolve(__dirname, '..');
/** The file the build writes last that `npm start` runs. */
const BUILT = join(ROOT, 'dist/cli/main.js');

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(path) : statSync(path).mtimeMs);
  }
  return newest;
}

function main(): number {
  const configs = ['package.json', 'tsconfig.json', 'tsconfig.build.json'].map((f) => statSync(join(ROOT, f)).mtimeMs);
  const sources = Math.max(newestSource(join(ROOT, 'src')), ...configs);
  if (existsSync(BUILT) && statSync(BUILT).mtimeMs >= sources) return 0;
  process.stderr.write(existsSync(BUILT) ? 'Sources changed since the last build: building dist/ ...\n' : 'Building dist/ (once) ...\n');
  const tsc = spawnSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(ROOT, 'tsconfig.build.json')], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  return tsc.status ?? 1;
}

process.exitCode = main();
