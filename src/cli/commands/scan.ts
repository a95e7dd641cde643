import { checkArity, integerOption } from '../args';
import { formatIdArgument } from '../argument-values';
import { requireCollection } from '../collections';
import { stringifyJson } from '../json-text';
import type { Command } from './command';

/** Documents read per range read. */
const PAGE_SIZE = 500;

export const scanCommand: Command = {
  name: 'scan',
  forms: [{ usage: 'scan [--limit <n>]', summary: 'print the documents in id order, one per line: id, then JSON' }],
  details: ['--limit <n>  at most n documents'],
  options: ['limit'],
  createsDatabase: false,
  async run(context) {
    checkArity(context.args, 0, 0, 'scan');
    const limit = integerOption(context.args, 'limit', 0, 'scan');
    const collection = await requireCollection(context);
    const json = context.output.json;
    for await (const { id, content, cas } of collection.scan({ pageSize: PAGE_SIZE, ...(limit === undefined ? {} : { limit }) })) {
      await context.output.write(
        json ? `${stringifyJson({ id, cas: cas ?? null, content })}\n` : `${formatIdArgument(id)}  ${stringifyJson(content)}\n`,
      );
    }
  },
};
