/**
 * Round trips of random JSON (test/support/json-arbitrary.ts): whole documents, every sub-path, key
 * order, replacement. fast-check runs from `testSeed`, so `DOCLAYER_SEED=<seed>` replays a failure
 * (fast-check also prints the seed and the shrunk counterexample).
 */
import fc from 'fast-check';
import type { JsonValue, PathElement } from '../../src';
import { dumpKeyspace } from '../support/document-assertions';
import { jsonDocument, jsonValue, roundTripped } from '../support/json-arbitrary';
import { testSeed } from '../support/random';
import { allPaths, isObject, lookupCount, lookupGet, pathString } from '../support/subdoc-model';
import { documentSuite } from './document-suite';

/** The order `Object.keys` has for an object built by inserting `keys` sorted by their UTF-8 bytes. */
function utf8KeyOrder(keys: readonly string[]): string[] {
  const sorted = [...keys].sort((a, b) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')));
  const built: Record<string, true> = {};
  for (const key of sorted) Object.defineProperty(built, key, { value: true, enumerable: true });
  return Object.keys(built);
}

/** Asserts every object in `value` has its keys in UTF-8 byte order (as far as JS objects can). */
function expectUtf8KeyOrder(value: JsonValue): void {
  if (Array.isArray(value)) value.forEach(expectUtf8KeyOrder);
  else if (isObject(value)) {
    expect(Object.keys(value)).toEqual(utf8KeyOrder(Object.keys(value)));
    Object.values(value).forEach(expectUtf8KeyOrder);
  }
}

function valueAt(doc: JsonValue, path: readonly PathElement[]): JsonValue {
  return (lookupGet(doc, path) as { value: JsonValue }).value;
}

documentSuite('round trips of random JSON', (ctx) => {
  it('a document reads back as written, with object keys in UTF-8 byte order', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    let n = 0;
    await fc.assert(
      fc.asyncProperty(jsonDocument(), async (doc) => {
        const id = `doc-${n++}`;
        await c.insert(doc, { id });
        const { content } = await c.get(id);
        expect(content).toEqual(roundTripped(doc));
        expectUtf8KeyOrder(content);
      }),
      { seed: testSeed(2001), numRuns: 300 },
    );
  });

  it('every sub-path of a document reads as the value at that path, by array and by string path', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    let n = 0;
    await fc.assert(
      fc.asyncProperty(jsonDocument({ maxDepth: 4, maxChildren: 4 }), async (doc) => {
        const id = `doc-${n++}`;
        await c.insert(doc, { id });
        const expected = roundTripped(doc);
        for (const path of allPaths(expected)) {
          const want = valueAt(expected, path);
          expect({ path, content: (await c.get(id, path)).content }).toEqual({ path, content: want });
          expect({ path, content: (await c.get(id, pathString(path))).content }).toEqual({ path, content: want });
        }
      }),
      { seed: testSeed(2002), numRuns: 120 },
    );
  });

  it('lookupIn get, exists and count agree with the value at every path', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    let n = 0;
    await fc.assert(
      fc.asyncProperty(jsonDocument({ maxDepth: 4, maxChildren: 4 }), async (doc) => {
        const id = `doc-${n++}`;
        await c.insert(doc, { id });
        const expected = roundTripped(doc);
        const paths = allPaths(expected).filter((path) => path.length > 0);
        for (let from = 0; from < paths.length; from += 5) {
          const batch = paths.slice(from, from + 5);
          const { entries } = await c.lookupIn(
            id,
            batch.flatMap((path) => [
              { op: 'get' as const, path },
              { op: 'exists' as const, path },
              { op: 'count' as const, path },
            ]),
          );
          batch.forEach((path, i) => {
            const [get, exists, count] = entries.slice(3 * i, 3 * i + 3);
            expect({ path, value: get.value }).toEqual({ path, value: valueAt(expected, path) });
            expect({ path, value: exists.value }).toEqual({ path, value: true });
            const wantCount = lookupCount(expected, path);
            if ('value' in wantCount) expect({ path, value: count.value }).toEqual({ path, value: wantCount.value });
            else expect({ path, code: (count.error as { code?: string } | undefined)?.code }).toEqual({ path, code: wantCount.code });
          });
        }
      }),
      { seed: testSeed(2003), numRuns: 80 },
    );
  });

  it('long strings, chunked, round-trip inside random documents', async () => {
    const { docs } = await ctx.open();
    const c = docs.collection();
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(fc.string({ maxLength: 3 }), jsonValue({ longStrings: true, maxDepth: 2, maxChildren: 3 }), {
          maxKeys: 4,
          noNullPrototype: true,
        }),
        async (doc) => {
          const id = `doc-${n++}`;
          await c.insert(doc, { id });
          const expected = roundTripped(doc);
          expect((await c.get(id)).content).toEqual(expected);
          for (const path of allPaths(expected)) expect((await c.get(id, path)).content).toEqual(valueAt(expected, path));
        },
      ),
      { seed: testSeed(2004), numRuns: 40 },
    );
  });

  it('a replaced document keeps nothing of the one before, and a removed one leaves no key behind', async () => {
    const { docs, kv } = await ctx.open();
    const c = docs.collection();
    await c.insert({ keep: true }, { id: 'keep' });
    const empty = await dumpKeyspace(kv);
    await fc.assert(
      fc.asyncProperty(jsonDocument({ maxDepth: 4 }), jsonDocument({ maxDepth: 4 }), async (first, second) => {
        await c.upsert('d', first);
        await c.replace('d', second);
        expect((await c.get('d')).content).toEqual(roundTripped(second));
        await c.remove('d');
        expect(await dumpKeyspace(kv)).toEqual(empty);
      }),
      { seed: testSeed(2005), numRuns: 100 },
    );
  });
});
