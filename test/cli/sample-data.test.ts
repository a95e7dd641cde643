import { spawnSync } from 'child_process';
import { createHash } from 'crypto';
import { mkdtempSync, readFileSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join, resolve } from 'path';
import { SAMPLE_SEED, SAMPLE_SIZE, sampleOrderId, sampleOrders } from '../../src/cli/sample-data';

const REPO = resolve(__dirname, '../..');

/** Object keys in sorted order at every level, as the document layer returns them. */
function sortedKeys(value: unknown): boolean {
  if (Array.isArray(value)) return value.every(sortedKeys);
  if (value === null || typeof value !== 'object') return true;
  const keys = Object.keys(value);
  const sorted = [...keys].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  return keys.join('\0') === sorted.join('\0') && keys.every((k) => sortedKeys((value as Record<string, unknown>)[k]));
}

describe('the sample data set', () => {
  it('is the same bytes on every run and machine', () => {
    const ndjson = [...sampleOrders()].map((o) => JSON.stringify(o)).join('\n');
    expect(createHash('sha256').update(ndjson).digest('hex')).toBe('68d2ee9d91932f2725d33b9df3d27b86b1b9d220d6011feeb1a0b6589eb97b39');
  });

  it('has a few thousand orders in id order, with keys sorted as the document layer keeps them', () => {
    const orders = [...sampleOrders()];
    expect(orders).toHaveLength(SAMPLE_SIZE);
    expect(orders.map((o) => o.id)).toEqual(Array.from({ length: SAMPLE_SIZE }, (_, i) => sampleOrderId(i + 1)));
    expect(orders.every(sortedKeys)).toBe(true);
    expect(orders[41]).toMatchObject({
      id: 'order-00042',
      customer: { address: { city: expect.any(String) as unknown } },
      items: expect.any(Array) as unknown,
    });
  });
});

describe('npm run sample', () => {
  const expected = (count: number, seed = SAMPLE_SEED) => `${[...sampleOrders(count, seed)].map((o) => JSON.stringify(o)).join('\n')}\n`;
  const npm = (args: string[]) => spawnSync('npm', args, { cwd: REPO, encoding: 'utf8', timeout: 60_000 });

  it('writes the orders to the file --out names, and nothing else there (npm prints its banner to stdout)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'doclayer-sample-'));
    try {
      const run = npm(['run', 'sample', '--', '--out', join(dir, 'orders.ndjson'), '7', '3']);
      expect(run.status).toBe(0);
      expect(readFileSync(join(dir, 'orders.ndjson'), 'utf8')).toBe(expected(7, 3));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('prints the orders alone with -s, as the README redirects them to orders.ndjson', () => {
    const run = npm(['run', '-s', 'sample', '--', '5']);
    expect(run.status).toBe(0);
    expect(run.stdout).toBe(expected(5));
  }, 60_000);
});
