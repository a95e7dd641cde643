import type { ChangeEvent } from '../../changes/change';
import { isChangeFeedError } from '../../changes/errors';
import { checkArity, stringOption } from '../args';
import { requireCollection } from '../collections';
import { CliError } from '../error-report';
import { stringifyJson } from '../json-text';
import type { JsonValue } from '../../document/types';
import type { Command } from './command';

export const changesCommand: Command = {
  name: 'changes',
  forms: [
    { usage: 'changes [--since <token>] [--follow] [--docs]', summary: "print the collection's changes in commit order, one JSON line each" },
    { usage: 'changes --enable', summary: "switch the collection's change feed on (its manifest history)" },
  ],
  details: [
    '--since <token>  start after this token (each line carries its token)',
    '--follow         keep printing changes as they commit, until interrupted (Ctrl-C)',
    '--docs           include each upserted document',
    'Each line: {"kind":"upsert|remove|expire|drop","id":...,"cas":...,"token":...}.',
  ],
  options: ['since', 'follow', 'docs', 'enable'],
  createsDatabase: false,
  async run(context) {
    checkArity(context.args, 0, 0, 'changes');
    const collection = await requireCollection(context);
    const path = `${collection.scope}.${collection.name}`;
    if (context.args.options.has('enable')) {
      await (await context.session()).docs.setCollectionHistory(path, true);
      await context.output.write(`the change feed of ${path} is on\n`);
      return;
    }
    const abort = new AbortController();
    const stop = () => abort.abort();
    process.once('SIGINT', stop);
    try {
      const changes = collection.changes({
        since: stringOption(context.args, 'since'),
        follow: context.args.options.has('follow'),
        includeDocs: context.args.options.has('docs'),
        signal: abort.signal,
      });
      for await (const change of changes) await context.output.write(`${stringifyJson(line(change))}\n`);
    } catch (err) {
      if (isChangeFeedError(err)) throw new CliError(err.message);
      throw err;
    } finally {
      process.removeListener('SIGINT', stop);
    }
  },
};

/** A change as one NDJSON line: ids and documents as JSON, `drop` with the collection's path. */
function line(change: ChangeEvent): JsonValue {
  if (change.kind === 'drop') return { kind: 'drop', collection: change.collection, cas: change.cas, token: change.token };
  const id = typeof change.id === 'bigint' ? change.id.toString() : change.id;
  return change.doc === undefined
    ? { kind: change.kind, id, cas: change.cas, token: change.token }
    : { kind: change.kind, id, cas: change.cas, token: change.token, doc: change.doc };
}
