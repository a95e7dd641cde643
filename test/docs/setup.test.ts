/**
 * What the README says a machine needs is true: the Node.js version it names is the one package.json's
 * `engines` requires, every package the library depends on (package-lock.json, without the dev ones)
 * accepts it, and the one the README says to install the development dependencies without warnings is
 * accepted by every package `npm ci` installs.
 */
import { execFileSync } from 'child_process';
import { readFileSync } from 'fs';
import * as path from 'path';

// semver comes with npm's own tooling (jest depends on it); its types are not installed.
const semver = require('semver') as { satisfies(version: string, range: string): boolean };

const root = path.resolve(__dirname, '../..');
const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(path.join(root, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { dev?: boolean; engines?: { node?: string } }>;
};

/** Every package of the lock file with its Node.js range; `dev` for those only development needs. */
function nodeRanges(): { name: string; range: string; dev: boolean }[] {
  return Object.entries(lock.packages).flatMap(([name, entry]) =>
    typeof entry.engines?.node === 'string' ? [{ name, range: entry.engines.node, dev: entry.dev === true }] : [],
  );
}

describe('README: what a machine needs', () => {
  const needed = /On a fresh machine with Node\.js (\d+) or later:/.exec(readme)?.[1];
  const quiet = /On a Node\.js older than (\d+\.\d+),\s+`npm ci` prints an `EBADENGINE` warning/.exec(readme)?.[1];

  it("names the Node.js version package.json's engines require", () => {
    expect(needed).toBeDefined();
    expect(pkg.engines.node).toBe(`>=${needed}`);
  });

  it('names a version every package the library depends on accepts', () => {
    const refused = nodeRanges().filter(({ dev, range }) => !dev && !semver.satisfies(`${needed}.0.0`, range));
    expect(refused).toEqual([]);
  });

  it('says from which version npm ci installs the development dependencies without an EBADENGINE warning', () => {
    expect(quiet).toBeDefined();
    expect(nodeRanges().filter(({ range }) => !semver.satisfies(`${quiet}.0`, range))).toEqual([]);
    // And the warning it describes is real: some development dependency refuses the version the README needs.
    expect(nodeRanges().some(({ range }) => !semver.satisfies(`${needed}.0.0`, range))).toBe(true);
  });
});

describe('the tracked files', () => {
  it('hold no merge-conflict markers (one was once committed inside bench/results.md)', () => {
    const tracked = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' }).split('\0').filter(Boolean);
    const marked = tracked.filter((file) => {
      if (!/\.(ts|js|mjs|md|json|html|yml|yaml)$/.test(file) || file === 'package-lock.json') return false;
      return /^(<{7} |>{7} |={7}$)/m.test(readFileSync(path.join(root, file), 'utf8'));
    });
    expect(marked).toEqual([]);
  });
});
