/**
 * Runs Debian's `memccapable -b` (libmemcached-tools: every binary-protocol test of libmemcached's
 * conformance tool) against `doclayer serve`, on the memory engine and on LMDB in a fresh folder.
 *
 *   npm run conformance:memcached
 *
 * Exits 0 when every test passes on both, 1 otherwise, and 2 (saying how to install it) when
 * `memccapable` is not installed.
 */
import { spawn, spawnSync, type ChildProcess } from 'child_process';
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';

const ROOT = join(__dirname, '..');

function installed(tool: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0;
}

/** Starts `doclayer serve` on a free port; resolves with the process and its port once it listens. */
async function serve(engineArgs: string[]): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(
    process.execPath,
    ['-r', 'ts-node/register/transpile-only', join(ROOT, 'src/cli/main.ts'), ...engineArgs, 'serve', '--port', '0'],
    {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const port = await new Promise<number>((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error('doclayer serve did not start within 60 s')), 60_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      const match = /on [^\s]+:(\d+)/.exec(text);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    child.once('exit', (code) => reject(new Error(`doclayer serve exited with ${code}`)));
  });
  return { child, port };
}

async function run(label: string, engineArgs: string[]): Promise<boolean> {
  const { child, port } = await serve(engineArgs);
  try {
    const result = spawnSync('memccapable', ['-h', '127.0.0.1', '-p', String(port), '-b', '-t', '10'], { encoding: 'utf8', timeout: 300_000 });
    const output = `${result.stdout}${result.stderr}`;
    process.stdout.write(`== memccapable -b against doclayer serve (${label}) ==\n${output}\n`);
    return result.status === 0 && /All tests passed/.test(output);
  } finally {
    child.kill('SIGTERM');
  }
}

async function main(): Promise<number> {
  if (!installed('memccapable')) {
    process.stderr.write("memccapable is not installed: it comes with Debian's libmemcached-tools (apt-get install -y libmemcached-tools).\n");
    return 2;
  }
  const folder = mkdtempSync(join(tmpdir(), 'doclayer-conformance-'));
  try {
    const memory = await run('memory engine', ['--memory']);
    const lmdb = await run('LMDB engine', ['--db', folder]);
    process.stdout.write(`memory: ${memory ? 'all passed' : 'FAILED'}; LMDB: ${lmdb ? 'all passed' : 'FAILED'}\n`);
    return memory && lmdb ? 0 : 1;
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

main().then(
  (status) => process.exit(status),
  (err: unknown) => {
    process.stderr.write(`${String(err)}\n`);
    process.exit(1);
  },
);
