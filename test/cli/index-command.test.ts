import { mkdtempSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { open } from '../../src';
import { builtCli, doclayer } from './support/built-cli';

/**
 * `doclayer index create|list|drop|build`, end to end with the built binary on the LMDB engine; the
 * entries are checked through the library, opening the same folder (LMDB is shared by processes).
 */

jest.setTimeout(120_000);

let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'doclayer-cli-index-'));
  await builtCli();
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function ok(args: string[]): Promise<string> {
  const run = await doclayer(args, { cwd: dir });
  if (run.status !== 0) throw new Error(`doclayer ${args.join(' ')} exited with ${run.status}:\n${run.stderr}`);
  return run.stdout;
}

async function entriesOf(name: string): Promise<string[]> {
  const db = await open({ path: join(dir, 'store') });
  try {
    const c = db.collection('shop.orders');
    return await db.transact(async (tr) => {
      const out: string[] = [];
      for await (const e of c.indexAccess().scan(tr, name, { equal: [] })) out.push(`${String(e.id)}:${e.values.map(String).join(',')}`);
      return out;
    });
  } finally {
    await db.close();
  }
}

describe('doclayer index', () => {
  const db = () => ['--db', join(dir, 'store'), '--collection', 'shop.orders'];

  it('creates an index over imported documents, lists it, keeps it current through import, and drops it', async () => {
    writeFileSync(join(dir, 'a.ndjson'), ['{"id":"o1","city":"Paris","total":5}', '{"id":"o2","city":"Lyon","total":9}'].join('\n'));
    writeFileSync(join(dir, 'b.ndjson'), '{"id":"o3","city":"Paris","total":1}\n');
    await ok([...db(), 'import', 'a.ndjson', '--id-field', 'id']);
    expect(await ok([...db(), 'index', 'create', 'byCity', 'city', 'total:desc', '--include', 'id'])).toBe(
      'byCity: city, total:desc [include id] ready\n',
    );
    await ok([...db(), 'import', 'b.ndjson', '--id-field', 'id']);
    expect(await entriesOf('byCity')).toEqual(['o2:Lyon,9', 'o1:Paris,5', 'o3:Paris,1']);
    expect(JSON.parse(await ok([...db(), 'index', 'list', '--json']))).toEqual([
      {
        name: 'byCity',
        fields: [
          { path: 'city', order: 'asc' },
          { path: 'total', order: 'desc' },
        ],
        unique: false,
        include: ['id'],
        state: 'ready',
      },
    ]);
    const duplicate = await doclayer([...db(), 'index', 'create', 'byCityU', 'city', '--unique'], { cwd: dir });
    expect(duplicate.status).not.toBe(0);
    expect(duplicate.stderr).toContain('UNIQUE_VIOLATION');
    expect(await ok([...db(), 'index', 'list'])).toContain('byCityU: city [unique] building');
    expect(await ok([...db(), 'index', 'drop', 'byCityU'])).toBe('dropped index byCityU of shop.orders\n');
    expect(await ok([...db(), 'index', 'list'])).toBe('byCity: city, total:desc [include id] ready\n');
  });
});
