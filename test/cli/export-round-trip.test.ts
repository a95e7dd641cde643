import fc from 'fast-check';
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import type { Collection } from '../../src/collection';
import { parseJson, stringifyJson } from '../../src/cli/json-text';
import type { StructureKind } from '../../src/document/keys/kind';
import type { DocId, JsonValue } from '../../src/document/types';
import { open } from '../../src/open';
import type { JobState, Queue, RepeatEvery } from '../../src/structures/queue/queue';
import type { SetMember } from '../../src/structures/set';
import { jsonDocument, jsonKey, jsonScalar, jsonString, jsonValue } from '../support/json-arbitrary';
import { testSeed } from '../support/random';
import { runInProcess } from './support/in-process';

/**
 * `doclayer export` then `doclayer import` into an empty database reproduces the collection exactly:
 * every document and structure with its id (strings, integers, bigints, UUIDs), its kind and its
 * expiry, and every value (-0, bigints and integral numbers beyond 2^53 included). The commands run
 * in this process (`runCli`, what the binary runs) on durable stores in a temporary folder.
 */

jest.setTimeout(300_000);

let dir: string;
let stores = 0;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'doclayer-cli-round-trip-'));
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

const COLLECTION = 'app.things';

/** A document or a structure of the generated collection. */
type Entry =
  | { kind: 'document'; id: DocId; value: JsonValue; expiresAt?: Date }
  | { kind: 'list'; id: DocId; items: JsonValue[] }
  | { kind: 'queue'; id: DocId; items: QueueEntryItem[]; settings: QueueSettings }
  | { kind: 'set'; id: DocId; members: SetMember[] }
  | { kind: 'map'; id: DocId; entries: [string, JsonValue][] }
  | { kind: 'counter'; id: DocId; value: number | bigint }
  | { kind: 'text'; id: DocId; text: string }
  | { kind: 'sortedset'; id: DocId; pairs: [string, number][] };

/** A queue's item as pushed: with a priority or a delay (a push takes one or the other). */
interface QueueEntryItem {
  value: JsonValue;
  priority?: number;
  delayMs?: number;
}

/** A queue's settings: its events, rate limit and repeatable jobs. */
interface QueueSettings {
  events?: { events: boolean; maxEvents: number };
  rateLimit?: { max: number; intervalMs: number };
  repeats: { name: string; every: RepeatEvery; value: JsonValue; limit?: number }[];
}

const docId: fc.Arbitrary<DocId> = fc.oneof(
  fc.string({ minLength: 1, maxLength: 12 }),
  fc.constantFrom('42', '"q"', 'a.b', '\u{10ffff}', 'order-00042'),
  fc.uuid(),
  fc.integer({ min: -1e6, max: 1e6 }),
  fc.constantFrom(0, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER),
  fc.bigInt({ min: 2n ** 53n, max: 2n ** 70n }),
  fc.bigInt({ min: -(2n ** 70n), max: -(2n ** 53n) }),
);

/** The key ids are told apart by: an integer is the same id as a number or a bigint. */
function idKey(id: DocId): string {
  return typeof id === 'string' ? `s${id}` : `n${BigInt(id)}`;
}

const setMember: fc.Arbitrary<SetMember> = fc.oneof(jsonScalar as fc.Arbitrary<SetMember>, jsonString);
const counterValue = fc.oneof(fc.integer({ min: -1e9, max: 1e9 }), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }));
const future = fc.integer({ min: 60_000, max: 10 * 365 * 86_400_000 }).map((ms) => new Date(Date.now() + ms));
const items = fc.array(jsonValue({ maxDepth: 3, maxChildren: 3 }), { maxLength: 6 });
const queueItem: fc.Arbitrary<QueueEntryItem> = fc.oneof(
  jsonValue({ maxDepth: 3, maxChildren: 3 }).map((value) => ({ value })),
  fc.record({ value: jsonValue({ maxDepth: 2, maxChildren: 3 }), priority: fc.integer({ min: 1, max: 3 }) }),
  fc.record({ value: jsonValue({ maxDepth: 2, maxChildren: 3 }), delayMs: fc.integer({ min: 60_000, max: 86_400_000 }) }),
);
const queueSettings: fc.Arbitrary<QueueSettings> = fc.record(
  {
    events: fc.record({ events: fc.boolean(), maxEvents: fc.integer({ min: 1, max: 20_000 }) }),
    rateLimit: fc.record({ max: fc.integer({ min: 1, max: 10_000 }), intervalMs: fc.integer({ min: 1, max: 86_400_000 }) }),
    repeats: fc.uniqueArray(
      fc.record(
        {
          name: fc.string({ minLength: 1, maxLength: 6 }),
          every: fc.oneof(
            fc.integer({ min: 60_000, max: 86_400_000 }).map((everyMs): RepeatEvery => ({ everyMs })),
            fc.constantFrom<RepeatEvery>({ cron: '*/5 * * * *' }, { cron: '0 9 * * 1-5', tz: 'Europe/Paris' }),
          ),
          value: jsonValue({ maxDepth: 2, maxChildren: 2 }),
          limit: fc.integer({ min: 1, max: 50 }),
        },
        { requiredKeys: ['name', 'every', 'value'] },
      ),
      { selector: (repeat) => repeat.name, maxLength: 2 },
    ),
  },
  { requiredKeys: ['repeats'] },
);

const entryOf = (id: DocId): fc.Arbitrary<Entry> =>
  fc.oneof(
    {
      weight: 4,
      arbitrary: fc
        .record({ value: jsonValue({ maxDepth: 4, maxChildren: 4 }), expiresAt: fc.option(future, { nil: undefined }) })
        .map(({ value, expiresAt }): Entry => ({ kind: 'document', id, value, ...(expiresAt === undefined ? {} : { expiresAt }) })),
    },
    { weight: 1, arbitrary: jsonDocument({ maxDepth: 3 }).map((value): Entry => ({ kind: 'document', id, value })) },
    { weight: 1, arbitrary: items.map((list): Entry => ({ kind: 'list', id, items: list })) },
    {
      weight: 2,
      arbitrary: fc
        .record({ items: fc.array(queueItem, { maxLength: 8 }), settings: queueSettings })
        .map(({ items: queueItems, settings }): Entry => ({ kind: 'queue', id, items: queueItems, settings })),
    },
    { weight: 1, arbitrary: fc.array(setMember, { maxLength: 8 }).map((members): Entry => ({ kind: 'set', id, members })) },
    {
      weight: 1,
      arbitrary: fc
        .array(fc.tuple(jsonKey, jsonValue({ maxDepth: 3, maxChildren: 3 })), { maxLength: 5 })
        .map((entries): Entry => ({ kind: 'map', id, entries })),
    },
    { weight: 1, arbitrary: counterValue.map((value): Entry => ({ kind: 'counter', id, value })) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }).map((text): Entry => ({ kind: 'text', id, text })) },
    {
      weight: 1,
      arbitrary: fc
        .uniqueArray(fc.tuple(fc.string({ unit: 'binary', maxLength: 8 }), fc.double({ noNaN: true, noDefaultInfinity: true })), {
          selector: ([member]) => member,
          maxLength: 8,
        })
        .map((pairs): Entry => ({ kind: 'sortedset', id, pairs })),
    },
  );

const collection: fc.Arbitrary<Entry[]> = fc
  .uniqueArray(docId, { selector: idKey, minLength: 1, maxLength: 12 })
  .chain((ids) => fc.tuple(...ids.map(entryOf)));

/** Writes `entries` through the library's own API. */
async function write(c: Collection, entries: readonly Entry[]): Promise<void> {
  for (const entry of entries) {
    switch (entry.kind) {
      case 'document':
        await c.upsert(entry.id, entry.value, entry.expiresAt === undefined ? {} : { expiry: entry.expiresAt });
        break;
      case 'list':
        await c.list(entry.id).push(null);
        await c.list(entry.id).pop();
        for (const item of entry.items) await c.list(entry.id).push(item);
        break;
      case 'queue': {
        const queue = c.queue(entry.id);
        await queue.push(null);
        await queue.pop();
        const { events, rateLimit, repeats } = entry.settings;
        if (events !== undefined) await queue.configure(events);
        if (rateLimit !== undefined) await queue.setRateLimit(rateLimit);
        for (const { name, every, value, limit } of repeats) await queue.repeat(name, every, value, limit === undefined ? {} : { limit });
        for (const { value, priority, delayMs } of entry.items) {
          await queue.push(value, { ...(priority === undefined ? {} : { priority }), ...(delayMs === undefined ? {} : { delayMs }) });
        }
        break;
      }
      case 'set':
        await c.set(entry.id).add(true);
        await c.set(entry.id).delete(true);
        for (const member of entry.members) await c.set(entry.id).add(member);
        break;
      case 'map':
        await c.map(entry.id).set('x', 1);
        await c.map(entry.id).delete('x');
        for (const [key, value] of entry.entries) await c.map(entry.id).set(key, value);
        break;
      case 'counter':
        await c.counter(entry.id).set(entry.value);
        break;
      case 'text':
        await c.text(entry.id).set(entry.text);
        break;
      case 'sortedset':
        await c.sortedSet(entry.id).add('', 0);
        await c.sortedSet(entry.id).remove('');
        for (const [member, score] of entry.pairs) await c.sortedSet(entry.id).add(member, score);
        break;
    }
  }
}

/** What a store holds: every document as `get` reads it, by id; for a queue, also what its API tells of its items and settings. */
async function contents(
  path: string,
  queues: readonly DocId[] = [],
): Promise<Map<string, { id: DocId; content: JsonValue; expiresAt?: Date; queue?: unknown }>> {
  const docs = await open({ path });
  try {
    const c = docs.collection(COLLECTION);
    const out = new Map<string, { id: DocId; content: JsonValue; expiresAt?: Date; queue?: unknown }>();
    for await (const { id, content, expiresAt } of c.scan()) {
      const isQueue = queues.some((queue) => idKey(queue) === idKey(id));
      out.set(idKey(id), {
        id,
        content,
        ...(expiresAt === undefined ? {} : { expiresAt }),
        ...(isQueue ? { queue: await queueState(c.queue(id)) } : {}),
      });
    }
    return out;
  } finally {
    await docs.close();
  }
}

/**
 * What a queue's API tells of it besides its JSON form: its delayed items with their visibility times,
 * its waiting items in pop order, its event settings, rate limit and what is left of its repeatable jobs.
 */
async function queueState(queue: Queue): Promise<unknown> {
  const jobs = async (state: JobState) => {
    const out: { value: JsonValue; at?: number }[] = [];
    for await (const job of queue.jobs({ state })) out.push({ value: job.value, ...(state === 'delayed' ? { at: job.at } : {}) });
    return out;
  };
  const repeats = [];
  for await (const info of queue.repeats()) {
    const { name, cron, tz, everyMs, value, endAt, limit, count, next } = info;
    repeats.push({ name, cron, tz, everyMs, value, endAt, left: limit === undefined ? undefined : limit - count, next });
  }
  return {
    waiting: await jobs('waiting'),
    delayed: await jobs('delayed'),
    active: await jobs('active'),
    events: await queue.eventSettings(),
    rateLimit: await queue.rateLimit(),
    repeats,
  };
}

/**
 * Pushes a marker at each priority from 3 down to 1 into every queue of the store at `path`: where each
 * lands in a queue's JSON form tells which items have priorities above, at or below it.
 */
async function pushPriorityMarkers(path: string, ids: readonly DocId[]): Promise<void> {
  const docs = await open({ path });
  try {
    for (const id of ids) for (const priority of [3, 2, 1]) await docs.collection(COLLECTION).queue(id).push({ marker: priority }, { priority });
  } finally {
    await docs.close();
  }
}

/** Runs `doclayer <args>` in this process; resolves to its status and output. */
async function doclayer(args: string[], input = ''): Promise<{ status: number; stdout: string; stderr: string }> {
  const { status, stdout, stderr } = await runInProcess(args, { cwd: dir, input });
  // A plain progress line appears once a run has taken 2 s (on a loaded machine too): the assertions
  // are about everything else on stderr.
  return { status, stdout, stderr: stderr.replace(/^(importing|exporting) .*\n/gm, '') };
}

async function ok(args: string[], input?: string): Promise<string> {
  const run = await doclayer(args, input);
  if (run.status !== 0) throw new Error(`doclayer ${args.join(' ')} exited with ${run.status}:\n${run.stderr}${run.stdout}`);
  return run.stdout;
}

/** Exports the collection of the store at `from` and imports it into a new store: its path, the export, the import's transactions. */
async function roundTrip(from: string): Promise<{ to: string; exported: string; transactions: number }> {
  const to = join(dir, `store-${++stores}`);
  const exported = await ok(['--db', from, '--collection', COLLECTION, 'export']);
  const summary = await ok(['--db', to, '--collection', COLLECTION, 'import', '-', '--json'], exported);
  return { to, exported, transactions: (parseJson(summary) as { transactions: number }).transactions };
}

const KIND_OF: Record<Entry['kind'], StructureKind | undefined> = {
  document: undefined,
  list: 'list',
  queue: 'queue',
  set: 'set',
  map: 'map',
  counter: 'counter',
  text: 'text',
  sortedset: 'sortedset',
};

describe('doclayer export, then import into an empty database', () => {
  it('reproduces every document and structure: ids, kinds, expiry and values', async () => {
    await fc.assert(
      fc.asyncProperty(collection, async (entries) => {
        const from = join(dir, `store-${++stores}`);
        const docs = await open({ path: from });
        try {
          await write(docs.collection(COLLECTION), entries);
        } finally {
          await docs.close();
        }
        const { to, exported } = await roundTrip(from);
        const queues = entries.filter((entry) => entry.kind === 'queue').map((entry) => entry.id);

        // The export holds every document, with its id, kind and expiry.
        const [header, ...lines] = exported.trimEnd().split('\n');
        expect(header).toBe('{"doclayer":"export","version":2}');
        const records = new Map(
          lines.map((line) => parseJson(line) as { id: DocId; kind?: string; expiresAt?: string }).map((r) => [idKey(r.id), r]),
        );
        expect(records.size).toBe(entries.length);
        for (const entry of entries) {
          const record = records.get(idKey(entry.id));
          expect(record?.kind).toBe(KIND_OF[entry.kind]);
          expect(record?.expiresAt).toBe(entry.kind === 'document' ? entry.expiresAt?.toISOString() : undefined);
        }

        // The imported store reads exactly as the original, and exports the same bytes.
        const [before, after] = [await contents(from, queues), await contents(to, queues)];
        // (toEqual tells -0 from 0, and a bigint from a number.)
        expect(after).toEqual(before);
        expect(await ok(['--db', to, '--collection', COLLECTION, 'export'])).toBe(exported);

        // Every queue item keeps its priority: markers pushed at each priority land in the same places.
        await pushPriorityMarkers(from, queues);
        await pushPriorityMarkers(to, queues);
        expect(await contents(to, queues)).toEqual(await contents(from, queues));
      }),
      { seed: testSeed(1307), numRuns: 40 },
    );
  });

  it('re-creates structures too large for one transaction through their own APIs, in bounded transactions', async () => {
    const from = join(dir, `store-${++stores}`);
    const docs = await open({ path: from });
    const c = docs.collection(COLLECTION);
    const members = Array.from({ length: 6_000 }, (_, i) => `member-${i}`);
    const items = Array.from({ length: 3_000 }, (_, i) => ({ n: i, tag: `t${i % 7}` }));
    const text = 'ab\u{1f600}'.repeat(200_000);
    try {
      for (let i = 0; i < members.length; i += 1_000) {
        await docs.kv.transact(async (tr) => {
          for (const member of members.slice(i, i + 1_000)) await c.set('members').add(member, { tr });
        });
      }
      for (let i = 0; i < items.length; i += 1_000) await c.queue('jobs').pushMany(items.slice(i, i + 1_000));
      await docs.kv.transact(async (tr) => {
        for (const item of items.slice(0, 1_500)) await c.list('log').push(item, { tr });
      });
      for (let i = 0; i < text.length; i += 300_000) await c.text('essay').append(text.slice(i, i + 300_000));
    } finally {
      await docs.close();
    }
    const { to, exported, transactions } = await roundTrip(from);
    // 10,503 elements: at most 5,000 a transaction.
    expect(transactions).toBeGreaterThanOrEqual(3);
    const [before, after] = [await contents(from), await contents(to)];
    expect([...after.keys()].sort()).toEqual(['sessay', 'sjobs', 'slog', 'smembers']);
    expect(after).toEqual(before);
    expect((after.get('sessay')?.content as string).length).toBe(text.length);
    expect(await ok(['--db', to, '--collection', COLLECTION, 'export'])).toBe(exported);
  });

  it("carries structures' expiry: each structure is re-created with the expiry it had", async () => {
    const from = join(dir, `store-${++stores}`);
    const docs = await open({ path: from });
    const at = new Date(Date.now() + 3_600_000);
    try {
      const c = docs.collection(COLLECTION);
      await c.list('l').push(1, { expiry: at });
      await c.set('s').add('x', { expiry: at });
      await c.map('m').set('k', 1, { expiry: at });
      await c.queue('q').pushMany([1, 2], { expiry: at });
      await c.counter('n').add(3, { expiry: at });
      await c.text('t').append('hello', { expiry: at });
      await c.text('plain').append('no expiry');
    } finally {
      await docs.close();
    }
    const { to, exported } = await roundTrip(from);
    const records = exported
      .trimEnd()
      .split('\n')
      .slice(1)
      .map((line) => parseJson(line) as { id: string; expiresAt?: string });
    expect(Object.fromEntries(records.map((r) => [r.id, r.expiresAt]))).toEqual({
      l: at.toISOString(),
      m: at.toISOString(),
      n: at.toISOString(),
      plain: undefined,
      q: at.toISOString(),
      s: at.toISOString(),
      t: at.toISOString(),
    });
    expect(await contents(to)).toEqual(await contents(from));
    const imported = await open({ path: to });
    try {
      expect(await imported.collection(COLLECTION).queue('q').expiry()).toEqual(at);
    } finally {
      await imported.close();
    }
  });

  it("replaces what is at a record's id, and imports the same export again to the same result", async () => {
    const from = join(dir, `store-${++stores}`);
    const docs = await open({ path: from });
    try {
      const c = docs.collection(COLLECTION);
      await c.set('s').add('x');
      await c.upsert('d', { a: -0 });
      await c.counter('n').set(2n ** 62n);
      // Empty structures exist (and are exported) as much as full ones.
      await c
        .list('empty-list')
        .push(1)
        .then(() => c.list('empty-list').pop());
      await c
        .set('empty-set')
        .add(1)
        .then(() => c.set('empty-set').delete(1));
      await c
        .map('empty-map')
        .set('k', 1)
        .then(() => c.map('empty-map').delete('k'));
      await c
        .queue('empty-queue')
        .push(1)
        .then(() => c.queue('empty-queue').pop());
      await c.text('empty-text').set('');
      await c.counter('zero').set(0);
    } finally {
      await docs.close();
    }
    const { to, exported } = await roundTrip(from);
    const other = await open({ path: to });
    try {
      const c = other.collection(COLLECTION);
      await c.remove('s');
      await c.upsert('s', { a: "plain document in the set's place" });
      await c.remove('d');
      await c.list('d').push(1);
    } finally {
      await other.close();
    }
    await ok(['--db', to, '--collection', COLLECTION, 'import', '-'], exported);
    expect(await ok(['--db', to, '--collection', COLLECTION, 'export'])).toBe(exported);
    expect(exported).toContain('{"id":"d","value":{"a":-0}}');
    expect(exported).toContain('{"id":"n","kind":"counter","value":4611686018427387904}');
    for (const kind of ['list', 'set', 'queue', 'text'])
      expect(exported).toContain(`{"id":"empty-${kind}","kind":"${kind}","value":${kind === 'text' ? '""' : '[]'}}`);
    expect(exported).toContain('{"id":"empty-map","kind":"map","value":{}}');
  });
});

describe('doclayer export of a queue', () => {
  it('exports a leased item as visible at its lease deadline, and a nacked one at its time, each in its place', async () => {
    const from = join(dir, `store-${++stores}`);
    const docs = await open({ path: from });
    const now = Date.now();
    let deadline = 0;
    try {
      const queue = docs.collection(COLLECTION).queue('q');
      await queue.pushMany(['leased', 'nacked', 'ready']);
      await queue.push('urgent', { priority: 5 });
      await queue.push('later', { delayMs: 3_600_000 });
      const [urgent, leased, nacked] = await queue.lease(3, { visibilityMs: 600_000 });
      expect([urgent.value, leased.value, nacked.value]).toEqual(['urgent', 'leased', 'nacked']);
      deadline = leased.deadline;
      await queue.ack(urgent);
      await queue.nack(nacked);
    } finally {
      await docs.close();
    }
    const { to, exported } = await roundTrip(from);
    const record = parseJson(exported.trimEnd().split('\n')[1]) as { queue: { items: { visibleAt?: number }[] }; value: JsonValue[] };
    // The next to pop last: the nacked item (visible now), the ready one, then the leased and delayed ones by time.
    expect(record.value).toEqual(['later', 'leased', 'ready', 'nacked']);
    expect(record.queue.items[1]).toEqual({ visibleAt: deadline });
    expect(record.queue.items[0].visibleAt).toBeGreaterThanOrEqual(now + 3_600_000);
    expect(record.queue.items[2]).toEqual({});
    expect(record.queue.items[3].visibleAt).toBeLessThanOrEqual(Date.now());
    const imported = await open({ path: to });
    try {
      const queue = imported.collection(COLLECTION).queue('q');
      // No one holds the lease in the new database: the item waits for its deadline, as a delayed one.
      expect(await queue.counts()).toEqual({ waiting: 2, delayed: 2, active: 0, dead: 0 });
      expect(await queue.pop()).toBe('nacked');
      expect(await queue.pop()).toBe('ready');
      expect(await queue.pop()).toBeUndefined();
    } finally {
      await imported.close();
    }
  });

  it('imports a queue with events on over one at its id, and keeps its settings after its items', async () => {
    const from = join(dir, `store-${++stores}`);
    const docs = await open({ path: from });
    try {
      const queue = docs.collection(COLLECTION).queue('q');
      await queue.configure({ events: true, maxEvents: 1 });
      await queue.pushMany([1, 2, 3], { priority: 2 });
      await queue.push(4, { delayMs: 60_000 });
      await queue.setRateLimit({ max: 2, intervalMs: 1_000 });
    } finally {
      await docs.close();
    }
    const { to, exported } = await roundTrip(from);
    await ok(['--db', to, '--collection', COLLECTION, 'import', '-'], exported);
    expect(await ok(['--db', to, '--collection', COLLECTION, 'export'])).toBe(exported);
    const imported = await open({ path: to });
    try {
      const queue = imported.collection(COLLECTION).queue('q');
      expect(await queue.eventSettings()).toEqual({ events: true, maxAgeMs: 86_400_000, maxEvents: 1 });
      expect(await queue.rateLimit()).toEqual({ max: 2, intervalMs: 1_000 });
      expect(await queue.pop()).toBe(1);
    } finally {
      await imported.close();
    }
  });
});

describe('doclayer import of an export', () => {
  const header = '{"doclayer":"export","version":2}';

  it('stops at a bad record with everything before it imported, and resumes after the header', async () => {
    const db = ['--db', join(dir, `store-${++stores}`), '--collection', COLLECTION];
    const lines = [header, '{"id":"a","value":1}', '{"id":"b","kind":"bag","value":[]}', '{"id":"c","kind":"set","value":[1]}'];
    const failed = await doclayer([...db, 'import', '-'], `${lines.join('\n')}\n`);
    expect(failed.status).toBe(1);
    expect(failed.stderr.split('\n')).toContain(
      'stdin:3:1: unknown kind "bag" (one of list, map, set, queue, counter, text, sortedset; absent for a plain document) (record 3)',
    );
    expect(failed.stdout).toMatch(/^imported 1 document into app\.things .*\nstopped at line 3: /);
    lines[2] = '{"id":"b","kind":"list","value":[]}';
    const resumed = await ok([...db, 'import', '-', '--from-line', '3'], `${lines.join('\n')}\n`);
    expect(resumed).toMatch(/^imported 2 documents into app\.things .*\npassed over 1 records before line 3\n$/);
    expect(await ok([...db, 'export'])).toBe(
      `${[header, '{"id":"a","value":1}', '{"id":"b","kind":"list","value":[]}', '{"id":"c","kind":"set","value":[1]}'].join('\n')}\n`,
    );
  });

  it('leaves nothing of a structure the document layer refuses part-way, and skips it with --skip-bad', async () => {
    let deep: JsonValue = 1;
    for (let i = 0; i < 40; i++) deep = [deep];
    const items: JsonValue[] = Array.from({ length: 2_500 }, (_, i) => i);
    items[2_200] = deep;
    const input = `${[header, '{"id":"a","value":1}', stringifyJson({ id: 'deep', kind: 'list', value: items }), '{"id":"z","value":2}'].join('\n')}\n`;
    const db = ['--db', join(dir, `store-${++stores}`), '--collection', COLLECTION];
    const failed = await doclayer([...db, 'import', '-'], input);
    expect(failed.status).toBe(1);
    expect(failed.stderr).toMatch(/^stdin:3:1: VALUE_TOO_DEEP: .* \(record 3\)\n$/);
    expect(await ok([...db, 'export'])).toBe(`${header}\n{"id":"a","value":1}\n`);
    const skipped = await doclayer([...db, 'import', '-', '--skip-bad'], input);
    expect(skipped.status).toBe(0);
    expect(await ok([...db, 'export'])).toBe(`${header}\n{"id":"a","value":1}\n{"id":"z","value":2}\n`);
  });

  it('imports an export of format version 1, whose queues are their items alone', async () => {
    const db = ['--db', join(dir, `store-${++stores}`), '--collection', COLLECTION];
    await ok([...db, 'import', '-'], '{"doclayer":"export","version":1}\n{"id":"a","value":1}\n{"id":"q","kind":"queue","value":[3,2,1]}\n');
    expect(await ok([...db, 'export'])).toBe(`${header}\n{"id":"a","value":1}\n{"id":"q","kind":"queue","value":[3,2,1]}\n`);
  });

  it("refuses a queue's details that do not fit its record", async () => {
    const db = ['--db', join(dir, `store-${++stores}`), '--collection', COLLECTION];
    const lines = [
      header,
      '{"id":"a","kind":"queue","queue":{"items":[{}]},"value":[1,2]}',
      '{"id":"b","kind":"list","queue":{},"value":[]}',
      '{"id":"c","kind":"queue","queue":{"items":[{"priority":1,"visibleAt":5}]},"value":[1]}',
      '{"id":"d","kind":"queue","queue":{"items":[{"priority":-1}]},"value":[1]}',
      '{"id":"e","kind":"queue","queue":{"rateLimit":{"max":2,"intervalMs":1000}},"value":[]}',
    ];
    const run = await doclayer([...db, 'import', '-', '--skip-bad'], `${lines.join('\n')}\n`);
    expect(run.stderr.split('\n')).toEqual([
      'stdin:2:1: a queue\'s "queue" field: "items" is an array of one entry per item (2) (record 2)',
      'stdin:3:1: only a queue\'s record has a "queue" field (record 3)',
      'stdin:4:1: a queue\'s "queue" field: item 0 is {}, {"priority":<integer>} or {"visibleAt":<ms since the epoch>} (record 4)',
      expect.stringMatching(/^stdin:5:1: INVALID_ARGUMENT: priority is an integer from 0 to 2147483647, got -1 \(record 5\)$/),
      '',
    ]);
    expect(await ok([...db, 'export'])).toBe(`${header}\n${lines[5]}\n`);
  });

  it('refuses --id-field for an export, and reads an export appended to another', async () => {
    const db = ['--db', join(dir, `store-${++stores}`), '--collection', COLLECTION];
    const refused = await doclayer([...db, 'import', '-', '--id-field', 'id'], `${header}\n{"id":"a","value":1}\n`);
    expect(refused).toEqual({
      status: 1,
      stdout: '',
      stderr: 'doclayer: the input is a doclayer export, whose records carry their ids: import it without --id-field\n',
    });
    await ok([...db, 'import', '-'], `${header}\n{"id":"a","value":1}\n${header}\n{"id":"b","value":2}\n`);
    expect(await ok([...db, 'export'])).toBe(`${header}\n{"id":"a","value":1}\n{"id":"b","value":2}\n`);
  });
});

describe('doclayer import of plain documents', () => {
  it('takes any JSON for a document, whatever fields it has', async () => {
    const db = ['--db', join(dir, `store-${++stores}`), '--collection', COLLECTION];
    const input = '{"k":1,"reason":"x","skippable":true}\n{"k":2,"id":"a","value":1}\n';
    await ok([...db, 'import', '-', '--id-field', 'k'], input);
    expect(await ok([...db, 'export', '--documents'])).toBe('{"k":1,"reason":"x","skippable":true}\n{"id":"a","k":2,"value":1}\n');
  });

  it('skips a bad first record with --skip-bad when --id-field says the input is plain documents', async () => {
    const db = ['--db', join(dir, `store-${++stores}`), '--collection', COLLECTION];
    const skipped = await doclayer([...db, 'import', '-', '--id-field', 'k', '--skip-bad'], '{"k":1,\n{"k":2}\n');
    expect(skipped.status).toBe(0);
    expect(await ok([...db, 'export', '--documents'])).toBe('{"k":2}\n');
    const stopped = await doclayer([...db, 'import', '-', '--skip-bad'], '{"k":1,\n{"k":2}\n');
    expect(stopped.status).toBe(1);
    expect(stopped.stderr.split('\n')).toContain(
      'stdin:1:8: bad JSON: expected a property name in double quotes, found the end of the text (the first record tells an export from plain documents) (record 1)',
    );
  });
});
