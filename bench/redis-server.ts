/**
 * A throwaway `redis-server` for the side-by-side benches (bench/redis.ts, bench/bullmq.ts): Debian's
 * binary started on a free loopback port with its own temporary folder, in one of three persistence
 * settings, and stopped (folder removed) by `stop()`.
 */
import { spawn, spawnSync, type ChildProcess } from 'child_process';
import { mkdtempSync, rmSync } from 'fs';
import { createServer } from 'net';
import { tmpdir } from 'os';
import { join } from 'path';
import Redis from 'ioredis';

/** `none`: no RDB, no AOF; `everysec`: AOF fsynced once a second; `always`: AOF fsynced before each reply. */
export type RedisPersistence = 'none' | 'everysec' | 'always';

export interface RunningRedis {
  readonly port: number;
  readonly version: string;
  /** A new ioredis client to this server (the caller quits it). */
  client(options?: { maxRetriesPerRequest?: number | null }): Redis;
  stop(): Promise<void>;
}

/** `redis-server --version`'s text, or undefined when it is not installed. */
export function redisServerVersion(): string | undefined {
  const run = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  if (run.error !== undefined || run.status !== 0) return undefined;
  return /v=(\S+)/.exec(run.stdout)?.[1] ?? run.stdout.trim();
}

/** The plain sentence the benches print (and exit 0 after) when there is no redis-server. */
export const NO_REDIS =
  'redis-server is not installed, so there is nothing to compare against: skipped. Install it (Debian: apt-get install -y redis-server) and run again.';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Starts a redis-server with `persistence`; resolves once it answers PING (gives up after 10 s). */
export async function startRedis(persistence: RedisPersistence): Promise<RunningRedis> {
  const version = redisServerVersion();
  if (version === undefined) throw new Error(NO_REDIS);
  const dir = mkdtempSync(join(tmpdir(), 'doclayer-bench-redis-'));
  const port = await freePort();
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--daemonize', 'no', '--protected-mode', 'yes'];
  if (persistence === 'none') args.push('--appendonly', 'no');
  else args.push('--appendonly', 'yes', '--appendfsync', persistence);
  const child: ChildProcess = spawn('redis-server', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let exited = false;
  child.once('exit', () => (exited = true));
  const clients: Redis[] = [];
  const client = (options: { maxRetriesPerRequest?: number | null } = {}) => {
    const r = new Redis({ host: '127.0.0.1', port, lazyConnect: false, ...options });
    clients.push(r);
    return r;
  };
  const stop = async () => {
    for (const r of clients) r.disconnect();
    if (!exited) {
      const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      await Promise.race([gone, sleep(5000)]);
      if (!exited) child.kill('SIGKILL');
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (exited) {
      await stop();
      throw new Error(`redis-server exited at start (args: ${args.join(' ')})`);
    }
    const probe = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => undefined);
    try {
      await probe.connect();
      await probe.ping();
      probe.disconnect();
      break;
    } catch {
      probe.disconnect();
      if (Date.now() > deadline) {
        await stop();
        throw new Error(`redis-server did not answer on 127.0.0.1:${port} within 10 s`);
      }
      await sleep(50);
    }
  }
  return { port, version, client, stop };
}
