/**
 * Every ```ts block of README.md is an example a user will paste: each one is run here twice, so an
 * example that stops working fails CI:
 * - transpiled to CommonJS and run in this process against the sources (`'doclayer'` resolves to
 *   `src/index.ts`), with its body in an async function for its top-level await;
 * - as the README says to run it: an ES module (transpiled as `tsx` does, types stripped), run by node
 *   in a process of its own against the built package (`import ... from 'doclayer'` resolves to its
 *   `dist/`), which must exit by itself: an example that leaves a handle open hangs a user's script.
 * A block is skipped only when its first line is `// not run: <reason>`. Where a block shows output as
 * `// prints: text` comments, what it logs must be exactly those lines, in order.
 */
import { spawn } from 'child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'fs';
import * as path from 'path';
import * as ts from 'typescript';
import { format } from 'util';
import { builtPackage } from '../cli/support/built-cli';

jest.setTimeout(180_000);

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
    // esModuleInterop: a default import of a CommonJS module is its module.exports, as in an ES module.
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
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

/** What an example prints, run as an ES module by node in `folder` (inside the built package). */
async function runAsModule(code: string, folder: string, name: string): Promise<string[]> {
  const js = ts.transpileModule(code, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText;
  const file = path.join(folder, `${name}.mjs`);
  writeFileSync(file, js);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [file], { cwd: folder, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (status, signal) => {
      clearTimeout(timer);
      if (status === 0) resolve(stdout.split('\n').slice(0, -1));
      else reject(new Error(`node ${name}.mjs ${signal === 'SIGKILL' ? 'did not exit within 60 s' : `exited with ${status}`}:\n${stderr}${stdout}`));
    });
  });
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

describe('README examples, run as the README says: ES modules against the built package', () => {
  let folder: string;

  beforeAll(async () => {
    // Inside the package's folder, so that `import ... from 'doclayer'` finds the package by its name.
    folder = path.join(await builtPackage(), `readme-examples-${process.pid}`);
    mkdirSync(folder, { recursive: true });
  });

  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  for (const example of examples()) {
    it(`runs the example at README.md line ${example.line}`, async () => {
      const printed = await runAsModule(example.code, folder, `line-${example.line}`);
      const expected = [...example.code.matchAll(/\/\/ prints: (.*)$/gm)].map((m) => m[1]);
      if (expected.length > 0) expect(printed).toEqual(expected);
    });
  }
});
