import { mkdtempSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { builtCli, doclayer } from './support/built-cli';

/**
 * `doclayer import` and `export`, end to end on the durable embedded engine: what goes in comes out.
 * Documents are written with their keys in sorted order and sorted by id, as the document layer keeps
 * and scans them, so the export must equal the input byte for byte.
 */

jest.setTimeout(180_000);

let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'doclayer-cli-import-'));
  await builtCli();
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

const CITIES = ['Berlin', 'Kraków', 'Lyon', 'Zürich', '京都'];

/**
 * The `n`th generated document: nested, keys in sorted order, 7 entries (the suite's time is mostly
 * the engine's, per key: documents of a few leaves keep 100,000 of them within its budget).
 */
function generated(n: number): string {
  return JSON.stringify({ address: { city: CITIES[n % CITIES.length] }, id: `doc-${String(n).padStart(6, '0')}`, n, tags: [`t${n % 10}`] });
}

describe('doclayer import and export', () => {
  it('imports 100,000 generated documents and exports exactly the input', async () => {
    const input = `${Array.from({ length: 100_000 }, (_, i) => generated(i + 1)).join('\n')}\n`;
    writeFileSync(join(dir, 'docs.ndjson'), input);
    const db = join(dir, 'store');

    const started = Date.now();
    const imported = await doclayer(['--db', db, '--collection', 'app.docs', 'import', 'docs.ndjson', '--id-field', 'id'], { cwd: dir });
    const importMs = Date.now() - started;
    expect(imported.stderr).not.toMatch(/doclayer:/);
    expect(imported.status).toBe(0);
    expect(imported.stdout).toMatch(/^imported 100,000 documents into app\.docs in [\d.]+ s \([\d,]+ transactions\)\n$/);

    const exportStarted = Date.now();
    const exported = await doclayer(['--db', db, '--collection', 'app.docs', 'export', '--id-field', 'id'], { cwd: dir });
    const exportMs = Date.now() - exportStarted;
    expect(exported.status).toBe(0);
    expect(exported.stdout.length).toBe(input.length);
    expect(exported.stdout === input).toBe(true);
    console.log(`100,000 documents: import ${importMs} ms, export ${exportMs} ms`);
  });
});
