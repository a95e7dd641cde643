import { Buffer } from 'node:buffer';
import { DocumentError } from '../document/errors';
import { docIdOf } from '../document/keys/ids';
import type { JsonValue } from '../document/types';
import { MISSING, type IndexValue } from '../filter/value-order';
import { compileFilter, type CompiledFilter, type FilterNode } from '../filter';
import type { StoredIndex } from './definition';
import { parsedPaths } from './definition';
import { valuesAt, type IndexPath } from './index-path';
import { entryKey, type IndexKeys } from './index-keys';
import { encodeValue, invert, ValueReader } from './value-key';
import type { TupleItem } from '../tuple';

/**
 * One index of a collection, ready to compute entries: its definition, parsed paths and key prefix.
 */

/** Most entries one document may give one index (a `[*]` path fans out; several multiply). */
export const MAX_ENTRIES_PER_DOCUMENT = 1000;
/** FoundationDB's value limit: an entry's value (expiry and included values) must fit. */
export const MAX_ENTRY_VALUE_BYTES = 100_000;

/** One entry of one document in one index. */
export interface Entry {
  readonly index: CompiledIndex;
  readonly key: Buffer;
  /** The encoded field values: the key between the index's prefix and the document id. */
  readonly values: Buffer;
  /** The stored value; `undefined` when the document's expiry is unknown (a write then always rewrites it). */
  readonly value: Buffer | undefined;
}

export class CompiledIndex {
  readonly fields: readonly IndexPath[];
  readonly include: readonly IndexPath[];
  readonly entriesPrefix: Buffer;
  /** A partial index's filter, and the paths it reads. */
  readonly filter: CompiledFilter | undefined;
  private readonly filterPaths: readonly IndexPath[];

  constructor(
    readonly stored: StoredIndex,
    keys: IndexKeys,
  ) {
    const paths = parsedPaths(stored);
    this.fields = paths.fields;
    this.include = paths.include;
    this.entriesPrefix = keys.entries(stored.id);
    this.filter = stored.where === undefined ? undefined : compileFilter(stored.where);
    this.filterPaths = this.filter === undefined ? [] : filterPaths(this.filter.root);
  }

  get name(): string {
    return this.stored.name;
  }

  /** Every path the index reads: fields and includes. */
  get paths(): readonly IndexPath[] {
    return [...this.fields, ...this.include, ...this.filterPaths];
  }

  /**
   * The entries `doc` (document `id`) gives this index, one per distinct tuple of field values.
   *
   * @throws DocumentError TOO_MANY_INDEX_ENTRIES naming the document when they exceed
   *   {@link MAX_ENTRIES_PER_DOCUMENT}.
   */
  entriesOf(id: TupleItem, doc: JsonValue, expiresAt: number | undefined | 'unknown'): Entry[] {
    if (this.filter !== undefined && !this.filter.matches(doc)) return [];
    const perField = this.fields.map((path, i) => {
      const seen = new Map<string, Buffer>();
      for (const value of valuesAt(doc, path)) {
        const encoded = encodeValue(value);
        const bytes = this.stored.fields[i].order === 'desc' ? invert(encoded) : encoded;
        seen.set(bytes.toString('latin1'), bytes);
      }
      return [...seen.values()];
    });
    const total = perField.reduce((n, values) => n * values.length, 1);
    if (total > MAX_ENTRIES_PER_DOCUMENT) {
      throw new DocumentError(
        'TOO_MANY_INDEX_ENTRIES',
        `document ${describe(id)} gives index ${this.name} ${total} entries, over the limit of ${MAX_ENTRIES_PER_DOCUMENT} per document`,
        { id: docIdOf(id) },
      );
    }
    let tuples: Buffer[][] = [[]];
    for (const values of perField) tuples = tuples.flatMap((tuple) => values.map((v) => [...tuple, v]));
    const value = expiresAt === 'unknown' ? undefined : this.entryValue(doc, expiresAt);
    return tuples.map((tuple) => {
      const values = Buffer.concat(tuple);
      return { index: this, key: entryKey(this.entriesPrefix, values, id), values, value };
    });
  }

  /** An entry's value: the document's expiry (MISSING for none), then each `include` path's value. */
  private entryValue(doc: JsonValue, expiresAt: number | undefined): Buffer {
    const parts = [encodeValue(expiresAt ?? MISSING)];
    for (const path of this.include) parts.push(encodeValue(valuesAt(doc, path)[0]));
    return Buffer.concat(parts);
  }
}

/** The paths a filter reads, as plain index paths (a write at any of them may change whether a document matches). */
function filterPaths(node: FilterNode): IndexPath[] {
  switch (node.kind) {
    case 'and':
    case 'or':
      return node.children.flatMap(filterPaths);
    case 'not':
      return filterPaths(node.child);
    case 'path':
      return [{ text: node.path, components: node.parts, multikey: false }];
    default:
      return [];
  }
}

/** The included values after an entry value's expiry (a shared empty map for an index without `include`). */
export function readIncluded(reader: ValueReader, include: readonly IndexPath[]): ReadonlyMap<string, IndexValue> {
  if (include.length === 0) return NOTHING_INCLUDED;
  const included = new Map<string, IndexValue>();
  for (const path of include) included.set(path.text, reader.read());
  return included;
}

const NOTHING_INCLUDED: ReadonlyMap<string, IndexValue> = new Map();

/** The expiry an entry's value records, without decoding the included values. */
export function entryExpiry(value: Uint8Array): number | undefined {
  const expiry = new ValueReader(value, 0).read();
  return typeof expiry === 'number' ? expiry : undefined;
}

export function describe(id: TupleItem): string {
  const docId = docIdOf(id);
  return typeof docId === 'string' ? JSON.stringify(docId) : String(docId);
}
