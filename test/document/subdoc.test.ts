/**
 * lookupIn and mutateIn, rule by rule, as Couchbase's sub-document API defines them (the fact sheet's
 * section 1: subjson, kv_engine and the SDK RFCs), and the path syntax with the positions of its errors.
 * Each test states one rule; a failing mutateIn must also leave the document (and its cas) unchanged.
 */
import { LookupInSpec, MutateInSpec, type JsonValue, type MutateInSpec as Spec, type MutateInOptions } from '../../src';
import { DocumentError } from '../../src/document/errors';
import { dumpKeyspace, expectDocumentError } from '../support/document-assertions';
import { documentSuite, type DocumentTestContext } from './document-suite';

const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);

/** `{ a: { a: ... { a: leaf } } }` with `levels` keys. */
function nested(levels: number, leaf: JsonValue): JsonValue {
  return levels === 0 ? leaf : { a: nested(levels - 1, leaf) };
}

/** A path of `n` components `a.a.a...`. */
function deepPath(n: number): string[] {
  return Array.from({ length: n }, () => 'a');
}

/** The fixture of most tests: document `d` holding `doc`, and helpers that check the rules. */
async function fixture(ctx: DocumentTestContext, doc: JsonValue) {
  const { docs, kv } = await ctx.open();
  const c = docs.collection();
  await c.insert(doc, { id: 'd' });

  /** Runs the specs and returns the document afterwards. */
  const mutate = async (specs: Spec[], options?: MutateInOptions): Promise<JsonValue> => {
    await c.mutateIn('d', specs, options);
    return (await c.get('d')).content;
  };

  /** Expects the call to fail with `code` at `specIndex`, leaving the store exactly as it was. */
  const rejects = async (specs: Spec[], code: string | string[], specIndex?: number, options?: MutateInOptions): Promise<DocumentError> => {
    const before = await c.get('d');
    const dump = await dumpKeyspace(kv);
    const error = await expectDocumentError(c.mutateIn('d', specs, options), code, specIndex === undefined ? {} : { specIndex });
    expect(await dumpKeyspace(kv)).toEqual(dump);
    expect(await c.get('d')).toEqual(before);
    return error;
  };

  /** The entries of a lookupIn, each as its value or its error code. */
  const lookup = async (specs: ReturnType<typeof LookupInSpec.get>[]): Promise<({ value: JsonValue | undefined } | { code: string })[]> => {
    const { entries } = await c.lookupIn('d', specs);
    return entries.map((entry) => {
      if (entry.error === undefined) return { value: entry.value };
      if (!(entry.error instanceof DocumentError)) throw new Error(`entry error is not a DocumentError: ${String(entry.error)}`);
      return { code: entry.error.code };
    });
  };

  return { c, kv, docs, mutate, rejects, lookup };
}

documentSuite('lookupIn', (ctx) => {
  const doc = { a: { b: [1, 'two', { c: true }], e: {} }, s: 'text', n: null, list: [], zero: 0 };

  it('returns one entry per spec in order, with the document cas', async () => {
    const { c, lookup } = await fixture(ctx, doc);
    const { cas } = await c.get('d');
    expect((await c.lookupIn('d', [LookupInSpec.get('s')])).cas).toBe(cas);
    expect(await lookup([LookupInSpec.get('a.b[2]'), LookupInSpec.exists('n'), LookupInSpec.count('a.b'), LookupInSpec.get('zero')])).toEqual([
      { value: { c: true } },
      { value: true },
      { value: 3 },
      { value: 0 },
    ]);
  });

  it('succeeds as a call when specs fail: each failing spec carries its own error', async () => {
    const { lookup } = await fixture(ctx, doc);
    expect(await lookup([LookupInSpec.get('missing'), LookupInSpec.get('s'), LookupInSpec.get('s.x'), LookupInSpec.get('a.b[9]')])).toEqual([
      { code: 'PATH_NOT_FOUND' },
      { value: 'text' },
      { code: 'PATH_MISMATCH' },
      { code: 'PATH_NOT_FOUND' },
    ]);
  });

  it('fails as a whole with DOCUMENT_NOT_FOUND for a missing document', async () => {
    const { c } = await fixture(ctx, doc);
    await expectDocumentError(c.lookupIn('nope', [LookupInSpec.get('a')]), 'DOCUMENT_NOT_FOUND');
  });

  it('get: PATH_MISMATCH for an index into an object, a key into an array, or a key into a scalar', async () => {
    const { lookup } = await fixture(ctx, doc);
    expect(
      await lookup([
        LookupInSpec.get('a[0]'),
        LookupInSpec.get('a.b.c'),
        LookupInSpec.get('s.length'),
        LookupInSpec.get('n.x'),
        LookupInSpec.get('zero[0]'),
      ]),
    ).toEqual(Array(5).fill({ code: 'PATH_MISMATCH' }));
  });

  it('get: PATH_NOT_FOUND for a missing key or index, also below a missing intermediate', async () => {
    const { lookup } = await fixture(ctx, doc);
    expect(
      await lookup([
        LookupInSpec.get('x'),
        LookupInSpec.get('x.y.z'),
        LookupInSpec.get('a.b[3]'),
        LookupInSpec.get('list[0]'),
        LookupInSpec.get('list[-1]'),
      ]),
    ).toEqual(Array(5).fill({ code: 'PATH_NOT_FOUND' }));
  });

  it("get: '' is the whole document, and [-1] the last element", async () => {
    const { lookup } = await fixture(ctx, doc);
    expect(await lookup([LookupInSpec.get(''), LookupInSpec.get('a.b[-1]'), LookupInSpec.get('a.e'), LookupInSpec.get('n')])).toEqual([
      { value: doc },
      { value: { c: true } },
      { value: {} },
      { value: null },
    ]);
  });

  it('exists: true when present (null included), false when missing, PATH_MISMATCH as an error, not false', async () => {
    const { lookup } = await fixture(ctx, doc);
    expect(
      await lookup([
        LookupInSpec.exists('n'),
        LookupInSpec.exists('a.e'),
        LookupInSpec.exists('x'),
        LookupInSpec.exists('a.b[7]'),
        LookupInSpec.exists('s.x'),
      ]),
    ).toEqual([{ value: true }, { value: true }, { value: false }, { value: false }, { code: 'PATH_MISMATCH' }]);
  });

  it('exists: an empty path is not allowed (INVALID_ARGUMENT)', async () => {
    const { c } = await fixture(ctx, doc);
    await expectDocumentError(c.lookupIn('d', [LookupInSpec.exists('')]), 'INVALID_ARGUMENT');
  });

  it("count: keys of an object, elements of an array, 0 for empty ones, and '' counts the root", async () => {
    const { lookup } = await fixture(ctx, doc);
    expect(
      await lookup([
        LookupInSpec.count(''),
        LookupInSpec.count('a'),
        LookupInSpec.count('a.b'),
        LookupInSpec.count('a.e'),
        LookupInSpec.count('list'),
      ]),
    ).toEqual([{ value: 5 }, { value: 2 }, { value: 3 }, { value: 0 }, { value: 0 }]);
  });

  it('count: PATH_MISMATCH on a scalar, PATH_NOT_FOUND when missing', async () => {
    const { lookup } = await fixture(ctx, doc);
    expect(await lookup([LookupInSpec.count('s'), LookupInSpec.count('n'), LookupInSpec.count('zero'), LookupInSpec.count('missing')])).toEqual([
      { code: 'PATH_MISMATCH' },
      { code: 'PATH_MISMATCH' },
      { code: 'PATH_MISMATCH' },
      { code: 'PATH_NOT_FOUND' },
    ]);
  });

  it('takes at most 16 specs, and at least 1 (INVALID_ARGUMENT otherwise)', async () => {
    const { c } = await fixture(ctx, doc);
    const specs = (n: number) => Array.from({ length: n }, () => LookupInSpec.get('s'));
    expect((await c.lookupIn('d', specs(16))).entries).toHaveLength(16);
    await expectDocumentError(c.lookupIn('d', specs(17)), 'INVALID_ARGUMENT');
    await expectDocumentError(c.lookupIn('d', []), 'INVALID_ARGUMENT');
  });

  it("an invalid path is that spec's INVALID_PATH; the other specs still answer", async () => {
    const { lookup } = await fixture(ctx, doc);
    expect(await lookup([LookupInSpec.get('a..b'), LookupInSpec.get('s'), LookupInSpec.exists('a[-2]')])).toEqual([
      { code: 'INVALID_PATH' },
      { value: 'text' },
      { code: 'INVALID_PATH' },
    ]);
  });
});

documentSuite('path syntax', (ctx) => {
  const doc = {
    a: [[0, [10, 11]], { b: 'ab' }],
    'dot.ted': { field: 'quoted' },
    'back`tick': 1,
    'x.y': { z: 'partial' },
    '': { '': 'empty keys' },
    '[0]': 'bracket key',
    '1': 'string one',
  };

  it('reads chained indices, indices after keys and keys after indices', async () => {
    const { c } = await fixture(ctx, doc);
    expect((await c.get('d', 'a[0][1][0]')).content).toBe(10);
    expect((await c.get('d', 'a[1].b')).content).toBe('ab');
    expect((await c.get('d', 'a[-1].b')).content).toBe('ab');
    expect((await c.get('d', 'a[0][-1][-1]')).content).toBe(11);
  });

  it('reads backtick-quoted keys, doubled backticks and partly quoted keys', async () => {
    const { c } = await fixture(ctx, doc);
    expect((await c.get('d', '`dot.ted`.field')).content).toBe('quoted');
    expect((await c.get('d', '`back``tick`')).content).toBe(1);
    expect((await c.get('d', 'x`.`y.z')).content).toBe('partial');
    expect((await c.get('d', '``.``')).content).toBe('empty keys');
    expect((await c.get('d', '`[0]`')).content).toBe('bracket key');
  });

  it('keeps the key "1" apart from the index 1', async () => {
    const { c } = await fixture(ctx, doc);
    expect((await c.get('d', '1')).content).toBe('string one');
    expect((await c.get('d', ['1'])).content).toBe('string one');
    await expectDocumentError(c.get('d', '[1]'), 'PATH_MISMATCH');
  });

  it('reads the same values by array paths, where keys need no quoting', async () => {
    const { c } = await fixture(ctx, doc);
    expect((await c.get('d', ['dot.ted', 'field'])).content).toBe('quoted');
    expect((await c.get('d', ['back`tick'])).content).toBe(1);
    expect((await c.get('d', ['', ''])).content).toBe('empty keys');
    expect((await c.get('d', ['a', 0, -1, 0])).content).toBe(10);
  });

  it('accepts a dot between two indices, as subjson accepts [-1].[-1]', async () => {
    const { c } = await fixture(ctx, doc);
    expect((await c.get('d', 'a[0].[1]')).content).toEqual([10, 11]);
    expect((await c.get('d', 'a[0].[-1].[-1]')).content).toBe(11);
  });

  const invalidStrings: [string, number][] = [
    ['hello[0]world', 8],
    ['a..b', 2],
    ['.a', 0],
    ['a.', 1],
    ['a[-2]', 2],
    ['a[x]', 2],
    ['a[1', 3],
    ['a]b', 1],
    ['`abc', 0],
    ['a[]', 2],
    ['a[01]', 2],
    ['[0]a', 3],
  ];
  it.each(invalidStrings)('%j fails with INVALID_PATH at position %i, in get, lookupIn and mutateIn', async (path, position) => {
    const { c, rejects } = await fixture(ctx, doc);
    await expectDocumentError(c.get('d', path), 'INVALID_PATH', { position });
    const { entries } = await c.lookupIn('d', [LookupInSpec.get('a'), LookupInSpec.get(path)]);
    expect(entries[1].error).toBeInstanceOf(DocumentError);
    expect((entries[1].error as DocumentError).code).toBe('INVALID_PATH');
    expect((entries[1].error as DocumentError).position).toBe(position);
    const error = await rejects([MutateInSpec.upsert('ok', 1), MutateInSpec.replace(path, 1)], 'INVALID_PATH', 1);
    expect(error.position).toBe(position);
  });

  const invalidArrays: [string, (string | number)[], number][] = [
    ['-2', ['a', -2], 1],
    ['1.5', ['a', 1.5], 1],
    ['NaN', ['a', NaN], 1],
    ['an object', [{} as unknown as string], 0],
    ['2^53', ['a', 2 ** 53], 1],
  ];
  it.each(invalidArrays)('an array path with %s fails with INVALID_PATH at that element', async (_what, path, position) => {
    const { c } = await fixture(ctx, doc);
    await expectDocumentError(c.get('d', path), 'INVALID_PATH', { position });
  });

  it('takes 31 components and fails with INVALID_PATH at 32', async () => {
    const { c } = await fixture(ctx, nested(31, 'leaf'));
    expect((await c.get('d', deepPath(31))).content).toBe('leaf');
    expect((await c.get('d', deepPath(31).join('.'))).content).toBe('leaf');
    await expectDocumentError(c.get('d', deepPath(32)), 'INVALID_PATH');
    await expectDocumentError(c.get('d', deepPath(32).join('.')), 'INVALID_PATH');
  });
});

documentSuite('mutateIn: the call', (ctx) => {
  it('applies specs in order, each on the result of the ones before', async () => {
    const { mutate } = await fixture(ctx, {});
    expect(
      await mutate([
        MutateInSpec.upsert('n', 1),
        MutateInSpec.increment('n', 2),
        MutateInSpec.insert('list', []),
        MutateInSpec.arrayAppend('list', 'x'),
        MutateInSpec.arrayPrepend('list', 'w'),
        MutateInSpec.replace('list[0]', 'v'),
        MutateInSpec.remove('n'),
      ]),
    ).toEqual({ list: ['v', 'x'] });
  });

  it('is all or nothing: a failing spec undoes the specs before it, and names the first failing spec', async () => {
    const { rejects } = await fixture(ctx, { n: 1, list: [1] });
    await rejects(
      [MutateInSpec.upsert('new', 1), MutateInSpec.increment('n', 1), MutateInSpec.arrayAppend('list', 2), MutateInSpec.remove('missing')],
      'PATH_NOT_FOUND',
      3,
    );
  });

  it('evaluates no spec after the first failure: a later invalid spec does not change the error', async () => {
    const { rejects } = await fixture(ctx, { n: 1 });
    await rejects(
      [MutateInSpec.upsert('a', 1), MutateInSpec.remove('missing'), MutateInSpec.upsert('b..c', 1), MutateInSpec.increment('n', 0)],
      'PATH_NOT_FOUND',
      1,
    );
  });

  it('fails with DOCUMENT_NOT_FOUND for a missing document (default store semantics: replace)', async () => {
    const { c } = await fixture(ctx, {});
    await expectDocumentError(c.mutateIn('nope', [MutateInSpec.upsert('a', 1)]), 'DOCUMENT_NOT_FOUND');
    expect(await c.exists('nope')).toBe(false);
  });

  it('returns the new value for increment and decrement, undefined for other specs, and a new cas', async () => {
    const { c } = await fixture(ctx, { n: 10 });
    const before = (await c.get('d')).cas;
    const result = await c.mutateIn('d', [
      MutateInSpec.upsert('a', 1),
      MutateInSpec.increment('n', 5),
      MutateInSpec.decrement('m', 3),
      MutateInSpec.remove('a'),
    ]);
    expect(result.values).toEqual([undefined, 15, -3, undefined]);
    expect(result.cas).not.toBe(before);
    expect((await c.get('d')).cas).toBe(result.cas);
  });

  it('takes at most 16 specs, and at least 1 (INVALID_ARGUMENT otherwise)', async () => {
    const { c, rejects } = await fixture(ctx, {});
    await c.mutateIn(
      'd',
      Array.from({ length: 16 }, (_, i) => MutateInSpec.upsert(`k${i}`, i)),
    );
    await rejects(
      Array.from({ length: 17 }, (_, i) => MutateInSpec.upsert(`x${i}`, i)),
      'INVALID_ARGUMENT',
    );
    await rejects([], 'INVALID_ARGUMENT');
  });

  it('does not mix lookup and mutation specs, and takes only known store semantics (INVALID_ARGUMENT)', async () => {
    const { c, rejects } = await fixture(ctx, { a: 1 });
    await rejects([MutateInSpec.upsert('b', 1), LookupInSpec.get('a') as unknown as Spec], 'INVALID_ARGUMENT');
    await expectDocumentError(
      c.lookupIn('d', [LookupInSpec.get('a'), MutateInSpec.remove('a') as unknown as ReturnType<typeof LookupInSpec.get>]),
      'INVALID_ARGUMENT',
    );
    await rejects([MutateInSpec.upsert('b', 1)], 'INVALID_ARGUMENT', undefined, { storeSemantics: 'merge' as 'upsert' });
  });

  it('checks values before looking at the document: an invalid value wins over PATH_NOT_FOUND', async () => {
    const { rejects } = await fixture(ctx, {});
    await rejects([MutateInSpec.upsert('missing.x', nested(40, 1))], 'VALUE_TOO_DEEP', 0);
    await rejects([MutateInSpec.arrayAddUnique('missing', { not: 'primitive' })], 'VALUE_CANNOT_INSERT', 0);
    await rejects([MutateInSpec.increment('missing.x', 0)], 'DELTA_INVALID', 0);
    await rejects([MutateInSpec.upsert('missing.x', NaN)], 'INVALID_VALUE', 0);
  });
});

documentSuite('mutateIn: insert', (ctx) => {
  it('adds a key to an object', async () => {
    const { mutate } = await fixture(ctx, { a: { b: 1 } });
    expect(await mutate([MutateInSpec.insert('a.c', { d: [1] })])).toEqual({ a: { b: 1, c: { d: [1] } } });
  });

  it('fails with PATH_EXISTS when the key exists, even holding null', async () => {
    const { rejects } = await fixture(ctx, { a: { b: null } });
    await rejects([MutateInSpec.insert('a.b', 2)], 'PATH_EXISTS', 0);
  });

  it('fails with PATH_NOT_FOUND when the parent is missing, without createPath', async () => {
    const { rejects } = await fixture(ctx, { a: {} });
    await rejects([MutateInSpec.insert('a.x.y', 1)], 'PATH_NOT_FOUND', 0);
  });

  it('creates missing parents as objects with createPath', async () => {
    const { mutate } = await fixture(ctx, { a: {} });
    expect(await mutate([MutateInSpec.insert('a.x.y.z', 1, { createPath: true })])).toEqual({ a: { x: { y: { z: 1 } } } });
  });

  it('never creates array elements: a missing index among the parents is PATH_NOT_FOUND even with createPath', async () => {
    const { rejects } = await fixture(ctx, { list: [] });
    await rejects([MutateInSpec.insert('list[0].x', 1, { createPath: true })], 'PATH_NOT_FOUND', 0);
    await rejects([MutateInSpec.insert('y[0].x', 1, { createPath: true })], 'PATH_NOT_FOUND', 0);
  });

  it('fails with INVALID_PATH when the path ends in an array index', async () => {
    const { rejects } = await fixture(ctx, { list: [1] });
    await rejects([MutateInSpec.insert('list[0]', 2)], 'INVALID_PATH', 0);
    await rejects([MutateInSpec.insert('list[-1]', 2)], 'INVALID_PATH', 0);
  });

  it('fails with PATH_MISMATCH when the parent is an array or a scalar', async () => {
    const { rejects } = await fixture(ctx, { list: [], s: 'x' });
    await rejects([MutateInSpec.insert('list.key', 1)], 'PATH_MISMATCH', 0);
    await rejects([MutateInSpec.insert('s.key', 1)], 'PATH_MISMATCH', 0);
    await rejects([MutateInSpec.insert('s.key.deeper', 1, { createPath: true })], 'PATH_MISMATCH', 0);
  });

  it('fails with INVALID_ARGUMENT for the empty path', async () => {
    const { rejects } = await fixture(ctx, {});
    await rejects([MutateInSpec.insert('', { a: 1 })], 'INVALID_ARGUMENT');
  });
});

documentSuite('mutateIn: upsert', (ctx) => {
  it('adds a missing key or overwrites an existing one, whatever it held, never PATH_EXISTS', async () => {
    const { mutate } = await fixture(ctx, { a: { b: [1, 2, { deep: true }] } });
    expect(await mutate([MutateInSpec.upsert('a.b', 'flat'), MutateInSpec.upsert('a.c', [])])).toEqual({ a: { b: 'flat', c: [] } });
  });

  it('creates missing parents only with createPath', async () => {
    const { mutate, rejects } = await fixture(ctx, {});
    await rejects([MutateInSpec.upsert('x.y', 1)], 'PATH_NOT_FOUND', 0);
    expect(await mutate([MutateInSpec.upsert('x.y', 1, { createPath: true })])).toEqual({ x: { y: 1 } });
  });

  it('fails with INVALID_PATH when the path ends in an array index', async () => {
    const { rejects } = await fixture(ctx, { list: [1] });
    await rejects([MutateInSpec.upsert('list[0]', 2)], 'INVALID_PATH', 0);
  });

  it('fails with PATH_MISMATCH when the parent is an array', async () => {
    const { rejects } = await fixture(ctx, { list: [1] });
    await rejects([MutateInSpec.upsert('list.x', 2)], 'PATH_MISMATCH', 0);
  });

  it('with the empty path replaces the whole document', async () => {
    const { mutate } = await fixture(ctx, { a: 1, b: { c: 2 } });
    expect(await mutate([MutateInSpec.upsert('', { fresh: true }), MutateInSpec.upsert('more', 1)])).toEqual({ fresh: true, more: 1 });
    expect(await mutate([MutateInSpec.upsert('', [1, 2])])).toEqual([1, 2]);
  });

  it('does not disturb siblings whose keys extend the upserted key', async () => {
    const { mutate } = await fixture(ctx, { a: { x: 1 }, ab: 2, 'a.b': 3, a0: { y: [1] } });
    expect(await mutate([MutateInSpec.upsert('a', 'replaced')])).toEqual({ a: 'replaced', ab: 2, 'a.b': 3, a0: { y: [1] } });
  });
});

documentSuite('mutateIn: replace', (ctx) => {
  it('overwrites an existing key, and an array element by index or [-1]', async () => {
    const { mutate } = await fixture(ctx, { a: { b: 1 }, list: [1, 2, 3] });
    expect(
      await mutate([MutateInSpec.replace('a.b', { c: 1 }), MutateInSpec.replace('list[1]', 'two'), MutateInSpec.replace('list[-1]', [3])]),
    ).toEqual({
      a: { b: { c: 1 } },
      list: [1, 'two', [3]],
    });
  });

  it('fails with PATH_NOT_FOUND when the path is missing, at the end or in the middle', async () => {
    const { rejects } = await fixture(ctx, { a: {}, list: [1] });
    await rejects([MutateInSpec.replace('a.b', 1)], 'PATH_NOT_FOUND', 0);
    await rejects([MutateInSpec.replace('x.y.z', 1)], 'PATH_NOT_FOUND', 0);
    await rejects([MutateInSpec.replace('list[1]', 1)], 'PATH_NOT_FOUND', 0);
  });

  it('fails with PATH_MISMATCH on a type conflict along the path', async () => {
    const { rejects } = await fixture(ctx, { a: {}, list: [1] });
    await rejects([MutateInSpec.replace('a[0]', 1)], 'PATH_MISMATCH', 0);
    await rejects([MutateInSpec.replace('list.x', 1)], 'PATH_MISMATCH', 0);
  });

  it('does not take createPath, and not the empty path (INVALID_ARGUMENT)', async () => {
    const { rejects } = await fixture(ctx, { a: 1 });
    await rejects([{ op: 'replace', path: 'a', value: 2, options: { createPath: true } }], 'INVALID_ARGUMENT');
    await rejects([MutateInSpec.replace('', { a: 2 })], 'INVALID_ARGUMENT');
  });
});

documentSuite('mutateIn: remove', (ctx) => {
  it('removes a key with its whole subtree', async () => {
    const { mutate } = await fixture(ctx, { a: { b: { c: [1, 2] }, keep: 1 } });
    expect(await mutate([MutateInSpec.remove('a.b')])).toEqual({ a: { keep: 1 } });
  });

  it('removes an array element, shifting the later ones down', async () => {
    const { mutate, c } = await fixture(ctx, { list: ['a', 'b', 'c', 'd'] });
    expect(await mutate([MutateInSpec.remove('list[1]')])).toEqual({ list: ['a', 'c', 'd'] });
    expect((await c.get('d', 'list[1]')).content).toBe('c');
    expect(await mutate([MutateInSpec.remove('list[-1]')])).toEqual({ list: ['a', 'c'] });
    expect(await mutate([MutateInSpec.remove('list[0]')])).toEqual({ list: ['c'] });
    expect((await c.get('d', 'list[0]')).content).toBe('c');
  });

  it('leaves [] after removing the only element', async () => {
    const { mutate } = await fixture(ctx, { list: [{ x: 1 }] });
    expect(await mutate([MutateInSpec.remove('list[0]')])).toEqual({ list: [] });
  });

  it('fails with PATH_NOT_FOUND when the path is missing', async () => {
    const { rejects } = await fixture(ctx, { a: {}, list: [] });
    await rejects([MutateInSpec.remove('a.b')], 'PATH_NOT_FOUND', 0);
    await rejects([MutateInSpec.remove('list[0]')], 'PATH_NOT_FOUND', 0);
    await rejects([MutateInSpec.remove('list[-1]')], 'PATH_NOT_FOUND', 0);
  });

  it('with the empty path removes the whole document', async () => {
    const { c } = await fixture(ctx, { a: 1 });
    await c.mutateIn('d', [MutateInSpec.upsert('b', 2), MutateInSpec.remove('')]);
    expect(await c.exists('d')).toBe(false);
  });

  it('with the empty path must be the last spec (INVALID_ARGUMENT otherwise)', async () => {
    const { rejects } = await fixture(ctx, { a: 1 });
    await rejects([MutateInSpec.remove(''), MutateInSpec.upsert('b', 2)], 'INVALID_ARGUMENT');
  });

  it('does not take createPath (INVALID_ARGUMENT)', async () => {
    const { rejects } = await fixture(ctx, { a: 1 });
    await rejects([{ op: 'remove', path: 'a', options: { createPath: true } }], 'INVALID_ARGUMENT');
  });
});

documentSuite('mutateIn: arrayAppend and arrayPrepend', (ctx) => {
  it('add one value at the end or the start', async () => {
    const { mutate } = await fixture(ctx, { list: [2] });
    expect(await mutate([MutateInSpec.arrayAppend('list', 3), MutateInSpec.arrayPrepend('list', 1)])).toEqual({ list: [1, 2, 3] });
  });

  it('add an array value as one nested element, or its elements with multi', async () => {
    const { mutate } = await fixture(ctx, { list: ['a'] });
    expect(await mutate([MutateInSpec.arrayAppend('list', [1, 2])])).toEqual({ list: ['a', [1, 2]] });
    expect(
      await mutate([MutateInSpec.arrayAppend('list', [3, 4], { multi: true }), MutateInSpec.arrayPrepend('list', [-1, 0], { multi: true })]),
    ).toEqual({
      list: [-1, 0, 'a', [1, 2], 3, 4],
    });
  });

  it('make the values the sole content of an empty array', async () => {
    const { mutate } = await fixture(ctx, { a: [], b: [] });
    expect(await mutate([MutateInSpec.arrayAppend('a', { x: 1 }), MutateInSpec.arrayPrepend('b', null)])).toEqual({ a: [{ x: 1 }], b: [null] });
  });

  it('work on a root array with the empty path', async () => {
    const { mutate } = await fixture(ctx, [2]);
    expect(await mutate([MutateInSpec.arrayAppend('', 3), MutateInSpec.arrayPrepend('', 1)])).toEqual([1, 2, 3]);
  });

  it('fail with PATH_MISMATCH when the target is not an array, the root object included', async () => {
    const { rejects } = await fixture(ctx, { o: {}, s: 'x' });
    await rejects([MutateInSpec.arrayAppend('o', 1)], 'PATH_MISMATCH', 0);
    await rejects([MutateInSpec.arrayPrepend('s', 1)], 'PATH_MISMATCH', 0);
    await rejects([MutateInSpec.arrayAppend('', 1)], 'PATH_MISMATCH', 0);
  });

  it('fail with PATH_NOT_FOUND for a missing array without createPath', async () => {
    const { rejects } = await fixture(ctx, {});
    await rejects([MutateInSpec.arrayAppend('list', 1)], 'PATH_NOT_FOUND', 0);
    await rejects([MutateInSpec.arrayPrepend('a.list', 1)], 'PATH_NOT_FOUND', 0);
  });

  it('create the array and its missing parents with createPath', async () => {
    const { mutate } = await fixture(ctx, {});
    expect(
      await mutate([
        MutateInSpec.arrayAppend('a.b.list', 1, { createPath: true }),
        MutateInSpec.arrayPrepend('p', [1, 2], { createPath: true, multi: true }),
      ]),
    ).toEqual({
      a: { b: { list: [1] } },
      p: [1, 2],
    });
  });

  it('fail with PATH_NOT_FOUND for a missing element path even with createPath', async () => {
    const { rejects } = await fixture(ctx, { list: [[1]] });
    await rejects([MutateInSpec.arrayAppend('list[1]', 1, { createPath: true })], 'PATH_NOT_FOUND', 0);
  });

  it('append into a nested array addressed by index', async () => {
    const { mutate } = await fixture(ctx, { list: [[1], [2]] });
    expect(await mutate([MutateInSpec.arrayAppend('list[-1]', 3), MutateInSpec.arrayPrepend('list[0]', 0)])).toEqual({
      list: [
        [0, 1],
        [2, 3],
      ],
    });
  });

  it('fail with INVALID_ARGUMENT for multi with no values', async () => {
    const { rejects } = await fixture(ctx, { list: [] });
    await rejects([MutateInSpec.arrayAppend('list', [], { multi: true })], 'INVALID_ARGUMENT');
  });
});

documentSuite('mutateIn: arrayInsert', (ctx) => {
  it('inserts before the element at the index', async () => {
    const { mutate } = await fixture(ctx, { list: ['a', 'c'] });
    expect(await mutate([MutateInSpec.arrayInsert('list[1]', 'b'), MutateInSpec.arrayInsert('list[0]', 'start')])).toEqual({
      list: ['start', 'a', 'b', 'c'],
    });
  });

  it('appends at index == length, [0] of an empty array included', async () => {
    const { mutate } = await fixture(ctx, { list: ['a'], empty: [] });
    expect(await mutate([MutateInSpec.arrayInsert('list[1]', 'b'), MutateInSpec.arrayInsert('empty[0]', 'only')])).toEqual({
      list: ['a', 'b'],
      empty: ['only'],
    });
  });

  it('inserts several values in order with multi', async () => {
    const { mutate } = await fixture(ctx, { list: [0, 4] });
    expect(await mutate([MutateInSpec.arrayInsert('list[1]', [1, 2, 3], { multi: true })])).toEqual({ list: [0, 1, 2, 3, 4] });
  });

  it('fails with PATH_NOT_FOUND past the end, or when the array is missing', async () => {
    const { rejects } = await fixture(ctx, { list: ['a'] });
    await rejects([MutateInSpec.arrayInsert('list[2]', 'x')], 'PATH_NOT_FOUND', 0);
    await rejects([MutateInSpec.arrayInsert('nope[0]', 'x')], 'PATH_NOT_FOUND', 0);
  });

  it('fails with INVALID_PATH unless the path ends in a non-negative index', async () => {
    const { rejects } = await fixture(ctx, { list: ['a'] });
    await rejects([MutateInSpec.arrayInsert('list', 'x')], 'INVALID_PATH', 0);
    await rejects([MutateInSpec.arrayInsert('list[-1]', 'x')], 'INVALID_PATH', 0);
  });

  it('fails with PATH_MISMATCH when the parent is an object', async () => {
    const { rejects } = await fixture(ctx, { o: {} });
    await rejects([MutateInSpec.arrayInsert('o[0]', 'x')], 'PATH_MISMATCH', 0);
    await rejects([MutateInSpec.arrayInsert('[0]', 'x')], 'PATH_MISMATCH', 0);
  });

  it('does not take createPath, nor the empty path (INVALID_ARGUMENT)', async () => {
    const { rejects } = await fixture(ctx, { list: [] });
    await rejects([MutateInSpec.arrayInsert('list[0]', 1, { createPath: true })], 'INVALID_ARGUMENT');
    await rejects([MutateInSpec.arrayInsert('', 1)], 'INVALID_ARGUMENT');
  });

  it('inserts into a root array', async () => {
    const { mutate } = await fixture(ctx, [1, 3]);
    expect(await mutate([MutateInSpec.arrayInsert('[1]', 2)])).toEqual([1, 2, 3]);
  });
});

documentSuite('mutateIn: arrayAddUnique', (ctx) => {
  it('appends a value not yet in the array, at the end', async () => {
    const { mutate } = await fixture(ctx, { set: [1, 'a'] });
    expect(await mutate([MutateInSpec.arrayAddUnique('set', 2), MutateInSpec.arrayAddUnique('set', null)])).toEqual({ set: [1, 'a', 2, null] });
  });

  it('fails with PATH_EXISTS when the value is present', async () => {
    const { rejects } = await fixture(ctx, { set: [1, 'a', true, null] });
    for (const v of [1, 'a', true, null]) await rejects([MutateInSpec.arrayAddUnique('set', v)], 'PATH_EXISTS', 0);
  });

  it('compares type and value: "123" is not 123, "true" is not true, "null" is not null', async () => {
    const { mutate } = await fixture(ctx, { set: [123, true, null, 1.5] });
    expect(
      await mutate([
        MutateInSpec.arrayAddUnique('set', '123'),
        MutateInSpec.arrayAddUnique('set', 'true'),
        MutateInSpec.arrayAddUnique('set', 'null'),
        MutateInSpec.arrayAddUnique('set', '1.5'),
      ]),
    ).toEqual({
      set: [123, true, null, 1.5, '123', 'true', 'null', '1.5'],
    });
  });

  it('compares whole elements: 1234 does not contain "23"', async () => {
    const { mutate } = await fixture(ctx, { set: [1234, 'abc'] });
    expect(await mutate([MutateInSpec.arrayAddUnique('set', 23), MutateInSpec.arrayAddUnique('set', 'b')])).toEqual({ set: [1234, 'abc', 23, 'b'] });
  });

  it('fails with VALUE_CANNOT_INSERT for an object or array value', async () => {
    const { rejects } = await fixture(ctx, { set: [] });
    await rejects([MutateInSpec.arrayAddUnique('set', { a: 1 })], 'VALUE_CANNOT_INSERT', 0);
    await rejects([MutateInSpec.arrayAddUnique('set', [1])], 'VALUE_CANNOT_INSERT', 0);
  });

  it('fails with PATH_MISMATCH when the array holds an object or array', async () => {
    const { rejects } = await fixture(ctx, { set: [{ a: 1 }, 2], other: [[1]] });
    await rejects([MutateInSpec.arrayAddUnique('set', 3)], 'PATH_MISMATCH', 0);
    await rejects([MutateInSpec.arrayAddUnique('other', 3)], 'PATH_MISMATCH', 0);
  });

  it('fails with PATH_NOT_FOUND for a missing array, or creates it with createPath', async () => {
    const { rejects, mutate } = await fixture(ctx, {});
    await rejects([MutateInSpec.arrayAddUnique('a.set', 1)], 'PATH_NOT_FOUND', 0);
    expect(await mutate([MutateInSpec.arrayAddUnique('a.set', 1, { createPath: true })])).toEqual({ a: { set: [1] } });
  });

  it('fails with PATH_MISMATCH when the target is not an array', async () => {
    const { rejects } = await fixture(ctx, { o: {} });
    await rejects([MutateInSpec.arrayAddUnique('o', 1)], 'PATH_MISMATCH', 0);
  });

  it('does not take multi', async () => {
    const { rejects } = await fixture(ctx, { set: [] });
    await rejects([MutateInSpec.arrayAddUnique('set', [1, 2], { multi: true })], ['INVALID_ARGUMENT', 'VALUE_CANNOT_INSERT']);
  });

  it('works on a root array with the empty path', async () => {
    const { mutate, rejects } = await fixture(ctx, ['a']);
    expect(await mutate([MutateInSpec.arrayAddUnique('', 'b')])).toEqual(['a', 'b']);
    await rejects([MutateInSpec.arrayAddUnique('', 'a')], 'PATH_EXISTS', 0);
  });
});

documentSuite('mutateIn: increment and decrement', (ctx) => {
  it('add and subtract the delta and return the new value', async () => {
    const { c } = await fixture(ctx, { n: 10, list: [5] });
    const { values } = await c.mutateIn('d', [MutateInSpec.increment('n', 5), MutateInSpec.decrement('n', 20), MutateInSpec.increment('list[0]', 1)]);
    expect(values).toEqual([15, -5, 6]);
    expect((await c.get('d')).content).toEqual({ n: -5, list: [6] });
  });

  it('create a missing field in an object with the delta (negated for decrement)', async () => {
    const { c } = await fixture(ctx, { o: {} });
    const { values } = await c.mutateIn('d', [MutateInSpec.increment('up', 3), MutateInSpec.decrement('o.down', 4)]);
    expect(values).toEqual([3, -4]);
    expect((await c.get('d')).content).toEqual({ o: { down: -4 }, up: 3 });
  });

  it('create missing parents only with createPath', async () => {
    const { rejects, mutate } = await fixture(ctx, {});
    await rejects([MutateInSpec.increment('a.b.n', 1)], 'PATH_NOT_FOUND', 0);
    expect(await mutate([MutateInSpec.increment('a.b.n', 1, { createPath: true })])).toEqual({ a: { b: { n: 1 } } });
  });

  it('fail with PATH_NOT_FOUND for a missing array element, even with createPath', async () => {
    const { rejects } = await fixture(ctx, { list: [] });
    await rejects([MutateInSpec.increment('list[0]', 1, { createPath: true })], 'PATH_NOT_FOUND', 0);
  });

  it('fail with PATH_MISMATCH when the value is not an integer', async () => {
    const { rejects } = await fixture(ctx, { s: '5', f: 3.14, o: {}, a: [], b: true, z: null });
    for (const path of ['s', 'f', 'o', 'a', 'b', 'z']) await rejects([MutateInSpec.increment(path, 1)], 'PATH_MISMATCH', 0);
  });

  it('fail with DELTA_INVALID for a delta that is 0, not an integer, or outside int64', async () => {
    const { rejects } = await fixture(ctx, { n: 1 });
    for (const delta of [0, -0, 1.5, NaN, Infinity, 0n, 2n ** 63n, -(2n ** 63n) - 1n]) {
      await rejects([MutateInSpec.increment('n', delta)], 'DELTA_INVALID', 0);
    }
  });

  it('reach the whole int64 range, returning bigints beyond 2^53', async () => {
    const { c } = await fixture(ctx, { hi: 0, lo: 0 });
    const { values } = await c.mutateIn('d', [MutateInSpec.increment('hi', INT64_MAX), MutateInSpec.increment('lo', INT64_MIN)]);
    expect(values).toEqual([INT64_MAX, INT64_MIN]);
    expect((await c.get('d')).content).toEqual({ hi: INT64_MAX, lo: INT64_MIN });
  });

  it('fail with VALUE_CANNOT_INSERT when the result would leave int64 (no wrap-around)', async () => {
    const { rejects } = await fixture(ctx, { hi: INT64_MAX - 1n, lo: INT64_MIN + 1n });
    await rejects([MutateInSpec.increment('hi', 2)], 'VALUE_CANNOT_INSERT', 0);
    await rejects([MutateInSpec.decrement('lo', 2)], 'VALUE_CANNOT_INSERT', 0);
  });

  it('fail with NUMBER_TOO_BIG when the stored integer is outside int64', async () => {
    const { rejects } = await fixture(ctx, { big: 2n ** 64n });
    await rejects([MutateInSpec.increment('big', 1)], 'NUMBER_TOO_BIG', 0);
  });

  it('do not take the empty path (INVALID_ARGUMENT)', async () => {
    const { rejects } = await fixture(ctx, {});
    await rejects([MutateInSpec.increment('', 1)], 'INVALID_ARGUMENT');
  });
});

documentSuite('mutateIn: depth', (ctx) => {
  it('replace: 30 path components plus [3,4] (depth 2) is 32 and fits; [[5]] (depth 3) is VALUE_TOO_DEEP', async () => {
    const { mutate, rejects } = await fixture(ctx, nested(30, 0));
    await rejects([MutateInSpec.replace(deepPath(30), [[5]])], 'VALUE_TOO_DEEP', 0);
    expect(await mutate([MutateInSpec.replace(deepPath(30), [3, 4])])).toEqual(nested(30, [3, 4]));
  });

  it('insert: a scalar or empty container at 31 components fits; [1] there is VALUE_TOO_DEEP', async () => {
    const { mutate, rejects } = await fixture(ctx, nested(30, {}));
    await rejects([MutateInSpec.insert(deepPath(31), [1])], 'VALUE_TOO_DEEP', 0);
    expect(await mutate([MutateInSpec.insert(deepPath(31), 'x')])).toEqual(nested(31, 'x'));
    expect(await mutate([MutateInSpec.upsert(deepPath(31), [])])).toEqual(nested(31, []));
  });

  it('arrayAppend: an element lands one level below the array path', async () => {
    const { mutate, rejects } = await fixture(ctx, nested(30, []));
    await rejects([MutateInSpec.arrayAppend(deepPath(30), [1])], 'VALUE_TOO_DEEP', 0);
    await rejects([MutateInSpec.arrayAppend(deepPath(30), [[1], 2], { multi: true })], 'VALUE_TOO_DEEP', 0);
    expect(await mutate([MutateInSpec.arrayAppend(deepPath(30), 1)])).toEqual(nested(30, [1]));
  });

  it('a 32-component path is INVALID_PATH whatever the value', async () => {
    const { rejects } = await fixture(ctx, nested(31, {}));
    await rejects([MutateInSpec.upsert(deepPath(32), 1)], 'INVALID_PATH', 0);
  });

  it('the empty path: the whole document may be 32 deep, not 33', async () => {
    const { mutate, rejects } = await fixture(ctx, {});
    await rejects([MutateInSpec.upsert('', nested(32, 1))], 'VALUE_TOO_DEEP', 0);
    expect(await mutate([MutateInSpec.upsert('', nested(31, 1))])).toEqual(nested(31, 1));
  });
});

documentSuite('mutateIn: store semantics', (ctx) => {
  it('upsert creates a missing document with an object root for key paths', async () => {
    const { c } = await fixture(ctx, {});
    await c.mutateIn('new', [MutateInSpec.upsert('a', 1), MutateInSpec.increment('n', 2)], { storeSemantics: 'upsert' });
    expect((await c.get('new')).content).toEqual({ a: 1, n: 2 });
  });

  it("upsert creates an array root when the first spec is an array op on '' or its path starts with an index", async () => {
    const { c } = await fixture(ctx, {});
    await c.mutateIn('list', [MutateInSpec.arrayAppend('', 1), MutateInSpec.arrayPrepend('', 0)], { storeSemantics: 'upsert' });
    expect((await c.get('list')).content).toEqual([0, 1]);
    await c.mutateIn('set', [MutateInSpec.arrayAddUnique('', 'x')], { storeSemantics: 'upsert' });
    expect((await c.get('set')).content).toEqual(['x']);
    await c.mutateIn('indexed', [MutateInSpec.arrayInsert('[0]', 'first')], { storeSemantics: 'insert' });
    expect((await c.get('indexed')).content).toEqual(['first']);
    // On an array root '[0]' is a missing element (PATH_NOT_FOUND); on an object root it would be PATH_MISMATCH.
    await expectDocumentError(c.mutateIn('counter', [MutateInSpec.increment('[0]', 1)], { storeSemantics: 'upsert' }), 'PATH_NOT_FOUND', {
      specIndex: 0,
    });
    expect(await c.exists('counter')).toBe(false);
  });

  it('upsert implies createPath on every spec', async () => {
    const { c } = await fixture(ctx, { a: {} });
    await c.mutateIn('d', [MutateInSpec.upsert('a.b.c', 1), MutateInSpec.arrayAppend('x.list', 2)], { storeSemantics: 'upsert' });
    expect((await c.get('d')).content).toEqual({ a: { b: { c: 1 } }, x: { list: [2] } });
    await c.mutateIn('fresh', [MutateInSpec.increment('p.q', 1)], { storeSemantics: 'upsert' });
    expect((await c.get('fresh')).content).toEqual({ p: { q: 1 } });
  });

  it('creates nothing when a spec would fail on the empty new root', async () => {
    const { c, kv } = await fixture(ctx, {});
    const dump = await dumpKeyspace(kv);
    await expectDocumentError(
      c.mutateIn('new', [MutateInSpec.upsert('a', 1), MutateInSpec.arrayAppend('a', 2)], { storeSemantics: 'upsert' }),
      'PATH_MISMATCH',
      { specIndex: 1 },
    );
    expect(await c.exists('new')).toBe(false);
    expect(await dumpKeyspace(kv)).toEqual(dump);
  });

  it('insert creates a missing document and fails with DOCUMENT_EXISTS for an existing one', async () => {
    const { c, rejects } = await fixture(ctx, { a: 1 });
    await c.mutateIn('new', [MutateInSpec.insert('a.b', 1)], { storeSemantics: 'insert' });
    expect((await c.get('new')).content).toEqual({ a: { b: 1 } });
    await rejects([MutateInSpec.upsert('x', 1)], 'DOCUMENT_EXISTS', undefined, { storeSemantics: 'insert' });
  });

  it('insert allows replace and arrayInsert specs, applied to the new document', async () => {
    const { c } = await fixture(ctx, {});
    await c.mutateIn(
      'new',
      [MutateInSpec.upsert('a', 1), MutateInSpec.replace('a', 2), MutateInSpec.upsert('l', []), MutateInSpec.arrayInsert('l[0]', 'x')],
      {
        storeSemantics: 'insert',
      },
    );
    expect((await c.get('new')).content).toEqual({ a: 2, l: ['x'] });
  });

  it('insert with a cas is INVALID_ARGUMENT', async () => {
    const { c } = await fixture(ctx, {});
    const { cas } = await c.get('d');
    await expectDocumentError(c.mutateIn('new', [MutateInSpec.upsert('a', 1)], { storeSemantics: 'insert', cas }), 'INVALID_ARGUMENT');
    expect(await c.exists('new')).toBe(false);
  });

  it('upsert does not take replace, remove or arrayInsert specs; insert does not take remove (INVALID_ARGUMENT)', async () => {
    const { rejects } = await fixture(ctx, { a: 1, l: [1] });
    await rejects([MutateInSpec.replace('a', 2)], 'INVALID_ARGUMENT', undefined, { storeSemantics: 'upsert' });
    await rejects([MutateInSpec.remove('a')], 'INVALID_ARGUMENT', undefined, { storeSemantics: 'upsert' });
    await rejects([MutateInSpec.arrayInsert('l[0]', 0)], 'INVALID_ARGUMENT', undefined, { storeSemantics: 'upsert' });
    await rejects([MutateInSpec.remove('a')], 'INVALID_ARGUMENT', undefined, { storeSemantics: 'insert' });
  });

  it('upsert on an existing document changes it like replace semantics', async () => {
    const { c } = await fixture(ctx, { a: 1 });
    await c.mutateIn('d', [MutateInSpec.upsert('b', 2)], { storeSemantics: 'upsert' });
    expect((await c.get('d')).content).toEqual({ a: 1, b: 2 });
  });
});
