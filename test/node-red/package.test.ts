/**
 * What makes `doclayer/node-red` installable: the package exports it, ships the node's folder, and
 * registers the doclayer atomic node through its `node-red` field, whose files exist. The end-to-end
 * test (runtime.test.ts) loads the node through this same field.
 */
import { existsSync, readFileSync } from 'fs';
import { join, resolve } from 'path';
import { NODE_RED_FIELD } from './support/node-red-processes';

const REPO = resolve(__dirname, '../..');
const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as {
  exports: Record<string, unknown>;
  files: string[];
  'node-red'?: unknown;
};

describe('package.json', () => {
  it('exports doclayer/node-red', () => {
    expect(pkg.exports['./node-red']).toEqual({ types: './dist/node-red/index.d.ts', default: './dist/node-red/index.js' });
  });

  it('registers the doclayer atomic node through its node-red field, and ships its folder', () => {
    expect(pkg['node-red']).toEqual(NODE_RED_FIELD);
    expect(pkg.files).toContain('node-red');
    for (const file of Object.values(NODE_RED_FIELD.nodes)) {
      expect(existsSync(join(REPO, file))).toBe(true);
      expect(existsSync(join(REPO, file.replace(/\.js$/, '.html')))).toBe(true);
    }
  });
});

describe('the doclayer atomic node editor file', () => {
  const html = readFileSync(join(REPO, 'node-red', 'doclayer-atomic.html'), 'utf8');

  it('registers the type and has its template and help', () => {
    expect(html).toContain("RED.nodes.registerType('doclayer-atomic'");
    expect(html).toContain('data-template-name="doclayer-atomic"');
    expect(html).toContain('data-help-name="doclayer-atomic"');
  });

  it('has an input for every property the runtime node reads', () => {
    for (const property of ['store', 'scope', 'key', 'keyType', 'operation', 'amount', 'amountType', 'name']) {
      expect(html).toContain(`id="node-input-${property}"`);
    }
  });
});
