import { checkArity, stringOption } from '../args';
import { requireCollection } from '../collections';
import { stringifyJson } from '../json-text';
import type { Command } from './command';

const PAGE_SIZE = 500;
/** Lines written to stdout at once. */
const LINES_PER_WRITE = 500;

/**
 * `export`: every document of the collection as newline-delimited JSON, in id order, to stdout: what
 * `import` reads. Object keys come out in the order the document layer keeps them (UTF-8 byte order).
 */
export const exportCommand: Command = {
  name: 'export',
  forms: [{ usage: 'export [--id-field <field>]', summary: 'write every document to stdout, one JSON per line (what import reads)' }],
  details: ['--id-field <field>  also write each id in this top-level field (of documents that are objects)'],
  options: ['id-field'],
  createsDatabase: false,
  async run(context) {
    checkArity(context.args, 0, 0, 'export');
    const idField = stringOption(context.args, 'id-field');
    const collection = await requireCollection(context);
    let lines: string[] = [];
    for await (const { id, content } of collection.scan({ pageSize: PAGE_SIZE })) {
      const doc =
        idField !== undefined && content !== null && typeof content === 'object' && !Array.isArray(content)
          ? { ...content, [idField]: id }
          : content;
      lines.push(stringifyJson(doc));
      if (lines.length >= LINES_PER_WRITE) {
        await context.output.write(`${lines.join('\n')}\n`);
        lines = [];
      }
    }
    if (lines.length > 0) await context.output.write(`${lines.join('\n')}\n`);
  },
};
