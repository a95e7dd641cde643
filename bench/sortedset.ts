/**
 * `npm run bench:sortedset`: doclayer's sorted set in this process against Redis's over loopback
 * (started and measured with bench:redis's helpers), the same operations at the same concurrency in
 * one run; ratio = doclayer / Redis.
 *
 *   npm run bench:sortedset -- [--engine memory,lmdb-fast] [--callers 1,32] [--ms 300] [--rounds 3] [--members 10000]
 *
 * Pairings as bench:redis's: the memory engine vs Redis without persistence, LMDB 'fast' vs Redis with
 * AOF fsynced every second. Both sides first hold the same `--members` members (scores 0..99,999),
 * then each row loops, every caller on that one sorted set:
 * - add: a new member with a score (`add` | ZADD);
 * - rank: the rank of an existing member (`rank` | ZRANK);
 * - range by score: the first 10 members from a score on (`rangeByScore(s, Infinity, { limit: 10 })` |
 *   ZRANGEBYSCORE key s +inf LIMIT 0 10).
 *
 * Run whole (no options), it writes its table into its own section of bench/results.md. Without
 * redis-server it says so and exits 0. Rates are noisy on a shared machine: compare ratios of one run.
 */
import type Redis from 'ioredis';
import type { DocLayer } from '../src';
import type { Collection } from '../src/collection';
import { listArg, openEngine, opsPerSecond, PAIRINGS, redisTable, type Call, type EngineName, type RedisRow } from './redis';
import { NO_REDIS, redisServerVersion, startRedis } from './redis-server';
import { writeResultsSection } from './results-section';

const KEY = 'board';
const RANGE_LIMIT = 10;
const score = (i: number) => (i * 7919) % 100_000;
const member = (i: number) => `player-${i}`;

interface Operation {
  readonly name: string;
  ours(c: Collection, members: number): Call;
  redis(r: Redis, members: number): Call;
}

const OPERATIONS: readonly Operation[] = [
  {
    name: 'add',
    ours: (c, n) => (i) => c.sortedSet(KEY).add(member(n + i), score(n + i)),
    redis: (r, n) => (i) => r.zadd(KEY, score(n + i), member(n + i)),
  },
  {
    name: 'rank',
    ours: (c, n) => (i) => c.sortedSet(KEY).rank(member((i * 31) % n)),
    redis: (r, n) => (i) => r.zrank(KEY, member((i * 31) % n)),
  },
  {
    name: 'range by score',
    ours: (c) => (i) => c.sortedSet(KEY).rangeByScore(score(i), Infinity, { limit: RANGE_LIMIT }),
    redis: (r) => (i) => r.zrangebyscore(KEY, score(i), '+inf', 'WITHSCORES', 'LIMIT', 0, RANGE_LIMIT),
  },
];

/** Fills both sides with `members` members. */
async function prefill(docs: DocLayer, r: Redis, members: number): Promise<void> {
  const z = docs.collection().sortedSet(KEY);
  for (let from = 0; from < members; from += 500) {
    const to = Math.min(members, from + 500);
    await docs.transact(async (tr) => {
      for (let i = from; i < to; i++) await z.add(member(i), score(i), { tr });
    });
    const args: (string | number)[] = [];
    for (let i = from; i < to; i++) args.push(score(i), member(i));
    await r.zadd(KEY, ...args);
  }
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const version = redisServerVersion();
  if (version === undefined) {
    console.log(NO_REDIS);
    return;
  }
  const engines = (listArg(args, 'engine') as EngineName[] | undefined) ?? ['memory', 'lmdb-fast'];
  const callersList = listArg(args, 'callers')?.map(Number) ?? [1, 32];
  const ms = Number(listArg(args, 'ms')?.[0] ?? 300);
  const rounds = Number(listArg(args, 'rounds')?.[0] ?? 3);
  const members = Number(listArg(args, 'members')?.[0] ?? 10_000);
  const whole = args.length === 0;
  console.log(
    `doclayer sorted set vs Redis ${version} (ioredis, loopback), ${members} members, best of ${rounds} rounds of ${ms} ms per side and row`,
  );
  const started = Date.now();
  const rows: RedisRow[] = [];
  for (const pairing of PAIRINGS.filter((p) => engines.includes(p.engine))) {
    const server = await startRedis(pairing.redis);
    const redis = server.client();
    const { docs, close } = await openEngine(pairing.engine);
    try {
      const c = docs.collection();
      await prefill(docs, redis, members);
      // Warm-up (JIT): a short run of every operation on each side (adds past every row's members).
      for (const op of OPERATIONS) {
        await opsPerSecond(4, 100, op.ours(c, members * 10));
        await opsPerSecond(4, 100, op.redis(redis, members * 10));
      }
      for (const callers of callersList) {
        for (const op of OPERATIONS) {
          let ours = 0;
          let theirs = 0;
          // Each round's adds are new members: numbered past the prefill, per round and side.
          for (let round = 0; round < rounds; round++) {
            const base = members * (20 + round * 2 + callers * 100);
            ours = Math.max(ours, await opsPerSecond(callers, ms, op.ours(c, op.name === 'add' ? base : members)));
            theirs = Math.max(theirs, await opsPerSecond(callers, ms, op.redis(redis, op.name === 'add' ? base : members)));
          }
          const row = { engine: pairing.engine, pairing: pairing.label, operation: op.name, callers, ours, redis: theirs, ratio: ours / theirs };
          rows.push(row);
          console.log(`${row.pairing.padEnd(42)} ${row.operation.padEnd(15)} ${String(callers).padStart(2)} callers  ${row.ratio.toFixed(2)}x`);
        }
      }
    } finally {
      await close();
      await server.stop();
    }
  }
  const lines = redisTable(rows);
  console.log(`\n${lines.join('\n')}\n\n(${((Date.now() - started) / 1000).toFixed(0)} s)`);
  if (whole) {
    const file = writeResultsSection('bench:sortedset', [
      `Written by \`npm run bench:sortedset\` on ${new Date().toISOString().slice(0, 10)}: doclayer's sorted set in process against Redis ${version}`,
      `over loopback through ioredis, on one sorted set of ${members.toLocaleString('en-US')} members (add: new members; rank: ZRANK of existing ones;`,
      `range by score: the first ${RANGE_LIMIT} from a score on), best of ${rounds} alternating rounds of ${ms} ms per side and row, in one run on a`,
      'shared 2-core machine (compare the ratios).',
      '',
      ...lines,
    ]);
    console.log(`wrote ${file}`);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
