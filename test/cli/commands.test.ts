import { mkdtempSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { builtCli, doclayer, type CliRun } from './support/built-cli';

/**
 * Every `doclayer` command, end to end: the built binary spawned as a user runs it, on the durable
 * embedded engine in a temporary folder (each describe its own store, its commands in order).
 */

jest.setTimeout(120_000);

let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'doclayer-cli-commands-'));
  await builtCli();
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs a command in `dir` that must succeed; returns its stdout. */
async function ok(args: string[], input?: string): Promise<string> {
  const run = await doclayer(args, { cwd: dir, input });
  if (run.status !== 0) throw new Error(`doclayer ${args.join(' ')} exited with ${run.status}:\n${run.stderr}`);
  return run.stdout;
}

function json(stdout: string): unknown {
  return JSON.parse(stdout);
}

describe('doclayer help', () => {
  it('prints the usage without a command, with help and with --help', async () => {
    const usage = await ok([]);
    expect(usage).toContain('Usage: doclayer [options] <command> [arguments]');
    for (const command of ['demo', 'import', 'export', 'get', 'set', 'remove', 'scan', 'count', 'list', 'queue', 'counter', 'manifest', 'stats']) {
      expect(usage).toMatch(new RegExp(`^  ${command} `, 'm'));
    }
    expect(await ok(['help', 'import'])).toContain('Usage: doclayer import <file.json|file.ndjson|->');
    expect(await ok(['get', '--help'])).toContain('Usage: doclayer get <id> [path]');
    expect(await ok(['--version'])).toMatch(/^doclayer \d+\.\d+\.\d+\n$/);
  });
});

describe('doclayer set, get, remove', () => {
  const db = () => ['--db', join(dir, 'docs'), '--collection', 'app.users'];

  it('sets a whole document and paths in it, creating the database, and reads them back', async () => {
    expect(await ok([...db(), 'set', 'ada', '', '{"name":"Ada","address":{"city":"London"}}'])).toMatch(/^set ada \(cas [0-9a-f]{20}\)\n$/);
    expect(await ok([...db(), 'set', 'ada', 'address.zip', '"N1"'])).toMatch(/^set address\.zip of ada \(cas [0-9a-f]{20}\)\n$/);
    await ok([...db(), 'set', 'ada', 'tags', '["maths", "engines"]']);
    expect(await ok([...db(), 'set', 'ada', 'tags[0]', '"math"'])).toContain('set tags[0] of ada');
    expect(await ok([...db(), 'get', 'ada'])).toBe(
      `${JSON.stringify({ address: { city: 'London', zip: 'N1' }, name: 'Ada', tags: ['math', 'engines'] }, null, 2)}\n`,
    );
    expect(await ok([...db(), 'get', 'ada', 'address.city'])).toBe('"London"\n');
    const got = json(await ok([...db(), 'get', 'ada', 'address', '--json'])) as { id: string; path: string; cas: string; content: unknown };
    expect(got).toEqual({
      id: 'ada',
      path: 'address',
      cas: expect.stringMatching(/^[0-9a-f]{20}$/) as unknown,
      content: { city: 'London', zip: 'N1' },
    });
  });

  it('guards a write with --cas', async () => {
    const { cas } = json(await ok([...db(), 'get', 'ada', '--json'])) as { cas: string };
    await ok([...db(), 'set', 'ada', 'name', '"Ada Lovelace"', '--cas', cas]);
    const stale = await doclayer([...db(), 'set', 'ada', 'name', '"Ada King"', '--cas', cas], { cwd: dir });
    expect(stale.status).toBe(1);
    expect(stale.stderr).toMatch(/^doclayer: CAS_MISMATCH: .*\n$/);
    expect(await ok([...db(), 'get', 'ada', 'name'])).toBe('"Ada Lovelace"\n');
  });

  it('tells integer ids from string ids', async () => {
    await ok([...db(), 'set', '42', '', '{"kind":"integer"}']);
    await ok([...db(), 'set', '"42"', '', '{"kind":"string"}']);
    expect(await ok([...db(), 'get', '42', 'kind'])).toBe('"integer"\n');
    expect(await ok([...db(), 'get', '"42"', 'kind'])).toBe('"string"\n');
  });

  it('keeps -0 as -0, in a value given and in what it prints', async () => {
    await ok([...db(), 'set', 'zero', '', '{"a":-0,"b":[0,-0.0]}']);
    await ok([...db(), 'set', 'zero', 'c', '-0']);
    expect(await ok([...db(), 'get', 'zero', 'c'])).toBe('-0\n');
    expect(await ok([...db(), 'get', 'zero'])).toBe('{\n  "a": -0,\n  "b": [\n    0,\n    -0\n  ],\n  "c": -0\n}\n');
    expect(await ok([...db(), 'scan', '--json'])).toContain('"content":{"a":-0,"b":[0,-0],"c":-0}');
    await ok([...db(), 'remove', 'zero']);
  });

  it('removes a path, then the document', async () => {
    expect(await ok([...db(), 'remove', 'ada', 'address.zip'])).toMatch(/^removed address\.zip of ada \(cas /);
    expect(await ok([...db(), 'get', 'ada', 'address'])).toBe(`${JSON.stringify({ city: 'London' }, null, 2)}\n`);
    expect(await ok([...db(), 'remove', 'ada'])).toBe('removed ada\n');
    const gone = await doclayer([...db(), 'get', 'ada'], { cwd: dir });
    expect(gone.status).toBe(1);
    expect(gone.stderr).toBe('doclayer: DOCUMENT_NOT_FOUND: no document with id "ada"\n');
  });
});

describe('doclayer import, scan, count, export', () => {
  const db = () => ['--db', join(dir, 'imports')];

  it('imports a JSON array with generated ids, in import order', async () => {
    writeFileSync(join(dir, 'people.json'), '[\n  {"name": "Ada"},\n  {"name": "Grace"},\n  {"name": "Edsger"}\n]\n');
    expect(await ok([...db(), 'import', 'people.json'])).toMatch(/^imported 3 documents into _default\._default in [\d.]+ s \(1 transaction\)\n$/);
    expect(await ok([...db(), 'export', '--documents'])).toBe('{"name":"Ada"}\n{"name":"Grace"}\n{"name":"Edsger"}\n');
    expect(await ok([...db(), 'count'])).toBe('3 documents in _default._default\n');
  });

  it('imports from stdin, and scans and exports with ids', async () => {
    const input = '{"id": 2, "v": [1, 2]}\n\n{"id": 1, "v": {"big": 123456789012345678901234567890}}\n';
    const summary = json(await ok([...db(), '--collection', 'app.things', 'import', '-', '--id-field', 'id', '--json'], input));
    expect(summary).toEqual({ collection: 'app.things', imported: 2, transactions: 1, skipped: [], stoppedAt: null, resumeFromLine: null });
    const scan = await ok([...db(), '--collection', 'app.things', 'scan']);
    expect(scan).toBe('1  {"id":1,"v":{"big":123456789012345678901234567890}}\n2  {"id":2,"v":[1,2]}\n');
    expect(await ok([...db(), '--collection', 'app.things', 'scan', '--limit', '1', '--json'])).toMatch(
      /^\{"id":1,"cas":"[0-9a-f]{20}","content":\{.*\}\}\n$/,
    );
    expect(await ok([...db(), '--collection', 'app.things', 'export', '--id-field', 'key'])).toBe(
      '{"id":1,"v":{"big":123456789012345678901234567890},"key":1}\n{"id":2,"v":[1,2],"key":2}\n',
    );
    expect(json(await ok([...db(), '--collection', 'app.things', 'count', '--json']))).toEqual({ collection: 'app.things', documents: 2 });
  });
});

describe('doclayer list, set, queue, counter, sortedset', () => {
  const db = () => ['--db', join(dir, 'structures'), '--collection', 'app.work'];

  it('works a list', async () => {
    await ok([...db(), 'list', 'l', 'push', '"b"']);
    await ok([...db(), 'list', 'l', 'push', '{"c":3}']);
    await ok([...db(), 'list', 'l', 'unshift', '"a"']);
    await ok([...db(), 'list', 'l', 'insert', '1', '1.5']);
    expect(await ok([...db(), 'list', 'l', 'items'])).toBe('["a",1.5,"b",{"c":3}]\n');
    expect(await ok([...db(), 'list', 'l', 'get', '-1'])).toBe('{"c":3}\n');
    expect(await ok([...db(), 'list', 'l', 'pop'])).toBe('{"c":3}\n');
    expect(await ok([...db(), 'list', 'l', 'size'])).toBe('3\n');
  });

  it('works a set through the set command', async () => {
    expect(await ok([...db(), 'set', 's', 'add', '"x"'])).toBe('true\n');
    expect(await ok([...db(), 'set', 's', 'add', '"x"'])).toBe('false\n');
    expect(await ok([...db(), 'set', 's', 'add', '7'])).toBe('true\n');
    expect(await ok([...db(), 'set', 's', 'contains', '"x"'])).toBe('true\n');
    expect(await ok([...db(), 'set', 's', 'members'])).toBe('["x",7]\n');
    expect(await ok([...db(), 'set', 's', 'remove', '"x"'])).toBe('true\n');
    expect(json(await ok([...db(), 'set', 's', 'size', '--json']))).toEqual({ id: 's', op: 'size', result: 1 });
    // A field named like a set operation, in backticks, is a document path.
    await ok([...db(), 'set', 'doc', '`size`', '3']);
    expect(await ok([...db(), 'get', 'doc'])).toBe('{\n  "size": 3\n}\n');
  });

  it('works a queue', async () => {
    await ok([...db(), 'queue', 'q', 'push', '"first"']);
    await ok([...db(), 'queue', 'q', 'push', '{"n":2}']);
    expect(await ok([...db(), 'queue', 'q', 'peek'])).toBe('"first"\n');
    expect(await ok([...db(), 'queue', 'q', 'items'])).toBe('["first",{"n":2}]\n');
    expect(await ok([...db(), 'queue', 'q', 'pop'])).toBe('"first"\n');
    expect(await ok([...db(), 'queue', 'q', 'size'])).toBe('1\n');
    expect(await ok([...db(), 'queue', 'q', 'clear'])).toBe('queue q: clear done\n');
    expect(await ok([...db(), 'queue', 'q', 'pop'])).toBe('null\n');
  });

  it('works a counter', async () => {
    expect(await ok([...db(), 'counter', 'c', 'incr'])).toBe('1\n');
    expect(await ok([...db(), 'counter', 'c', 'incr', '10'])).toBe('11\n');
    expect(await ok([...db(), 'counter', 'c', 'decr', '2'])).toBe('9\n');
    await ok([...db(), 'counter', 'c', 'set', '100']);
    expect(await ok([...db(), 'counter', 'c', 'get'])).toBe('100\n');
  });

  it('works a sorted set, with Redis-style score bounds', async () => {
    expect(await ok([...db(), 'sortedset', 'z', 'add', 'ann', '30'])).toBe('true\n');
    await ok([...db(), 'sortedset', 'z', 'add', 'bob', '20']);
    await ok([...db(), 'sortedset', 'z', 'add', 'cy', '25.5']);
    expect(await ok([...db(), 'sortedset', 'z', 'incr', 'bob', '15'])).toBe('35\n');
    expect(await ok([...db(), 'sortedset', 'z', 'rank', 'ann'])).toBe('1\n');
    expect(await ok([...db(), 'sortedset', 'z', 'revrank', 'ann'])).toBe('1\n');
    expect(await ok([...db(), 'sortedset', 'z', 'score', 'dan'])).toBe('null\n');
    expect(await ok([...db(), 'sortedset', 'z', 'range', '0', '-1'])).toBe('[["cy",25.5],["ann",30],["bob",35]]\n');
    expect(await ok([...db(), 'sortedset', 'z', 'rangebyscore', '(25.5', '+inf'])).toBe('[["ann",30],["bob",35]]\n');
    expect(await ok([...db(), 'sortedset', 'z', 'count', '--', '-inf', '(35'])).toBe('2\n');
    expect(await ok([...db(), 'sortedset', 'z', 'popmax'])).toBe('[["bob",35]]\n');
    expect(await ok([...db(), 'get', 'z'])).toBe('[\n  [\n    "cy",\n    25.5\n  ],\n  [\n    "ann",\n    30\n  ]\n]\n');
    expect((await doclayer([...db(), 'sortedset', 'z', 'add', 'x', 'NaN'], { cwd: dir })).status).not.toBe(0);
  });
});

describe('doclayer manifest and stats', () => {
  const db = () => ['--db', join(dir, 'manifest')];

  it('replaces the manifest from a file and prints it', async () => {
    expect(json(await ok([...db(), 'manifest', 'get', '--json']))).toEqual({
      uid: '0',
      scopes: [{ name: '_default', uid: '0', collections: [{ name: '_default', uid: '0' }] }],
    });
    const manifest = {
      uid: '2',
      scopes: [
        { name: '_default', uid: '0', collections: [{ name: '_default', uid: '0' }] },
        {
          name: 'shop',
          uid: '8',
          collections: [
            { name: 'orders', uid: '8', maxTTL: 3600 },
            { name: 'carts', uid: '9' },
          ],
        },
      ],
    };
    writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2));
    expect(await ok([...db(), 'manifest', 'set', 'manifest.json'])).toBe('manifest 2 stored: 2 scopes, 3 collections\n');
    expect(JSON.parse(await ok([...db(), 'manifest', 'get']))).toEqual(manifest);
  });

  it('counts documents, keys and bytes per collection', async () => {
    await ok([...db(), '--collection', 'shop.orders', 'set', 'o1', '', '{"items":[1,2,3]}']);
    await ok([...db(), '--collection', 'shop.orders', 'set', 'o2', '', '{"items":[]}']);
    const stats = json(await ok([...db(), 'stats', '--json'])) as {
      collections: { collection: string; documents: number; keys: number; bytes: number }[];
    };
    const byName = new Map(stats.collections.map((c) => [c.collection, c]));
    expect([...byName.keys()]).toEqual(['_default._default', 'shop.orders', 'shop.carts']);
    expect(byName.get('shop.orders')).toEqual({
      collection: 'shop.orders',
      documents: 2,
      keys: expect.any(Number) as unknown,
      bytes: expect.any(Number) as unknown,
    });
    expect(byName.get('shop.orders')!.keys).toBeGreaterThanOrEqual(7);
    expect(byName.get('shop.carts')).toEqual({ collection: 'shop.carts', documents: 0, keys: 0, bytes: 0 });
    const table = await ok([...db(), 'stats']);
    expect(table.split('\n')[0]).toMatch(/^collection\s+documents\s+keys\s+bytes$/);
    expect(table).toMatch(/^shop\.orders\s+2\s+\d+\s+[\d,]+$/m);
  });
});

describe('doclayer demo', () => {
  let first: CliRun;

  it('loads the sample data on the first run and shows each step with its cost', async () => {
    first = await doclayer(['demo'], { cwd: dir });
    expect(first.stderr).not.toMatch(/doclayer:/);
    expect(first.status).toBe(0);
    const out = first.stdout;
    expect(out).toContain('doclayer demo: the durable embedded engine (LMDB) in ./doclayer-data');
    expect(out).toMatch(/Loaded 3,000 orders in \d+ transactions \[[\d,]+ keys read, [\d,]+ written, /);
    expect(out).toMatch(/get customer\.address\.city\s+"\w+"\s+\[\d+ keys read, 0 written/);
    expect(out).toMatch(/committed, new cas [0-9a-f]{20}, revisions now 1 /);
    expect(out).toContain('the same mutation again with the old cas: CAS_MISMATCH, nothing written');
    expect(out).toMatch(/200 popped, 200 distinct: each exactly once/);
    expect(out).toContain('What each step cost:');
    // The load's line and its row of the table count the same transactions.
    const loaded = /Loaded 3,000 orders in ([\d,]+) transactions/.exec(out)?.[1];
    const row = /^ {2}load the sample\s+[\d,]+\s+[\d,]+\s+([\d,]+)\s/m.exec(out)?.[1];
    expect(row).toBeDefined();
    expect(loaded).toBe(row);
  });

  it('reuses the data on the second run, and says so', async () => {
    const second = await doclayer(['demo'], { cwd: dir });
    expect(second.status).toBe(0);
    expect(second.stdout).toContain('Reusing the orders an earlier run loaded (3,000 orders, loaded ');
    expect(second.stdout).toMatch(/revisions now 2 /);
    expect(second.stdout).toMatch(/200 popped, 200 distinct/);
  });

  it('exports what the demo wrote, and an empty database imports it exactly', async () => {
    for (const collection of ['demo.work', 'demo.orders']) {
      const exported = await ok(['--collection', collection, 'export']);
      expect(exported.split('\n', 1)[0]).toBe('{"doclayer":"export","version":2}');
      writeFileSync(join(dir, 'demo-export.ndjson'), exported);
      const fresh = ['--db', join(dir, `demo-copy-${collection}`), '--collection', collection];
      expect(await ok([...fresh, 'import', 'demo-export.ndjson'])).toMatch(
        new RegExp(`^imported ${(exported.split('\n').length - 2).toLocaleString('en-US')} documents? into ${collection.replace('.', '\\.')} `),
      );
      expect(await ok([...fresh, 'export'])).toBe(exported);
    }
    const copy = ['--db', join(dir, 'demo-copy-demo.work'), '--collection', 'demo.work'];
    expect(await ok([...copy, 'set', 'countries-shipped-to', 'members'])).toBe(
      await ok(['--collection', 'demo.work', 'set', 'countries-shipped-to', 'members']),
    );
  });
});

describe('doclayer changes', () => {
  const db = () => ['--db', join(dir, 'feed'), '--collection', 'app.items'];

  it('switches the feed on, prints the changes as NDJSON and resumes after a token', async () => {
    await ok([...db(), 'set', 'a', '', '{"v":1}']);
    const off = await doclayer([...db(), 'changes'], { cwd: dir });
    expect(off.status).toBe(1);
    expect(off.stderr).toContain('CHANGES_DISABLED');
    expect(await ok([...db(), 'changes', '--enable'])).toBe('the change feed of app.items is on\n');
    await ok([...db(), 'set', 'a', '', '{"v":2}']);
    await ok([...db(), 'set', 'b', '', '{"v":1}']);
    const lines = (await ok([...db(), 'changes'])).trim().split('\n').map(json) as { kind: string; id: string; token: string }[];
    expect(lines.map(({ kind, id }) => `${kind} ${id}`)).toEqual(['upsert a', 'upsert b']);
    expect(json(await ok([...db(), 'changes', '--since', lines[0].token, '--docs']))).toMatchObject({ kind: 'upsert', id: 'b', doc: { v: 1 } });
    const bad = await doclayer([...db(), 'changes', '--since', 'garbage'], { cwd: dir });
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain('INVALID_TOKEN');
  });
});
