import type { StructureKind } from '../document/keys/kind';
import type { DocId, JsonValue } from '../document/types';
import { stringifyJson } from './json-text';
import { queueDetailsOf, type QueueDetails } from './queue-record';

/**
 * The format `doclayer export` writes and `doclayer import` reads back: newline-delimited JSON whose
 * first line is a header, then one record per document, in id order:
 *
 *     {"doclayer":"export","version":2}
 *     {"id":"order-00001","value":{"customer":{...},"items":[...]}}
 *     {"id":42,"expiresAt":"2030-01-01T00:00:00.000Z","value":[1,2]}
 *     {"id":"countries","kind":"set","value":["AU","CA"]}
 *     {"id":"jobs","kind":"queue","queue":{"items":[{},{"priority":2},{"visibleAt":1893456000000}],"rateLimit":{"max":10,"intervalMs":1000}},"value":["c","b","a"]}
 *
 * A record holds the document's id (a string, or an integer: a bigint beyond 2^53 is an integer
 * literal), its `kind` when it is a data structure (list, map, set, queue, counter, text, sortedset; absent for a
 * plain JSON document), its `expiresAt` when it expires (ISO 8601, to the millisecond) and its `value`:
 * the document, or the structure's JSON form (what `get` returns: a set's members, a queue's items
 * with the next to pop last, a counter's number). Numbers are written as `json-text.ts` writes them,
 * so each reads back as the same value (`-0`, bigints, integers beyond 2^53).
 *
 * A queue's record may also hold `queue`, what its JSON form leaves out (`queue-record.ts`, absent
 * when all of it is the default): `items`, one entry per item in the order of `value` (`{}`, a ready
 * item's `priority`, or the `visibleAt` time in ms of a delayed, nacked or leased item: a lease is
 * exported as its deadline); `events`, its event settings; `rateLimit`; `repeats`, its repeatable jobs
 * from their next occurrence, with the occurrences left as `limit`. Attempt counts, leases, job ids
 * and progress, the event log and the rate limit's current window are not carried.
 *
 * Version 1 (no `queue` field: queues exported before it lose their priorities, visibility times
 * and settings) is read as well. The header tells an export from plain documents, which may be any
 * JSON at all: an input whose first record is not a header is plain documents, the format
 * `export --documents` writes.
 */

/** The format version this doclayer writes and reads. */
export const EXPORT_VERSION = 2;

/** The format versions this doclayer reads: 1 is 2 without queues' details. */
const READABLE_VERSIONS: readonly number[] = [1, EXPORT_VERSION];

/** The first line of an export. */
export const EXPORT_HEADER_LINE = `{"doclayer":"export","version":${EXPORT_VERSION}}`;

/** One document of an export. */
export interface ExportRecord {
  readonly id: DocId;
  /** The structure's kind; absent for a plain JSON document. */
  readonly kind?: StructureKind;
  readonly expiresAt?: Date;
  /** A queue's priorities, visibility times and settings, when any is not the default. */
  readonly queue?: QueueDetails;
  readonly value: JsonValue;
}

const KINDS: ReadonlySet<string> = new Set<StructureKind>(['list', 'map', 'set', 'queue', 'counter', 'text', 'sortedset']);
const FIELDS: ReadonlySet<string> = new Set(['id', 'kind', 'expiresAt', 'queue', 'value']);
/** An instant as `Date.prototype.toISOString` writes it (or with an offset, or fewer digits of seconds). */
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?(Z|[+-]\d{2}:\d{2})$/;

/** The line of one record (without its newline). */
export function formatRecord(record: ExportRecord): string {
  const line: { [field: string]: JsonValue } = { id: record.id };
  if (record.kind !== undefined) line.kind = record.kind;
  if (record.expiresAt !== undefined) line.expiresAt = record.expiresAt.toISOString();
  if (record.queue !== undefined) line.queue = record.queue as unknown as JsonValue;
  line.value = record.value;
  return stringifyJson(line);
}

/** Whether a record of the input is an export's header (`{"doclayer":"export", ...}`). */
export function isExportHeader(value: JsonValue): value is { [field: string]: JsonValue } {
  return isObject(value) && value.doclayer === 'export';
}

/** Why this doclayer cannot read the export a header starts, or `undefined` when it can. */
export function headerProblem(header: { [field: string]: JsonValue }): string | undefined {
  if (typeof header.version === 'number' && READABLE_VERSIONS.includes(header.version)) return undefined;
  return `an export of format version ${stringifyJson(header.version ?? null)}: this doclayer reads versions ${READABLE_VERSIONS.join(' and ')}`;
}

/** The record a parsed line holds, or why it is not one. */
export function recordOf(value: JsonValue): ExportRecord | { reason: string } {
  if (!isObject(value)) return { reason: 'a record of an export is an object with "id" and "value"' };
  for (const field of Object.keys(value)) {
    if (!FIELDS.has(field)) return { reason: `unknown field ${JSON.stringify(field)} in a record (it has id, kind, expiresAt and value)` };
  }
  const { id, kind, expiresAt, queue, value: content } = value;
  if (id === undefined) return { reason: 'the record has no "id"' };
  if (!isDocId(id)) return { reason: 'the record\'s "id" is not a document id (a non-empty string or an integer)' };
  if (content === undefined) return { reason: 'the record has no "value"' };
  if (kind !== undefined && (typeof kind !== 'string' || !KINDS.has(kind))) {
    return { reason: `unknown kind ${stringifyJson(kind)} (one of ${[...KINDS].join(', ')}; absent for a plain document)` };
  }
  const shape = kind === undefined ? undefined : shapeProblem(kind as StructureKind, content);
  if (shape !== undefined) return { reason: shape };
  if (queue !== undefined && kind !== 'queue') return { reason: 'only a queue\'s record has a "queue" field' };
  const details = queue === undefined ? undefined : queueDetailsOf(queue, (content as JsonValue[]).length);
  if (details !== undefined && 'reason' in details) return details;
  const kindOf = {
    ...(kind === undefined ? {} : { kind: kind as StructureKind }),
    ...(details === undefined ? {} : { queue: details }),
  };
  if (expiresAt === undefined) return { id, value: content, ...kindOf };
  const instant = typeof expiresAt === 'string' && ISO_INSTANT.test(expiresAt) ? new Date(expiresAt) : undefined;
  if (instant === undefined || Number.isNaN(instant.getTime())) {
    return { reason: '"expiresAt" is an ISO 8601 instant, such as "2030-01-01T00:00:00.000Z"' };
  }
  return { id, value: content, ...kindOf, expiresAt: instant };
}

/** Why `value` is not the JSON form of a `kind`, or `undefined` when it is. */
function shapeProblem(kind: StructureKind, value: JsonValue): string | undefined {
  switch (kind) {
    case 'list':
    case 'queue':
      return Array.isArray(value) ? undefined : `a ${kind}'s value is an array`;
    case 'set':
      return Array.isArray(value) && value.every((member) => member === null || typeof member !== 'object')
        ? undefined
        : "a set's value is an array of strings, numbers, booleans and nulls";
    case 'map':
      return isObject(value) ? undefined : "a map's value is an object";
    case 'counter':
      return typeof value === 'bigint' || Number.isInteger(value) ? undefined : "a counter's value is an integer";
    case 'text':
      return typeof value === 'string' ? undefined : "a text's value is a string";
    case 'sortedset':
      return Array.isArray(value) && value.every(isScoredMember)
        ? undefined
        : "a sorted set's value is an array of [member, score] pairs (a string and a finite number)";
  }
}

function isScoredMember(pair: JsonValue): boolean {
  return Array.isArray(pair) && pair.length === 2 && typeof pair[0] === 'string' && typeof pair[1] === 'number' && Number.isFinite(pair[1]);
}

function isObject(value: JsonValue): value is { [field: string]: JsonValue } {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Whether `value` can be a document id: a non-empty string or an integer (the document layer checks the rest). */
export function isDocId(value: JsonValue): value is DocId {
  return (typeof value === 'string' && value.length > 0) || typeof value === 'bigint' || Number.isSafeInteger(value);
}
