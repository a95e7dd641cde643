import type { Filter } from '../../filter';
import type { IndexDescription, IndexFieldSpec } from '../../index/index';
import type { JsonValue } from '../../document/types';
import { checkArity, integerOption, stringOption, UsageError } from '../args';
import { requireCollection } from '../collections';
import { ProgressBar } from '../progress';
import { collectionLabel, type Command, type CommandContext } from './command';

/**
 * `index create|list|drop|build`: the collection's secondary indexes (docs/indexes.md). A build shows
 * a progress bar on stderr; `build` resumes one that stopped (a killed process, `--no-build`).
 */
export const indexCommand: Command = {
  name: 'index',
  forms: [
    {
      usage: 'index create <name> <field>... [--unique] [--include <paths>] [--where <filter>] [--workers <n>]',
      summary: 'create a secondary index and build it',
    },
    { usage: 'index list', summary: "list the collection's indexes, their state and build progress" },
    { usage: 'index drop <name>', summary: 'drop an index and its entries' },
    { usage: 'index build <name> [--workers <n>]', summary: 'build an index, or resume its stopped build' },
  ],
  details: [
    '<field>        a path, ascending (customer.city), or with :desc (total:desc); items[*].sku for every element',
    '--unique       at most one document per tuple of values',
    '--include      comma-separated paths stored in each entry (customer.name,total)',
    '--where        a partial index: only documents matching this filter (JSON, as find takes it)',
    '--workers <n>  id ranges built at once (default 1)',
  ],
  options: ['unique', 'include', 'where', 'workers'],
  createsDatabase: true,
  async run(context) {
    const [action] = context.args.positionals;
    switch (action) {
      case 'create':
        return create(context);
      case 'list':
        return list(context);
      case 'drop': {
        checkArity(context.args, 2, 2, 'index drop');
        const name = context.args.positionals[1];
        await (await requireCollection(context)).dropIndex(name);
        await context.output.result(`dropped index ${name} of ${collectionLabel(context)}`, { index: name, dropped: true });
        return;
      }
      case 'build': {
        checkArity(context.args, 2, 2, 'index build');
        const name = context.args.positionals[1];
        const collection = await requireCollection(context);
        const built = await withProgress(context, (onProgress) =>
          collection.buildIndex(name, { onProgress, workers: integerOption(context.args, 'workers', 1, 'index') ?? 1 }),
        );
        await context.output.result(describe(built), toJson(built));
        return;
      }
      default:
        throw new UsageError(`index takes create, list, drop or build, got ${action === undefined ? 'nothing' : JSON.stringify(action)}`);
    }
  },
};

async function create(context: CommandContext): Promise<void> {
  checkArity(context.args, 3, Infinity, 'index create');
  const [, name, ...fieldTexts] = context.args.positionals;
  const fields: IndexFieldSpec[] = fieldTexts.map((text) => {
    const desc = text.endsWith(':desc');
    const path = desc ? text.slice(0, -5) : text.endsWith(':asc') ? text.slice(0, -4) : text;
    return desc ? { path, order: 'desc' } : path;
  });
  const include = stringOption(context.args, 'include');
  const whereText = stringOption(context.args, 'where');
  let where: unknown;
  if (whereText !== undefined) {
    try {
      where = JSON.parse(whereText);
    } catch (err) {
      throw new UsageError(`--where takes a filter as JSON: ${(err as Error).message}`);
    }
  }
  const workers = integerOption(context.args, 'workers', 1, 'index') ?? 1;
  const session = await context.session();
  const collection = session.collection(context.collectionName);
  const created = await withProgress(context, (onProgress) =>
    collection.createIndex(
      name,
      {
        fields,
        unique: context.args.options.has('unique'),
        ...(include === undefined ? {} : { include: include.split(',') }),
        ...(where === undefined ? {} : { where: where as Filter }),
      },
      { onProgress, workers },
    ),
  );
  await context.output.result(describe(created), toJson(created));
}

async function list(context: CommandContext): Promise<void> {
  checkArity(context.args, 1, 1, 'index list');
  const indexes = await (await requireCollection(context)).listIndexes();
  await context.output.result(
    () => (indexes.length === 0 ? `no indexes in ${collectionLabel(context)}` : indexes.map(describe).join('\n')),
    indexes.map(toJson),
  );
}

/** Runs a build with a progress bar on stderr, erased when it ends. */
async function withProgress<T>(context: CommandContext, run: (onProgress: (p: { scanned: number }) => void) => Promise<T>): Promise<T> {
  const bar = new ProgressBar(context.output.stderr, { verb: 'indexing', noun: 'documents' });
  try {
    return await run((p) => bar.update(p.scanned));
  } finally {
    bar.finish();
  }
}

function describe(index: IndexDescription): string {
  const fields = index.fields.map((f) => (f.order === 'desc' ? `${f.path}:desc` : f.path)).join(', ');
  const extras = [index.unique ? 'unique' : '', index.include.length > 0 ? `include ${index.include.join(',')}` : ''].filter(Boolean);
  const progress = index.progress === undefined ? '' : ` (${index.progress.scanned} documents indexed${index.progress.done ? ', done' : ''})`;
  return `${index.name}: ${fields}${extras.length > 0 ? ` [${extras.join('; ')}]` : ''} ${index.state}${progress}`;
}

function toJson(index: IndexDescription): { [key: string]: JsonValue } {
  return {
    name: index.name,
    fields: index.fields.map((f) => ({ path: f.path, order: f.order })),
    unique: index.unique,
    include: [...index.include],
    state: index.state,
    ...(index.where === undefined ? {} : { where: index.where as { [key: string]: JsonValue } }),
    ...(index.progress === undefined ? {} : { progress: { ...index.progress } }),
  };
}
