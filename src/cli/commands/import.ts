import { createReadStream, statSync } from 'fs';
import { extname, resolve } from 'path';
import type { Readable } from 'stream';
import { checkArity, integerOption, stringOption, UsageError } from '../args';
import { CliError, EXIT_FAILURE } from '../error-report';
import { importRecords, type BadRecord, type ImportSummary } from '../importer';
import { formatCount, ProgressBar } from '../progress';
import { readRecords, UnclearFormatError, type InputFormat } from '../record-reader';
import { collectionLabel, type Command, type CommandContext } from './command';

/**
 * `import <file|->`: JSON records into the collection (see `importer.ts`), with a progress bar and
 * a summary. The exit status is 1 when the import stopped at a bad record (skipped ones, asked for, do not count).
 */
export const importCommand: Command = {
  name: 'import',
  forms: [
    {
      usage: 'import <file.json|file.ndjson|-> [--format json|ndjson] [--id-field <field>] [--skip-bad] [--from-line <n>]',
      summary: 'import what export wrote, or plain documents: a JSON array or one per line (- is stdin)',
    },
  ],
  details: [
    'What export writes is imported exactly: each document with its id, kind (list, map, set, queue,',
    'counter, text) and expiry; a document or structure with an id that exists replaces it.',
    'Any other input is plain documents: --id-field names the field holding their ids, or ids are generated.',
    "--format json|ndjson  a JSON array of records, or one record per line; by default the file's",
    '                    extension says (.json; .ndjson or .jsonl), and for others the content, where it',
    '                    cannot mean the other (a one-line array needs --format)',
    '--id-field <field>  take each id from this top-level field (kept in the document); a document',
    '                    with an id that exists replaces it. Without it, ids are generated (UUIDv7).',
    '--skip-bad          report a bad record and go on; by default the first one stops the import,',
    '                    with every document before it committed and the line to resume from printed',
    '--from-line <n>     skip the records that start before line n (to resume)',
    "Documents are written in batches of about 1 MB per transaction (FoundationDB's limits are 10 MB, 5 s).",
  ],
  options: ['format', 'id-field', 'skip-bad', 'from-line'],
  createsDatabase: true,
  async run(context) {
    checkArity(context.args, 1, 1, 'import');
    const [source] = context.args.positionals as [string];
    const format = inputFormat(context, source);
    const idField = stringOption(context.args, 'id-field');
    const fromLine = integerOption(context.args, 'from-line', 1, 'import');
    const skipBad = context.args.options.has('skip-bad');
    const { input, size } = openSource(context, source);
    const session = await context.session();
    const progress = new ProgressBar(context.output.stderr, {
      verb: 'importing',
      noun: 'documents',
      ...(size === undefined ? {} : { total: size }),
    });
    const started = Date.now();
    const summary = await importRecords(readRecords(input, format), {
      collection: session.collection(context.collectionName),
      kv: session.kv,
      ...(idField === undefined ? {} : { idField }),
      ...(fromLine === undefined ? {} : { fromLine }),
      skipBad,
      onProgress: (imported, bytesRead) => progress.update(imported, bytesRead),
      onBadRecord: (bad) => {
        progress.finish();
        context.output.stderr.write(`${describeBad(source, bad)}\n`);
      },
    }).catch((err: unknown) => {
      progress.finish();
      if (!(err instanceof UnclearFormatError)) throw err;
      throw new CliError(
        `cannot tell the format of ${source === '-' ? 'stdin' : source}: ${err.message} (say which: --format json or --format ndjson)`,
      );
    });
    progress.finish();
    await report(context, source, summary, (Date.now() - started) / 1000);
    return summary.stoppedAt === undefined ? 0 : EXIT_FAILURE;
  },
};

/** The format `--format` or the file's extension names; `undefined`: the content tells. */
function inputFormat(context: CommandContext, source: string): InputFormat | undefined {
  const given = stringOption(context.args, 'format');
  if (given !== undefined) {
    if (given !== 'json' && given !== 'ndjson') throw new UsageError(`--format is json or ndjson, got ${JSON.stringify(given)}`, 'import');
    return given;
  }
  if (source === '-') return undefined;
  const extension = extname(source).toLowerCase();
  if (extension === '.json') return 'json';
  if (extension === '.ndjson' || extension === '.jsonl') return 'ndjson';
  return undefined;
}

function openSource(context: CommandContext, source: string): { input: Readable; size?: number } {
  if (source === '-') return { input: context.stdin };
  const path = resolve(context.cwd, source);
  let size: number;
  try {
    const stat = statSync(path);
    if (!stat.isFile()) throw new CliError(`cannot import ${source}: not a file`);
    size = stat.size;
  } catch (err) {
    if (err instanceof CliError) throw err;
    throw new CliError(`cannot import ${source}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`);
  }
  return { input: createReadStream(path, { highWaterMark: 1 << 16 }), size };
}

/** `orders.ndjson:12:17: bad JSON: expected ',' or '}' after a property value, found "x" (record 12)` */
function describeBad(source: string, bad: BadRecord): string {
  const name = source === '-' ? 'stdin' : source;
  const record = bad.index === undefined ? '' : ` (record ${bad.index})`;
  return `${name}:${bad.position.line}:${bad.position.column}: ${bad.reason}${record}`;
}

async function report(context: CommandContext, source: string, summary: ImportSummary, seconds: number): Promise<void> {
  const collection = collectionLabel(context);
  const resume = summary.stoppedAt === undefined ? undefined : resumeCommand(context, source, summary.stoppedAt);
  const lines = [
    `imported ${formatCount(summary.imported)} document${summary.imported === 1 ? '' : 's'} into ${collection} ` +
      `in ${seconds.toFixed(1)} s (${formatCount(summary.transactions)} transaction${summary.transactions === 1 ? '' : 's'})`,
  ];
  if (summary.passedOver > 0)
    lines.push(`passed over ${formatCount(summary.passedOver)} records before line ${context.args.options.get('from-line')}`);
  if (summary.skipped.length > 0)
    lines.push(`skipped ${formatCount(summary.skipped.length)} bad record${summary.skipped.length === 1 ? '' : 's'} (listed above)`);
  if (summary.stoppedAt !== undefined) {
    lines.push(
      `stopped at line ${summary.stoppedAt.line}: every document before it is committed, nothing after it was imported`,
      `to resume once it is fixed: ${resume}`,
    );
    if (summary.stoppedAt.skippable) lines.push('(or pass --skip-bad to skip bad records)');
  }
  await context.output.result(lines.join('\n'), {
    collection,
    imported: summary.imported,
    transactions: summary.transactions,
    skipped: summary.skipped.map((bad) => ({ line: bad.position.line, column: bad.position.column, reason: bad.reason })),
    stoppedAt:
      summary.stoppedAt === undefined
        ? null
        : { line: summary.stoppedAt.position.line, column: summary.stoppedAt.position.column, reason: summary.stoppedAt.reason },
    resumeFromLine: summary.stoppedAt?.line ?? null,
  });
}

/** The command line that resumes at `bad`: this one, with `--from-line` set to its line. */
function resumeCommand(context: CommandContext, source: string, bad: BadRecord): string {
  const words = ['doclayer', 'import', source];
  for (const [name, value] of context.args.options) {
    if (name === 'from-line' || name === 'json') continue;
    words.push(`--${name}`, ...(value === true ? [] : [value]));
  }
  words.push('--from-line', String(bad.line));
  return words.map(shellQuote).join(' ');
}

function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
