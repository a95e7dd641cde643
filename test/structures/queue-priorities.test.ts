/**
 * Queue priorities (docs/queue.md, "Priorities"), on every engine: seeded random pushes with
 * priorities (alone, many at once, merged concurrent pushes, inside a transaction that then pops),
 * strict and spreading pops, delayed items and leases with a manual clock, against the plain model of
 * test/support/queue-model.ts (ready items by priority, highest first, FIFO within one); then the
 * key layout, argument checks and costs. The same sequence runs once more on the memory engine with
 * injected not_committed and commit_unknown_result faults.
 */
import { open, type Collection, type DocLayer } from '../../src';
import { DocumentError, isDocumentError } from '../../src/document/errors';
import type { DocumentKeys } from '../../src/document/keys/layout';
import type { JsonValue } from '../../src/document/types';
import { Database } from '../../src/kv/contract/database';
import { CountingEngine } from '../../src/kv/counting-engine';
import { openMemoryDatabase } from '../../src/kv/memory/memory-engine';
import { QueueKeys } from '../../src/structures/queue/keys';
import { MAX_PRIORITY } from '../../src/structures/queue/priority';
import type { Queue } from '../../src/structures/queue/queue';
import { documentEngines, type DocumentEngine } from '../support/document-engines';
import { QueueModel } from '../support/queue-model';
import { Random, testSeed } from '../support/random';

const MAX_ATTEMPTS = 3;
const STEPS = 120;
const PRIORITIES = [0, 0, 1, 2, 7, MAX_PRIORITY];

let current: DocumentEngine = documentEngines[0];
const opened: { close(): Promise<void> }[] = [];

interface Run {
  queue: Queue;
  model: QueueModel;
  collection: Collection;
  clock: { now: number };
  lastRandom: () => number;
  transact: DocLayer['transact'];
}

async function setUp(database: Database, seed: number): Promise<Run> {
  const docs = await open({ database });
  opened.push(docs, database);
  const collection = docs.collection();
  // Far behind Date.now(): the JSON form (by Date.now()) sees every scheduled item as visible.
  const clock = { now: 1_000 };
  const picks = new Random(seed ^ 0x9e1);
  let last = 0;
  const queue = collection.queue('q', { maxAttempts: MAX_ATTEMPTS, now: () => clock.now, random: () => (last = picks.next()) });
  return {
    queue,
    model: new QueueModel(MAX_ATTEMPTS, () => clock.now),
    collection,
    clock,
    lastRandom: () => last,
    transact: docs.transact.bind(docs),
  };
}

async function all(queue: Queue, pageSize: number): Promise<JsonValue[]> {
  const out: JsonValue[] = [];
  for await (const v of queue.iterate({ pageSize })) out.push(v);
  return out;
}

async function jsonForm(collection: Collection): Promise<JsonValue | undefined> {
  try {
    return (await collection.get('q')).content;
  } catch (err) {
    if (isDocumentError(err, 'DOCUMENT_NOT_FOUND')) return undefined;
    throw err;
  }
}

async function compare(run: Run, context: string): Promise<void> {
  const { queue, model, collection } = run;
  expect({ context, size: await queue.size() }).toEqual({ context, size: model.size() });
  expect({ context, items: await all(queue, 2) }).toEqual({ context, items: model.popOrder() });
  expect({ context, peek: await queue.peek() }).toEqual({ context, peek: model.peek() });
  expect({ context, json: await jsonForm(collection) }).toEqual({ context, json: model.exists ? model.jsonForm() : undefined });
}

/** `faults`: the caller's transactions may run twice (commit_unknown_result), so none is used. */
async function runSequence(run: Run, seed: number, faults = false): Promise<void> {
  const r = new Random(seed);
  const { queue, model, clock } = run;
  let counter = 0;
  const priority = () => r.pick(PRIORITIES);
  for (let i = 0; i < STEPS; i++) {
    const op = r.int(100);
    let step: string;
    if (op < 30) {
      const values = Array.from({ length: r.between(1, 3) }, () => counter++);
      const delayed = r.chance(0.15);
      const p = delayed ? 0 : priority();
      const delayMs = delayed ? r.between(1, 40) : 0;
      if (values.length === 1) await queue.push(values[0], { priority: p, delayMs });
      else await queue.pushMany(values, { priority: p, delayMs });
      model.push(values, delayMs, p);
      step = `push ${JSON.stringify(values)} priority ${p} delay ${delayMs}`;
    } else if (op < 38) {
      // Concurrent pushes without a transaction: merged into one, in call order.
      const calls = Array.from({ length: r.between(2, 4) }, () => ({ value: counter++, p: priority() }));
      await Promise.all(calls.map((c) => queue.push(c.value, { priority: c.p })));
      for (const c of calls) model.push([c.value], 0, c.p);
      step = `merged pushes ${JSON.stringify(calls)}`;
    } else if (op < 46 && !faults) {
      // Pushes and a pop in one transaction: the pop sees only what was committed before.
      const pushes = Array.from({ length: r.between(1, 3) }, () => ({ value: counter++, p: priority() }));
      const got = await run.transact(async (tr) => {
        for (const c of pushes) await queue.push(c.value, { tr, priority: c.p });
        return queue.pop({ tr });
      });
      const expected = model.pop();
      for (const c of pushes) model.push([c.value], 0, c.p);
      step = `pushes ${JSON.stringify(pushes)} then a pop in one transaction`;
      expect({ step, got }).toEqual({ step, got: expected });
    } else if (op < 70) {
      const spread = r.chance(0.6) ? 1 : r.between(2, 3);
      const got = await queue.pop({ spread });
      step = `pop spread ${spread}`;
      expect({ step, got }).toEqual({ step, got: model.pop(spread, run.lastRandom()) });
    } else if (op < 78) {
      const count = r.between(1, 3);
      const visibilityMs = r.between(5, 60);
      const got = await queue.lease(count, { visibilityMs });
      step = `lease ${count} for ${visibilityMs}`;
      const expected = model.lease(
        count,
        visibilityMs,
        got.map((l) => l.id),
      );
      expect({ step, got: got.map((l) => l.value) }).toEqual({ step, got: expected.map((l) => l.value) });
    } else {
      const ms = r.between(1, 30);
      clock.now += ms;
      step = `clock +${ms}`;
    }
    await compare(run, `step ${i}: ${step} (seed ${seed})`);
  }
}

async function code(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise;
    return undefined;
  } catch (err) {
    if (err instanceof DocumentError) return err.code;
    throw err;
  }
}

for (const engine of documentEngines) {
  describe(`Queue priorities [${engine.name}]`, () => {
    beforeAll(() => {
      current = engine;
    });
    afterEach(async () => {
      for (const closable of opened.splice(0)) await closable.close();
    });
    afterAll(async () => engine.cleanup?.());

    it('match the reference model step by step (pushes, merged pushes, pops, spreading pops, delays, leases)', async () => {
      const seed = testSeed(181);
      await runSequence(await setUp(await current.open(), seed), seed);
    });

    it('pop higher priorities first, FIFO within a priority; priority 0 is the default', async () => {
      const run = await setUp(await current.open(), 1);
      const q = run.queue;
      await q.push('a');
      await q.push('b', { priority: 3 });
      await q.pushMany(['c', 'd'], { priority: 10 });
      await q.push('e', { priority: 3 });
      await q.push('f', { priority: 0 });
      expect(await all(q, 10)).toEqual(['c', 'd', 'b', 'e', 'a', 'f']);
      // The JSON form: pop order reversed, the next item to pop last.
      expect(await jsonForm(run.collection)).toEqual(['f', 'a', 'e', 'b', 'd', 'c']);
      const popped: JsonValue[] = [];
      for (let v = await q.pop(); v !== undefined; v = await q.pop()) popped.push(v);
      expect(popped).toEqual(['c', 'd', 'b', 'e', 'a', 'f']);
    });

    it('keep priority 0 at the keys of a queue without priorities, and priority p at tuple(0, -p, vs)', async () => {
      const run = await setUp(await current.open(), 1);
      await run.queue.push('zero');
      await run.queue.push('five', { priority: 5 });
      const keys = await run.transact(async (tr) => {
        const doc = (await run.collection.structureAccess().keysToRead(tr, 'q')) as DocumentKeys;
        const qk = new QueueKeys(doc);
        const found = await tr.getRangeAll(qk.ready, qk.readyEnd);
        return found.map(({ key }) => ({ area: qk.position(key).area, priority: qk.priorityOf(key), afterReady: key[qk.ready.length] }));
      });
      // 0x13: a one-byte negative tuple integer; 0x33: a versionstamp, right after tuple(0).
      expect(keys).toEqual([
        { area: 'ready', priority: 5, afterReady: 0x13 },
        { area: 'ready', priority: 0, afterReady: 0x33 },
      ]);
    });

    it('reject a priority that is not an integer from 0 to 2^31 - 1, or one with delayMs, before writing anything', async () => {
      const run = await setUp(await current.open(), 1);
      const q = run.queue;
      for (const priority of [-1, 1.5, MAX_PRIORITY + 1, Number.NaN, '1' as unknown as number]) {
        expect(await code(q.push('x', { priority }))).toBe('INVALID_ARGUMENT');
        expect(await code(q.pushMany(['x'], { priority }))).toBe('INVALID_ARGUMENT');
      }
      expect(await code(q.push('x', { priority: 1, delayMs: 10 }))).toBe('INVALID_ARGUMENT');
      expect(await jsonForm(run.collection)).toBeUndefined();
      await q.push('top', { priority: MAX_PRIORITY });
      await q.push('low', { priority: 0, delayMs: 0 });
      expect(await all(q, 10)).toEqual(['top', 'low']);
    });

    it('put visible scheduled items (due delayed pushes, expired leases) ahead of every ready item', async () => {
      const run = await setUp(await current.open(), 1);
      const q = run.queue;
      await q.push('delayed', { delayMs: 10 });
      await q.push('high', { priority: 9 });
      expect(await q.peek()).toBe('high');
      run.clock.now += 10;
      expect(await all(q, 10)).toEqual(['delayed', 'high']);
    });

    it('hide a transaction its own pushes at every priority, and read what was there before', async () => {
      const run = await setUp(await current.open(), 1);
      const q = run.queue;
      await q.pushMany(['p2-a', 'p2-b'], { priority: 2 });
      await q.push('p0');
      const seen = await run.transact(async (tr) => {
        await q.push('own-9', { tr, priority: 9 });
        await q.push('own-2', { tr, priority: 2 });
        await q.push('own-0', { tr });
        const items: JsonValue[] = [];
        for await (const v of q.iterate({ tr, pageSize: 1 })) items.push(v);
        return { items, peek: await q.peek({ tr }), popped: [await q.pop({ tr }), await q.pop({ tr, spread: 2 })] };
      });
      expect(seen.items).toEqual(['p2-a', 'p2-b', 'p0']);
      expect(seen.peek).toBe('p2-a');
      expect(seen.popped[0]).toBe('p2-a');
      expect(['p2-b', 'p0']).toContain(seen.popped[1]);
      expect(await all(q, 10)).toEqual([
        'own-9',
        ...(seen.popped[1] === 'p2-b' ? [] : ['p2-b']),
        'own-2',
        ...(seen.popped[1] === 'p0' ? [] : ['p0']),
        'own-0',
      ]);
    });

    it('cost a strict pop the same reads whatever the priorities: the kind and 2 limit-1 range reads', async () => {
      const engine = new CountingEngine((await current.open()).engine);
      const database = new Database(engine);
      const run = await setUp(database, 1);
      await run.queue.push(1, { priority: 4 });
      await run.queue.push(2);
      const { counts } = await engine.measure(() => run.transact((tr) => run.queue.pop({ tr })));
      expect(counts).toMatchObject({ gets: 1, rangeReads: 2, clears: 1 });
    });
  });
}

describe('Queue priorities under injected faults [memory]', () => {
  afterEach(async () => {
    for (const closable of opened.splice(0)) await closable.close();
  });

  it('match the reference model with not_committed and commit_unknown_result injected', async () => {
    const seed = testSeed(182);
    const run = await setUp(openMemoryDatabase({ faults: { seed, notCommitted: 0.1, unknownResult: 0.1 } }), seed);
    await runSequence(run, seed, true);
  });
});
