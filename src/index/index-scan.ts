import { Buffer } from 'node:buffer';
import { DocumentError } from '../document/errors';
import { docIdOf } from '../document/keys/ids';
import type { DocId } from '../document/types';
import { keyAfter } from '../kv/contract/bytes';
import type { KeyValue, Transaction } from '../kv/contract/types';
import type { IndexValue, ValueType } from '../filter/value-order';
import { decodeItem, Reader } from '../tuple/codec';
import { readIncluded, type CompiledIndex } from './compiled-index';
import { encodeValue, invert, typeEndByte, typeStartByte, ValueReader } from './value-key';

/**
 * Index scans: one interval of an index, in terms of its field values, turned into one key range and
 * read in key order (see docs/indexes.md). Entries of expired documents are skipped (each entry
 * records its document's expiry), so a scan never returns a document a read would call missing.
 */

/** A bound on the field after the equality prefix, in VALUE order. */
export type IndexBound =
  { readonly value: IndexValue; readonly inclusive: boolean } | { readonly typeStart: ValueType } | { readonly typeEnd: ValueType };

/** One interval of an index in terms of its field values, in VALUE order (the scan maps desc fields). */
export interface IndexInterval {
  /** Values of the first k fields (may be empty). */
  readonly equal: readonly IndexValue[];
  /** Bound on field k (the one after the equal prefix). */
  readonly lower?: IndexBound;
  readonly upper?: IndexBound;
}

export interface IndexEntry {
  readonly id: DocId;
  /** One per field. */
  readonly values: readonly IndexValue[];
  /** The `include` paths' values. */
  readonly included: ReadonlyMap<string, IndexValue>;
  /** Opaque position of this entry: resume strictly after it (`after`). */
  readonly cursor: Buffer;
}

export interface IndexScanOptions {
  readonly reverse?: boolean;
  /** Resume strictly after this entry's cursor (in the scan's direction). */
  readonly after?: Buffer;
  readonly limit?: number;
  /** Read without read conflicts. */
  readonly snapshot?: boolean;
}

/**
 * A cut between encodings of field k, in ascending byte space: encodings below it are outside on the
 * left. `kind` says how it maps when the field is desc (its bytes inverted).
 */
type Cut = { kind: 'min' } | { kind: 'max' } | { kind: 'before'; bytes: Buffer } | { kind: 'after'; bytes: Buffer } | { kind: 'tag'; byte: number };

function ascBytes(cut: Cut): Buffer {
  switch (cut.kind) {
    case 'min':
      return Buffer.alloc(0);
    case 'max':
      return Buffer.of(0xff);
    case 'before':
      return cut.bytes;
    case 'after':
      return Buffer.concat([cut.bytes, Buffer.of(0xff)]);
    case 'tag':
      return Buffer.of(cut.byte);
  }
}

/** The same cut in the inverted byte space of a desc field (order reversed). */
function descBytes(cut: Cut): Buffer {
  switch (cut.kind) {
    case 'min':
      return Buffer.of(0xff);
    case 'max':
      return Buffer.alloc(0);
    case 'before':
      return Buffer.concat([invert(cut.bytes), Buffer.of(0xff)]);
    case 'after':
      return invert(cut.bytes);
    case 'tag':
      return Buffer.of(0x100 - cut.byte);
  }
}

function lowerCut(bound: IndexBound | undefined): Cut {
  if (bound === undefined) return { kind: 'min' };
  if ('value' in bound)
    return bound.inclusive ? { kind: 'before', bytes: encodeValue(bound.value) } : { kind: 'after', bytes: encodeValue(bound.value) };
  if ('typeStart' in bound) return { kind: 'tag', byte: typeStartByte(bound.typeStart) };
  return { kind: 'tag', byte: typeEndByte(bound.typeEnd) };
}

function upperCut(bound: IndexBound | undefined): Cut {
  if (bound === undefined) return { kind: 'max' };
  if ('value' in bound)
    return bound.inclusive ? { kind: 'after', bytes: encodeValue(bound.value) } : { kind: 'before', bytes: encodeValue(bound.value) };
  if ('typeStart' in bound) return { kind: 'tag', byte: typeStartByte(bound.typeStart) };
  return { kind: 'tag', byte: typeEndByte(bound.typeEnd) };
}

/**
 * The key range `[begin, end)` of an interval of `index`.
 *
 * @throws DocumentError INVALID_ARGUMENT for more equal values than fields, or bounds with every field equal.
 */
export function intervalRange(index: CompiledIndex, interval: IndexInterval): { begin: Buffer; end: Buffer } {
  const fields = index.stored.fields;
  const equal: readonly IndexValue[] = interval.equal;
  if (!(equal instanceof Array) || equal.length > fields.length) {
    throw new DocumentError('INVALID_ARGUMENT', `index ${index.name} has ${fields.length} fields: an interval gives at most that many equal values`);
  }
  const prefix = Buffer.concat([index.entriesPrefix, ...equal.map((v, i) => (fields[i].order === 'desc' ? invert(encodeValue(v)) : encodeValue(v)))]);
  if (equal.length === fields.length) {
    if (interval.lower !== undefined || interval.upper !== undefined) {
      throw new DocumentError('INVALID_ARGUMENT', `index ${index.name}: bounds need a field after the equal values`);
    }
    return { begin: prefix, end: Buffer.concat([prefix, Buffer.of(0xff)]) };
  }
  const lower = lowerCut(interval.lower);
  const upper = upperCut(interval.upper);
  const desc = fields[equal.length].order === 'desc';
  const begin = desc ? descBytes(upper) : ascBytes(lower);
  const end = desc ? descBytes(lower) : ascBytes(upper);
  return { begin: Buffer.concat([prefix, begin]), end: Buffer.concat([prefix, end]) };
}

/**
 * An entry as scans return it. Its cursor is cut from the key only when asked for: a page needs the
 * cursor of its last entry alone.
 */
class ScannedEntry implements IndexEntry {
  constructor(
    readonly id: DocId,
    readonly values: readonly IndexValue[],
    readonly included: ReadonlyMap<string, IndexValue>,
    private readonly key: Buffer,
    private readonly prefixLength: number,
  ) {}

  get cursor(): Buffer {
    return this.key.subarray(this.prefixLength);
  }
}

/**
 * The entry in `pair` as a scan returns it, or `undefined` when its document expired at `now` (the
 * expiry is read first: the key and the included values of an expired entry are not decoded).
 */
function liveEntry(index: CompiledIndex, pair: KeyValue, now: number): IndexEntry | undefined {
  const reader = new ValueReader(pair.value, 0);
  const expiry = reader.read();
  if (typeof expiry === 'number' && expiry <= now) return undefined;
  const key = pair.key;
  const prefixLength = index.entriesPrefix.length;
  const fields = index.stored.fields;
  const values: IndexValue[] = new Array<IndexValue>(fields.length);
  let pos = prefixLength;
  for (let i = 0; i < fields.length; i++) {
    const field = new ValueReader(key, pos, fields[i].order === 'desc');
    values[i] = field.read();
    pos = field.pos;
  }
  const id = docIdOf(decodeItem(new Reader(key, pos)));
  return new ScannedEntry(id, values, readIncluded(reader, index.include), key, prefixLength);
}

/** The key range an interval and the scan options' `after` leave, `undefined` when it is empty. */
function scanRange(index: CompiledIndex, interval: IndexInterval, opts: IndexScanOptions): { begin: Buffer; end: Buffer } | undefined {
  let { begin, end } = intervalRange(index, interval);
  if (opts.after !== undefined) {
    const at = Buffer.concat([index.entriesPrefix, opts.after]);
    if (opts.reverse === true) {
      if (Buffer.compare(at, end) < 0) end = at;
    } else if (Buffer.compare(keyAfter(at), begin) > 0) begin = keyAfter(at);
  }
  return Buffer.compare(begin, end) < 0 ? { begin, end } : undefined;
}

function checkedLimit(opts: IndexScanOptions): number {
  const limit = opts.limit ?? Infinity;
  if (limit !== Infinity && (!Number.isSafeInteger(limit) || limit < 0)) {
    throw new DocumentError('INVALID_ARGUMENT', `limit is a non-negative integer, got ${String(limit)}`);
  }
  return limit;
}

/** The entries of `interval` in `index`, in key order (or reversed), skipping those of documents expired at `now`. */
export async function* scanIndex(
  tr: Transaction,
  index: CompiledIndex,
  interval: IndexInterval,
  opts: IndexScanOptions,
  now: number,
): AsyncIterable<IndexEntry> {
  const range = scanRange(index, interval, opts);
  if (range === undefined) return;
  const limit = checkedLimit(opts);
  if (limit === 0) return;
  const reader = opts.snapshot === true ? tr.snapshot() : tr;
  let yielded = 0;
  for await (const pair of reader.getRange(range.begin, range.end, { reverse: opts.reverse === true })) {
    const entry = liveEntry(index, pair, now);
    if (entry === undefined) continue;
    yield entry;
    if (++yielded >= limit) return;
  }
}

/**
 * What {@link scanIndex} yields, as one array: a range read of at most `limit` entries (the whole
 * interval without a limit), and another after it for each batch in which expired entries left the
 * count short.
 */
export async function readIndex(
  tr: Transaction,
  index: CompiledIndex,
  interval: IndexInterval,
  opts: IndexScanOptions,
  now: number,
): Promise<IndexEntry[]> {
  const range = scanRange(index, interval, opts);
  const limit = checkedLimit(opts);
  const out: IndexEntry[] = [];
  if (range === undefined || limit === 0) return out;
  const reader = opts.snapshot === true ? tr.snapshot() : tr;
  const reverse = opts.reverse === true;
  let { begin, end } = range;
  for (;;) {
    const want = limit - out.length;
    const pairs = await reader.getRangeAll(begin, end, want === Infinity ? { reverse } : { reverse, limit: want });
    for (const pair of pairs) {
      const entry = liveEntry(index, pair, now);
      if (entry !== undefined) out.push(entry);
    }
    if (out.length >= limit || pairs.length < want || pairs.length === 0) return out;
    const last = pairs[pairs.length - 1].key;
    if (reverse) end = last;
    else begin = keyAfter(last);
  }
}
