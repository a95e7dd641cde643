/**
 * An in-memory stand-in for src/index's `IndexAccess` (the issue-14 contract), for testing the planner
 * and the executor before (and independently of) the real index: every scan recomputes the entries
 * from the collection's documents as the transaction sees them (so it sees the caller's own writes),
 * sorts them in key order with `compareValues`, and returns those inside the interval.
 *
 * Entries follow the contract's rules (plain paths stop at arrays, `[*]` fans out, one entry per
 * distinct tuple); cursors are positions in key order that stay valid across transactions.
 */
import type { Collection } from '../../src';
import { DocumentError } from '../../src/document/errors';
import type { Transaction } from '../../src/kv/contract/types';
import { compileFilter, compareValues, MISSING, type IndexValue } from '../../src/filter';
import { entryTuples, parseIndexPath } from '../../src/query/index-fields';
import type { IndexAccess, IndexDescription, IndexEntry, IndexInterval, IndexScanOptions } from '../../src/query/index-port';
import { inInterval } from '../../src/query/intervals';
import { compareIds } from '../../src/query/order-key';
import type { DocId, JsonValue } from '../../src/document/types';

export interface FakeIndexSpec {
  readonly name: string;
  readonly fields: readonly (string | { path: string; order: 'asc' | 'desc' })[];
  readonly where?: Record<string, unknown>;
  readonly include?: readonly string[];
  readonly state?: 'building' | 'ready';
}

interface Position {
  readonly values: readonly IndexValue[];
  readonly id: DocId;
}

export class FakeIndexAccess implements IndexAccess {
  readonly descriptions: IndexDescription[];
  /** Scans issued and entries returned, for assertions. */
  scans = 0;
  entriesReturned = 0;
  private readonly positions: Position[] = [];

  constructor(
    private readonly collection: Collection,
    specs: readonly FakeIndexSpec[],
  ) {
    this.descriptions = specs.map((s) => ({
      name: s.name,
      fields: s.fields.map((f) => (typeof f === 'string' ? { path: f, order: 'asc' as const } : f)),
      unique: false,
      where: s.where,
      include: s.include ?? [],
      state: s.state ?? 'ready',
    }));
  }

  list(_tr: Transaction): Promise<IndexDescription[]> {
    return Promise.resolve(this.descriptions);
  }

  async *scan(tr: Transaction, name: string, interval: IndexInterval, opts: IndexScanOptions = {}): AsyncIterable<IndexEntry> {
    const index = this.descriptions.find((d) => d.name === name);
    if (index === undefined) throw new DocumentError('INVALID_QUERY', `no index named "${name}"`);
    this.scans++;
    const fields = index.fields.map((f) => parseIndexPath(f.path));
    const where = index.where === undefined ? undefined : compileFilter(index.where);
    const entries: { values: IndexValue[]; id: DocId; doc: JsonValue }[] = [];
    for await (const item of this.collection.scan({ tr })) {
      if (where !== undefined && !where.matches(item.content)) continue;
      for (const values of entryTuples(fields, item.content)) entries.push({ values, id: item.id, doc: item.content });
    }
    const order = (a: Position, b: Position): number => {
      for (let i = 0; i < index.fields.length; i++) {
        const c = compareValues(a.values[i], b.values[i]);
        if (c !== 0) return index.fields[i].order === 'desc' ? -c : c;
      }
      return compareIds(a.id, b.id);
    };
    const direction = opts.reverse === true ? -1 : 1;
    entries.sort((a, b) => order(a, b) * direction);
    const after = opts.after === undefined ? undefined : this.positions[Number(opts.after.toString())];
    let n = 0;
    for (const e of entries) {
      if (!inInterval(e.values, interval)) continue;
      if (after !== undefined && order(e, after) * direction <= 0) continue;
      if (opts.limit !== undefined && n >= opts.limit) return;
      n++;
      this.entriesReturned++;
      this.positions.push({ values: e.values, id: e.id });
      const included = new Map<string, IndexValue>(index.include.map((p) => [p, plainValue(e.doc, p)]));
      yield { id: e.id, values: e.values, included, cursor: Buffer.from(String(this.positions.length - 1)) };
    }
  }
}

function plainValue(doc: JsonValue, path: string): IndexValue {
  let at: IndexValue = doc;
  for (const part of path.split('.')) {
    if (Array.isArray(at)) return at;
    if (typeof at !== 'object' || at === null) return MISSING;
    at = Object.prototype.hasOwnProperty.call(at, part) ? at[part] : MISSING;
  }
  return at;
}
