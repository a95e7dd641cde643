/**
 * Queue against a plain JavaScript model (test/support/queue-model.ts): seeded random sequences of
 * push (ready and delayed), pop (strict and spreading), peek, lease, ack, nack, extend, clear and clock
 * steps, compared after every step: size, the items in pop order (paged iteration), the next item, the
 * JSON form and the dead-letter queue. The same sequences run with injected commit faults
 * (not_committed, and commit_unknown_result after applying the commit): every operation without a
 * caller's transaction is exactly-once, so the outcome must not change.
 */
import { open, type Collection } from '../../src';
import { isDocumentError } from '../../src/document/errors';
import type { JsonValue } from '../../src/document/types';
import { openMemoryDatabase } from '../../src/kv/memory/memory-engine';
import type { Queue, Lease } from '../../src/structures/queue/queue';
import { QueueModel, type LeaseOutcome } from '../support/queue-model';
import { Random, testSeed } from '../support/random';

const MAX_ATTEMPTS = 3;
const STEPS = 220;

interface Run {
  queue: Queue;
  model: QueueModel;
  collection: Collection;
  clock: { now: number };
  lastRandom: () => number;
}

async function setUp(faults: boolean, seed: number): Promise<Run> {
  const database = openMemoryDatabase(faults ? { faults: { seed, notCommitted: 0.1, unknownResult: 0.1 } } : {});
  const docs = await open({ database });
  const collection = docs.collection();
  // The clock starts near the epoch, far behind Date.now(): the JSON form (by Date.now()) then sees
  // every scheduled item as visible, whatever the queue's clock says.
  const clock = { now: 1_000 };
  const picks = new Random(seed ^ 0x51ead);
  let last = 0;
  const queue = collection.queue('q', {
    maxAttempts: MAX_ATTEMPTS,
    now: () => clock.now,
    random: () => (last = picks.next()),
  });
  return { queue, model: new QueueModel(MAX_ATTEMPTS, () => clock.now), collection, clock, lastRandom: () => last };
}

async function leaseOutcome<T>(action: () => Promise<T>): Promise<LeaseOutcome<T>> {
  try {
    return { ok: await action() };
  } catch (err) {
    if (isDocumentError(err, 'LEASE_EXPIRED')) return { error: 'LEASE_EXPIRED' };
    throw err;
  }
}

async function all(queue: Queue, pageSize: number): Promise<JsonValue[]> {
  const out: JsonValue[] = [];
  for await (const v of queue.iterate({ pageSize })) out.push(v);
  return out;
}

async function jsonForm(collection: Collection, id: string): Promise<JsonValue | undefined> {
  try {
    return (await collection.get(id)).content;
  } catch (err) {
    if (isDocumentError(err, 'DOCUMENT_NOT_FOUND')) return undefined;
    throw err;
  }
}

async function compare(run: Run, step: string): Promise<void> {
  const { queue, model, collection } = run;
  const context = `after ${step}`;
  expect({ context, size: await queue.size() }).toEqual({ context, size: model.size() });
  expect({ context, items: await all(queue, 3) }).toEqual({ context, items: model.popOrder() });
  expect({ context, peek: await queue.peek() }).toEqual({ context, peek: model.peek() });
  expect({ context, json: await jsonForm(collection, 'q') }).toEqual({ context, json: model.exists ? model.jsonForm() : undefined });
  expect({ context, dead: await all(queue.deadLetters, 100) }).toEqual({ context, dead: model.deadLetters });
}

async function runSequence(faults: boolean, salt: number): Promise<void> {
  const seed = testSeed(salt);
  const r = new Random(seed);
  const run = await setUp(faults, seed);
  const { queue, model, clock } = run;
  let counter = 0;
  const value = (): JsonValue => {
    const n = counter++;
    switch (r.int(4)) {
      case 0:
        return n;
      case 1:
        return `item-${n}`;
      case 2:
        return { n, tags: ['a', r.int(3)], ok: r.chance(0.5) };
      default:
        return [n, null, 1.5];
    }
  };
  // Leases handed out, some replaced by their extended form; stale objects are kept too.
  const leases: Lease[] = [];
  // Mostly one of the latest leases (likely still held), sometimes any.
  const pickIndex = () => (r.chance(0.7) ? Math.max(0, leases.length - 1 - r.int(3)) : r.int(leases.length));
  for (let i = 0; i < STEPS; i++) {
    const op = r.int(100);
    let step: string;
    if (op < 28) {
      const values = Array.from({ length: r.between(1, 3) }, value);
      const delayMs = r.chance(0.3) ? r.between(1, 50) : 0;
      if (values.length === 1) await queue.push(values[0], { delayMs });
      else await queue.pushMany(values, { delayMs });
      model.push(values, delayMs);
      step = `push ${JSON.stringify(values)} delay ${delayMs}`;
    } else if (op < 43) {
      const spread = r.chance(0.7) ? 1 : r.between(2, 3);
      const got = await queue.pop({ spread });
      step = `pop spread ${spread}`;
      expect({ step, got }).toEqual({ step, got: model.pop(spread, run.lastRandom()) });
    } else if (op < 53) {
      const count = r.between(1, 3);
      const visibilityMs = r.between(20, 150);
      const spread = r.chance(0.8) ? 1 : 2;
      const got = await queue.lease(count, { visibilityMs, spread });
      step = `lease ${count} for ${visibilityMs} spread ${spread}`;
      const expected = model.lease(
        count,
        visibilityMs,
        got.map((l) => l.id),
        spread,
        run.lastRandom(),
      );
      expect({ step, got: got.map(({ value: v, deadline, attempts }) => ({ v, deadline, attempts })) }).toEqual({
        step,
        got: expected.map(({ value: v, deadline, attempts }) => ({ v, deadline, attempts })),
      });
      leases.push(...got);
    } else if (op < 63 && leases.length > 0) {
      const lease = leases[pickIndex()];
      step = `ack ${lease.id}`;
      expect({ step, outcome: await leaseOutcome(() => queue.ack(lease)) }).toEqual({ step, outcome: model.ack(lease.id) });
    } else if (op < 70 && leases.length > 0) {
      const lease = leases[pickIndex()];
      const delayMs = r.chance(0.5) ? 0 : r.between(1, 20);
      step = `nack ${lease.id} delay ${delayMs}`;
      expect({ step, outcome: await leaseOutcome(() => queue.nack(lease, { delayMs })) }).toEqual({
        step,
        outcome: model.nack(lease.id, delayMs),
      });
    } else if (op < 76 && leases.length > 0) {
      const index = pickIndex();
      const lease = leases[index];
      const ms = r.between(1, 60);
      step = `extend ${lease.id} by ${ms}`;
      const outcome = await leaseOutcome(() => queue.extend(lease, ms));
      const expected = model.extend(lease.id, ms);
      expect({ step, outcome: 'ok' in outcome ? { ok: outcome.ok.deadline } : outcome }).toEqual({ step, outcome: expected });
      if ('ok' in outcome && r.chance(0.5)) leases[index] = outcome.ok;
    } else if (op < 77) {
      await queue.clear();
      model.clear();
      step = 'clear';
    } else {
      const ms = r.between(1, 40);
      clock.now += ms;
      step = `clock +${ms}`;
    }
    await compare(run, `step ${i}: ${step} (seed ${seed})`);
  }
}

describe('Queue against its reference model', () => {
  for (const salt of [1, 2, 3]) {
    it(`matches the model step by step (seed salt ${salt})`, async () => {
      await runSequence(false, salt);
    });
  }

  for (const salt of [11, 12]) {
    it(`matches the model with injected not_committed and commit_unknown_result (seed salt ${salt})`, async () => {
      await runSequence(true, salt);
    });
  }
});
