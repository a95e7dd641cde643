import { mkdtempSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { open } from '../../src';
import { openLmdbDatabase } from '../../src/kv/lmdb';
import { builtCli, doclayer } from './support/built-cli';

/**
 * `doclayer find` and `doclayer count '<filter>'`, end to end: the built binary on an LMDB folder,
 * with an index created through the library on the same folder.
 */

jest.setTimeout(120_000);

let dir: string;
const db = () => ['--db', join(dir, 'orders'), '--collection', 'shop.orders'];

async function run(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return doclayer([...db(), ...args], { cwd: dir });
}

async function ok(args: string[]): Promise<string> {
  const r = await run(args);
  if (r.status !== 0) throw new Error(`doclayer ${args.join(' ')} exited with ${r.status}:\n${r.stderr}`);
  return r.stdout;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'doclayer-cli-find-'));
  await builtCli();
  const orders = Array.from({ length: 30 }, (_, i) => ({
    id: `o${String(i).padStart(2, '0')}`,
    city: i % 3 === 0 ? 'Paris' : 'Lyon',
    total: i * 10,
  }));
  writeFileSync(join(dir, 'orders.json'), JSON.stringify(orders));
  await ok(['import', 'orders.json', '--id-field', 'id']);
  const kv = openLmdbDatabase({ path: join(dir, 'orders') });
  const docs = await open({ database: kv });
  await docs.collection('shop.orders').createIndex('by_city_total', { fields: ['city', { path: 'total', order: 'desc' }] });
  await docs.close();
  await kv.close();
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('doclayer find', () => {
  it('prints the matching documents through an index, in sort order', async () => {
    const out = await ok(['find', '{"city":"Paris","total":{"$gte":200}}', '--sort', 'total:desc']);
    expect(
      out
        .trim()
        .split('\n')
        .map((l) => l.split('  ')[0]),
    ).toEqual(['o27', 'o24', 'o21']);
  });

  it('pages with --limit and --after', async () => {
    const first = await ok(['find', '{"city":"Paris"}', '--limit', '4', '--json']);
    const lines = first
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id?: string; after?: string });
    expect(lines.slice(0, 4).map((l) => l.id)).toHaveLength(4);
    const after = lines[4].after as string;
    const rest = await ok(['find', '{"city":"Paris"}', '--after', after]);
    const ids = [
      ...lines.slice(0, 4).map((l) => l.id),
      ...rest
        .trim()
        .split('\n')
        .map((l) => l.split('  ')[0]),
    ];
    expect(new Set(ids).size).toBe(10);
  });

  it('explains the plan: the index, its intervals and the keys read', async () => {
    const explained = JSON.parse(await ok(['find', '{"city":"Lyon","total":{"$lt":50}}', '--explain'])) as Record<string, unknown>;
    expect(explained).toMatchObject({ plan: 'index', index: 'by_city_total', returned: 3, keysRead: 3 });
  });

  it('refuses a query no index serves, naming one that would, and scans with --scan', async () => {
    const refused = await run(['find', '{"total":{"$gt":250}}']);
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toContain('NO_INDEX');
    expect(refused.stderr).toContain('["total"]');
    expect((await ok(['find', '{"total":{"$gt":250}}', '--scan'])).trim().split('\n')).toHaveLength(4);
  });

  it('reports a bad filter as a typed error', async () => {
    const bad = await run(['find', '{"city":{"$regex":"P"}}']);
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toContain('UNSUPPORTED_OPERATOR');
  });
});

describe('doclayer count', () => {
  it('counts the documents a filter matches, and all of them without one', async () => {
    expect(await ok(['count', '{"city":"Paris"}'])).toMatch(/^10 matching documents in shop\.orders\n$/);
    expect(await ok(['count', '{"total":{"$gte":100}}', '--scan'])).toMatch(/^20 matching documents/);
    expect(await ok(['count'])).toMatch(/^30 documents/);
  });
});
