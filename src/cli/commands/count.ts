import { checkArity } from '../args';
import { parseJsonArgument } from '../argument-values';
import { requireCollection } from '../collections';
import { formatCount } from '../progress';
import { collectionLabel, type Command } from './command';

const PAGE_SIZE = 1000;

export const countCommand: Command = {
  name: 'count',
  forms: [
    { usage: 'count', summary: 'print the number of documents in the collection' },
    { usage: "count '<filter>' [--scan]", summary: 'print the number of documents a filter matches, through an index (see find)' },
  ],
  options: ['scan'],
  createsDatabase: false,
  async run(context) {
    checkArity(context.args, 0, 1, 'count');
    const collection = await requireCollection(context);
    if (context.args.positionals.length === 1) {
      const filter = parseJsonArgument(context.args.positionals[0], 'the filter');
      const matching = await collection.count(filter, { allowScan: context.args.options.has('scan') });
      await context.output.result(`${formatCount(matching)} matching document${matching === 1 ? '' : 's'} in ${collectionLabel(context)}`, {
        collection: collectionLabel(context),
        documents: matching,
      });
      return;
    }
    let documents = 0;
    for await (const _ of collection.scan({ pageSize: PAGE_SIZE })) documents++;
    await context.output.result(`${formatCount(documents)} document${documents === 1 ? '' : 's'} in ${collectionLabel(context)}`, {
      collection: collectionLabel(context),
      documents,
    });
  },
};
