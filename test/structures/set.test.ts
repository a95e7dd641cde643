/**
 * DocSet: one key per member, size by atomic add. Behaviour, the reference model (random operation
 * sequences against a JS model, compared after every step), and the conflicts its TSDoc claims.
 */
import type { SetMember } from '../../src/structures/set';
import { compare } from '../../src/tuple/pack';
import { Random, testSeed } from '../support/random';
import { documentSuite } from '../document/document-suite';
import { errorOf, retriesOf } from './support';

/** The member a value is as the set compares members: by value and type; 1, 1.0 and 1n are one. */
function canonical(m: SetMember): string {
  if (typeof m === 'number') return Number.isInteger(m) ? `i${BigInt(m)}` : `d${m}`;
  if (typeof m === 'bigint') return `i${m}`;
  return `${m === null ? 'n' : (typeof m)[0]}${String(m)}`;
}

/** How a member reads back: integers beyond ±(2^53−1) as bigints, -0 as 0, other integers as numbers. */
function readBack(m: SetMember): SetMember {
  if (typeof m === 'bigint') return m >= BigInt(Number.MIN_SAFE_INTEGER) && m <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(m) : m;
  if (m === 0) return 0;
  return m;
}

const POOL: SetMember[] = ['a', 'b', '1', '', 'ä', '😀', 'a\0b', 1, 1.0, 1n, 2.5, -0, 0, -7, 2n ** 70n, true, false, null];

documentSuite('DocSet', (ctx) => {
  describe('add, delete, has, size', () => {
    it('adds members once, telling whether each was new, and deletes them', async () => {
      const { docs } = await ctx.open();
      const s = docs.collection().set('s');
      expect(await s.add('ann')).toBe(true);
      expect(await s.add('ann')).toBe(false);
      expect(await s.add('bob')).toBe(true);
      expect(await s.size()).toBe(2);
      expect(await s.has('ann')).toBe(true);
      expect(await s.delete('ann')).toBe(true);
      expect(await s.delete('ann')).toBe(false);
      expect(await s.has('ann')).toBe(false);
      expect(await s.size()).toBe(1);
    });

    it('compares members by value and type: 1 and "1" differ, 1, 1.0 and 1n are one, -0 is 0', async () => {
      const { docs } = await ctx.open();
      const s = docs.collection().set('s');
      expect(await s.add(1)).toBe(true);
      expect(await s.add('1')).toBe(true);
      expect(await s.add(1.0)).toBe(false);
      expect(await s.add(1n)).toBe(false);
      expect(await s.add(true)).toBe(true);
      expect(await s.add(0)).toBe(true);
      expect(await s.add(-0)).toBe(false);
      expect(await s.add(null)).toBe(true);
      expect(await s.values()).toEqual([null, '1', 0, 1, true]);
    });

    it('refuses non-primitive members with INVALID_VALUE, writing nothing', async () => {
      const { docs } = await ctx.open();
      const c = docs.collection();
      const s = c.set<SetMember>('s');
      for (const bad of [{}, [1], undefined, NaN, Infinity, '\ud800', () => 1]) {
        expect((await errorOf(s.add(bad as never))).code).toBe('INVALID_VALUE');
      }
      expect(await c.exists('s')).toBe(false);
    });

    it('refuses a member whose key would exceed the key limit with KEY_TOO_LARGE', async () => {
      const { docs } = await ctx.open();
      expect((await errorOf(docs.collection().set('s').add('x'.repeat(10_000)))).code).toBe('KEY_TOO_LARGE');
    });
  });

  describe('a missing set', () => {
    it('reads as empty and is created by its first add', async () => {
      const { docs } = await ctx.open();
      const c = docs.collection('app.sets');
      const s = c.set('s');
      expect(await s.size()).toBe(0);
      expect(await s.has('a')).toBe(false);
      expect(await s.values()).toEqual([]);
      expect(await s.delete('a')).toBe(false);
      const seen: SetMember[] = [];
      for await (const m of s) seen.push(m);
      expect(seen).toEqual([]);
      expect(await c.exists('s')).toBe(false);
      await s.add('a');
      expect((await c.get('s')).content).toEqual(['a']);
    });

    it('stays, empty, when its last member is deleted; clear() removes it', async () => {
      const { docs } = await ctx.open();
      const c = docs.collection();
      const s = c.set('s');
      await s.add('a');
      await s.delete('a');
      expect((await c.get('s')).content).toEqual([]);
      await s.add('b');
      await s.clear();
      expect(await c.exists('s')).toBe(false);
      expect(await s.size()).toBe(0);
    });
  });

  describe('values and iteration', () => {
    it('lists members in key order, and pages through them', async () => {
      const { docs } = await ctx.open();
      const s = docs.collection().set('s');
      const members = Array.from({ length: 25 }, (_, i) => `m${String(i).padStart(2, '0')}`);
      for (const m of [...members].reverse()) await s.add(m);
      expect(await s.values()).toEqual(members);
      const seen: SetMember[] = [];
      for await (const m of s.iterate({ pageSize: 4 })) seen.push(m);
      expect(seen).toEqual(members);
      expect((await errorOf(s.iterate({ pageSize: 0 }).next())).code).toBe('INVALID_ARGUMENT');
    });
  });

  it('follows the reference model through random operation sequences', async () => {
    const seed = testSeed(301);
    const random = new Random(seed);
    const { docs } = await ctx.open();
    const c = docs.collection();
    const s = c.set('model');
    const model = new Map<string, SetMember>();
    for (let step = 0; step < 120; step++) {
      const member = random.pick(POOL);
      const key = canonical(member);
      const op = random.pick(['add', 'add', 'delete', 'has', 'clear'] as const);
      const where = `seed ${seed}, step ${step}: ${op}(${String(member)})`;
      if (op === 'add') {
        expect([where, await s.add(member)]).toEqual([where, !model.has(key)]);
        if (!model.has(key)) model.set(key, readBack(member));
      } else if (op === 'delete') {
        expect([where, await s.delete(member)]).toEqual([where, model.delete(key)]);
      } else if (op === 'has') {
        expect([where, await s.has(member)]).toEqual([where, model.has(key)]);
      } else if (random.chance(0.2)) {
        await s.clear();
        model.clear();
      }
      const expected = [...model.values()].sort((a, b) => compare([a], [b]));
      expect([where, await s.size(), await s.values()]).toEqual([where, model.size, expected]);
    }
    expect((await c.get('model')).content).toEqual(await s.values());
  });

  describe('conflicts', () => {
    it('adds and deletes of different members never conflict, even when all read before any commits', async () => {
      const { docs, counter } = await ctx.open();
      const s = docs.collection().set('s');
      for (let i = 0; i < 8; i += 2) await s.add(`m${i}`);
      counter.take();
      const retries = await retriesOf(
        docs,
        Array.from({ length: 8 }, (_, i) => (tr) => (i % 2 === 0 ? s.delete(`m${i}`, { tr }) : s.add(`m${i}`, { tr }))),
      );
      expect(retries).toBe(0);
      expect(counter.take().retries).toBe(0);
      expect(await s.values()).toEqual(['m1', 'm3', 'm5', 'm7']);
      expect(await s.size()).toBe(4);
    });

    it('adds of the same member conflict: one adds it, the others retry and find it', async () => {
      const { docs } = await ctx.open();
      const s = docs.collection().set('s');
      await s.add('other');
      const added: boolean[] = [];
      const retries = await retriesOf(
        docs,
        // Indexed by client: a retried attempt overwrites its failed attempt's answer.
        Array.from({ length: 4 }, (_, i) => async (tr) => (added[i] = await s.add('x', { tr }))),
      );
      expect(retries).toBeGreaterThan(0);
      expect(await s.size()).toBe(2);
      expect(added.filter(Boolean)).toEqual([true]);
    });

    it('element operations never write the kind key; add writes only the member, the size and the version', async () => {
      const { docs, counter } = await ctx.open();
      const s = docs.collection().set('s');
      await s.add('a');
      const { attempts } = await counter.measure(() => s.add('b'));
      const [attempt] = attempts;
      expect(attempt.gets.length).toBe(2); // the kind key, the member's key
      expect(attempt.sets.length).toBe(1); // the member
      expect(attempt.atomicOps.map((a) => a.op)).toEqual(['add']); // the size
      expect(attempt.versionstamped.length).toBe(1); // the version
      expect(attempt.ranges.length).toBe(0);
    });
  });
});
