import { checkArity, stringOption } from '../args';
import { requireCollection } from '../collections';
import { EXPORT_HEADER_LINE, formatRecord } from '../export-format';
import { exportRecords } from '../export-scan';
import { stringifyJson } from '../json-text';
import type { Command, CommandContext } from './command';

const PAGE_SIZE = 500;
/** Lines written to stdout at once. */
const LINES_PER_WRITE = 500;

/**
 * `export`: every document of the collection, in id order, to stdout, as newline-delimited JSON that
 * `import` reads back exactly: a header line, then each document with its id, kind and expiry (see
 * `export-format.ts`). With `--documents` or `--id-field`, each document's JSON alone (with its id in
 * a field, for documents that are objects): plain documents, for other tools. Object keys come out in
 * the order the document layer keeps them (UTF-8 byte order).
 */
export const exportCommand: Command = {
  name: 'export',
  forms: [
    {
      usage: 'export [--documents | --id-field <field>]',
      summary: 'write every document with its id, kind and expiry to stdout (what import reads)',
    },
  ],
  details: [
    'The first line is a header ({"doclayer":"export","version":2}); each line after it is one document:',
    '  {"id":"order-00042","value":{...}}   {"id":7,"expiresAt":"2030-01-01T00:00:00.000Z","value":[1,2]}',
    '  {"id":"countries","kind":"set","value":["AU","CA"]}   (kinds: list, map, set, queue, counter, text, sortedset)',
    'A queue\'s record also holds "queue": each item\'s priority or visibility time, its event settings, rate limit',
    "  and repeatable jobs (not leases: a leased item is exported as visible at its lease's deadline; not attempt counts).",
    "--documents         write each document's JSON alone, one per line: no ids, kinds or expiry",
    '--id-field <field>  as --documents, with each id in this top-level field (of documents that are objects)',
  ],
  options: ['documents', 'id-field'],
  createsDatabase: false,
  async run(context) {
    checkArity(context.args, 0, 0, 'export');
    const idField = stringOption(context.args, 'id-field');
    if (idField !== undefined || context.args.options.has('documents')) await exportDocuments(context, idField);
    else await exportAll(context);
  },
};

/** Writes lines to stdout in groups of {@link LINES_PER_WRITE}. */
async function writeLines(context: CommandContext, lines: AsyncIterable<string>): Promise<void> {
  let pending: string[] = [];
  for await (const line of lines) {
    pending.push(line);
    if (pending.length >= LINES_PER_WRITE) {
      await context.output.write(`${pending.join('\n')}\n`);
      pending = [];
    }
  }
  if (pending.length > 0) await context.output.write(`${pending.join('\n')}\n`);
}

async function exportAll(context: CommandContext): Promise<void> {
  const collection = await requireCollection(context);
  const { kv } = await context.session();
  await writeLines(
    context,
    (async function* () {
      yield EXPORT_HEADER_LINE;
      for await (const record of exportRecords(kv, collection, PAGE_SIZE)) yield formatRecord(record);
    })(),
  );
}

async function exportDocuments(context: CommandContext, idField: string | undefined): Promise<void> {
  const collection = await requireCollection(context);
  await writeLines(
    context,
    (async function* () {
      for await (const { id, content } of collection.scan({ pageSize: PAGE_SIZE })) {
        const doc =
          idField !== undefined && content !== null && typeof content === 'object' && !Array.isArray(content)
            ? { ...content, [idField]: id }
            : content;
        yield stringifyJson(doc);
      }
    })(),
  );
}
