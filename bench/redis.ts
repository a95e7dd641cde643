/**
 * `npm run bench:redis`: doclayer in this process against Redis over loopback (Debian's `redis-server`,
 * started here on a free port with its own temporary folder, talked to with `ioredis`), the same
 * operations at the same concurrency in one run; ratio = doclayer / Redis.
 *
 *   npm run bench:redis -- [--engine memory,lmdb-fast,lmdb-sync] [--op counter-incr,...] [--callers 1,32] [--ms 300] [--rounds 3]
 *
 * Three pairings, each what a user would weigh against the other:
 * - `memory`: the memory engine vs Redis without persistence (no RDB, no AOF);
 * - `lmdb-fast`: LMDB with durability 'fast' vs Redis with AOF fsynced every second;
 * - `lmdb-sync`: LMDB with durability 'sync' vs Redis with `appendfsync always`.
 *
 * Operations (doclayer | Redis): counter incr (`counter.incr()` | INCR), counter blind add
 * (`counter.add(1)` | INCRBY), set add of a new member (`set.add` | SADD), map set (`map.set` | HSET),
 * list push (`list.push` | RPUSH), queue push (`queue.push` | LPUSH of the JSON), queue pop
 * (`queue.pop()` | RPOP + JSON.parse, of 30,000 items pushed first and what the push row left), document upsert of a 7-leaf
 * document (`upsert` | SET of its JSON) and get (`get` | GET + JSON.parse), over 1,000 ids (at 32
 * callers, doclayer's concurrent upserts share transactions and so do its gets: docs/documents.md).
 * Each caller loops, one operation at a time, for `--ms`; a row alternates the sides `--rounds` times
 * and keeps each side's best round (the one least disturbed by other processes); every caller of a row works on the
 * same structure (so 32 callers of `counter incr` are 32 clients of one hot key). Redis is one
 * ioredis connection shared by the callers, as an app would use it (concurrent commands pipeline).
 *
 * Run whole (no --engine/--op/--callers), it also writes its table into bench/results.md. Without
 * redis-server it says so and exits 0. Rates are noisy on a shared machine: compare ratios of one run.
 */
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import type Redis from 'ioredis';
import { open, type DocLayer } from '../src';
import type { Collection } from '../src/collection';
import { NO_REDIS, redisServerVersion, startRedis, type RedisPersistence } from './redis-server';
import { writeResultsSection } from './results-section';

export type EngineName = 'memory' | 'lmdb-fast' | 'lmdb-sync';

interface Pairing {
  readonly engine: EngineName;
  readonly redis: RedisPersistence;
  readonly label: string;
}

export const PAIRINGS: readonly Pairing[] = [
  { engine: 'memory', redis: 'none', label: 'memory vs Redis (no persistence)' },
  { engine: 'lmdb-fast', redis: 'everysec', label: "LMDB 'fast' vs Redis (AOF everysec)" },
  { engine: 'lmdb-sync', redis: 'always', label: "LMDB 'sync' vs Redis (appendfsync always)" },
];

/** What a call returns when there was nothing to do (an empty queue): its loop stops. */
export const EMPTY = Symbol('empty');

/** One operation on either side, given a number unique within its row. */
export type Call = (i: number) => Promise<unknown>;

interface Operation {
  readonly name: string;
  ours(c: Collection, run: string): Call;
  redis(r: Redis, run: string): Call;
  /** Writes what the operation reads, on both sides, before it is measured. */
  prepare?(c: Collection, r: Redis, run: string): Promise<void>;
}

const IDS = 1_000;

/** Items the queue pop row pushes on each side before it runs. */
const POP_PREFILL = 30_000;

const documentOf = (i: number) => ({
  name: `user ${i}`,
  age: 20 + (i % 50),
  email: `user${i}@example.com`,
  tags: ['a', 'b'],
  address: { city: 'Berlin', zip: '10115' },
});

const job = (i: number) => ({ n: i, task: 'resize-image' });

export const OPERATIONS: readonly Operation[] = [
  {
    name: 'counter incr',
    ours: (c, run) => {
      const counter = c.counter(`hits-${run}`);
      return () => counter.incr();
    },
    redis: (r, run) => () => r.incr(`hits-${run}`),
  },
  {
    name: 'counter blind add',
    ours: (c, run) => {
      const counter = c.counter(`adds-${run}`);
      return () => counter.add(1);
    },
    redis: (r, run) => () => r.incrby(`adds-${run}`, 1),
  },
  {
    name: 'set add',
    ours: (c, run) => {
      const set = c.set<string>(`members-${run}`);
      return (i) => set.add(`m${i}`);
    },
    redis: (r, run) => (i) => r.sadd(`members-${run}`, `m${i}`),
  },
  {
    name: 'map set',
    ours: (c, run) => {
      const map = c.map(`fields-${run}`);
      return (i) => map.set(`f${i % IDS}`, i);
    },
    redis: (r, run) => (i) => r.hset(`fields-${run}`, `f${i % IDS}`, String(i)),
  },
  {
    name: 'list push',
    ours: (c, run) => {
      const list = c.list<number>(`items-${run}`);
      return (i) => list.push(i);
    },
    redis: (r, run) => (i) => r.rpush(`items-${run}`, String(i)),
  },
  {
    name: 'queue push',
    ours: (c, run) => {
      const queue = c.queue(`jobs-${run}`);
      return (i) => queue.push(job(i));
    },
    redis: (r, run) => (i) => r.lpush(`jobs-${run}`, JSON.stringify(job(i))),
  },
  {
    name: 'queue pop',
    // Items to pop besides what the push row left: enough for a row of any length here.
    prepare: async (c, r, run) => {
      const queue = c.queue(`jobs-${run}`);
      for (let i = 0; i < POP_PREFILL; i += 1000) {
        const chunk = Array.from({ length: 1000 }, (_, j) => job(i + j));
        await queue.pushMany(chunk);
        await r.lpush(`jobs-${run}`, ...chunk.map((v) => JSON.stringify(v)));
      }
    },
    ours: (c, run) => {
      const queue = c.queue(`jobs-${run}`);
      return async () => ((await queue.pop()) === undefined ? EMPTY : true);
    },
    redis: (r, run) => async () => {
      const text = await r.rpop(`jobs-${run}`);
      return text === null ? EMPTY : (JSON.parse(text) as unknown);
    },
  },
  {
    name: 'document upsert',
    ours: (c, run) => (i) => c.upsert(`doc-${run}-${i % IDS}`, documentOf(i)),
    redis: (r, run) => (i) => r.set(`doc-${run}-${i % IDS}`, JSON.stringify(documentOf(i))),
  },
  {
    name: 'document get',
    prepare: async (c, r, run) => {
      for (let i = 0; i < IDS; i++) {
        await c.upsert(`doc-${run}-${i}`, documentOf(i));
        await r.set(`doc-${run}-${i}`, JSON.stringify(documentOf(i)));
      }
    },
    ours: (c, run) => (i) => c.get(`doc-${run}-${i % IDS}`),
    redis: (r, run) => async (i) => {
      const text = await r.get(`doc-${run}-${i % IDS}`);
      return text === null ? undefined : (JSON.parse(text) as unknown);
    },
  },
];

/**
 * Operations per second of `callers` loops calling `call` (each with the next number) until `ms` have
 * passed, or until a call returns {@link EMPTY}.
 */
export async function opsPerSecond(callers: number, ms: number, call: Call): Promise<number> {
  let next = 0;
  let done = 0;
  let stopped = false;
  const start = process.hrtime.bigint();
  const deadline = start + BigInt(ms * 1e6);
  await Promise.all(
    Array.from({ length: callers }, async () => {
      while (!stopped) {
        if ((await call(next++)) === EMPTY) {
          stopped = true;
          break;
        }
        done++;
        if (process.hrtime.bigint() >= deadline) stopped = true;
      }
    }),
  );
  return done / (Number(process.hrtime.bigint() - start) / 1e9);
}

export interface RedisRow {
  readonly engine: EngineName;
  readonly pairing: string;
  readonly operation: string;
  readonly callers: number;
  readonly ours: number;
  readonly redis: number;
  readonly ratio: number;
}

/** Opens doclayer on `engine` (a fresh LMDB folder for the lmdb ones); `close` also removes the folder. */
export async function openEngine(engine: EngineName): Promise<{ docs: DocLayer; close: () => Promise<void> }> {
  if (engine === 'memory') {
    const docs = await open();
    return { docs, close: () => docs.close() };
  }
  const path = mkdtempSync(join(tmpdir(), 'doclayer-bench-lmdb-'));
  const docs = await open({ path, durability: engine === 'lmdb-fast' ? 'fast' : 'sync' });
  return {
    docs,
    close: async () => {
      await docs.close();
      rmSync(path, { recursive: true, force: true });
    },
  };
}

export interface RedisBenchOptions {
  engines?: readonly EngineName[];
  operations?: readonly string[];
  callers?: readonly number[];
  ms?: number;
  /** Rounds per row, alternating sides; each side's best round counts (default 3). */
  rounds?: number;
  /** Called with each row as it is measured. */
  onRow?: (row: RedisRow) => void;
}

/** Every row asked for; throws NO_REDIS's message when redis-server is missing. */
export async function runRedisBench(options: RedisBenchOptions = {}): Promise<RedisRow[]> {
  const ms = options.ms ?? 300;
  const rounds = options.rounds ?? 3;
  const callersList = options.callers ?? [1, 32];
  const ops = OPERATIONS.filter((o) => options.operations === undefined || options.operations.includes(o.name.replace(/ /g, '-')));
  const rows: RedisRow[] = [];
  for (const pairing of PAIRINGS.filter((p) => options.engines === undefined || options.engines.includes(p.engine))) {
    const server = await startRedis(pairing.redis);
    const redis = server.client();
    const { docs, close } = await openEngine(pairing.engine);
    try {
      const c = docs.collection();
      // Warm-up (JIT) on structures of their own: a short run of every operation on each side.
      for (const op of ops) {
        await op.prepare?.(c, redis, 'warm');
        await opsPerSecond(4, 100, op.ours(c, 'warm'));
        await opsPerSecond(4, 100, op.redis(redis, 'warm'));
      }
      for (const callers of callersList) {
        const run = `c${callers}`;
        for (const op of ops) {
          await op.prepare?.(c, redis, run);
          // Best of alternating rounds: the round least disturbed by other processes, on each side.
          let ours = 0;
          let theirs = 0;
          for (let round = 0; round < rounds; round++) {
            ours = Math.max(ours, await opsPerSecond(callers, ms, op.ours(c, run)));
            theirs = Math.max(theirs, await opsPerSecond(callers, ms, op.redis(redis, run)));
          }
          const row = { engine: pairing.engine, pairing: pairing.label, operation: op.name, callers, ours, redis: theirs, ratio: ours / theirs };
          rows.push(row);
          options.onRow?.(row);
        }
      }
    } finally {
      await close();
      await server.stop();
    }
  }
  return rows;
}

const rate = (n: number) => (n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(1));

/** The operations that 32 callers run on one structure, whose hot-key target is {@link HOT_KEY_TARGET}. */
const HOT_KEY_OPERATIONS: ReadonlySet<string> = new Set(['counter incr', 'list push', 'queue pop']);

/** Issue 17's target for 32 callers on one structure, on every engine: looser than each pairing's own. */
export const HOT_KEY_TARGET = 0.5;

/**
 * Issue 17's target for a row (doclayer / Redis, in one run): the memory engine 2x at 1 caller and 1x
 * with more, LMDB 'fast' 0.5x and 1x, LMDB 'sync' 1x at both.
 */
export function targetOf(engine: EngineName, callers: number): number {
  if (engine === 'memory') return callers === 1 ? 2 : 1;
  if (engine === 'lmdb-fast') return callers === 1 ? 0.5 : 1;
  return 1;
}

/**
 * Whether a row meets its target, and by how much it falls short when not (the factor doclayer would
 * need); with several callers on a hot-key operation, the hot-key target's verdict too.
 */
export function targetVerdict(row: RedisRow): string {
  const target = targetOf(row.engine, row.callers);
  const verdict = (goal: number) => (row.ratio >= goal ? `${goal}x met` : `${goal}x not met (${(goal / row.ratio).toFixed(2)}x short)`);
  const hot = row.callers > 1 && HOT_KEY_OPERATIONS.has(row.operation) ? `; hot key ${verdict(HOT_KEY_TARGET)}` : '';
  return verdict(target) + hot;
}

/** The rows as a Markdown table; `withTargets`: with issue 17's target and verdict for each (bench:redis's rows). */
export function redisTable(rows: readonly RedisRow[], withTargets = false): string[] {
  const head = '| pairing | operation | callers | doclayer (ops/s) | Redis (ops/s) | ratio |';
  const rule = '| --- | --- | ---: | ---: | ---: | ---: |';
  const line = (r: RedisRow) => `| ${r.pairing} | ${r.operation} | ${r.callers} | ${rate(r.ours)} | ${rate(r.redis)} | ${r.ratio.toFixed(2)}x |`;
  if (!withTargets) return [head, rule, ...rows.map(line)];
  return [`${head} target (issue 17) |`, `${rule} --- |`, ...rows.map((r) => `${line(r)} ${targetVerdict(r)} |`)];
}

/** How many rows meet their target (each pairing's own, the stricter one on hot keys). */
export function targetsMet(rows: readonly RedisRow[]): string {
  const met = rows.filter((r) => r.ratio >= targetOf(r.engine, r.callers)).length;
  return `issue 17's targets: ${met} of ${rows.length} rows met`;
}

/** The comma-separated values of `--name`, if given. */
export function listArg(args: string[], name: string): string[] | undefined {
  const at = args.indexOf(`--${name}`);
  if (at < 0) return undefined;
  const value = args[at + 1];
  if (value === undefined) throw new Error(`--${name} needs a value`);
  return value.split(',').map((s) => s.trim());
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const version = redisServerVersion();
  if (version === undefined) {
    console.log(NO_REDIS);
    return;
  }
  const engines = listArg(args, 'engine') as EngineName[] | undefined;
  for (const e of engines ?? [])
    if (!PAIRINGS.some((p) => p.engine === e)) throw new Error(`--engine: one of ${PAIRINGS.map((p) => p.engine).join(', ')}, not ${e}`);
  const operations = listArg(args, 'op');
  for (const o of operations ?? [])
    if (!OPERATIONS.some((op) => op.name.replace(/ /g, '-') === o))
      throw new Error(`--op: one of ${OPERATIONS.map((op) => op.name.replace(/ /g, '-')).join(', ')}, not ${o}`);
  const callers = listArg(args, 'callers')?.map(Number);
  const ms = Number(listArg(args, 'ms')?.[0] ?? 300);
  const rounds = Number(listArg(args, 'rounds')?.[0] ?? 3);
  const started = Date.now();
  console.log(`doclayer vs Redis ${version} (ioredis, loopback), best of ${rounds} rounds of ${ms} ms per side and row; ratio = doclayer / Redis`);
  const rows = await runRedisBench({
    engines,
    operations,
    callers,
    ms,
    rounds,
    onRow: (r) =>
      console.log(
        `${r.pairing.padEnd(42)} ${r.operation.padEnd(18)} ${String(r.callers).padStart(2)} callers  ${rate(r.ours).padStart(9)} vs ${rate(r.redis).padStart(9)}  ${r.ratio.toFixed(2)}x  target ${targetVerdict(r)}`,
      ),
  });
  const lines = [...redisTable(rows, true), '', `${targetsMet(rows)}.`];
  console.log(`\n${lines.join('\n')}\n\n(${((Date.now() - started) / 1000).toFixed(0)} s)`);
  if (engines === undefined && operations === undefined && callers === undefined) {
    const file = writeResultsSection('bench:redis', [
      `Written by \`npm run bench:redis\` on ${new Date().toISOString().slice(0, 10)}: doclayer in process against Redis ${version} over loopback`,
      `through ioredis, best of ${rounds} alternating rounds of ${ms} ms per side and row, in one run on a shared 2-core machine (compare the ratios).`,
      '',
      ...lines,
    ]);
    console.log(`wrote ${file}`);
  }
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
