import type { Collection } from '../collection';
import { generateId } from '../document/keys/ids';
import type { DocId, JsonValue } from '../document/types';
import type { Database } from '../kv/contract/database';
import { BatchWriter, type BatchItem } from './batch-writer';
import { JsonSyntaxError, parseJson } from './json-text';
import { InputStructureError, type InputRecord } from './record-reader';
import { offsetBy, positionOf, type TextPosition } from './text-position';

/**
 * `doclayer import`: JSON records (see `record-reader.ts`) into a collection, in batches that respect
 * FoundationDB's transaction limits (`batch-writer.ts`).
 *
 * A record that is not valid JSON, lacks the id field or is refused by the document layer is a bad
 * record, reported with its line (and column, for bad JSON). By default the first one stops the
 * import: every record before it is committed, nothing after it is read, and the summary gives the
 * line to resume from (`--from-line`). With `skipBad` it is reported and skipped. An input that
 * cannot be split into records stops the import the same way, whatever `skipBad` says.
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
  const writer = new BatchWriter<InputRecord>(options.collection, options.kv, {
    onCommitted: (documents) => {
      summary.imported += documents;
      options.onProgress?.(summary.imported, bytesRead);
    },
    onRejected: (item, error) => bad(badRecord(item.tag, item.tag.start, error.message)),
  });
  const fromLine = options.fromLine ?? 1;
  try {
    for await (const record of records) {
      bytesRead = record.bytesRead;
      if (record.start.line < fromLine) {
        summary.passedOver++;
        continue;
      }
      const item = toItem(record, options.idField);
      if ('reason' in item) {
        if (bad(item)) continue;
        break;
      }
      await writer.add(item);
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

/** The document and id of a record, or why it is bad. */
function toItem(record: InputRecord, idField: string | undefined): BatchItem<InputRecord> | BadRecord {
  let doc: JsonValue;
  try {
    doc = parseJson(record.text);
  } catch (err) {
    if (!(err instanceof JsonSyntaxError)) throw err;
    return badRecord(record, offsetBy(positionOf(record.text, err.offset), record.start), `bad JSON: ${err.reason}`);
  }
  let id: DocId;
  if (idField === undefined) {
    id = generateId();
  } else {
    const field = doc !== null && typeof doc === 'object' && !Array.isArray(doc) ? doc[idField] : undefined;
    if (field === undefined) return badRecord(record, record.start, `no ${JSON.stringify(idField)} field (the --id-field)`);
    if (!isDocId(field)) {
      return badRecord(record, record.start, `the ${JSON.stringify(idField)} field is not a document id (a non-empty string or an integer)`);
    }
    id = field;
  }
  return { id, doc, bytes: record.text.length, tag: record };
}

function isDocId(value: JsonValue): value is DocId {
  return (typeof value === 'string' && value.length > 0) || typeof value === 'bigint' || Number.isSafeInteger(value);
}
