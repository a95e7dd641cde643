import * as path from 'path';
import ts from 'typescript';

/** One module specifier a file names, and how: a type-only import is an edge of the graph like any other. */
export interface ImportSite {
  specifier: string;
  line: number;
  form: 'import' | 'import type' | 'export from' | 'import = require' | 'require()' | 'import()' | 'typeof import()';
}

/**
 * Every module specifier `text` names, from a real parse: import and export-from declarations (type-only
 * included), `import x = require()`, `require()` calls, dynamic `import()` and `import('...')` types.
 */
export function importSites(fileName: string, text: string): ImportSite[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const sites: ImportSite[] = [];
  const add = (node: ts.Node, specifier: ts.Node | undefined, form: ImportSite['form']): void => {
    if (specifier === undefined || !ts.isStringLiteralLike(specifier)) return;
    sites.push({ specifier: specifier.text, line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1, form });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) {
      add(node, node.moduleSpecifier, node.importClause?.isTypeOnly ? 'import type' : 'import');
    } else if (ts.isExportDeclaration(node)) {
      add(node, node.moduleSpecifier, 'export from');
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      add(node, node.moduleReference.expression, 'import = require');
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      add(node, node.arguments[0], 'import()');
    } else if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'require') {
      add(node, node.arguments[0], 'require()');
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      add(node, node.argument.literal, 'typeof import()');
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return sites;
}

/**
 * The file a relative specifier names among `files` (paths relative to the repository root, with `/`),
 * as TypeScript's node resolution finds it: `x.ts`, then `x/index.ts`, then `x` itself. Undefined for a
 * package name, or for a relative path that names no file of `files`.
 */
export function resolveImport(fromFile: string, specifier: string, files: ReadonlySet<string>): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const target = path.posix.join(path.posix.dirname(fromFile), specifier);
  return [`${target}.ts`, `${target}/index.ts`, target].find((candidate) => files.has(candidate));
}

/**
 * One row of a layering table: the files under `paths` (a folder ends with `/`) form one unit at `rank`.
 * A unit may import itself and any unit of a lower rank; units of one rank must not import each other.
 */
export interface Unit {
  name: string;
  rank: number;
  paths: readonly string[];
}

/** The unit of `file` (relative to the table's root), or undefined if no row covers it. */
export function unitOf(file: string, table: readonly Unit[]): Unit | undefined {
  return table.find((unit) => unit.paths.some((p) => (p.endsWith('/') ? file.startsWith(p) : file === p)));
}

/** Why `from` must not import `to`, or undefined when the table allows it. */
export function breach(from: Unit, to: Unit): string | undefined {
  if (from === to || to.rank < from.rank) return undefined;
  return to.rank === from.rank
    ? `${from.name} must not import its sibling ${to.name}`
    : `${from.name} must not import ${to.name}, which sits above it`;
}
