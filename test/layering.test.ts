/**
 * The import graph of src/ points down: each module imports only from its own layer and the layers below it,
 * and inside src/kv an engine never reaches into another engine's folder. The graph is read from a real
 * parse of every file (see test/support/import-graph.ts). Type-only imports, `import('...')` types and
 * lazy `require()`s count like any import: a cycle in types is still a cycle, and a lazy load is still a
 * dependency.
 */
import * as fs from 'fs';
import * as path from 'path';
import { breach, importSites, resolveImport, unitOf, type Unit } from './support/import-graph';

/**
 * The layers of src/, lowest first; paths are relative to src/. Units of one rank are siblings that must not
 * import each other: the apps are independent programs over the library.
 */
const LAYERS: readonly Unit[] = [
  { name: 'tuple', rank: 0, paths: ['tuple/'] },
  { name: 'kv', rank: 1, paths: ['kv/'] },
  { name: 'document', rank: 2, paths: ['document/'] },
  { name: 'structures', rank: 3, paths: ['structures/'] },
  { name: 'filter', rank: 3, paths: ['filter/'] },
  { name: 'index', rank: 4, paths: ['index/'] },
  { name: 'changes', rank: 4, paths: ['changes/'] },
  { name: 'query', rank: 4.5, paths: ['query/'] },
  { name: 'composition root', rank: 5, paths: ['index.ts', 'open.ts', 'collection.ts', 'check.ts'] },
  // The binary-protocol endpoint is an application of the library that the CLI serves (`doclayer serve`):
  // below the applications, never importing them.
  { name: 'server', rank: 6, paths: ['server/'] },
  { name: 'cli', rank: 7, paths: ['cli/'] },
  { name: 'node-red', rank: 7, paths: ['node-red/'] },
  { name: 'fdb-shim', rank: 7, paths: ['fdb-shim/'] },
];

/**
 * The parts of src/kv, checked between two files of kv. The contract knows no implementation; the client-side
 * transaction code knows no engine; the engine parts (conflict log, watches, faults) serve engines and may use
 * client code; no engine knows another. Only the kv root (the one engine chooser, the kv entry point and the
 * counting wrapper) knows every engine.
 */
const KV_PARTS: readonly Unit[] = [
  { name: 'kv/contract', rank: 0, paths: ['kv/contract/'] },
  { name: 'kv/client', rank: 1, paths: ['kv/client/'] },
  { name: 'kv/engine-parts', rank: 2, paths: ['kv/engine-parts/'] },
  { name: 'kv/memory', rank: 3, paths: ['kv/memory/'] },
  { name: 'kv/lmdb', rank: 3, paths: ['kv/lmdb/'] },
  { name: 'kv/fdb', rank: 3, paths: ['kv/fdb/'] },
  { name: 'kv root', rank: 4, paths: ['kv/index.ts', 'kv/counting-engine.ts', 'kv/open-database.ts'] },
];

interface Violation {
  /** `importer -> imported`. */
  edge: string;
  /** Where and why, for the failure message. */
  message: string;
}

/** Every import in `files` (repository-relative path -> text) that the tables forbid. */
function layeringViolations(files: ReadonlyMap<string, string>): Violation[] {
  const paths = new Set(files.keys());
  const violations: Violation[] = [];
  for (const [file, text] of files) {
    const from = unitOf(path.posix.relative('src', file), LAYERS);
    if (from === undefined) {
      violations.push({ edge: `${file} -> (no layer)`, message: `${file} is in no layer: add its folder to LAYERS` });
      continue;
    }
    for (const site of importSites(file, text)) {
      if (!site.specifier.startsWith('.')) continue;
      const where = `${file}:${site.line} ${site.form} '${site.specifier}'`;
      const target = resolveImport(file, site.specifier, paths);
      if (target === undefined) {
        violations.push({ edge: `${file} -> ${site.specifier}`, message: `${where} names no file under src/` });
        continue;
      }
      const reason = breachBetween(path.posix.relative('src', file), path.posix.relative('src', target));
      if (reason !== undefined) violations.push({ edge: `${file} -> ${target}`, message: `${where} (${target}): ${reason}` });
    }
  }
  return violations;
}

function breachBetween(from: string, to: string): string | undefined {
  const fromLayer = unitOf(from, LAYERS);
  const toLayer = unitOf(to, LAYERS);
  if (fromLayer === undefined || toLayer === undefined) return `${fromLayer === undefined ? from : to} is in no layer: add its folder to LAYERS`;
  if (fromLayer !== toLayer || fromLayer.name !== 'kv') return breach(fromLayer, toLayer);
  const fromPart = unitOf(from, KV_PARTS);
  const toPart = unitOf(to, KV_PARTS);
  if (fromPart === undefined || toPart === undefined) return `${fromPart === undefined ? from : to} is in no part of kv: add it to KV_PARTS`;
  return breach(fromPart, toPart);
}

function sourceTree(root: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const relative = path.posix.join(dir, entry.name);
      if (entry.isDirectory()) walk(relative);
      else if (entry.name.endsWith('.ts')) files.set(relative, fs.readFileSync(path.join(root, relative), 'utf8'));
    }
  };
  walk('src');
  return files;
}

describe('the layering of src/', () => {
  const tree = sourceTree(path.join(__dirname, '..'));

  it('has every import point down', () => {
    expect(layeringViolations(tree).map((v) => v.message)).toEqual([]);
  });

  it('reads the whole tree and its imports', () => {
    expect(tree.has('src/index.ts')).toBe(true);
    expect(tree.has('src/kv/contract/types.ts')).toBe(true);
    const relativeImports = [...tree].flatMap(([file, text]) => importSites(file, text).filter((s) => s.specifier.startsWith('.')));
    expect(relativeImports.length).toBeGreaterThan(tree.size);
  });
});

describe('the layering check itself', () => {
  /** A small tree of empty modules, plus `file` holding `text`. */
  const treeWith = (file: string, text: string): Map<string, string> =>
    new Map(
      [
        'src/tuple/codec.ts',
        'src/kv/index.ts',
        'src/kv/contract/types.ts',
        'src/kv/client/write-set.ts',
        'src/kv/engine-parts/conflict-log.ts',
        'src/kv/memory/memory-engine.ts',
        'src/kv/lmdb/index.ts',
        'src/kv/lmdb/lmdb-engine.ts',
        'src/document/collection/collection.ts',
        'src/structures/list.ts',
        'src/index.ts',
        'src/cli/main.ts',
        'src/node-red/index.ts',
        file,
      ].map((p) => [p, p === file ? text : '']),
    );
  const edges = (file: string, text: string): string[] => layeringViolations(treeWith(file, text)).map((v) => v.edge);

  it.each([
    ['an import', "import { List } from '../../structures/list';"],
    ['a type-only import', "import type { List } from '../../structures/list';"],
    ['an inline type import', "import { type List } from '../../structures/list';"],
    ['an export-from', "export * from '../../structures/list';"],
    ['a require()', "const list = require('../../structures/list');"],
    ['an import = require()', "import list = require('../../structures/list');"],
    ['a dynamic import()', "const load = () => import('../../structures/list');"],
    ['an import() type', "let list: typeof import('../../structures/list');"],
  ])('fails on %s from a layer above', (_, text) => {
    expect(edges('src/document/collection/collection.ts', text)).toEqual(['src/document/collection/collection.ts -> src/structures/list.ts']);
  });

  it('names the file, line and import in its message', () => {
    const [violation] = layeringViolations(treeWith('src/tuple/codec.ts', "\nimport { Database } from '../kv';"));
    expect(violation.message).toBe("src/tuple/codec.ts:2 import '../kv' (src/kv/index.ts): tuple must not import kv, which sits above it");
  });

  it.each([
    ['an engine imports another engine', 'src/kv/memory/memory-engine.ts', "import { LmdbEngine } from '../lmdb';", 'src/kv/lmdb/index.ts'],
    [
      'the contract imports client code',
      'src/kv/contract/types.ts',
      "import type { WriteSet } from '../client/write-set';",
      'src/kv/client/write-set.ts',
    ],
    ['the contract imports an engine', 'src/kv/contract/types.ts', "import '../memory/memory-engine';", 'src/kv/memory/memory-engine.ts'],
    [
      'client code imports an engine part',
      'src/kv/client/write-set.ts',
      "import '../engine-parts/conflict-log';",
      'src/kv/engine-parts/conflict-log.ts',
    ],
    ['client code imports an engine', 'src/kv/client/write-set.ts', "import '../lmdb/lmdb-engine';", 'src/kv/lmdb/lmdb-engine.ts'],
    [
      'an engine part imports an engine',
      'src/kv/engine-parts/conflict-log.ts',
      "import '../memory/memory-engine';",
      'src/kv/memory/memory-engine.ts',
    ],
    ['an engine imports the kv root', 'src/kv/memory/memory-engine.ts', "import '../index';", 'src/kv/index.ts'],
    ['an app imports another app', 'src/cli/main.ts', "import '../node-red';", 'src/node-red/index.ts'],
    ['the composition root imports an app', 'src/index.ts', "export * from './cli/main';", 'src/cli/main.ts'],
  ])('fails when %s', (_, file, text, target) => {
    expect(edges(file, text)).toEqual([`${file} -> ${target}`]);
  });

  it.each([
    ['structures import document', 'src/structures/list.ts', "import { Collection } from '../document/collection/collection';"],
    ['an engine part imports client code', 'src/kv/engine-parts/conflict-log.ts', "import type { WriteSet } from '../client/write-set';"],
    [
      'an engine imports the contract, client code and engine parts',
      'src/kv/lmdb/lmdb-engine.ts',
      "import '../contract/types';\nimport '../client/write-set';\nimport '../engine-parts/conflict-log';",
    ],
    ['the kv root imports every engine', 'src/kv/index.ts', "export * from './memory/memory-engine';\nexport * from './lmdb';"],
    ['the composition root imports structures', 'src/index.ts', "export * from './structures/list';"],
    ['an app imports the library', 'src/cli/main.ts', "import '../index';\nimport '../kv/engine-parts/conflict-log';"],
    ['a module imports a package', 'src/tuple/codec.ts', "import * as fs from 'fs';\nimport { open } from 'lmdb';"],
  ])('allows it when %s', (_, file, text) => {
    expect(edges(file, text)).toEqual([]);
  });

  it('fails on a file in no layer and on an import of no file', () => {
    expect(edges('src/helpers.ts', '')).toEqual(['src/helpers.ts -> (no layer)']);
    expect(edges('src/kv/engine-chooser.ts', "import './memory/memory-engine';")).toEqual([
      'src/kv/engine-chooser.ts -> src/kv/memory/memory-engine.ts',
    ]);
    expect(edges('src/tuple/codec.ts', "import '../../test/support/random';")).toEqual(['src/tuple/codec.ts -> ../../test/support/random']);
  });
});
