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
import { LmdbEngine } from '../../src/kv/lmdb';
import { MemoryEngine } from '../../src/kv/memory/memory-engine';
import type { Engine } from '../../src/kv/contract/types';
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
});
