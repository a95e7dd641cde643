import { Buffer } from 'node:buffer';
import { readFileSync } from 'fs';
import { resolve } from 'path';
import { checkArity, UsageError } from '../args';
import { CliError, caretLines } from '../error-report';
import { JsonSyntaxError, parseJson, stringifyJson } from '../json-text';
import { positionOf } from '../text-position';
import type { JsonValue } from '../../document/types';
import type { Manifest } from '../../document/manifest/manifest';
import type { Command, CommandContext } from './command';

/**
 * `manifest get` prints the collections manifest (Couchbase's JSON: uid, scopes, collections);
 * `manifest set <file|->` stores a new one, which adds and drops collections (a dropped collection's
 * documents are deleted).
 */
export const manifestCommand: Command = {
  name: 'manifest',
  forms: [
    { usage: 'manifest get', summary: "print the collections manifest (Couchbase's JSON)" },
    { usage: 'manifest set <file.json|->', summary: 'replace it: adds and drops collections' },
  ],
  details: [
    'set: the uid must grow with every change; a collection left out is dropped and its documents deleted.',
    'Collections are also created by the first write to them (import, set, ...).',
  ],
  options: [],
  createsDatabase: true,
  async run(context) {
    checkArity(context.args, 1, 2, 'manifest');
    const [action, source] = context.args.positionals;
    if (action === 'get' && source === undefined) {
      const manifest = await (await context.session()).docs.getManifest();
      const json = asJson(manifest);
      await context.output.result(() => stringifyJson(json, 2), json);
      return;
    }
    if (action !== 'set' || source === undefined) throw new UsageError('manifest get, or manifest set <file>', 'manifest');
    const json = parseManifestFile(await readSource(context, source), source);
    const manifest = await (await context.session()).docs.setManifest(json as object);
    const collections = manifest.scopes.reduce((n, scope) => n + scope.collections.length, 0);
    await context.output.result(
      `manifest ${manifest.uid} stored: ${manifest.scopes.length} scope${manifest.scopes.length === 1 ? '' : 's'}, ${collections} collection${collections === 1 ? '' : 's'}`,
      asJson(manifest),
    );
  },
};

async function readSource(context: CommandContext, source: string): Promise<string> {
  if (source === '-') {
    const chunks: Buffer[] = [];
    for await (const chunk of context.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  }
  try {
    return readFileSync(resolve(context.cwd, source), 'utf8');
  } catch (err) {
    throw new CliError(`cannot read ${source}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`);
  }
}

function parseManifestFile(text: string, source: string): unknown {
  try {
    return parseJson(text);
  } catch (err) {
    if (!(err instanceof JsonSyntaxError)) throw err;
    const { line, column } = positionOf(text, err.offset);
    throw new CliError(
      `bad JSON in ${source === '-' ? 'stdin' : source} at line ${line}, column ${column}: ${err.reason}`,
      caretLines(text.split('\n')[line - 1], column - 1),
    );
  }
}

/** The manifest as a plain JSON value (its interfaces are read-only, without index signatures). */
function asJson(manifest: Manifest): JsonValue {
  return JSON.parse(JSON.stringify(manifest)) as JsonValue;
}
