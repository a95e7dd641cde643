/**
 * Many clients on one structure at once, with commit faults injected: not_committed (1020) and
 * transaction_too_old (1007), which are retried and were not applied, and commit_unknown_result
 * (1021), which the engines' fault injectors report for a commit they did apply (the harmful case).
 *
 * Set add and delete are idempotent under 1021: the retry reads the member again and finds the first
 * attempt's effect, so membership and size end exact whatever happened. Counter incr is not: each
 * applied 1021 counts once more (as for the document layer's increment), so the exact-total tests run
 * without 1021, and one test states the total with it.
 */
import type { DocLayer } from '../../src';
import type { KvCounts as Counts } from '../../src/kv/counting-engine';
import { Random, testSeed } from '../support/random';
import { documentSuite } from '../document/document-suite';

const CLIENTS = 32;
const OPS_PER_CLIENT = 8;

const UNAMBIGUOUS = { notCommitted: 0.1, tooOld: 0.05 };
const ALL_FAULTS = { notCommitted: 0.1, tooOld: 0.05, unknownResult: 0.1 };

function unknownResults(counts: Counts): number {
  return counts.commitErrors.get(1021) ?? 0;
}

/** Each client's operations: `[add?, member]` pairs drawn from `members(client)`. */
function plans(seed: number, members: (client: number) => string[]): [boolean, string][][] {
  const random = new Random(seed);
  return Array.from({ length: CLIENTS }, (_, client) =>
    Array.from({ length: OPS_PER_CLIENT }, () => [random.chance(0.6), random.pick(members(client))] as [boolean, string]),
  );
}

async function runClients(docs: DocLayer, id: string, work: [boolean, string][][]): Promise<[boolean, string, boolean][]> {
  const s = docs.collection().set(id);
  const results: [boolean, string, boolean][] = [];
  await Promise.all(
    work.map(async (ops) => {
      for (const [add, member] of ops) results.push([add, member, add ? await s.add(member) : await s.delete(member)]);
    }),
  );
  return results;
}

documentSuite('structures under concurrency', (ctx) => {
  // 100 clients on one counter on the memory engine; fewer on the disk-backed ones, whose retries
  // under that much contention take seconds.
  const INCRS = ctx.engine.name === 'memory' ? 100 : 30;

  ctx.describeWithFaults('with commit faults', () => {
    it(`${CLIENTS} clients adding and removing members of one set, all faults: exactly the model's members and size`, async () => {
      const seed = testSeed(401);
      const { docs, counter } = await ctx.openWithFaults({ seed, ...ALL_FAULTS });
      // Each member has one owner, so the model (each client's operations in order) is exact even
      // where a 1021 hides whether an attempt was applied; the clients still share the set's keys.
      const work = plans(seed, (client) => Array.from({ length: 3 }, (_, i) => `u${client}-${i}`));
      await runClients(docs, 'follows', work);
      const model = new Set<string>();
      for (const ops of work) {
        for (const [add, member] of ops) {
          if (add) model.add(member);
          else model.delete(member);
        }
      }
      const s = docs.collection().set('follows');
      expect(await s.values()).toEqual([...model].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))));
      expect(await s.size()).toBe(model.size);
      expect(counter.counts().retries).toBeGreaterThan(0);
      expect(unknownResults(counter.counts())).toBeGreaterThan(0);
    });

    it(`${CLIENTS} clients racing on the same members: every add and delete reported once, size exact`, async () => {
      const seed = testSeed(402);
      const { docs } = await ctx.openWithFaults({ seed, ...UNAMBIGUOUS });
      const pool = Array.from({ length: 12 }, (_, i) => `m${i}`);
      const results = await runClients(
        docs,
        'hot',
        plans(seed, () => pool),
      );
      const s = docs.collection().set('hot');
      const present = new Set(await s.values());
      for (const member of pool) {
        const added = results.filter(([add, m, changed]) => add && m === member && changed).length;
        const deleted = results.filter(([add, m, changed]) => !add && m === member && changed).length;
        expect([member, added - deleted]).toEqual([member, present.has(member) ? 1 : 0]);
      }
      expect(await s.size()).toBe(present.size);
    });

    it(`${INCRS} concurrent incr end at the exact total, each returning a distinct value`, async () => {
      const { docs, counter } = await ctx.openWithFaults({ seed: testSeed(403), ...UNAMBIGUOUS });
      const k = docs.collection().counter('hits');
      const values = await Promise.all(Array.from({ length: INCRS }, () => k.incr()));
      expect(await k.get()).toBe(INCRS);
      expect([...values].sort((a, b) => a - b)).toEqual(Array.from({ length: INCRS }, (_, i) => i + 1));
      // Combined (structures/combiner.ts): a handful of transactions, not one each retried in turn.
      expect(counter.counts().commits).toBeLessThan(INCRS / 4);
    });

    it('100 concurrent adds end at the exact total', async () => {
      const { docs } = await ctx.openWithFaults({ seed: testSeed(404), ...UNAMBIGUOUS });
      const k = docs.collection().counter('hits');
      await Promise.all(Array.from({ length: 100 }, (_, i) => k.add(i + 1)));
      expect(await k.get()).toBe(5050);
    });

    it('with commit_unknown_result, incr counts each applied-but-unreported commit once more', async () => {
      const { docs, counter } = await ctx.openWithFaults({ seed: testSeed(405), unknownResult: 0.1 });
      const k = docs.collection().counter('hits');
      await Promise.all(Array.from({ length: INCRS }, () => k.incr()));
      expect(await k.get()).toBe(INCRS + unknownResults(counter.counts()));
    });
  });
});
