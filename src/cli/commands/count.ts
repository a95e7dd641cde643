import { checkArity } from '../args';
import { requireCollection } from '../collections';
import { formatCount } from '../progress';
import { collectionLabel, type Command } from './command';

const PAGE_SIZE = 1000;

export const countCommand: Command = {
  name: 'count',
  forms: [{ usage: 'count', summary: 'print the number of documents in the collection' }],
  options: [],
  createsDatabase: false,
  async run(context) {
    checkArity(context.args, 0, 0, 'count');
    const collection = await requireCollection(context);
    let documents = 0;
    for await (const _ of collection.scan({ pageSize: PAGE_SIZE })) documents++;
    await context.output.result(`${formatCount(documents)} document${documents === 1 ? '' : 's'} in ${collectionLabel(context)}`, {
      collection: collectionLabel(context),
      documents,
    });
  },
};
