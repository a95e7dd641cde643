import type { Collection } from '../collection';
import { isDocumentError } from '../document/errors';
import type { DocId, JsonValue } from '../document/types';
import type { Transaction } from '../kv/contract/types';
import type { StructureKind } from '../document/keys/kind';
import type { SetMember } from '../structures/set';
import type { ScoredMember } from '../structures/sorted-set';
import type { ExportRecord } from './export-format';
import { stringifyJson } from './json-text';
import type { Structure } from '../structures/structure';
import { QueueWriter, type QueueItemDetails } from './queue-record';

/**
 * How one record of an import is written: as writes small enough for the batch writer to pack into
 * bounded transactions (`batch-writer.ts`). A plain document is one write, an upsert. A structure is
 * re-created through its own API, in order: its first write removes whatever is at its id, then each
 * write adds a slice of its elements (a set's members, a list's or a queue's items in order, a map's
 * entries, a text's characters; a queue's items pushed with their priorities or visibility times, then
 * its settings), so that a structure of any size is imported without a transaction
 * over FoundationDB's limits, and importing the record again (a resumed import) starts it afresh.
 */

/** One write of a record, run in a transaction the batch writer chooses. */
export interface RecordWrite {
  /** About how many bytes of JSON it writes: what batches are measured in. */
  readonly bytes: number;
  /** How many documents or elements it writes: a transaction holds a bounded number of them. */
  readonly elements: number;
  /** Whether it must run after the writes before it have committed (in a later transaction). */
  readonly afterCommit: boolean;
  run(tr: Transaction): Promise<void>;
}

/** A structure's writes add elements in slices of about this many bytes of JSON... */
const SLICE_BYTES = 64_000;
/** ...or this many elements. */
const SLICE_ELEMENTS = 1_000;
/** A text is written in slices of this many UTF-16 code units (a pair is never cut). */
const TEXT_SLICE_UNITS = 250_000;

/** The writes of a plain document, whose id comes from the record or the caller. */
export function documentWrites(collection: Collection, id: DocId, doc: JsonValue, bytes: number, expiresAt?: Date): RecordWrite[] {
  const options = expiresAt === undefined ? {} : { expiry: expiresAt };
  return [{ bytes, elements: 1, afterCommit: false, run: async (tr) => void (await collection.upsert(id, doc, { tr, ...options })) }];
}

/** The writes of an export record (see `export-format.ts`), in the order they must run. */
export function recordWrites(collection: Collection, record: ExportRecord, bytes: number): RecordWrite[] {
  const { kind, expiresAt } = record;
  if (kind === undefined) return documentWrites(collection, record.id, record.value, bytes, expiresAt);
  const writes = structureWrites(collection, record, kind, bytes);
  if (expiresAt === undefined) return writes;
  // The expiry comes last: a structure that expired before the import ends expired, not cut short by
  // a later slice's write starting it afresh.
  const handle = structureHandle(collection, kind, record.id);
  return [...writes, { bytes: 0, elements: 1, afterCommit: false, run: async (tr) => void (await handle.touch(expiresAt, { tr })) }];
}

/** A handle on the structure of `kind` at `id` (every kind has a case: the compiler checks it). */
function structureHandle(collection: Collection, kind: StructureKind, id: DocId): Structure {
  switch (kind) {
    case 'list':
      return collection.list(id);
    case 'map':
      return collection.map(id);
    case 'set':
      return collection.set(id);
    case 'queue':
      return collection.queue(id);
    case 'counter':
      return collection.counter(id);
    case 'text':
      return collection.text(id);
    case 'sortedset':
      return collection.sortedSet(id);
  }
}

/** The writes that re-create a structure's elements, without its expiry. */
function structureWrites(collection: Collection, record: ExportRecord, kind: StructureKind, bytes: number): RecordWrite[] {
  const { id, value } = record;
  switch (kind) {
    case 'list': {
      const list = collection.list(id);
      return elementWrites(
        collection,
        id,
        value as JsonValue[],
        sizeOf,
        async (items, tr) => {
          for (const item of items) await list.push(item, { tr });
        },
        async (tr) => {
          // A list exists once written to: an empty one is an element pushed and popped.
          await list.push(null, { tr });
          await list.pop({ tr });
        },
      );
    }
    case 'queue': {
      const queue = collection.queue(id);
      const writer = new QueueWriter(collection, id);
      const details = record.queue;
      // The JSON form has the next item to pop last: pushed in pop order, each with its place.
      const items = (value as JsonValue[]).map((item, i): QueueItem => ({ value: item, details: details?.items?.[i] ?? {} })).reverse();
      const settings = details !== undefined && (details.events ?? details.rateLimit ?? details.repeats) !== undefined;
      const configure = async (tr: Transaction) => {
        if (details !== undefined) await writer.configure(details, tr);
      };
      const writes = elementWrites(
        collection,
        id,
        items,
        (item) => sizeOf(item.value),
        (slice, tr) => pushRuns(writer, slice, tr),
        settings ? configure : (tr) => queue.push(null, { tr }),
      );
      // The settings come after the items, as on a queue whose events were turned on after its items
      // were pushed: the import writes no events (the source's event log is its history, not carried).
      if (settings) return items.length === 0 ? writes : [...writes, { bytes: 0, elements: 1, afterCommit: false, run: configure }];
      if (items.length > 0) return writes;
      // A pushed item (at a versionstamped key) cannot be popped before its push commits.
      return [...writes, { bytes: 0, elements: 1, afterCommit: true, run: async (tr) => void (await queue.pop({ tr })) }];
    }
    case 'set': {
      const set = collection.set(id);
      return elementWrites(
        collection,
        id,
        value as SetMember[],
        sizeOf,
        async (members, tr) => {
          for (const member of members) await set.add(member, { tr });
        },
        async (tr) => {
          await set.add(null, { tr });
          await set.delete(null, { tr });
        },
      );
    }
    case 'sortedset': {
      const sortedSet = collection.sortedSet(id);
      return elementWrites(
        collection,
        id,
        value as ScoredMember[],
        ([member]) => member.length + 24,
        async (pairs, tr) => {
          for (const [member, score] of pairs) await sortedSet.add(member, score, { tr });
        },
        async (tr) => {
          await sortedSet.add('', 0, { tr });
          await sortedSet.remove('', { tr });
        },
      );
    }
    case 'map': {
      const map = collection.map(id);
      const entries = Object.entries(value as { [key: string]: JsonValue });
      return elementWrites(
        collection,
        id,
        entries,
        ([key, item]) => key.length + sizeOf(item),
        async (slice, tr) => {
          for (const [key, item] of slice) await map.set(key, item, { tr });
        },
        async (tr) => {
          await map.set('', null, { tr });
          await map.delete('', { tr });
        },
      );
    }
    case 'counter': {
      const counter = collection.counter(id);
      return [firstWrite(collection, id, bytes, 1, (tr) => counter.set(value as number | bigint, { tr }))];
    }
    case 'text': {
      const text = collection.text(id);
      const slices = textSlices(value as string);
      return slices.map((slice, i) =>
        i === 0
          ? firstWrite(collection, id, slice.length, 1, (tr) => text.set(slice, { tr }))
          : { bytes: slice.length, elements: 1, afterCommit: false, run: (tr: Transaction) => text.append(slice, { tr }) },
      );
    }
  }
}

/** A queue's item to push, with its priority or visibility time. */
interface QueueItem {
  readonly value: JsonValue;
  readonly details: QueueItemDetails;
}

/** Pushes `items`, in pop order, as runs of consecutive items with the same priority or visibility time. */
async function pushRuns(writer: QueueWriter, items: readonly QueueItem[], tr: Transaction): Promise<void> {
  for (let from = 0; from < items.length;) {
    const { priority, visibleAt } = items[from].details;
    let to = from + 1;
    while (to < items.length && items[to].details.priority === priority && items[to].details.visibleAt === visibleAt) to++;
    await writer.push(
      items.slice(from, to).map((item) => item.value),
      items[from].details,
      tr,
    );
    from = to;
  }
}

/** The size of an element's JSON, for batching. */
function sizeOf(value: JsonValue): number {
  return typeof value === 'string' ? value.length + 2 : stringifyJson(value).length;
}

/**
 * Writes adding `elements` in slices by `add`, the first after removing what is at the id; for no
 * elements, one write that removes it and creates the empty structure by `createEmpty`.
 */
function elementWrites<E>(
  collection: Collection,
  id: DocId,
  elements: readonly E[],
  size: (element: E) => number,
  add: (slice: E[], tr: Transaction) => Promise<void>,
  createEmpty: (tr: Transaction) => Promise<void>,
): RecordWrite[] {
  if (elements.length === 0) return [firstWrite(collection, id, 0, 1, createEmpty)];
  const writes: RecordWrite[] = [];
  let slice: E[] = [];
  let bytes = 0;
  const close = () => {
    const elementsOf = slice;
    const write =
      writes.length === 0
        ? firstWrite(collection, id, bytes, elementsOf.length, (tr) => add(elementsOf, tr))
        : { bytes, elements: elementsOf.length, afterCommit: false, run: (tr: Transaction) => add(elementsOf, tr) };
    writes.push(write);
    slice = [];
    bytes = 0;
  };
  for (const element of elements) {
    slice.push(element);
    bytes += size(element);
    if (bytes >= SLICE_BYTES || slice.length >= SLICE_ELEMENTS) close();
  }
  if (slice.length > 0) close();
  return writes;
}

/** A structure's first write: removes the document at its id (whatever it is), then runs `write`. */
function firstWrite(collection: Collection, id: DocId, bytes: number, elements: number, write: (tr: Transaction) => Promise<unknown>): RecordWrite {
  return {
    bytes,
    elements,
    afterCommit: false,
    run: async (tr) => {
      await removeDocument(collection, id, tr);
      await write(tr);
    },
  };
}

/** Removes the document at `id`, if there is one. */
export async function removeDocument(collection: Collection, id: DocId, tr?: Transaction): Promise<void> {
  try {
    await collection.remove(id, tr === undefined ? {} : { tr });
  } catch (err) {
    if (!isDocumentError(err, 'DOCUMENT_NOT_FOUND')) throw err;
  }
}

/** `text` cut into slices of at most {@link TEXT_SLICE_UNITS} code units, never inside a surrogate pair. */
function textSlices(text: string): string[] {
  const slices: string[] = [];
  let from = 0;
  do {
    let to = Math.min(text.length, from + TEXT_SLICE_UNITS);
    const before = text.charCodeAt(to - 1);
    if (to < text.length && before >= 0xd800 && before <= 0xdbff) to--;
    slices.push(text.slice(from, to));
    from = to;
  } while (from < text.length);
  return slices;
}
