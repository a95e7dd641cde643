import type { Collection } from '../collection';
import { generateId } from '../document/keys/ids';
import type { DocId, JsonValue } from '../document/types';
import type { Database } from '../kv/contract/database';
import { BatchWriter, type BatchItem } from './batch-writer';
import { CliError } from './error-report';
import { headerProblem, isDocId, isExportHeader, recordOf } from './export-format';
import { JsonSyntaxError, parseJson } from './json-text';
import { InputStructureError, type InputRecord } from './record-reader';
import { documentWrites, recordWrites, removeDocument, type RecordWrite } from './record-writes';
import { offsetBy, positionOf, type TextPosition } from './text-position';

/**
 * `doclayer import`: JSON records (see `record-reader.ts`) into a collection, in batches that respect
 * FoundationDB's transaction limits (`batch-writer.ts`).
 *
 * The first record tells what the input holds: an export's header (`export-format.ts`) starts the
 * records of an export, each with its id, kind and expiry, re-created exactly (`record-writes.ts`);
 * anything else is plain documents, each record a document, its id taken from `idField` or generated.
 *
 * A record that is not valid JSON, lacks the id field, is not a record of the export, or is refused
 * by the document layer is a bad record, reported with its line (and column, for bad JSON). By
 * default the first one stops the import: every record before it is committed, nothing of it or after
 * it is (a structure written in part is removed), and the summary gives the line to resume from
 * (`--from-line`). With `skipBad` it is reported and skipped. An input that cannot be split into
 * records stops the import the same way, whatever `skipBad` says; so does a first record that is not
 * valid JSON, since what the input holds cannot be told.
 */

export interface ImportOptions {
  collection: Collection;
  kv: Database;
  /** The top-level field that holds each document's id (a string or an integer); it stays in the document. */
  idField?: string;
  /** Skip bad records instead of stopping at the first. */
  skipBad?: boolean;
  /** Skip the records that start before this line (resuming an import that stopped). */
  fromLine?: number;
  /** After each committed batch: documents imported so far and bytes of the input read. */
  onProgress?(imported: number, bytesRead: number): void;
  /** Each bad record, as it is found. */
  onBadRecord?(bad: BadRecord): void;
}

export interface BadRecord {
  /** The record's number in the input (1-based); undefined where the input could not be split into records. */
  readonly index: number | undefined;
  /** Where the problem is: the record's start, or for bad JSON the offending character. */
  readonly position: TextPosition;
  /** The line the record starts on: where to resume. */
  readonly line: number;
  readonly reason: string;
  /** False for an input that cannot be split into records: skipping cannot go past it. */
  readonly skippable: boolean;
}

export interface ImportSummary {
  imported: number;
  /** Records skipped as bad (with `skipBad`). */
  skipped: BadRecord[];
  /** Records passed over because they start before `fromLine`. */
  passedOver: number;
  transactions: number;
  /** The bad record the import stopped at, when it did. */
  stoppedAt?: BadRecord;
}

/** What the input holds, as its first record tells. */
type InputContent = 'export' | 'documents';

/** A record to write: its writes, and the id a partly written structure is removed by. */
interface Writes {
  readonly record: InputRecord;
  readonly id: DocId;
  readonly writes: RecordWrite[];
}

/**
 * @throws CliError for an export given `idField` (its records carry their ids)
 */
export async function importRecords(records: AsyncIterable<InputRecord>, options: ImportOptions): Promise<ImportSummary> {
  const summary: ImportSummary = { imported: 0, skipped: [], passedOver: 0, transactions: 0 };
  let bytesRead = 0;
  const bad = (record: BadRecord): boolean => {
    options.onBadRecord?.(record);
    if (options.skipBad && record.skippable) {
      summary.skipped.push(record);
      return true;
    }
    summary.stoppedAt = record;
    return false;
  };
  const writer = new BatchWriter<Writes>(options.kv, {
    onCommitted: (completed) => {
      summary.imported += completed;
      options.onProgress?.(summary.imported, bytesRead);
    },
    onRejected: async (item: BatchItem<Writes>, error) => {
      const { record, id } = item.tag;
      if (item.part > 0) await removeDocument(options.collection, id);
      return bad(badRecord(record, record.start, error.message));
    },
  });
  const fromLine = options.fromLine ?? 1;
  let content: InputContent | undefined;
  try {
    for await (const record of records) {
      bytesRead = record.bytesRead;
      let parsed: Parsed | undefined;
      if (content === undefined) {
        parsed = parseRecord(record);
        if ('bad' in parsed) {
          if (options.idField === undefined) {
            // Skipping it could take an export for plain documents, each record a document.
            summary.stoppedAt = {
              ...parsed.bad,
              reason: `${parsed.bad.reason} (the first record tells an export from plain documents)`,
              skippable: false,
            };
            options.onBadRecord?.(summary.stoppedAt);
            break;
          }
          content = 'documents';
        } else {
          content = isExportHeader(parsed.json) ? 'export' : 'documents';
          if (content === 'export' && options.idField !== undefined) {
            throw new CliError('the input is a doclayer export, whose records carry their ids: import it without --id-field');
          }
        }
      }
      if (content === 'export') {
        parsed ??= parseRecord(record);
        if ('json' in parsed && isExportHeader(parsed.json)) {
          // A header: the first line, or where another export was appended.
          const problem = headerProblem(parsed.json);
          if (problem === undefined) continue;
          summary.stoppedAt = { ...badRecord(record, record.start, problem), skippable: false };
          options.onBadRecord?.(summary.stoppedAt);
          break;
        }
      }
      if (record.start.line < fromLine) {
        summary.passedOver++;
        continue;
      }
      parsed ??= parseRecord(record);
      const item =
        'bad' in parsed
          ? parsed
          : content === 'export'
            ? exportItem(options.collection, record, parsed.json)
            : documentItem(options.collection, record, parsed.json, options.idField);
      if ('bad' in item) {
        if (bad(item.bad)) continue;
        break;
      }
      await writer.add(item, item.writes);
      if (writer.isStopped) break;
    }
  } catch (err) {
    if (!(err instanceof InputStructureError)) throw err;
    summary.stoppedAt = {
      index: undefined,
      position: err.position,
      line: err.position.line,
      reason: err.reason,
      skippable: false,
    };
    options.onBadRecord?.(summary.stoppedAt);
  }
  await writer.flush();
  summary.transactions = writer.transactions;
  return summary;
}

function badRecord(record: InputRecord, position: TextPosition, reason: string): BadRecord {
  return { index: record.index, position, line: record.start.line, reason, skippable: true };
}

/** A record's JSON, or why it is not JSON. */
type Parsed = { readonly json: JsonValue } | { readonly bad: BadRecord };

function parseRecord(record: InputRecord): Parsed {
  try {
    return { json: parseJson(record.text) };
  } catch (err) {
    if (!(err instanceof JsonSyntaxError)) throw err;
    return { bad: badRecord(record, offsetBy(positionOf(record.text, err.offset), record.start), `bad JSON: ${err.reason}`) };
  }
}

/** The writes of a plain document, with its id from `idField` or generated; or why it is bad. */
function documentItem(collection: Collection, record: InputRecord, doc: JsonValue, idField: string | undefined): Writes | { bad: BadRecord } {
  let id: DocId;
  if (idField === undefined) {
    id = generateId();
  } else {
    const field = doc !== null && typeof doc === 'object' && !Array.isArray(doc) ? doc[idField] : undefined;
    if (field === undefined) return { bad: badRecord(record, record.start, `no ${JSON.stringify(idField)} field (the --id-field)`) };
    if (!isDocId(field)) {
      return { bad: badRecord(record, record.start, `the ${JSON.stringify(idField)} field is not a document id (a non-empty string or an integer)`) };
    }
    id = field;
  }
  return { record, id, writes: documentWrites(collection, id, doc, record.text.length) };
}

/** The writes of a record of an export, or why it is bad. */
function exportItem(collection: Collection, record: InputRecord, value: JsonValue): Writes | { bad: BadRecord } {
  const parsed = recordOf(value);
  if ('reason' in parsed) return { bad: badRecord(record, record.start, parsed.reason) };
  return { record, id: parsed.id, writes: recordWrites(collection, parsed, record.text.length) };
}
