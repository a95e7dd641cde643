import { checkArity, integerOption, stringOption, UsageError } from '../args';
import { formatIdArgument, parseJsonArgument } from '../argument-values';
import { requireCollection } from '../collections';
import { stringifyJson } from '../json-text';
import type { DocId, JsonValue } from '../../document/types';
import type { SortSpec } from '../../query';
import type { Command, CommandContext } from './command';

export const findCommand: Command = {
  name: 'find',
  forms: [
    {
      usage: "find '<filter>' [--sort <spec>] [--limit <n>] [--after <token>] [--explain] [--scan]",
      summary: 'print the documents a filter matches, through an index',
    },
  ],
  details: [
    '<filter>         MongoDB-style JSON: \'{"customer.city":"Paris","total":{"$gte":100}}\' (docs/queries.md)',
    '--sort <spec>    total:desc,name (or JSON: {"total":-1,"name":1})',
    '--limit <n>      at most n documents; prints the token of the next page when there is one',
    '--after <token>  continue after an earlier page',
    '--explain        print the plan, its index intervals and the keys it read instead of the documents',
    '--scan           without an index that serves the filter, scan the whole collection',
  ],
  options: ['sort', 'limit', 'after', 'explain', 'scan'],
  createsDatabase: false,
  async run(context) {
    checkArity(context.args, 1, 1, 'find');
    const filter = parseJsonArgument(context.args.positionals[0], 'the filter');
    const limit = integerOption(context.args, 'limit', 0, 'find');
    const options = {
      sort: sortOption(context),
      allowScan: context.args.options.has('scan'),
      ...(limit === undefined ? {} : { limit }),
      ...(stringOption(context.args, 'after') === undefined ? {} : { after: stringOption(context.args, 'after') }),
    };
    const collection = await requireCollection(context);
    if (context.args.options.has('explain')) {
      const explanation = await collection.explain(filter, options);
      await context.output.result(() => `${JSON.stringify(explanation, null, 2)}`, explanation as unknown as JsonValue);
      return;
    }
    const json = context.output.json;
    const print = async (id: DocId, content: JsonValue, cas: string | undefined): Promise<void> => {
      await context.output.write(
        json ? `${stringifyJson({ id, cas: cas ?? null, content })}\n` : `${formatIdArgument(id)}  ${stringifyJson(content)}\n`,
      );
    };
    if (limit === undefined) {
      for await (const item of collection.find(filter, options)) await print(item.id, item.content, item.cas);
      return;
    }
    const page = await collection.find(filter, options).page();
    for (const item of page.items) await print(item.id, item.content, item.cas);
    if (page.after !== undefined) {
      await context.output.write(json ? `${JSON.stringify({ after: page.after })}\n` : `next page: --after ${page.after}\n`);
    }
  },
};

/** `--sort total:desc,name` or JSON. */
function sortOption(context: CommandContext): SortSpec | undefined {
  const text = stringOption(context.args, 'sort');
  if (text === undefined) return undefined;
  if (/^\s*[[{]/.test(text)) return parseJsonArgument(text, '--sort') as unknown as SortSpec;
  return text.split(',').map((part) => {
    const [path, direction = 'asc', extra] = part.trim().split(':');
    if (path === '' || extra !== undefined || (direction !== 'asc' && direction !== 'desc')) {
      throw new UsageError(`--sort takes path[:asc|:desc],... (e.g. total:desc,name), got ${JSON.stringify(text)}`, 'find');
    }
    return [path, direction] as const;
  });
}
