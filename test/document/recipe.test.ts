import { readRecipeDocument } from '../../src/document/recipe';
import type { JsonValue, PathElement } from '../../src/document/types';
import type { Database } from '../../src/kv/contract/database';
import { openMemoryDatabase } from '../../src/kv/memory/memory-engine';
import { Double, pack, Subspace, type TupleItem } from '../../src/tuple';

/**
 * Documents written the way FoundationDB's hierarchical-documents recipe (Python) writes them:
 * `_to_tuples` flattens a value into one tuple per leaf, an empty object being `(-2, None)` and an
 * empty array `(-1, None)`; each tuple is stored as key `pack(('D', doc_id) + t[:-1])` and value
 * `pack((t[-1],))`. Python floats are doubles even when integral, so a float is given as `Double`.
 */
type RecipeValue = TupleItem | RecipeValue[] | { [key: string]: RecipeValue };

function toTuples(item: RecipeValue): TupleItem[][] {
  if (Array.isArray(item)) {
    if (item.length === 0) return [[-1, null]];
    return item.flatMap((v, i) => toTuples(v).map((t) => [i, ...t]));
  }
  if (item !== null && typeof item === 'object' && item.constructor === Object) {
    const entries = Object.entries(item as { [key: string]: RecipeValue });
    if (entries.length === 0) return [[-2, null]];
    return entries.flatMap(([k, v]) => toTuples(v).map((t) => [k, ...t]));
  }
  return [[item as TupleItem]];
}

const subspace = new Subspace(['D']);

async function insertRecipeDoc(db: Database, docId: TupleItem, doc: RecipeValue): Promise<void> {
  await db.transact((tr) => {
    for (const t of toTuples(doc)) tr.set(subspace.pack([docId, ...t.slice(0, -1)]), pack([t[t.length - 1]]));
  });
}

const read = (db: Database, docId: TupleItem, path?: PathElement[]) => db.transact((tr) => readRecipeDocument(tr, subspace, docId, path));

describe('readRecipeDocument', () => {
  const doc: RecipeValue & JsonValue = {
    doc_id: 7,
    name: 'Ada',
    tags: ['a', 'b'],
    nested: { deep: { list: [[1, 2], [], {}, { x: null }] } },
    emptyObject: {},
    emptyArray: [],
    flags: { on: true, off: false },
    big: 2n ** 70n,
    'key.with.dots': 'ok',
  };

  it('reads a whole document written by the recipe', async () => {
    const db = openMemoryDatabase();
    await insertRecipeDoc(db, 7, doc);
    expect(await read(db, 7)).toEqual(doc);
  });

  it('reads sub-documents and leaves by path (keys and 0-based indices)', async () => {
    const db = openMemoryDatabase();
    await insertRecipeDoc(db, 7, doc);
    expect(await read(db, 7, ['tags'])).toEqual(['a', 'b']);
    expect(await read(db, 7, ['tags', 1])).toBe('b');
    expect(await read(db, 7, ['nested', 'deep', 'list', 0])).toEqual([1, 2]);
    expect(await read(db, 7, ['nested', 'deep', 'list', 1])).toEqual([]);
    expect(await read(db, 7, ['nested', 'deep', 'list', 2])).toEqual({});
    expect(await read(db, 7, ['nested', 'deep', 'list', 3, 'x'])).toBeNull();
    expect(await read(db, 7, ['emptyObject'])).toEqual({});
    expect(await read(db, 7, ['name'])).toBe('Ada');
  });

  it('returns undefined for a missing document or path', async () => {
    const db = openMemoryDatabase();
    await insertRecipeDoc(db, 7, doc);
    expect(await read(db, 8)).toBeUndefined();
    expect(await read(db, 7, ['nope'])).toBeUndefined();
    expect(await read(db, 7, ['tags', 5])).toBeUndefined();
  });

  it('reads Python floats (doubles, integral ones included) as numbers', async () => {
    const db = openMemoryDatabase();
    await insertRecipeDoc(db, 'f', { a: new Double(1), b: 2.5, c: [new Double(-0)] });
    const back = (await read(db, 'f')) as { a: number; b: number; c: number[] };
    expect(back).toEqual({ a: 1, b: 2.5, c: [-0] });
    expect(Object.is(back.c[0], -0)).toBe(true);
  });

  it('returns object keys in key order (UTF-8), as the recipe does', async () => {
    const db = openMemoryDatabase();
    await insertRecipeDoc(db, 'k', { b: 1, a: 2, '': 3, é: 4 });
    expect(Object.keys((await read(db, 'k')) as object)).toEqual(['', 'a', 'b', 'é']);
  });

  it('does not mix documents whose ids share a prefix', async () => {
    const db = openMemoryDatabase();
    await insertRecipeDoc(db, 'ab', { v: 1 });
    await insertRecipeDoc(db, 'ab\0c', { v: 2 });
    expect(await read(db, 'ab')).toEqual({ v: 1 });
    expect(await read(db, 'ab\0c')).toEqual({ v: 2 });
  });

  it('keeps a "__proto__" key as a key', async () => {
    const db = openMemoryDatabase();
    const withProto = JSON.parse('{"__proto__": {"x": 1}}') as RecipeValue;
    await insertRecipeDoc(db, 'p', withProto);
    const back = (await read(db, 'p')) as JsonValue as Record<string, unknown>;
    expect(Object.getPrototypeOf(back)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(back, '__proto__')?.value).toEqual({ x: 1 });
  });
});
