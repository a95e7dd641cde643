/**
 * The binary-protocol endpoint against what a user would run instead: `doclayer serve` (memory engine,
 * and LMDB in a fresh folder) and Debian's `memcached` (when installed), each in its own process, in
 * the same run, driven by one load generator: GET and SET of 100-byte values over 1,000 keys, at 1 and
 * 32 connections, each connection one request at a time (no pipelining).
 *
 *   npm run bench:kv-server
 *
 * The load generator runs in this process on the same 2 cores as the servers, so absolute rates are
 * low and memcached's are capped by the generator: read the ratios, measured in one run.
 */
import { spawn, spawnSync, type ChildProcess } from 'child_process';
import { mkdtempSync, rmSync } from 'fs';
import { connect, type Socket } from 'net';
import { tmpdir } from 'os';
import { join } from 'path';

const ROOT = join(__dirname, '..');
/** Servers started, stopped however the run ends. */
const children: ChildProcess[] = [];
process.on('exit', () => children.forEach((child) => child.kill('SIGTERM')));
const KEYS = 1000;
const VALUE = Buffer.alloc(100, 0x61);
const BUDGET_MS = Number(process.env.BENCH_MS ?? 3000);

/** One connection, one request at a time. */
class Connection {
  private pending: Buffer = Buffer.alloc(0);
  private resolve: (() => void) | undefined;
  private fail: ((err: Error) => void) | undefined;

  private constructor(private readonly socket: Socket) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => {
      this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
      while (this.pending.length >= 24) {
        const total = 24 + this.pending.readUInt32BE(8);
        if (this.pending.length < total) return;
        const status = this.pending.readUInt16BE(6);
        this.pending = this.pending.subarray(total);
        if (status === 0) this.resolve?.();
        else this.fail?.(new Error(`status 0x${status.toString(16)}`));
      }
    });
  }

  static open(port: number): Promise<Connection> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => resolve(new Connection(socket)));
      socket.once('error', reject);
    });
  }

  request(packet: Buffer): Promise<void> {
    return new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.fail = reject;
      this.socket.write(packet);
    });
  }

  close(): void {
    this.socket.destroy();
  }
}

function packet(opcode: number, key: string, extras: Buffer, value: Buffer): Buffer {
  const k = Buffer.from(key);
  const header = Buffer.alloc(24);
  header[0] = 0x80;
  header[1] = opcode;
  header.writeUInt16BE(k.length, 2);
  header[4] = extras.length;
  header.writeUInt32BE(extras.length + k.length + value.length, 8);
  return Buffer.concat([header, extras, k, value]);
}

const SET_EXTRAS = Buffer.alloc(8);
const GETS = Array.from({ length: KEYS }, (_, i) => packet(0x00, `key:${i}`, Buffer.alloc(0), Buffer.alloc(0)));
const SETS = Array.from({ length: KEYS }, (_, i) => packet(0x01, `key:${i}`, SET_EXTRAS, VALUE));

/** Requests per second over `connections` connections, each sending `packets` in turn for the budget. */
async function drive(port: number, connections: number, packets: Buffer[]): Promise<number> {
  const pool = await Promise.all(Array.from({ length: connections }, () => Connection.open(port)));
  let done = 0;
  const start = process.hrtime.bigint();
  const deadline = start + BigInt(BUDGET_MS) * 1_000_000n;
  await Promise.all(
    pool.map(async (connection, c) => {
      for (let i = c; process.hrtime.bigint() < deadline; i++) {
        await connection.request(packets[i % packets.length]);
        done++;
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  for (const connection of pool) connection.close();
  return done / seconds;
}

async function startDoclayer(engineArgs: string[]): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(
    process.execPath,
    ['-r', 'ts-node/register/transpile-only', join(ROOT, 'src/cli/main.ts'), ...engineArgs, 'serve', '--port', '0'],
    {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  children.push(child);
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

async function startMemcached(): Promise<{ child: ChildProcess; port: number } | undefined> {
  if (spawnSync('sh', ['-c', 'command -v memcached']).status !== 0) return undefined;
  const port = 20000 + Math.floor(Math.random() * 20000);
  const child = spawn('memcached', ['-l', '127.0.0.1', '-p', String(port), '-U', '0', '-t', '2', '-m', '256', '-u', 'nobody'], { stdio: 'ignore' });
  children.push(child);
  for (let attempt = 0; attempt < 50; attempt++) {
    try {
      (await Connection.open(port)).close();
      return { child, port };
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  child.kill();
  return undefined;
}

type Rates = Record<string, number>;

/** Sets every key once (GETs then always hit). */
async function preload(port: number): Promise<void> {
  const connection = await Connection.open(port);
  for (const set of SETS) await connection.request(set);
  connection.close();
}

async function measureServer(port: number): Promise<Rates> {
  await preload(port);
  const rates: Rates = {};
  for (const connections of [1, 32]) {
    rates[`set, ${connections} connection${connections === 1 ? '' : 's'}`] = await drive(port, connections, SETS);
    rates[`get, ${connections} connection${connections === 1 ? '' : 's'}`] = await drive(port, connections, GETS);
  }
  return rates;
}

function format(n: number | undefined): string {
  return n === undefined ? '' : Math.round(n).toLocaleString('en-US');
}

async function main(): Promise<void> {
  const folder = mkdtempSync(join(tmpdir(), 'doclayer-kv-bench-'));
  const results: Record<string, Rates> = {};
  try {
    for (const [label, args] of [
      ['memory', ['--memory']],
      ['lmdb', ['--db', folder]],
    ] as const) {
      const server = await startDoclayer([...args]);
      try {
        results[label] = await measureServer(server.port);
      } finally {
        server.child.kill('SIGTERM');
      }
    }
    const memcached = await startMemcached();
    if (memcached === undefined) process.stdout.write('memcached is not installed (apt-get install -y memcached): no comparison column\n');
    else {
      try {
        results.memcached = await measureServer(memcached.port);
      } finally {
        memcached.child.kill('SIGTERM');
      }
    }
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
  const lines = [
    '| operation | doclayer memory (ops/s) | doclayer LMDB (ops/s) | memcached (ops/s) | memory / memcached | LMDB / memcached |',
    '| --- | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const operation of Object.keys(results.memory)) {
    const mem = results.memory[operation];
    const lmdb = results.lmdb[operation];
    const base = results.memcached?.[operation];
    const ratio = (n: number) => (base === undefined ? '' : `${(n / base).toFixed(2)}x`);
    lines.push(`| ${operation} | ${format(mem)} | ${format(lmdb)} | ${format(base)} | ${ratio(mem)} | ${ratio(lmdb)} |`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${String(err)}\n`);
  process.exit(1);
});
