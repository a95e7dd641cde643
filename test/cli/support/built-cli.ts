import { spawn } from 'child_process';
import { createHash } from 'crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { dirname, join, resolve } from 'path';

/**
 * The real package for end-to-end tests, as `npm run build` makes it: every module the package's
 * `exports` and `bin` name (`src/index.ts`, `src/cli/main.ts`, ...) and what they import, compiled by
 * `tsc` with the package's build configuration (`tsconfig.build.json`) into a folder under the OS's
 * temporary directory, with the package's `package.json` beside `dist/` and its dependencies reachable.
 * The CLI runs as `node <folder>/dist/cli/main.js`, exactly as `npx doclayer` runs `dist/cli/main.js`;
 * a module in the folder imports the package by its name (`import ... from 'doclayer'`), as an app does.
 *
 * The build is named by a hash of the sources and configuration, so it is made once (test files in
 * several jest workers wait for the one that builds it, by a lock folder) and reused until a source
 * changes. Types are not checked here (`npm test` type-checks the whole tree first), which makes the
 * build take seconds rather than most of a minute.
 */

const REPO = resolve(__dirname, '../../..');
const LOCK_STALE_MS = 5 * 60_000;
const BUILD_TIMEOUT_MS = 180_000;
const OLD_BUILD_MS = 60 * 60_000;

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? filesUnder(path) : entry.name.endsWith('.ts') ? [path] : [];
  });
}

function sourceHash(): string {
  const hash = createHash('sha256');
  // This file too: what it builds is part of the build.
  const files = [
    ...filesUnder(join(REPO, 'src')).sort(),
    join(REPO, 'tsconfig.json'),
    join(REPO, 'tsconfig.build.json'),
    join(REPO, 'package.json'),
    __filename,
  ];
  for (const file of files) hash.update(file).update('\0').update(readFileSync(file)).update('\0');
  return hash.digest('hex').slice(0, 16);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The sources of every module the package's `exports` and `bin` name (`./dist/x.js` is built from `src/x.ts`). */
function entryPoints(): string[] {
  const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as {
    bin: Record<string, string>;
    exports: Record<string, string | { default?: string }>;
  };
  const built = [...Object.values(pkg.bin), ...Object.values(pkg.exports).map((entry) => (typeof entry === 'string' ? entry : entry.default))];
  return built
    .filter((path): path is string => path !== undefined && /^(\.\/)?dist\/.*\.js$/.test(path))
    .map((path) => join(REPO, 'src', path.replace(/^(\.\/)?dist\//, '').replace(/\.js$/, '.ts')));
}

function compile(into: string): Promise<void> {
  mkdirSync(into, { recursive: true });
  const config = {
    extends: join(REPO, 'tsconfig.build.json'),
    compilerOptions: {
      rootDir: join(REPO, 'src'),
      outDir: join(into, 'dist'),
      declaration: false,
      declarationMap: false,
      noCheck: true,
      typeRoots: [join(REPO, 'node_modules/@types')],
    },
    include: [],
    files: entryPoints(),
  };
  writeFileSync(join(into, 'tsconfig.json'), JSON.stringify(config));
  // As in the installed package: package.json beside dist/ (for --version), its dependencies reachable.
  writeFileSync(join(into, 'package.json'), readFileSync(join(REPO, 'package.json')));
  symlinkSync(join(REPO, 'node_modules'), join(into, 'node_modules'), 'dir');
  return new Promise((resolveBuild, reject) => {
    const child = spawn(process.execPath, [join(REPO, 'node_modules/typescript/bin/tsc'), '-p', join(into, 'tsconfig.json')], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('exit', (code) => (code === 0 ? resolveBuild() : reject(new Error(`tsc failed (${code}):\n${out}`))));
  });
}

let built: Promise<string> | undefined;

/** The path of the built `main.js`, building it first if no test file has yet. */
export function builtCli(): Promise<string> {
  built ??= build();
  return built;
}

/** The folder of the built package (its `package.json`, `dist/`, `node_modules`), building it first if needed. */
export async function builtPackage(): Promise<string> {
  return dirname(dirname(dirname(await builtCli())));
}

async function build(): Promise<string> {
  const root = join(tmpdir(), `doclayer-cli-build-${sourceHash()}`);
  const main = join(root, 'dist/cli/main.js');
  const lock = `${root}.lock`;
  const deadline = Date.now() + BUILD_TIMEOUT_MS;
  while (!existsSync(main)) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for the CLI build in ${root}`);
    try {
      mkdirSync(lock);
    } catch {
      if (Date.now() - statSync(lock, { throwIfNoEntry: false })!.mtimeMs > LOCK_STALE_MS) rmSync(lock, { recursive: true, force: true });
      await sleep(250);
      continue;
    }
    try {
      if (existsSync(main)) break;
      const staging = `${root}.${process.pid}`;
      rmSync(staging, { recursive: true, force: true });
      await compile(staging);
      rmSync(root, { recursive: true, force: true });
      renameSync(staging, root);
      removeOldBuilds(root);
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
  }
  return main;
}

/** Builds of earlier sources, left by earlier runs: removed once an hour old (a run still using one is long done). */
function removeOldBuilds(current: string): void {
  const prefix = 'doclayer-cli-build-';
  for (const name of readdirSync(tmpdir())) {
    const path = join(tmpdir(), name);
    if (!name.startsWith(prefix) || path === current || name.endsWith('.lock')) continue;
    const stat = statSync(path, { throwIfNoEntry: false });
    if (stat !== undefined && Date.now() - stat.mtimeMs > OLD_BUILD_MS) rmSync(path, { recursive: true, force: true });
  }
}

export interface CliRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

export interface CliRunOptions {
  /** The working directory (where ./doclayer-data is). */
  cwd: string;
  /** Written to the process's stdin, then closed. */
  input?: string | Buffer;
  env?: NodeJS.ProcessEnv;
}

/** Runs `doclayer <args>` to its end. */
export async function doclayer(args: readonly string[], options: CliRunOptions): Promise<CliRun> {
  const main = await builtCli();
  return new Promise((resolveRun, reject) => {
    const child = spawn(process.execPath, [main, ...args], {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => stdout.push(d));
    child.stderr.on('data', (d: Buffer) => stderr.push(d));
    child.on('error', reject);
    child.on('close', (status) =>
      resolveRun({ status, stdout: Buffer.concat(stdout).toString('utf8'), stderr: Buffer.concat(stderr).toString('utf8') }),
    );
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
  });
}
