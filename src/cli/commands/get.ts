import { checkArity } from '../args';
import { parseIdArgument } from '../argument-values';
import { requireCollection } from '../collections';
import { withPathShown } from '../error-report';
import { stringifyJson } from '../json-text';
import type { Command } from './command';

export const getCommand: Command = {
  name: 'get',
  forms: [{ usage: 'get <id> [path]', summary: 'print a document, or the value at a path in it' }],
  details: ["A path is Couchbase's syntax: address.city, items[0].sku, items[-1] (the last element)."],
  options: [],
  createsDatabase: false,
  async run(context) {
    checkArity(context.args, 1, 2, 'get');
    const [idText, path] = context.args.positionals as [string, string | undefined];
    const id = parseIdArgument(idText);
    const collection = await requireCollection(context);
    const found = path === undefined ? await collection.get(id) : await withPathShown(path, () => collection.get(id, path));
    const cas = found.cas ?? null;
    await context.output.result(
      () => stringifyJson(found.content, 2),
      path === undefined ? { id, cas, content: found.content } : { id, path, cas, content: found.content },
    );
  },
};
