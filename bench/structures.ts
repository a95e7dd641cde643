/**
 * The contended follow/unfollow workload: 32 clients adding and removing members of one hot set (the
 * followers of a popular account: half follows, half unfollows, of users drawn at random from twice
 * the set's initial size), with doclayer's set (one key per member, size by atomic add) side by side
 * with the Couchbase SDK3 data-structures RFC's design over the same document layer and engine, in
 * one run. Settings (SET_BENCH_SETTINGS): the memory engine as it is, with sets of 500 and 2,000
 * members, and with 1 ms round trips (`withRoundTrips`, bench/structures-queue.ts).
 *
 * - RFC design: the set is one JSON array document. add = `mutateIn arrayAddUnique('')` with
 *   storeSemantics upsert (PATH_EXISTS: already there); remove = get the document, find the member's
 *   index, `mutateIn remove('[i]')` with the document's CAS, retried on CAS_MISMATCH (the RFC bounds it
 *   at 16 attempts; here it retries until it succeeds, so that no update is lost).
 *
 *   node -r ts-node/register/transpile-only bench/structures.ts
 *
 * Each side runs long enough that the backoff of its last retries does not decide its time (ours
 * runs more operations per client than the RFC design, which is that much slower), in two rounds
 * alternating with the other design's, so that the load of a shared machine weighs on both.
 *
 * Printed per design: operations per second, retries (transaction retries after conflicts, plus CAS
 * retries for the RFC design), and lost updates: for every member, the adds reported as new minus
 * the removes reported as done must equal its presence at the end, and the size must match.
 * Goal: at least 10x the RFC design's throughput, zero lost updates.
 *
 * `runStructuresBench()` returns the rows (with the queue's, from bench/structures-queue.ts) for a
 * combined runner.
 */
import { MutateInSpec, open, type Collection, type DocLayer } from '../src';
import { isDocumentError } from '../src/document/errors';
import { Database } from '../src/kv/contract/database';
import { MemoryEngine } from '../src/kv/memory/memory-engine';
import { seededRandom } from '../src/kv/engine-parts/seeded-random';
import { CountingEngine } from '../src/kv/counting-engine';
import { runQueueBench, withRoundTrips } from './structures-queue';

export interface StructureBenchRow {
  operation: string;
  /** ops/s of doclayer */
  ours: number;
  /** ops/s of the design compared against */
  comparison?: number;
  /** ours / comparison */
  ratio?: number;
  /** retries per 1,000 operations, ours and the comparison's */
  retriesPerK?: [number, number];
  /** updates lost (see the top of this file), ours and the comparison's */
  lost?: [number, number];
}

const CLIENTS = 32;
/** Rounds per design and setting; `ours` and `rfc` operations per client are split between them. */
const ROUNDS = 2;

/** The operations of one design's set. */
interface SetSide {
  /** Writes the initial members (not measured). */
  init(members: readonly string[]): Promise<void>;
  add(member: string): Promise<boolean>;
  remove(member: string): Promise<boolean>;
  members(): Promise<string[]>;
  size(): Promise<number>;
  /** Retries at the application level (CAS mismatches). */
  casRetries: number;
}

function oursSide(docs: DocLayer, c: Collection, id: string): SetSide {
  const s = c.set<string>(id);
  return {
    init: async (members) => {
      for (let i = 0; i < members.length; i += 500) {
        await docs.transact(async (tr) => {
          for (const m of members.slice(i, i + 500)) await s.add(m, { tr });
        });
      }
    },
    add: (m) => s.add(m),
    remove: (m) => s.delete(m),
    members: () => s.values(),
    size: () => s.size(),
    casRetries: 0,
  };
}

/** The RFC's CouchbaseSet: one JSON array, arrayAddUnique to add, CAS-checked remove by index. */
function rfcSide(c: Collection, id: string): SetSide {
  const side: SetSide = {
    init: async (members) => void (await c.upsert(id, [...members])),
    add: async (m) => {
      try {
        await c.mutateIn(id, [MutateInSpec.arrayAddUnique('', m)], { storeSemantics: 'upsert' });
        return true;
      } catch (err) {
        if (isDocumentError(err) && err.code === 'PATH_EXISTS') return false;
        throw err;
      }
    },
    remove: async (m) => {
      for (;;) {
        let doc;
        try {
          doc = await c.get(id);
        } catch (err) {
          if (isDocumentError(err, 'DOCUMENT_NOT_FOUND')) return false;
          throw err;
        }
        const index = (doc.content as string[]).indexOf(m);
        if (index < 0) return false;
        try {
          await c.mutateIn(id, [MutateInSpec.remove([index])], { cas: doc.cas });
          return true;
        } catch (err) {
          if (!isDocumentError(err, 'CAS_MISMATCH')) throw err;
          side.casRetries++;
        }
      }
    },
    members: async () => (await c.get(id)).content as string[],
    size: async () => ((await c.get(id)).content as string[]).length,
    casRetries: 0,
  };
  return side;
}

interface Outcome {
  ops: number;
  seconds: number;
  retries: number;
  lost: number;
}

/** Outcomes added up: operations per second over all the rounds' time. */
function total(outcomes: readonly Outcome[]): Outcome & { opsPerSecond: number } {
  const sum = (f: (o: Outcome) => number) => outcomes.reduce((n, o) => n + f(o), 0);
  const ops = sum((o) => o.ops);
  const seconds = sum((o) => o.seconds);
  return { ops, seconds, retries: sum((o) => o.retries), lost: sum((o) => o.lost), opsPerSecond: ops / seconds };
}

/**
 * `CLIENTS` clients, `opsPerClient` follow/unfollow operations each (half each, of random users of a
 * pool twice the initial size), on a set of `initial` members.
 */
async function followUnfollow(side: SetSide, counter: CountingEngine, initial: number, opsPerClient: number, seed: number): Promise<Outcome> {
  const pool = 2 * initial;
  const user = (i: number) => `user-${String(i).padStart(6, '0')}`;
  await side.init(Array.from({ length: initial }, (_, i) => user(i * 2)));
  const random = seededRandom(seed);
  const work = Array.from({ length: CLIENTS }, () =>
    Array.from({ length: opsPerClient }, () => ({ follow: random() < 0.5, member: user(Math.floor(random() * pool)) })),
  );
  const net = new Map<string, number>();
  for (let i = 0; i < initial; i++) net.set(user(i * 2), 1);
  counter.take();
  side.casRetries = 0;
  const start = process.hrtime.bigint();
  await Promise.all(
    work.map(async (ops) => {
      for (const { follow, member } of ops) {
        const changed = follow ? await side.add(member) : await side.remove(member);
        if (changed) net.set(member, (net.get(member) ?? 0) + (follow ? 1 : -1));
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const retries = counter.take().retries + side.casRetries;
  const present = new Set(await side.members());
  let lost = 0;
  for (let i = 0; i < pool; i++) {
    const m = user(i);
    if ((net.get(m) ?? 0) !== (present.has(m) ? 1 : 0)) lost++;
  }
  if ((await side.size()) !== present.size) lost++;
  return { ops: CLIENTS * opsPerClient, seconds, retries, lost };
}

/** One measured setting of the hot-set workload. */
export interface SetBenchSetting {
  /** Members the set starts with (users drawn from twice as many). */
  size: number;
  /** Per round trip (each read and commit), or 0 for the memory engine as it is. */
  roundTripMs: number;
  /** Operations per client: ours runs long enough that its last retries' backoff does not decide its time. */
  ours: number;
  rfc: number;
}

/**
 * The settings measured: the memory engine as it is (one thread, so transactions hardly overlap: the
 * rows measure the cost of an operation, which for the RFC design grows with the set) at two sizes,
 * and with 1 ms round trips (transactions overlap as over a network: the rows show what conflicts
 * cost).
 */
export const SET_BENCH_SETTINGS: readonly SetBenchSetting[] = [
  { size: 500, roundTripMs: 0, ours: 300, rfc: 40 },
  { size: 2_000, roundTripMs: 0, ours: 300, rfc: 20 },
  { size: 500, roundTripMs: 1, ours: 100, rfc: 10 },
];

/** The hot-set rows: doclayer's set against the RFC's array document, same engine, same run. */
export async function runSetBench(settings: readonly SetBenchSetting[] = SET_BENCH_SETTINGS): Promise<StructureBenchRow[]> {
  const rows: StructureBenchRow[] = [];
  for (const setting of settings) {
    const memory = new MemoryEngine();
    const counter = new CountingEngine(setting.roundTripMs > 0 ? withRoundTrips(memory, setting.roundTripMs) : memory);
    const kv = new Database(counter);
    const docs = await open({ database: kv, prefix: ['bs'] });
    const c = docs.collection('bench');
    try {
      // Warm-up, so that neither side is measured while the JIT compiles it (about 10,000 operations
      // of ours: fewer leave its first measured second partly unoptimized).
      await followUnfollow(oursSide(docs, c, 'warm-ours'), counter, 100, 300, 1);
      await followUnfollow(rfcSide(c, 'warm-rfc'), counter, 100, 5, 1);
      // Rounds alternate between the designs, so that the load of a shared machine weighs on both.
      const oursRounds: Outcome[] = [];
      const rfcRounds: Outcome[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        oursRounds.push(await followUnfollow(oursSide(docs, c, `ours-${round}`), counter, setting.size, setting.ours / ROUNDS, 7 + round));
        rfcRounds.push(await followUnfollow(rfcSide(c, `rfc-${round}`), counter, setting.size, setting.rfc / ROUNDS, 7 + round));
      }
      const ours = total(oursRounds);
      const rfc = total(rfcRounds);
      const where = setting.roundTripMs > 0 ? `${setting.roundTripMs} ms round trips` : 'memory';
      rows.push({
        operation: `hot set of ${setting.size.toLocaleString('en-US')}, ${CLIENTS} clients follow/unfollow (${where})`,
        ours: ours.opsPerSecond,
        comparison: rfc.opsPerSecond,
        ratio: ours.opsPerSecond / rfc.opsPerSecond,
        retriesPerK: [(1000 * ours.retries) / ours.ops, (1000 * rfc.retries) / rfc.ops],
        lost: [ours.lost, rfc.lost],
      });
    } finally {
      await docs.close();
      await kv.close();
    }
  }
  return rows;
}

/** Every structure row: the hot set, then the queue's (bench/structures-queue.ts). */
export async function runStructuresBench(): Promise<StructureBenchRow[]> {
  return [...(await runSetBench()), ...(await runQueueBench())];
}

function rate(n: number | undefined): string {
  return n === undefined ? '' : Math.round(n).toLocaleString('en-US');
}

async function main(): Promise<void> {
  const rows = await runStructuresBench();
  console.log(
    '\n| operation | ours (ops/s) | comparison (ops/s) | ratio | retries per 1k ops (ours / comparison) | lost updates (ours / comparison) |',
  );
  console.log('| --- | ---: | ---: | ---: | ---: | ---: |');
  for (const r of rows) {
    const ratio = r.ratio === undefined ? '' : `${r.ratio.toFixed(1)}x`;
    const retries = r.retriesPerK === undefined ? '' : `${r.retriesPerK[0].toFixed(0)} / ${r.retriesPerK[1].toFixed(0)}`;
    const lost = r.lost === undefined ? '' : `${r.lost[0]} / ${r.lost[1]}`;
    console.log(`| ${r.operation} | ${rate(r.ours)} | ${rate(r.comparison)} | ${ratio} | ${retries} | ${lost} |`);
  }
  const sets = rows.filter((r) => r.lost !== undefined);
  const worst = Math.min(...sets.map((r) => r.ratio ?? 0));
  const lost = sets.reduce((n, r) => n + (r.lost?.[0] ?? 0), 0);
  console.log(
    `\ngoal (hot set): at least 10x the RFC design's throughput, zero lost updates: ${worst >= 10 && lost === 0 ? 'met' : 'NOT met'} ` +
      `(lowest ratio ${worst.toFixed(1)}x, ${lost} updates lost)`,
  );
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
