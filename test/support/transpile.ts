import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'fs';
import { dirname, join, relative, resolve } from 'path';
import * as ts from 'typescript';

/**
 * Transpiles `entries` and every file they import relatively to CommonJS, writing each source file to
 * `outDir` at its path relative to `base`, so child processes start from plain JS without a compiler.
 *
 * @throws Error when a relative import resolves to neither `<path>.ts` nor `<path>/index.ts`
 */
export function transpileTree(entries: readonly string[], base: string, outDir: string): void {
  const pending = [...entries];
  const done = new Set<string>();
  while (pending.length > 0) {
    const file = pending.pop()!;
    if (done.has(file)) continue;
    done.add(file);
    const source = readFileSync(file, 'utf8');
    const output = ts.transpileModule(source, {
      compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
      fileName: file,
    }).outputText;
    const target = join(outDir, relative(base, file)).replace(/\.ts$/, '.js');
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, output);
    for (const imported of ts.preProcessFile(source, true, true).importedFiles) {
      if (!imported.fileName.startsWith('.')) continue;
      const stem = resolve(dirname(file), imported.fileName);
      const found = [`${stem}.ts`, join(stem, 'index.ts')].find((candidate) => existsSync(candidate));
      if (!found) throw new Error(`transpile: cannot resolve ${imported.fileName} from ${file}`);
      pending.push(found);
    }
  }
}
