import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { open, type DocLayer } from '../../src';
import { docIdElement } from '../../src/document/keys/ids';
import { DocumentKeys, META_SIZE } from '../../src/document/keys/layout';
import { inspectHeader } from '../../src/kv/lmdb/data-file';
import { builtCli, doclayer, type CliRun } from './support/built-cli';

/**
 * `doclayer check` and `doclayer backup`, end to end on the built binary: sound stores, stores damaged
 * on purpose (a document's keys through raw KV writes; the data file's bytes), and a backup taken while
 * another connection keeps writing.
 */

jest.setTimeout(120_000);

let dir: string;
let copies = 0;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'doclayer-cli-check-'));
  await builtCli();
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

const run = (args: string[]): Promise<CliRun> => doclayer(args, { cwd: dir });

/** A new store in `dir` holding documents and structures; its folder. */
async function store(documents = 20): Promise<string> {
  const path = join(dir, `store-${copies++}`);
  const db = await open({ path });
  try {
    const c = db.collection();
    for (let i = 0; i < documents; i++) await c.upsert(`doc${i}`, { i, tags: ['a', 'b'], text: 'x'.repeat(i * 100) });
    for (const member of ['a', 'b', 'c']) await c.set('members').add(member);
    await c.list('l').push(1);
    await c.queue('jobs').push({ job: 1 });
  } finally {
    await db.close();
  }
  return path;
}

/** Runs `fn` on the store at `path` through the library, then closes it. */
async function withStore<T>(path: string, fn: (db: DocLayer) => Promise<T>): Promise<T> {
  const db = await open({ path });
  try {
    return await fn(db);
  } finally {
    await db.close();
  }
}

describe('doclayer check', () => {
  it('reports a sound store: the store check, then the documents, exit status 0', async () => {
    const path = await store();
    const result = await run(['--db', path, 'check']);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^store: [\d,]+ keys, [\d,]+ pages, [\d,]+ bytes: no damage found\ndocuments: 23 checked: no damage found\n$/);
  });

  it('prints each damaged document on a line and exits with 1', async () => {
    const path = await store();
    await withStore(path, async (db) => {
      const keys = new DocumentKeys(db.layout.collectionPrefix(0), docIdElement('members'));
      const doc3 = new DocumentKeys(db.layout.collectionPrefix(0), docIdElement('doc3'));
      await db.kv.transact((tr) => {
        tr.add(keys.meta(META_SIZE), Buffer.from([5, 0, 0, 0, 0, 0, 0, 0]));
        tr.set(doc3.dataKey(['i']), Buffer.from([0xee]));
      });
    });
    const result = await run(['--db', path, 'check']);
    expect(result.status).toBe(1);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^store: .*: no damage found$/);
    expect(lines.slice(1)).toEqual([
      '_default._default "doc3": the document does not decode: TupleError unknown type code 0xee at byte 0',
      '_default._default "members": its stored size is 8 but it holds 3 members',
      'documents: 23 checked: 2 problems',
    ]);
  });

  it('reports a damaged data file without reading the documents, exit status 1', async () => {
    const path = await store(400);
    const file = join(path, 'data.mdb');
    const fd = openSync(file, 'r+');
    try {
      // Over the main tree's root page and what follows: pages in use, wherever LMDB placed them (the
      // middle of the file may hold only free pages, depending on how the store's commits reused them).
      const { meta } = inspectHeader(file);
      if (meta === undefined) throw new Error('the new store has no readable meta page');
      const garbage = Buffer.alloc(16_384, 0xa5);
      writeSync(fd, garbage, 0, garbage.length, Number(meta.main.root) * meta.pageSize);
    } finally {
      closeSync(fd);
    }
    const result = await run(['--db', path, 'check']);
    expect(result.status).toBe(1);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines.length).toBeGreaterThan(2);
    expect(lines.slice(0, -2).every((line) => line.startsWith('store: '))).toBe(true);
    expect(lines[lines.length - 2]).toMatch(/^store: keys not read, [\d,]+ pages, [\d,]+ bytes: [\d,]+ problems?$/);
    expect(lines[lines.length - 1]).toBe('documents: not checked, as the store is damaged');
  });

  it('prints one JSON value with --json', async () => {
    const path = await store(2);
    const result = await run(['--db', path, 'check', '--json']);
    expect(result.status).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      ok: true,
      store: { ok: true, problems: [], keys: expect.any(Number) as number, pages: expect.any(Number) as number, bytes: expect.any(Number) as number },
      documents: { ok: true, documents: 5, problems: [] },
    });
  });

  it('exits with 2 when there is no store', async () => {
    const result = await run(['--db', join(dir, 'nothing-here'), 'check']);
    expect(result.status).toBe(2);
    expect(result.stderr).toBe(`doclayer: no database in ${join(dir, 'nothing-here')}\n`);
  });

  it('checks the documents alone on the in-memory engine', async () => {
    const result = await run(['--memory', 'check']);
    expect(result.status).toBe(0);
    expect(result.stdout).toBe('documents: 0 checked: no damage found\n');
  });
});

describe('doclayer backup', () => {
  it('writes a copy that is a store, and refuses a destination that holds one (exit status 2)', async () => {
    const path = await store();
    const dest = join(dir, `backup-${copies++}`);
    const result = await run(['--db', path, 'backup', dest]);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`^backed up ${path} to ${dest} \\([\\d,]+ bytes\\)\\n$`));
    expect((await run(['--db', dest, 'check'])).status).toBe(0);
    expect(JSON.parse((await run(['--db', dest, 'get', 'doc7'])).stdout)).toEqual({ i: 7, tags: ['a', 'b'], text: 'x'.repeat(700) });

    const again = await run(['--db', path, 'backup', dest]);
    expect(again.status).toBe(2);
    expect(again.stderr).toBe(`doclayer: ${dest} already holds a store; back up into a new or empty folder\n`);
  });

  it('says plainly that it is for the LMDB engine', async () => {
    const result = await run(['--memory', 'backup', join(dir, 'never')]);
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/^doclayer: backup is for the durable embedded engine \(LMDB, --db <folder>\), not the in-memory engine/);
    expect((await run(['--db', join(dir, 'missing'), 'backup', join(dir, 'never')])).status).toBe(2);
  });

  it('copies a consistent store while another connection keeps writing', async () => {
    const path = await store(1);
    const dest = join(dir, `backup-${copies++}`);
    const writer = await open({ path });
    let written = 0;
    let stop = false;
    // Each transaction writes one document and counts it: a consistent copy has as many as it counts.
    const writing = (async () => {
      const c = writer.collection('app.log');
      while (!stop) {
        await writer.transact(async (tr) => {
          await c.upsert(`entry${written}`, { n: written, pad: 'p'.repeat(2000) }, { tr });
          await c.counter('entries').add(1, { tr });
        });
        written++;
      }
    })();
    try {
      while (written < 50) await new Promise((resolve) => setTimeout(resolve, 10));
      const before = written;
      const result = await run(['--db', path, 'backup', dest]);
      expect(result.status).toBe(0);
      expect(written).toBeGreaterThan(before);
    } finally {
      stop = true;
      await writing;
      await writer.close();
    }
    expect((await run(['--db', dest, 'check'])).stdout).toMatch(/documents: \d+ checked: no damage found\n$/);
    await withStore(dest, async (copy) => {
      const log = copy.collection('app.log');
      const counted = await log.counter('entries').get();
      let documents = 0;
      for await (const item of log.scan()) if (item.id !== 'entries') documents++;
      expect(counted).toBeGreaterThanOrEqual(50);
      expect(documents).toBe(counted);
    });
  });
});
