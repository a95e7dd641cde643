import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { open } from '../../src';
import { openLmdbDatabase } from '../../src/kv/lmdb';
import { builtCli, doclayer } from './support/built-cli';

/**
 * `doclayer queue <id> stats` and `doclayer queue <id> jobs --state <state>`, end to end: a queue with
 * waiting, delayed, active and dead jobs made through the library on an LMDB folder, then read by the
 * built binary.
 */

jest.setTimeout(120_000);

let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'doclayer-cli-queue-'));
  const database = openLmdbDatabase({ path: join(dir, 'db') });
  const docs = await open({ database });
  const q = docs.collection().queue('jobs', { maxAttempts: 1 });
  await q.pushMany(['w1', 'w2', 'gone']);
  await q.push({ later: true }, { delayMs: 3_600_000 });
  const [dead] = await q.lease(1, { visibilityMs: 3_600_000 });
  await q.nack(dead);
  await q.lease(1, { visibilityMs: 3_600_000 });
  await docs.close();
  await database.close();
  await builtCli();
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

const db = () => ['--db', join(dir, 'db')];

async function ok(args: string[]): Promise<string> {
  const run = await doclayer(args, { cwd: dir });
  if (run.status !== 0) throw new Error(`doclayer ${args.join(' ')} exited with ${run.status}:\n${run.stderr}`);
  return run.stdout;
}

const lines = (stdout: string): unknown[] =>
  stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as unknown);

describe('doclayer queue <id> stats', () => {
  it('prints the jobs per state', async () => {
    expect(JSON.parse(await ok([...db(), 'queue', 'jobs', 'stats']))).toEqual({ waiting: 1, delayed: 1, active: 1, dead: 1 });
    expect(JSON.parse(await ok([...db(), 'queue', 'jobs', 'stats', '--json']))).toEqual({
      id: 'jobs',
      op: 'stats',
      result: { waiting: 1, delayed: 1, active: 1, dead: 1 },
    });
  });
});

describe('doclayer queue <id> jobs', () => {
  it('prints the jobs of a state as JSON lines', async () => {
    const id = expect.stringMatching(/^[0-9a-f]{24}$/) as unknown;
    expect(lines(await ok([...db(), 'queue', 'jobs', 'jobs', '--state', 'waiting']))).toEqual([{ id, state: 'waiting', attempts: 0, value: 'gone' }]);
    expect(lines(await ok([...db(), 'queue', 'jobs', 'jobs', '--state', 'delayed']))).toEqual([
      { id, state: 'delayed', attempts: 0, value: { later: true }, at: expect.any(Number) as unknown },
    ]);
    expect(lines(await ok([...db(), 'queue', 'jobs', 'jobs', '--state', 'active']))).toEqual([
      { id, state: 'active', attempts: 1, value: 'w2', at: expect.any(Number) as unknown },
    ]);
    expect(lines(await ok([...db(), 'queue', 'jobs', 'jobs', '--state', 'dead', '--limit', '1']))).toEqual([
      { id, state: 'dead', attempts: 0, value: 'w1' },
    ]);
  });

  it('refuses a missing or unknown state, and options other ops do not take', async () => {
    const missing = await doclayer([...db(), 'queue', 'jobs', 'jobs'], { cwd: dir });
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain('--state');
    const unknown = await doclayer([...db(), 'queue', 'jobs', 'jobs', '--state', 'done'], { cwd: dir });
    expect(unknown.status).toBe(2);
    const wrongOp = await doclayer([...db(), 'queue', 'jobs', 'size', '--state', 'waiting'], { cwd: dir });
    expect(wrongOp.status).toBe(2);
    expect(wrongOp.stderr).toContain('queue size does not take --state');
  });

  it('is in the usage of the queue command', async () => {
    const help = await ok(['help', 'queue']);
    expect(help).toContain('queue <id> jobs [--state] [--limit]');
    expect(help).toContain('queue <id> stats');
  });
});
