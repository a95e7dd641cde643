/**
 * Every engine settles its operations on a later turn of the event loop, as FoundationDB's client
 * settles its futures from its network thread: a loop that awaits one operation after another lets
 * timers and I/O run between them. Each test runs `setTimeout(() => (stop = true), 100)` and then
 * awaits operations until the timer has fired; a loop that starves the event loop is cut off after a
 * few seconds and fails.
 */
import { openFdbDatabaseOn } from '../support/fdb-shim';
import { documentEngines } from '../support/document-engines';
import { open } from '../../src/open';
import { MutateInSpec } from '../../src';
import { LmdbEngine } from '../../src/kv/lmdb';
import { MemoryEngine } from '../../src/kv/memory/memory-engine';
import type { Engine, Transaction } from '../../src/kv/contract/types';
import { CountingEngine } from '../../src/kv/counting-engine';
import { READS_SETTLED_NOW } from '../../src/kv/client/client-transaction';
import { settleReadsNow, transactSettlingReadsNow } from '../../src/kv/client/hand-over';
import { Database } from '../../src/kv/contract/database';
import { isKvError } from '../../src/kv/contract/errors';
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';

/** How long a loop may run before it is counted as starving the event loop. */
const CUT_OFF_MS = 3000;

/**
 * Runs `step(n)` for n = 0, 1, ... until a 100 ms timer set before the first step has fired; fails if
 * the timer has not fired after {@link CUT_OFF_MS}. Returns how many steps ran.
 */
async function untilTimerFires(step: (n: number) => Promise<unknown>): Promise<number> {
  let stop = false;
  const timer = setTimeout(() => (stop = true), 100);
  const started = Date.now();
  let n = 0;
  try {
    while (!stop && Date.now() - started < CUT_OFF_MS) await step(n++);
  } finally {
    clearTimeout(timer);
  }
  expect({ timerFired: stop, steps: n }).toEqual({ timerFired: true, steps: n });
  return n;
}

describe.each(documentEngines.map((engine) => [engine.name, engine] as const))('awaited operations yield to the event loop [%s]', (_name, engine) => {
  afterAll(async () => {
    await engine.cleanup?.();
  });

  it('while (!stop) await queue.push(n++) ends once the timer fires', async () => {
    const db = await open({ database: await engine.open() });
    try {
      const queue = db.collection('jobs').queue('q');
      const pushed = await untilTimerFires((n) => queue.push(n));
      expect(await queue.size()).toBe(pushed);
    } finally {
      await db.close();
      await db.kv.close();
    }
  });

  it("loops of a lone caller's structure and document calls end once the timer fires", async () => {
    const db = await open({ database: await engine.open() });
    try {
      const c = db.collection('loops');
      const [map, counter, list] = [c.map('m'), c.counter('c'), c.list('l')];
      await untilTimerFires((n) => map.set(`f${n % 10}`, n));
      await untilTimerFires((n) => map.get(`f${n % 10}`));
      await untilTimerFires(() => counter.incr());
      await untilTimerFires((n) => list.push(n));
      await untilTimerFires((n) => c.upsert(`d${n % 10}`, { n }));
      await untilTimerFires((n) => c.get(`d${n % 10}`));
      await untilTimerFires(() => c.exists('d1'));
    } finally {
      await db.close();
      await db.kv.close();
    }
  });

  it('a loop of reads, of read-only transactions and of read versions ends once the timer fires', async () => {
    const kv = await engine.open();
    try {
      await kv.set('k', 'v');
      const tr = kv.createTransaction();
      await untilTimerFires(() => tr.get('k'));
      await untilTimerFires(() => tr.snapshot().getRangeAll('', 'z'));
      await untilTimerFires(() => tr.getKey({ key: 'k', orEqual: false, offset: 1 }));
      await untilTimerFires(() => kv.transact((t) => t.get('k')));
      await untilTimerFires(() => kv.transact((t) => t.getReadVersion()));
      await untilTimerFires(async () => {
        for await (const kv2 of tr.getRange('', 'z')) expect(kv2.key).toBeDefined();
      });
    } finally {
      await kv.close();
    }
  });

  it('a loop of commits ends once the timer fires', async () => {
    const kv = await engine.open();
    try {
      await untilTimerFires((n) => kv.set('k', String(n)));
    } finally {
      await kv.close();
    }
  });
});

const root = mkdtempSync(join(tmpdir(), 'doclayer-event-loop-'));
let stores = 0;
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("node-foundationdb's API on the fdb shim yields to the event loop", () => {
  const engines: ReadonlyArray<readonly [string, () => Engine]> = [
    ['memory', () => new MemoryEngine()],
    ['lmdb', () => new LmdbEngine({ path: join(root, 'store') })],
  ];

  it.each(engines)('while (!stop) await db.doTn(...) ends once the timer fires [%s]', async (_name, makeEngine) => {
    const engine = makeEngine();
    const db = openFdbDatabaseOn(engine);
    try {
      await untilTimerFires((n) => db.doTn(async (tn) => tn.set('k', String(n))));
      await untilTimerFires(() => db.doTn((tn) => tn.get('k')));
      await untilTimerFires(() => db.get('k'));
    } finally {
      db.close();
      await engine.close();
    }
  });
});

describe.each([
  ['memory', () => new MemoryEngine()],
  ['lmdb', () => new LmdbEngine({ path: join(root, `read-only-commit-${stores++}`) })],
] as const)('a commit and the event loop [%s]', (_name, makeEngine) => {
  let engine: Engine;
  let tr: ReturnType<Engine['createTransaction']>;
  beforeEach(async () => {
    engine = makeEngine();
    const setup = engine.createTransaction();
    setup.set('k', 'v');
    await setup.commit();
    tr = engine.createTransaction();
  });
  afterEach(() => engine.close());

  /** Whether a turn of the event loop passes while `call` runs. */
  async function turnsDuring(call: () => Promise<unknown>): Promise<boolean> {
    let turned = false;
    setImmediate(() => (turned = true));
    await call();
    return turned;
  }

  it('a read-only commit settles without a turn of its own once the attempt has awaited a read', async () => {
    expect(await tr.get('k')).toEqual(Buffer.from('v'));
    expect(await turnsDuring(() => tr.commit())).toBe(false);
  });

  it('a read-only commit of an attempt that has not yielded takes a turn, so a loop of them still yields', async () => {
    expect(await turnsDuring(() => tr.commit())).toBe(true);
  });

  it('a read-only commit after a retry takes a turn unless the new attempt has yielded', async () => {
    await tr.get('k');
    tr.reset();
    expect(await turnsDuring(() => tr.commit())).toBe(true);
  });

  it('a writing commit takes a turn even after a read', async () => {
    await tr.get('k');
    tr.set('k', 'w');
    expect(await turnsDuring(() => tr.commit())).toBe(true);
  });

  it('after settleReadsNow, every kind of read settles without a turn, and the read-only commit takes one', async () => {
    settleReadsNow(tr);
    expect(await turnsDuring(() => tr.get('k'))).toBe(false);
    expect(await turnsDuring(() => tr.getRangeAll('', 'z'))).toBe(false);
    expect(await turnsDuring(() => tr.getKey({ key: 'k', orEqual: false, offset: 1 }))).toBe(false);
    expect(await turnsDuring(() => tr.snapshot().get('k'))).toBe(false);
    expect(await turnsDuring(() => tr.snapshot().getRangeAll('', 'z'))).toBe(false);
    expect(await turnsDuring(() => tr.getReadVersion())).toBe(false);
    expect(await turnsDuring(() => tr.getMetadataVersion())).toBe(false);
    expect(await tr.get('k')).toEqual(Buffer.from('v'));
    expect(await turnsDuring(() => tr.commit())).toBe(true);
  });

  it('after settleReadsNow, a writing commit still takes a turn', async () => {
    settleReadsNow(tr);
    expect(await turnsDuring(() => tr.get('k'))).toBe(false);
    tr.set('k', 'w');
    expect(await turnsDuring(() => tr.commit())).toBe(true);
  });

  it('a read settled at once that fails rejects at once with its error', async () => {
    settleReadsNow(tr);
    let code: string | undefined;
    const turned = await turnsDuring(() =>
      tr.get(Buffer.from([0xff, 0x01])).catch((err: unknown) => (code = isKvError(err) ? err.name : String(err))),
    );
    expect({ turned, code }).toEqual({ turned: false, code: 'key_outside_legal_range' });
  });

  it(`only ${READS_SETTLED_NOW} reads of an attempt settle at once; the attempt after a reset gets as many again`, async () => {
    settleReadsNow(tr);
    const turns: boolean[] = [];
    for (let i = 0; i < READS_SETTLED_NOW + 2; i++) turns.push(await turnsDuring(() => tr.get('k')));
    expect(turns.indexOf(true)).toBe(READS_SETTLED_NOW);
    expect(turns.slice(READS_SETTLED_NOW)).toEqual([true, true]);
    tr.reset();
    expect(await turnsDuring(() => tr.get('k'))).toBe(false);
  });

  it('transactSettlingReadsNow runs a read-modify-write in one turn, and retries it as transact does', async () => {
    const db = new Database(engine);
    let attempts = 0;
    const turnedByRead: boolean[] = [];
    const result = await transactSettlingReadsNow(db, async (t) => {
      attempts++;
      let turned = false;
      setImmediate(() => (turned = true));
      const value = await t.get('k');
      turnedByRead.push(turned);
      if (attempts === 1) {
        // Another transaction writes what this one read: its commit fails and the body runs again.
        await db.set('k', 'x');
      }
      t.set('k', `${value?.toString()}!`);
      return value?.toString();
    });
    expect({ result, attempts, turnedByRead, stored: (await db.get('k'))?.toString() }).toEqual({
      result: 'x',
      attempts: 2,
      turnedByRead: [false, false],
      stored: 'x!',
    });
  });
});

describe('settleReadsNow on a transaction that is not an engine client transaction', () => {
  it("leaves a wrapper's reads settling on later turns", async () => {
    const engine = new CountingEngine(new MemoryEngine());
    const tr: Transaction = engine.createTransaction();
    settleReadsNow(tr);
    let turned = false;
    setImmediate(() => (turned = true));
    await tr.get('k');
    expect(turned).toBe(true);
    await engine.close();
  });
});

describe.each([
  ['memory', () => new MemoryEngine()],
  ["lmdb 'fast'", () => new LmdbEngine({ path: join(root, `one-turn-${stores++}`), durability: 'fast' })],
] as const)("a lone caller's structure and document calls [%s]", (_name, makeEngine) => {
  // The memory and LMDB engines' transactions settle a layer's own reads at once (settleReadsNow): a
  // call's one turn is its commit's ('sync' waits for its flush besides, on a thread).
  it('each takes one turn of the event loop', async () => {
    const kv = new Database(makeEngine());
    const db = await open({ database: kv });
    try {
      const c = db.collection('turns');
      const [map, counter, list, set, queue] = [c.map('m'), c.counter('c'), c.list('l'), c.set('s'), c.queue('q')];
      await queue.pushMany(Array.from({ length: 100 }, (_, n) => n));
      await c.upsert('d', { n: 0 });
      const calls: Record<string, (n: number) => Promise<unknown>> = {
        'map set': (n) => map.set(`f${n % 10}`, n),
        'map get': (n) => map.get(`f${n % 10}`),
        'counter incr': () => counter.incr(),
        'counter add': () => counter.add(1),
        'list push': (n) => list.push(n),
        'set add': (n) => set.add(n),
        'queue push': (n) => queue.push(n),
        'queue pop': () => queue.pop(),
        'document upsert': (n) => c.upsert('d', { n }),
        'document get': () => c.get('d'),
        'document mutateIn': (n) => c.mutateIn('d', [MutateInSpec.upsert('n', n)]),
      };
      const N = 20;
      const turns: [string, number][] = [];
      for (const [name, call] of Object.entries(calls)) {
        await call(0);
        let ticks = 0;
        let ticking = true;
        const tick = () => {
          ticks++;
          if (ticking) setImmediate(tick);
        };
        setImmediate(tick);
        for (let n = 1; n <= N; n++) await call(n);
        ticking = false;
        turns.push([name, ticks]);
      }
      // Turns counted over N calls: N, or one more when the ticker's first turn came before the first call's.
      expect(turns.filter(([, ticks]) => ticks < N || ticks > N + 1)).toEqual([]);
    } finally {
      await db.close();
      await kv.close();
    }
  });
});
