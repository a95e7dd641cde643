/**
 * DocSortedSet: members ordered by score then member, with a ranked skip list for O(log n) ranks.
 * Behaviour, the reference model (random operation sequences against a sorted array, compared after
 * every step), the conflicts its TSDoc claims, and the keys rank reads.
 */
import { checkDocuments } from '../../src/check';
import type { Transaction } from '../../src/kv/contract/types';
import type { ScoredMember } from '../../src/structures/sorted-set';
import { Random, testSeed } from '../support/random';
import { documentSuite } from '../document/document-suite';
import { memberHeight, membersOfHeight, SortedArray, TOP_MEMBER } from './sorted-set-model';
import { errorOf, retriesOf } from './support';

/** Members of every height of the rank index, so that a few dozen members use all its levels. */
function pool(): string[] {
  return [
    ...membersOfHeight(0, 24, ''),
    ...membersOfHeight(1, 6),
    ...membersOfHeight(2, 3),
    ...membersOfHeight(3, 2),
    ...membersOfHeight(4, 1),
    TOP_MEMBER,
    'ä',
    '😀',
    'a\0b',
    '',
  ];
}

const SCORES = [-2.5, -1, 0, 0, 1, 1, 1, 2, 3.25, 7, 1e9, -1e-9];

documentSuite('DocSortedSet', (ctx) => {
  describe('add, score, rank, remove', () => {
    it('orders members by score, then by member, and ranks them from either end', async () => {
      const { docs } = await ctx.open();
      const z = docs.collection().sortedSet('board');
      expect(await z.add('bob', 20)).toBe(true);
      expect(await z.add('ann', 30)).toBe(true);
      expect(await z.add('cy', 20)).toBe(true);
      expect(await z.add('bob', 35)).toBe(false);
      expect(await z.range(0, -1)).toEqual([
        ['cy', 20],
        ['ann', 30],
        ['bob', 35],
      ]);
      expect(await z.score('bob')).toBe(35);
      expect(await z.score('dan')).toBeUndefined();
      expect(await z.rank('cy')).toBe(0);
      expect(await z.rank('cy', { reverse: true })).toBe(2);
      expect(await z.rank('dan')).toBeUndefined();
      expect(await z.remove('ann')).toBe(true);
      expect(await z.remove('ann')).toBe(false);
      expect(await z.size()).toBe(2);
    });

    it("only adds with only: 'new', only updates with only: 'existing'", async () => {
      const { docs } = await ctx.open();
      const z = docs.collection().sortedSet('z');
      expect(await z.add('a', 1, { only: 'existing' })).toBe(false);
      expect(await z.score('a')).toBeUndefined();
      expect(await z.add('a', 1, { only: 'new' })).toBe(true);
      expect(await z.add('a', 5, { only: 'new' })).toBe(false);
      expect(await z.score('a')).toBe(1);
      expect(await z.add('a', 5, { only: 'existing' })).toBe(false);
      expect(await z.score('a')).toBe(5);
    });

    it('increments a score, adding a missing member at 0 first, and returns the new score', async () => {
      const { docs } = await ctx.open();
      const z = docs.collection().sortedSet('z');
      expect(await z.increment('a', 2.5)).toBe(2.5);
      expect(await z.increment('a', -1)).toBe(1.5);
      expect(await z.increment('b', 0)).toBe(0);
      expect(await z.range(0, -1)).toEqual([
        ['b', 0],
        ['a', 1.5],
      ]);
      expect((await errorOf(z.increment('a', NaN))).code).toBe('DELTA_INVALID');
      await z.add('big', Number.MAX_VALUE);
      expect((await errorOf(z.increment('big', Number.MAX_VALUE))).code).toBe('INVALID_VALUE');
      expect(await z.score('big')).toBe(Number.MAX_VALUE);
    });

    it('refuses scores that are not finite numbers and members that are not strings, writing nothing', async () => {
      const { docs } = await ctx.open();
      const c = docs.collection();
      const z = c.sortedSet('z');
      for (const bad of [NaN, Infinity, -Infinity, '1', null, undefined, 1n]) {
        expect((await errorOf(z.add('a', bad as never))).code).toBe('INVALID_VALUE');
      }
      for (const bad of [1, null, {}, '\ud800']) expect((await errorOf(z.add(bad as never, 1))).code).toBe('INVALID_VALUE');
      expect((await errorOf(z.add('a', 1, { only: 'maybe' as never }))).code).toBe('INVALID_ARGUMENT');
      expect(await c.exists('z')).toBe(false);
    });

    it('refuses a member whose keys would exceed the key limit with KEY_TOO_LARGE before writing', async () => {
      const { docs } = await ctx.open();
      const c = docs.collection();
      const z = c.sortedSet('z');
      const limit = docs.kv.maxKeyBytes;
      expect((await errorOf(z.add('x'.repeat(limit), 1))).code).toBe('KEY_TOO_LARGE');
      // Its own key would fit (score reads it), its index keys would not.
      expect(await z.score('x'.repeat(limit - 20))).toBeUndefined();
      expect((await errorOf(z.add('x'.repeat(limit - 20), 1))).code).toBe('KEY_TOO_LARGE');
      expect(await c.exists('z')).toBe(false);
    });

    it('stores -0 as 0', async () => {
      const { docs } = await ctx.open();
      const z = docs.collection().sortedSet('z');
      await z.add('a', -0);
      await z.add('b', 0);
      expect(Object.is(await z.score('a'), 0)).toBe(true);
      expect(await z.rangeByScore(0, 0)).toEqual([
        ['a', 0],
        ['b', 0],
      ]);
    });
  });

  describe('ranges', () => {
    const board: ScoredMember[] = [
      ['a', 1],
      ['b', 2],
      ['c', 2],
      ['d', 3],
      ['e', 5],
    ];

    async function filled() {
      const { docs } = await ctx.open();
      const z = docs.collection().sortedSet('z');
      for (const [m, s] of board) await z.add(m, s);
      return z;
    }

    it('ranges by rank as ZRANGE does: inclusive, negative from the end, clamped, reversed', async () => {
      const z = await filled();
      expect(await z.range(1, 2)).toEqual(board.slice(1, 3));
      expect(await z.range(-2, -1)).toEqual(board.slice(3));
      expect(await z.range(3, 100)).toEqual(board.slice(3));
      expect(await z.range(4, 2)).toEqual([]);
      expect(await z.range(0, 1, { reverse: true })).toEqual([board[4], board[3]]);
      expect((await errorOf(z.range(0.5, 1))).code).toBe('INVALID_ARGUMENT');
    });

    it('ranges by score with inclusive and exclusive bounds, offset, limit and reverse', async () => {
      const z = await filled();
      expect(await z.rangeByScore(2, 3)).toEqual(board.slice(1, 4));
      expect(await z.rangeByScore(2, 3, { minExclusive: true })).toEqual([board[3]]);
      expect(await z.rangeByScore(2, 3, { maxExclusive: true })).toEqual(board.slice(1, 3));
      expect(await z.rangeByScore(-Infinity, Infinity, { offset: 1, limit: 2 })).toEqual(board.slice(1, 3));
      expect(await z.rangeByScore(-Infinity, 3, { reverse: true, offset: 1, limit: 2 })).toEqual([board[2], board[1]]);
      expect(await z.rangeByScore(3, 2)).toEqual([]);
      expect(await z.count(2, 3)).toBe(3);
      expect(await z.count(2, 2, { minExclusive: true })).toBe(0);
      expect((await errorOf(z.rangeByScore(NaN, 1))).code).toBe('INVALID_ARGUMENT');
      expect((await errorOf(z.rangeByScore(0, 1, { limit: -1 }))).code).toBe('INVALID_ARGUMENT');
    });

    it('ranges by member prefix in member order', async () => {
      const { docs } = await ctx.open();
      const z = docs.collection().sortedSet('z');
      for (const [m, s] of [
        ['user:2', 1],
        ['user:10', 9],
        ['team:1', 5],
        ['user', 3],
      ] as const) {
        await z.add(m, s);
      }
      expect(await z.rangeByPrefix('user:')).toEqual([
        ['user:10', 9],
        ['user:2', 1],
      ]);
      expect(await z.rangeByPrefix('user', { reverse: true, limit: 2 })).toEqual([
        ['user:2', 1],
        ['user:10', 9],
      ]);
      expect(await z.rangeByPrefix('nobody')).toEqual([]);
    });

    it('pops the lowest and the highest members', async () => {
      const z = await filled();
      expect(await z.popMin()).toEqual([board[0]]);
      expect(await z.popMax(2)).toEqual([board[4], board[3]]);
      expect(await z.popMin(10)).toEqual(board.slice(1, 3));
      expect(await z.popMin()).toEqual([]);
      expect(await z.size()).toBe(0);
      expect((await errorOf(z.popMin(1001))).code).toBe('INVALID_ARGUMENT');
    });

    it('iterates a score range page by page, in either direction', async () => {
      const z = await filled();
      const seen: ScoredMember[] = [];
      for await (const pair of z.iterate({ pageSize: 2 })) seen.push(pair);
      expect(seen).toEqual(board);
      const back: ScoredMember[] = [];
      for await (const pair of z.iterate({ min: 2, max: 5, maxExclusive: true, reverse: true, pageSize: 1 })) back.push(pair);
      expect(back).toEqual([board[3], board[2], board[1]]);
    });
  });

  describe('a missing sorted set', () => {
    it('reads as empty, is created by its first add, and reads as [member, score] pairs', async () => {
      const { docs } = await ctx.open();
      const c = docs.collection('app.boards');
      const z = c.sortedSet('z');
      expect(await z.size()).toBe(0);
      expect(await z.rank('a')).toBeUndefined();
      expect(await z.range(0, -1)).toEqual([]);
      expect(await z.rangeByScore(-Infinity, Infinity)).toEqual([]);
      expect(await z.count(-Infinity, Infinity)).toBe(0);
      expect(await z.popMin()).toEqual([]);
      expect(await z.remove('a')).toBe(false);
      expect(await c.exists('z')).toBe(false);
      await z.add('b', 2);
      await z.add('a', 1);
      expect((await c.get('z')).content).toEqual([
        ['a', 1],
        ['b', 2],
      ]);
      await z.clear();
      expect(await c.exists('z')).toBe(false);
    });

    it('is WRONG_KIND on another structure or a plain document, and they on it', async () => {
      const { docs } = await ctx.open();
      const c = docs.collection();
      await c.set('s').add('a');
      expect((await errorOf(c.sortedSet('s').add('a', 1))).code).toBe('WRONG_KIND');
      await c.sortedSet('z').add('a', 1);
      expect((await errorOf(c.set('z').add('a'))).code).toBe('WRONG_KIND');
      expect((await errorOf(c.mutateIn('z', [{ op: 'upsert', path: 'x', value: 1 }]))).code).toBe('WRONG_KIND');
    });
  });

  it('follows the reference model through random operation sequences, its rank index consistent', async () => {
    expect(memberHeight(TOP_MEMBER)).toBe(5);
    const seed = testSeed(1801);
    const random = new Random(seed);
    const { docs } = await ctx.open();
    const c = docs.collection();
    const z = c.sortedSet('model');
    const model = new SortedArray();
    const members = pool();
    const bound = () => random.pick([-Infinity, Infinity, ...SCORES]);
    for (let step = 0; step < 150; step++) {
      const member = random.pick(members);
      const score = random.pick(SCORES);
      const op = random.pick([
        'add',
        'add',
        'add',
        'only',
        'increment',
        'remove',
        'score',
        'rank',
        'range',
        'byScore',
        'prefix',
        'pop',
        'count',
        'clear',
      ] as const);
      const where = `seed ${seed}, step ${step}: ${op}`;
      const check = (actual: unknown, expected: unknown) => expect([where, actual]).toEqual([where, expected]);
      switch (op) {
        case 'add':
          check(await z.add(member, score), model.set(member, score));
          break;
        case 'only': {
          const only = random.pick(['new', 'existing'] as const);
          const exists = model.score(member) !== undefined;
          const applies = only === 'new' ? !exists : exists;
          check(await z.add(member, score, { only }), only === 'new' && applies);
          if (applies) model.set(member, score);
          break;
        }
        case 'increment': {
          const next = (model.score(member) ?? 0) + score;
          check(await z.increment(member, score), next === 0 ? 0 : next);
          model.set(member, next === 0 ? 0 : next);
          break;
        }
        case 'remove':
          check(await z.remove(member), model.remove(member) !== undefined);
          break;
        case 'score':
          check(await z.score(member), model.score(member));
          break;
        case 'rank': {
          const rank = model.rank(member);
          check(await z.rank(member), rank);
          check(await z.rank(member, { reverse: true }), rank === undefined ? undefined : model.size - 1 - rank);
          break;
        }
        case 'range': {
          const [start, stop] = [random.between(-12, 12), random.between(-12, 50)];
          const reverse = random.chance(0.5);
          check(await z.range(start, stop, { reverse }), model.range(start, stop, reverse));
          break;
        }
        case 'byScore': {
          const [lo, hi] = [bound(), bound()];
          const o = {
            minExclusive: random.chance(0.3),
            maxExclusive: random.chance(0.3),
            reverse: random.chance(0.4),
            ...(random.chance(0.5) ? { offset: random.int(8) } : {}),
            ...(random.chance(0.5) ? { limit: random.int(6) } : {}),
          };
          check(await z.rangeByScore(lo, hi, o), model.byScore(lo, hi, o));
          check(await z.count(lo, hi, o), model.byScore(lo, hi, { ...o, offset: 0, limit: undefined }).length);
          break;
        }
        case 'prefix': {
          const prefix = random.pick(['', 'h', 'h1-', 'h2', '1', 'ä', 'a']);
          const limit = random.chance(0.5) ? random.int(5) : undefined;
          const reverse = random.chance(0.3);
          check(await z.rangeByPrefix(prefix, { reverse, ...(limit === undefined ? {} : { limit }) }), model.byPrefix(prefix, limit, reverse));
          break;
        }
        case 'pop': {
          const n = random.int(3);
          const highest = random.chance(0.5);
          check(await (highest ? z.popMax(n) : z.popMin(n)), model.pop(n, highest));
          break;
        }
        case 'count':
          check(await z.count(-Infinity, Infinity), model.size);
          break;
        case 'clear':
          if (random.chance(0.2)) {
            await z.clear();
            model.clear();
          }
          break;
      }
      check([await z.size(), await z.range(0, -1)], [model.size, model.all()]);
    }
    expect((await c.get('model')).content).toEqual(model.all());
    expect((await checkDocuments(docs)).problems).toEqual([]);
  });

  it('doclayer check finds a rank count that does not match the entries', async () => {
    const { docs, kv } = await ctx.open();
    const z = docs.collection().sortedSet('z');
    for (const m of pool()) await z.add(m, 1);
    expect((await checkDocuments(docs)).problems).toEqual([]);
    // The head of level 1: the rank index's prefix tuple(1), then tuple(1).
    const all = await kv.transact((tr) => tr.getRangeAll(Buffer.of(0x00), Buffer.of(0xff)));
    const head = all.find(({ key }) => key.subarray(-4).equals(Buffer.of(0x15, 0x01, 0x15, 0x01)));
    expect(head).toBeDefined();
    await kv.transact(async (tr) => tr.add(head!.key, 1));
    const problems = (await checkDocuments(docs)).problems.map((p) => p.problem);
    expect(problems).toEqual([expect.stringMatching(/^its rank index counts (\d+) entries after a node of level 1 where there are \d+$/)]);
    const [, stored, actual] = /counts (\d+) .* there are (\d+)$/.exec(problems[0])!;
    expect(Number(stored)).toBe(Number(actual) + 1);
  });

  describe('conflicts', () => {
    it('two held-open transactions adding different members both commit without a retry', async () => {
      const { docs } = await ctx.open();
      const z = docs.collection().sortedSet('z');
      for (const [i, m] of pool().entries()) await z.add(m, i % 7);
      const [a, b, ...more] = membersOfHeight(0, 8, 'new-');
      const retries = await retriesOf(docs, [
        (tr) => z.add(a, 3, { tr }),
        (tr) => z.add(b, 3.5, { tr }),
        ...more.map((m, i) => (tr: Transaction) => z.increment(m, i, { tr })),
      ]);
      expect(retries).toBe(0);
      const all = await z.range(0, -1);
      for (const m of [a, b, ...more]) expect(await z.rank(m)).toBe(all.findIndex(([x]) => x === m));
      expect((await checkDocuments(docs)).problems).toEqual([]);
    });

    it('two held-open transactions changing the same member conflict: one retries and sees the other', async () => {
      const { docs } = await ctx.open();
      const z = docs.collection().sortedSet('z');
      await z.add('other', 1);
      const added: boolean[] = [];
      const retries = await retriesOf(
        docs,
        Array.from({ length: 2 }, (_, i) => async (tr) => (added[i] = await z.add('x', i, { tr }))),
      );
      expect(retries).toBeGreaterThan(0);
      expect(added.filter(Boolean)).toEqual([true]);
      expect(await z.size()).toBe(2);
    });

    it('a node added where others add stays consistent: conflicting writers retry', async () => {
      const { docs } = await ctx.open();
      const z = docs.collection().sortedSet('z');
      for (const m of membersOfHeight(0, 20, 'base-')) await z.add(m, 1);
      const nodes = membersOfHeight(2, 2, 'node-');
      const plain = membersOfHeight(0, 6, 'plain-');
      await retriesOf(
        docs,
        [...nodes, ...plain].map((m) => (tr) => z.add(m, 1, { tr })),
      );
      expect(await z.size()).toBe(28);
      expect((await checkDocuments(docs)).problems).toEqual([]);
      const all = await z.range(0, -1);
      for (const m of [...nodes, ...plain]) expect(await z.rank(m)).toBe(all.findIndex(([x]) => x === m));
    });

    it('combines concurrent calls without tr into shared transactions, each with its own result', async () => {
      const { docs, counter } = await ctx.open();
      const z = docs.collection().sortedSet('z');
      const results = await Promise.all(Array.from({ length: 32 }, (_, i) => z.increment('hot', 1).then((s) => [i, s])));
      expect(results.map(([, s]) => s).sort((x, y) => x - y)).toEqual(Array.from({ length: 32 }, (_, i) => i + 1));
      await Promise.all(pool().map((m, i) => z.add(m, i)));
      expect(await z.size()).toBe(pool().length + 1);
      expect((await checkDocuments(docs)).problems).toEqual([]);
      // Batches of members that are no nodes take the merged path: added, moved, left alone.
      const flat = membersOfHeight(0, 40, 'flat-');
      const model = new SortedArray();
      for (const [m, score] of await z.range(0, -1)) model.set(m, score);
      const { result: first, counts } = await counter.measure(() => Promise.all(flat.map((m, i) => z.add(m, i % 5))));
      expect(first).toEqual(flat.map(() => true));
      expect(counts.commits).toBeLessThanOrEqual(3); // the first call alone, then the others merged
      for (const [i, m] of flat.entries()) model.set(m, i % 5);
      const second = await Promise.all(flat.map((m, i) => z.add(m, i % 3, { only: i % 4 === 0 ? 'new' : 'existing' })));
      expect(second).toEqual(flat.map(() => false));
      for (const [i, m] of flat.entries()) if (i % 4 !== 0) model.set(m, i % 3);
      expect(await z.range(0, -1)).toEqual(model.all());
      for (const m of flat) expect(await z.rank(m)).toBe(model.rank(m));
      expect((await checkDocuments(docs)).problems).toEqual([]);
    });
  });

  ctx.describeWithFaults('with commit faults', () => {
    it('16 clients adding, moving and removing their members under every fault (1021 too): the model exactly, counts consistent', async () => {
      const seed = testSeed(1803);
      const random = new Random(seed);
      const { docs, counter } = await ctx.openWithFaults({ seed, notCommitted: 0.1, tooOld: 0.05, unknownResult: 0.1 });
      const z = docs.collection().sortedSet('z');
      // Each member has one owner, so each client's operations in order are the model, even where a
      // 1021 hides whether an attempt was applied (add and remove are idempotent: a retry re-reads).
      const members = pool();
      const owned = Array.from({ length: 16 }, (_, client) => members.filter((_m, i) => i % 16 === client));
      const work = owned.map((mine) =>
        Array.from({ length: 6 }, () => ({ member: random.pick(mine), score: random.pick(SCORES), add: random.chance(0.7), tr: random.chance(0.5) })),
      );
      await Promise.all(
        work.map(async (ops) => {
          for (const { member, score, add, tr } of ops) {
            if (tr) await docs.transact((t) => (add ? z.add(member, score, { tr: t }) : z.remove(member, { tr: t })));
            else await (add ? z.add(member, score) : z.remove(member));
          }
        }),
      );
      const model = new SortedArray();
      for (const ops of work) for (const { member, score, add } of ops) void (add ? model.set(member, score) : model.remove(member));
      expect(await z.range(0, -1)).toEqual(model.all());
      expect(await z.size()).toBe(model.size);
      for (const [member] of model.all()) expect(await z.rank(member)).toBe(model.rank(member));
      expect((await checkDocuments(docs)).problems).toEqual([]);
      expect(counter.counts().commitErrors.get(1021) ?? 0).toBeGreaterThan(0);
    });
  });

  describe('costs', () => {
    it('rank reads O(log n) keys: a few dozen among 1,200 members, not a scan', async () => {
      const { docs, counter } = await ctx.open();
      const z = docs.collection().sortedSet('z');
      const random = new Random(testSeed(1802));
      const members = Array.from({ length: 1200 }, (_, i) => `player-${i}`);
      const model = new SortedArray();
      for (let i = 0; i < members.length; i += 400) {
        await docs.transact(async (tr) => {
          for (const m of members.slice(i, i + 400)) {
            const score = random.int(500);
            model.set(m, score);
            await z.add(m, score, { tr });
          }
        });
      }
      let most = 0;
      for (let i = 0; i < 20; i++) {
        const member = random.pick(members);
        const { counts, result } = await counter.measure(() => z.rank(member));
        const rank = model.rank(member) as number;
        expect(result).toBe(rank);
        // The same walk finds members by rank, and counts.
        expect(await z.range(rank, rank + 1)).toEqual(model.range(rank, rank + 1, false));
        expect(await z.rangeByScore(100, Infinity, { offset: i * 40, limit: 2 })).toEqual(model.byScore(100, Infinity, { offset: i * 40, limit: 2 }));
        expect(await z.count(100, 300, { maxExclusive: true })).toBe(model.byScore(100, 300, { maxExclusive: true }).length);
        // The kind and member keys and the size, then 1 range read per level from level 2 (the lowest
        // expected to hold at most 32 nodes among 1,200 entries: ~5) down to level 0.
        expect([counts.gets, counts.rangeReads]).toEqual([3, 3]);
        most = Math.max(most, counts.keysRead);
      }
      expect(most).toBeLessThan(120);
    });

    it('adding a member that is no node of the index writes its 2 keys and 5 atomic adds, reading no count', async () => {
      const { docs, counter } = await ctx.open();
      const z = docs.collection().sortedSet('z');
      await z.add('first', 1);
      const [member] = membersOfHeight(0, 1, 'cost-');
      const { attempts } = await counter.measure(() => z.add(member, 2));
      const [attempt] = attempts;
      expect(attempt.gets.length).toBe(2); // the kind key, the member's key
      expect(attempt.ranges.every((r) => r.snapshot && r.limit === 1)).toBe(true); // 5 predecessors
      expect(attempt.sets.length).toBe(2); // the member, its score-index entry
      expect(attempt.atomicOps.map((a) => a.op)).toEqual(['add', 'add', 'add', 'add', 'add', 'add']); // 5 counts, the size
    });
  });
});
