/**
 * Every ```ts block of README.md is an example a user will paste: each one is transpiled and run here
 * against the sources (`'doclayer'` resolves to `src/index.ts`), so an example that stops working fails CI.
 * A block is skipped only when its first line is `// not run: <reason>`. Where a block shows output as
 * `// prints: text` comments, what it logs must be exactly those lines, in order.
 */
import { readFileSync } from 'fs';
import * as path from 'path';
import * as ts from 'typescript';
import { format } from 'util';

const root = path.resolve(__dirname, '../..');
const readme = readFileSync(path.join(root, 'README.md'), 'utf8');

interface Example {
  line: number;
  code: string;
}

function examples(): Example[] {
  const found: Example[] = [];
  const re = /^```ts\n([\s\S]*?)^```/gm;
  for (let m = re.exec(readme); m; m = re.exec(readme)) {
    const code = m[1];
    if (code.startsWith('// not run:')) continue;
    found.push({ line: readme.slice(0, m.index).split('\n').length, code });
  }
  return found;
}

async function run(code: string): Promise<string[]> {
  // Imports must stay at the top level to transpile; the emitted CommonJS is then wrapped in an async
  // function so examples can use top-level await as they would in an ES module.
  const js = ts.transpileModule(code, {
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 },
  }).outputText;
  const printed: string[] = [];
  const console = { log: (...args: unknown[]) => printed.push(format(...args)) };
  const requireFromReadme = (id: string): unknown => {
    if (id === 'doclayer') return require(path.join(root, 'src/index.ts'));
    if (id.startsWith('doclayer/')) return require(path.join(root, 'src', id.slice('doclayer/'.length)));
    return require(id);
  };
  const body = js.replace(/^"use strict";/, '').replace(/^Object\.defineProperty\(exports.*$/m, '');
  const AsyncFunction = (Object.getPrototypeOf(async () => undefined) as object).constructor as new (
    ...args: string[]
  ) => (...args: unknown[]) => Promise<void>;
  await new AsyncFunction('require', 'console', body)(requireFromReadme, console);
  return printed;
}

describe('README examples', () => {
  const all = examples();

  it('has examples to run', () => {
    expect(all.length).toBeGreaterThan(0);
  });

  for (const example of all) {
    it(`runs the example at README.md line ${example.line}`, async () => {
      const printed = await run(example.code);
      const expected = [...example.code.matchAll(/\/\/ prints: (.*)$/gm)].map((m) => m[1]);
      if (expected.length > 0) expect(printed).toEqual(expected);
    });
  }
});
