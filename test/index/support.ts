import type { Collection, DocLayer, Transaction } from '../../src';
import { strinc } from '../../src/kv/contract/bytes';
import type { Database } from '../../src/kv/contract/database';
import { compileFilter, type Filter } from '../../src/filter';
import { parseIndexPath, valuesAt } from '../../src/index/index-path';
import { encodeValue, invert } from '../../src/index/value-key';

/** Test helpers for src/index: what an index should hold, and what it holds. */

/** An entry as `[id, hex of the encoded values]`, comparable with toEqual. */
export type EntryShape = [string, string];

/** The entries an index with `fields` must hold for the live documents of `c`, sorted as the index sorts them. */
export async function expectedEntries(
  c: Collection,
  fields: readonly (string | { path: string; order?: 'asc' | 'desc' })[],
  where?: Filter,
): Promise<EntryShape[]> {
  const out: { shape: EntryShape }[] = [];
  const filter = where === undefined ? undefined : compileFilter(where);
  for await (const item of c.scan()) {
    if (typeof item.content !== 'object' || item.content === null) continue;
    if (filter !== undefined && !filter.matches(item.content)) continue;
    const perField = fields.map((field) => {
      const path = parseIndexPath(typeof field === 'string' ? field : field.path, 'test');
      const desc = typeof field !== 'string' && field.order === 'desc';
      const seen = new Map<string, Buffer>();
      for (const v of valuesAt(item.content, path)) {
        const bytes = desc ? invert(encodeValue(v)) : encodeValue(v);
        seen.set(bytes.toString('hex'), bytes);
      }
      return [...seen.values()];
    });
    let tuples: Buffer[][] = [[]];
    for (const values of perField) tuples = tuples.flatMap((t) => values.map((v) => [...t, v]));
    for (const tuple of tuples) {
      const values = Buffer.concat(tuple);
      out.push({ shape: [String(item.id), values.toString('hex')] });
    }
  }
  return sortShapes(out.map((e) => e.shape));
}

/** The entries an index holds, by a full scan in id order within equal values. */
export async function actualEntries(db: DocLayer, c: Collection, name: string): Promise<EntryShape[]> {
  const index = (await c.listIndexes()).find((d) => d.name === name);
  if (index === undefined) throw new Error(`no index ${name}`);
  return db.transact(async (tr) => {
    const out: EntryShape[] = [];
    for await (const entry of c.indexAccess().scan(tr, name, { equal: [] })) {
      const values = Buffer.concat(entry.values.map((v, i) => (index.fields[i].order === 'desc' ? invert(encodeValue(v)) : encodeValue(v))));
      out.push([String(entry.id), values.toString('hex')]);
    }
    return sortShapes(out);
  });
}

/** Entries sorted by values, then id: a canonical order to compare sets of entries in. */
export function sortShapes(shapes: EntryShape[]): EntryShape[] {
  return shapes.sort((a, b) => (a[1] + '|' + a[0] < b[1] + '|' + b[0] ? -1 : a[1] + '|' + a[0] > b[1] + '|' + b[0] ? 1 : 0));
}

/** Every key under `prefix`, as a transaction reads it. */
export async function keysUnder(kv: Database, prefix: Buffer): Promise<Buffer[]> {
  return kv.transact(async (tr: Transaction) => (await tr.getRangeAll(prefix, strinc(prefix))).map((kv2) => kv2.key));
}
