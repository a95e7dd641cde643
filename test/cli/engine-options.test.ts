/**
 * The global options that tune the LMDB engine, `--durability` and `--read-cache-bytes`: what they
 * give the library's engine chooser, the usage errors for bad values or another engine, and commands
 * run with them in this process (`runCli`, what the binary runs), watched through the engine's store.
 */
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { parseArgs, UsageError } from '../../src/cli/args';
import { OPTION_SPECS } from '../../src/cli/options';
import { engineSelection } from '../../src/cli/session';
import { LmdbStore } from '../../src/kv/lmdb/lmdb-store';
import { RangeCache } from '../../src/kv/lmdb/range-cache';
import { Opcode, Status } from '../../src/server/protocol';
import { McbpClient, storeExtras } from '../support/mcbp-client';
import { runInProcess } from './support/in-process';

const CWD = '/work/app';
const select = (...argv: string[]) => engineSelection(parseArgs([...argv, 'get', 'ada'], OPTION_SPECS, new Set(['get'])), CWD).choice;
const refusal = (...argv: string[]) => {
  try {
    select(...argv);
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    return (err as UsageError).message;
  }
  throw new Error(`accepted ${argv.join(' ')}`);
};

describe('--durability and --read-cache-bytes', () => {
  it('give the LMDB engine its durability and cache size, with --db or in the default folder', () => {
    expect(select('--db', 'data', '--durability', 'fast', '--read-cache-bytes', '0')).toEqual({
      engine: 'lmdb',
      path: join(CWD, 'data'),
      durability: 'fast',
      readCacheBytes: 0,
    });
    expect(select('--read-cache-bytes=1048576')).toEqual({ engine: 'lmdb', path: join(CWD, 'doclayer-data'), readCacheBytes: 1_048_576 });
    expect(select('--durability', 'sync')).toEqual({ engine: 'lmdb', path: join(CWD, 'doclayer-data'), durability: 'sync' });
    // Without them, the engine's own defaults.
    expect(select('--db', 'data')).toEqual({ engine: 'lmdb', path: join(CWD, 'data') });
  });

  it('refuse bad values and engines other than LMDB with a usage error', () => {
    expect(refusal('--durability', 'eventually')).toBe('--durability is sync or fast, got "eventually"');
    for (const bytes of ['-1', '1.5', '16MB', '', '99999999999999999999']) {
      expect(refusal('--read-cache-bytes', bytes)).toBe(`--read-cache-bytes is a whole number of bytes, 0 or more, got ${JSON.stringify(bytes)}`);
    }
    expect(refusal('--memory', '--durability', 'fast')).toBe(
      '--durability is an option of the durable embedded engine (LMDB, --db), not of --memory',
    );
    expect(refusal('--fdb', '--read-cache-bytes', '0')).toBe(
      '--read-cache-bytes is an option of the durable embedded engine (LMDB, --db), not of --fdb',
    );
    expect(refusal('--memory', '--db', 'x', '--durability', 'fast')).toBe('choose one engine: --db and --memory were given');
  });
});

describe('commands run with --durability and --read-cache-bytes', () => {
  let dir: string;
  /** The port of the `serve` command running, once it printed it. */
  let runningPort: number | undefined;
  beforeAll(() => (dir = mkdtempSync(join(tmpdir(), 'doclayer-cli-engine-options-'))));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const run = (args: string[]) =>
    runInProcess(args, {
      cwd: dir,
      onStdout: (stdout) => {
        const listening = /on [^\s]+:(\d+)/.exec(stdout);
        if (listening) runningPort = Number(listening[1]);
      },
    });

  it('flush each write with --durability sync (the default) and not with fast; keep no ranges with --read-cache-bytes 0', async () => {
    const flushes = jest.spyOn(LmdbStore.prototype, 'flushed');
    const kept = jest.spyOn(RangeCache.prototype, 'keep');
    try {
      const counted = async (args: string[]) => {
        flushes.mockClear();
        kept.mockClear();
        const result = await run(args);
        expect(result).toMatchObject({ status: 0, stderr: '' });
        return { flushes: flushes.mock.calls.length, kept: kept.mock.calls.length, stdout: result.stdout };
      };
      const db = ['--db', 'store'];
      expect((await counted([...db, 'set', 'ada', '', '{"name":"Ada"}'])).flushes).toBeGreaterThan(0);
      expect((await counted([...db, '--durability', 'fast', 'set', 'ada', 'age', '36'])).flushes).toBe(0);
      expect((await counted([...db, '--durability', 'sync', 'set', 'ada', 'age', '37'])).flushes).toBeGreaterThan(0);
      // A whole-document get is a range read: kept by the cache unless it has no room.
      const cached = await counted([...db, 'get', 'ada']);
      expect(cached.kept).toBeGreaterThan(0);
      const uncached = await counted([...db, '--read-cache-bytes', '0', 'get', 'ada']);
      expect(uncached.kept).toBe(0);
      expect(JSON.parse(uncached.stdout)).toEqual({ name: 'Ada', age: 37 });
    } finally {
      flushes.mockRestore();
      kept.mockRestore();
    }
  });

  it('serve gives them to the engine it serves', async () => {
    const flushes = jest.spyOn(LmdbStore.prototype, 'flushed');
    try {
      for (const durability of ['fast', 'sync']) {
        runningPort = undefined;
        const serving = run(['--db', `served-${durability}`, '--durability', durability, 'serve', '--port', '0']);
        try {
          // The command prints its address once it listens, then runs until SIGINT or SIGTERM.
          for (let waited = 0; runningPort === undefined && waited < 200; waited++) await new Promise((resolve) => setTimeout(resolve, 25));
          expect(runningPort).toBeDefined();
          const client = await McbpClient.connect(runningPort!);
          flushes.mockClear();
          try {
            expect(await client.request(Opcode.Set, { key: 'k', extras: storeExtras(0), value: '{"a":1}' })).toMatchObject({
              status: Status.Success,
            });
          } finally {
            client.close();
          }
          expect({ durability, flushed: flushes.mock.calls.length > 0 }).toEqual({ durability, flushed: durability === 'sync' });
        } finally {
          // Stopped whatever failed above, so that no server outlives the test.
          process.emit('SIGTERM');
        }
        expect(await serving).toMatchObject({ status: 0, stderr: '' });
      }
    } finally {
      flushes.mockRestore();
    }
  });
});
