/**
 * Index definitions (validated, typed errors, nothing written on bad input) and online builds: an
 * index created on a collection with documents is usable only once built; the build runs in bounded
 * transactions while writers continue, records its progress in the database and resumes in another
 * layer after a crash, runs in several workers, and a unique build reports the duplicates it finds.
 */
import { MutateInSpec, open, UniqueBuildError, type BuildProgress, type Collection, type DocLayer } from '../../src';
import { documentSuite } from '../document/document-suite';
import { Random, testSeed } from '../support/random';
import { actualEntries, expectedEntries, keysUnder } from './support';

async function fill(db: DocLayer, c: Collection, n: number, from = 0): Promise<void> {
  for (let i = from; i < from + n; i += 50) {
    await db.transact(async (tr) => {
      for (let j = i; j < Math.min(i + 50, from + n); j++)
        await c.upsert(`d${String(j).padStart(5, '0')}`, { n: j % 37, tags: [j % 3, j % 5] }, { tr });
    });
  }
}

documentSuite('index definitions', (ctx) => {
  it.each([
    ['a bad name', '', { fields: ['a'] }],
    ['an unknown option', 'i', { fields: ['a'], sparse: true }],
    ['no fields', 'i', { fields: [] }],
    ['17 fields', 'i', { fields: Array.from({ length: 17 }, (_, k) => `f${k}`) }],
    ['an array index in a path', 'i', { fields: ['a[0]'] }],
    ['a bad path', 'i', { fields: ['a..b'] }],
    ['a bad order', 'i', { fields: [{ path: 'a', order: 'up' }] }],
    ['a path twice', 'i', { fields: ['a', { path: 'a', order: 'desc' }] }],
    ['[*] in include', 'i', { fields: ['a'], include: ['b[*]'] }],
    ['an unsupported operator in where', 'i', { fields: ['a'], where: { a: { $regex: 'x' } } }, 'UNSUPPORTED_OPERATOR'],
    ['a malformed where', 'i', { fields: ['a'], where: { a: { $in: 3 } } }, 'INVALID_FILTER'],
  ])('rejects %s with a typed error and writes nothing', async (_what, name, spec, code = 'INVALID_INDEX') => {
    const { docs: db, kv } = await ctx.open();
    const c = db.collection('defs');
    await c.insert({ a: 1 }, { id: 'x' });
    const before = await keysUnder(kv, db.layout.prefix);
    await expect(c.createIndex(name, spec as never)).rejects.toMatchObject({ code });
    expect(await keysUnder(kv, db.layout.prefix)).toEqual(before);
  });

  it('names the same definition twice a no-op, another one INDEX_EXISTS; dropping a missing one INDEX_NOT_FOUND', async () => {
    const { docs: db } = await ctx.open();
    const c = db.collection('defs');
    const made = await c.createIndex('byA', { fields: ['a', { path: 'b', order: 'desc' }], include: ['c'] });
    expect(made).toEqual({
      name: 'byA',
      fields: [
        { path: 'a', order: 'asc' },
        { path: 'b', order: 'desc' },
      ],
      unique: false,
      include: ['c'],
      state: 'ready',
    });
    await expect(c.createIndex('byA', { fields: ['a', { path: 'b', order: 'desc' }], include: ['c'] })).resolves.toEqual(made);
    await expect(c.createIndex('byA', { fields: ['a'] })).rejects.toMatchObject({ code: 'INDEX_EXISTS' });
    await expect(c.dropIndex('nope')).rejects.toMatchObject({ code: 'INDEX_NOT_FOUND' });
    await expect(db.transact((tr) => c.indexAccess().scan(tr, 'nope', { equal: [] })[Symbol.asyncIterator]().next())).rejects.toMatchObject({
      code: 'INDEX_NOT_FOUND',
    });
  });
});

documentSuite('index builds', (ctx) => {
  it('builds an index over existing documents while writers continue, and only then marks it ready', async () => {
    const { docs: db } = await ctx.open();
    const c = db.collection('build');
    await fill(db, c, 600);
    const r = new Random(testSeed(1420));
    let writing = true;
    const writer = (async () => {
      while (writing) {
        const id = `d${String(r.int(700)).padStart(5, '0')}`;
        if (r.chance(0.2)) await c.remove(id).catch(() => undefined);
        else await c.upsert(id, { n: r.int(37), tags: [r.int(9)] });
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    const seen: BuildProgress[] = [];
    const states: string[] = [];
    const built = await c.createIndex('byN', { fields: ['n', 'tags[*]'] }, { stepKeys: 200, onProgress: (p) => seen.push(p) });
    writing = false;
    await writer;
    states.push(built.state);
    expect(states).toEqual(['ready']);
    expect(seen.length).toBeGreaterThan(1);
    expect(await actualEntries(db, c, 'byN')).toEqual(await expectedEntries(c, ['n', 'tags[*]']));
  });

  it('resumes a build stopped midway, from another layer, where it stopped', async () => {
    const { docs: db, kv } = await ctx.open();
    const c = db.collection('resume');
    await fill(db, c, 300);
    await c.createIndex('byN', { fields: ['n'] }, { build: false });
    expect((await c.listIndexes())[0]).toMatchObject({ state: 'building', progress: { scanned: 0, done: false } });
    const crash = new Error('crash');
    await expect(
      c.buildIndex('byN', {
        stepKeys: 100,
        onProgress: () => {
          throw crash;
        },
      }),
    ).rejects.toBe(crash);
    const midway = (await c.listIndexes())[0];
    expect(midway.state).toBe('building');
    expect(midway.progress?.scanned).toBeGreaterThan(0);
    expect(midway.progress?.scanned).toBeLessThan(300);
    const other = await open({ database: kv });
    try {
      const counts: number[] = [];
      const done = await other.collection('resume').buildIndex('byN', { stepKeys: 100, onProgress: (p) => counts.push(p.scanned) });
      expect(done.state).toBe('ready');
      expect(counts[0]).toBeGreaterThan(midway.progress?.scanned ?? 0);
    } finally {
      await other.close();
    }
    expect(await actualEntries(db, c, 'byN')).toEqual(await expectedEntries(c, ['n']));
  });

  it('builds a partial index over the documents its filter matches', async () => {
    const { docs: db } = await ctx.open();
    const c = db.collection('partial');
    await fill(db, c, 120);
    const where = { n: { $lt: 10 }, tags: 0 };
    await c.createIndex('small', { fields: ['n'], where }, { stepKeys: 50 });
    expect((await c.listIndexes())[0]).toMatchObject({ state: 'ready', where });
    await c.upsert('d00001', { n: 3, tags: [0] });
    await c.mutateIn('d00002', [MutateInSpec.upsert('n', 50)]);
    const expected = await expectedEntries(c, ['n'], where);
    expect(expected.length).toBeGreaterThan(5);
    expect(await actualEntries(db, c, 'small')).toEqual(expected);
  });

  it('splits a build over several workers', async () => {
    const { docs: db } = await ctx.open();
    const c = db.collection('workers');
    await fill(db, c, 400);
    const parts = new Set<number>();
    await c.createIndex('byTag', { fields: ['tags[*]'] }, { workers: 4, stepKeys: 100, onProgress: (p) => parts.add(p.parts) });
    expect([...parts].every((n) => n > 1)).toBe(true);
    expect(await actualEntries(db, c, 'byTag')).toEqual(await expectedEntries(c, ['tags[*]']));
  });

  it('a unique build that finds duplicates reports their ids and leaves the index building', async () => {
    const { docs: db } = await ctx.open();
    const c = db.collection('dups');
    await c.insert({ email: 'a' }, { id: 'u1' });
    await c.insert({ email: 'b' }, { id: 'u2' });
    await c.insert({ email: 'a' }, { id: 'u3' });
    const failure = await c.createIndex('byEmail', { fields: ['email'], unique: true }).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(UniqueBuildError);
    expect(failure).toMatchObject({ code: 'UNIQUE_VIOLATION', duplicates: [['u1', 'u3']] });
    expect((await c.listIndexes())[0].state).toBe('building');
    await c.remove('u3');
    await expect(c.buildIndex('byEmail')).resolves.toMatchObject({ state: 'ready' });
    expect(await actualEntries(db, c, 'byEmail')).toEqual(await expectedEntries(c, ['email']));
  });
});
