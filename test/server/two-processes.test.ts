/**
 * Two `doclayer serve` processes on one LMDB folder serve one store: concurrent increments of one
 * counter through the Couchbase SDK, half to each process, return every value from 1 to N exactly
 * once, because each command is one serializable transaction on the shared store.
 */
import { spawn, type ChildProcess } from 'child_process';
import * as couchbase from 'couchbase';
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';

const ROOT = join(__dirname, '../..');
const TIMEOUTS = { kvTimeout: 10000, connectTimeout: 15000, bootstrapTimeout: 15000 };
const PER_PROCESS = 40;

/** Starts `doclayer serve` on a free port; resolves once it listens. */
async function serve(folder: string): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(
    process.execPath,
    ['-r', 'ts-node/register/transpile-only', join(ROOT, 'src/cli/main.ts'), '--db', folder, 'serve', '--port', '0', '--user', 'app:secret'],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const port = await new Promise<number>((resolve, reject) => {
    let text = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      const match = /on [^\s]+:(\d+)/.exec(text);
      if (match) resolve(Number(match[1]));
    });
    child.once('exit', (code) => reject(new Error(`doclayer serve exited with ${code}`)));
  });
  return { child, port };
}

describe('two server processes on one LMDB folder', () => {
  const folder = mkdtempSync(join(tmpdir(), 'doclayer-two-servers-'));
  const children: ChildProcess[] = [];
  const clusters: couchbase.Cluster[] = [];

  afterAll(async () => {
    for (const cluster of clusters) await cluster.close();
    for (const child of children) child.kill('SIGTERM');
    await Promise.all(children.map((child) => new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.once('exit', resolve)))));
    rmSync(folder, { recursive: true, force: true });
  });

  it('serve one counter exactly: every value from 1 to N is returned once', async () => {
    const servers = await Promise.all([serve(folder), serve(folder)]);
    children.push(...servers.map((s) => s.child));
    for (const { port } of servers) {
      clusters.push(await couchbase.connect(`couchbase://127.0.0.1:${port}`, { username: 'app', password: 'secret', timeouts: TIMEOUTS }));
    }
    const counters = clusters.map((cluster) => cluster.bucket('default').defaultCollection().binary());
    const values = await Promise.all(
      counters.flatMap((counter) =>
        Array.from({ length: PER_PROCESS }, async () => Number((await counter.increment('hits', 1, { initial: 1 })).value)),
      ),
    );
    const total = 2 * PER_PROCESS;
    expect(values.sort((a, b) => a - b)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
    const seen = await Promise.all(
      clusters.map(async (cluster) => (await cluster.bucket('default').defaultCollection().get('hits')).content as unknown),
    );
    expect(seen).toEqual([total, total]);
  }, 90_000);
});
