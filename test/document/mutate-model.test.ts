/**
 * Seeded random sequences of mutateIn calls, applied both to the store and to a plain-JavaScript
 * reference model of Couchbase's rules (`test/support/subdoc-model.ts`). After every call the whole
 * document, the call's outcome (values, or error code and spec index) and a sample of sub-path reads
 * must agree with the model, and a failed call must leave the document and its cas unchanged; at the
 * end of each sequence every sub-path is read both by `get` and by `lookupIn`.
 *
 * Replay a failure with `DOCLAYER_SEED=<seed> npx jest test/document/mutate-model.test.ts`.
 */
import { MutateInSpec, type Collection, type JsonValue, type LookupInSpec, type MutateInOptions, type PathElement } from '../../src';
import { DocumentError } from '../../src/document/errors';
import { roundTripped } from '../support/json-arbitrary';
import { Random, testSeed } from '../support/random';
import {
  allPaths,
  isObject,
  lookupCount,
  lookupExists,
  lookupGet,
  mutateIn as modelMutateIn,
  pathString,
  type LookupOutcome,
  type ModelSpec,
} from '../support/subdoc-model';
import { documentSuite } from './document-suite';

const SEQUENCES = 10;
const CALLS_PER_SEQUENCE = 60;
/** Keep documents small enough that every call stays cheap: past this many nodes, remove more. */
const MAX_NODES = 60;

const KEYS = ['a', 'b', 'c', 'n', 'list', 'x.y', '', '`q', '[0]', 'é', 'a\0', '\0'];

/** A generated spec: what the store is given (string or array path) and what the model is given. */
interface GeneratedSpec {
  store: MutateInSpec;
  model: ModelSpec;
  /** An invalid value or path was put in on purpose. */
  invalidInput: boolean;
}

function scalar(r: Random): JsonValue {
  return r.pick<JsonValue>([null, true, false, 0, 1, -7, 42, 1.5, -0.25, 'str', '', 'a.b', 2n ** 60n, -(2n ** 62n), 9007199254740991]);
}

function value(r: Random, depth = 0): JsonValue {
  const roll = r.int(10);
  if (depth >= 3 || roll < 6) return scalar(r);
  if (roll < 8) return Array.from({ length: r.int(4) }, () => value(r, depth + 1));
  const out: Record<string, JsonValue> = {};
  for (let i = r.int(4); i > 0; i--) out[r.pick(KEYS)] = value(r, depth + 1);
  return out;
}

/** A value `levels` deep, to provoke VALUE_TOO_DEEP. */
function deepValue(levels: number): JsonValue {
  return levels <= 1 ? 1 : [deepValue(levels - 1)];
}

/** Every node of `doc` with its path, the root first. */
function nodesOf(doc: JsonValue): { path: PathElement[]; node: JsonValue }[] {
  return allPaths(doc).map((path) => ({ path, node: (lookupGet(doc, path) as { value: JsonValue }).value }));
}

/** A path anywhere, existing or not: keys and indices from small pools. */
function anyPath(r: Random): PathElement[] {
  return Array.from({ length: r.between(1, 3) }, () => (r.chance(0.6) ? r.pick(KEYS) : r.pick([0, 1, -1, 5])));
}

/**
 * A path to aim a spec at: mostly one where the op can succeed (an array for array ops, an integer or
 * a new key for counters, a key in an object for insert/upsert), sometimes one where it cannot.
 */
function target(r: Random, doc: JsonValue, op: MutateInSpec['op']): PathElement[] {
  const nodes = nodesOf(doc);
  const objects = nodes.filter((n) => isObject(n.node));
  const arrays = nodes.filter((n) => Array.isArray(n.node));
  const integers = nodes.filter((n) => typeof n.node === 'bigint' || (typeof n.node === 'number' && Number.isInteger(n.node)));
  const newKeyIn = (within: { path: PathElement[] }[]): PathElement[] | undefined => {
    if (within.length === 0) return undefined;
    const missing = r.chance(0.15) ? [r.pick(KEYS), r.pick(KEYS)] : [r.pick(KEYS)];
    return [...r.pick(within).path, ...missing];
  };
  const roll = r.next();
  if (roll < 0.03) return Array.from({ length: 31 }, () => 'a');
  if (roll < 0.15) return anyPath(r);
  let path: PathElement[] | undefined;
  switch (op) {
    case 'insert':
    case 'upsert':
      path = r.chance(0.9) ? newKeyIn(objects) : arrays.length > 0 ? [...r.pick(arrays).path, 0] : undefined;
      break;
    case 'replace':
    case 'remove':
      path = nodes.length > 1 ? r.pick(nodes.slice(1)).path : undefined;
      if (path && typeof path[path.length - 1] === 'number' && r.chance(0.3)) path = [...path.slice(0, -1), -1];
      break;
    case 'arrayAppend':
    case 'arrayPrepend':
    case 'arrayAddUnique':
      path = r.chance(0.8) && arrays.length > 0 ? r.pick(arrays).path : newKeyIn(objects);
      break;
    case 'arrayInsert':
      if (arrays.length > 0) {
        const { path: at, node } = r.pick(arrays);
        const length = (node as JsonValue[]).length;
        path = [...at, r.chance(0.85) ? r.int(length + 1) : r.pick([length + 1, -1])];
      }
      break;
    case 'increment':
    case 'decrement':
      path = r.chance(0.6) && integers.length > 0 ? r.pick(integers).path : newKeyIn(objects);
      break;
  }
  return path ?? anyPath(r);
}

function randomSpec(r: Random, doc: JsonValue, mayBeInvalid: boolean, nodes: number): GeneratedSpec {
  const ops: MutateInSpec['op'][] =
    nodes > MAX_NODES
      ? ['remove', 'remove', 'remove', 'replace']
      : ['insert', 'upsert', 'upsert', 'replace', 'remove', 'arrayAppend', 'arrayPrepend', 'arrayInsert', 'arrayAddUnique', 'increment', 'decrement'];
  const op = r.pick(ops);
  let path = target(r, doc, op);
  // Whole-document specs are the special empty path; upsert '' (a new document) now and then.
  if (op === 'upsert' && r.chance(0.03)) path = [];
  if (op === 'remove' && path.length === 0) path = ['a'];
  const createPath = r.chance(0.3) && op !== 'replace' && op !== 'remove' && op !== 'arrayInsert';
  const options: MutateInSpec['options'] = createPath ? { createPath } : undefined;
  let spec: ModelSpec;
  switch (op) {
    case 'insert':
    case 'upsert':
    case 'replace': {
      let v = value(r);
      if (path.length === 0) v = r.chance(0.8) ? { a: value(r), list: [1, 2] } : [value(r), value(r)];
      if (r.chance(0.03)) v = deepValue(33 - path.length + r.int(2));
      spec = { op, path, value: v, options };
      break;
    }
    case 'remove':
      spec = { op, path };
      break;
    case 'arrayAppend':
    case 'arrayPrepend':
    case 'arrayInsert': {
      const multi = r.chance(0.3);
      const v = multi ? Array.from({ length: r.between(1, 3) }, () => value(r, 1)) : value(r, 1);
      spec = { op, path, value: v, options: multi ? { ...options, multi } : options };
      break;
    }
    case 'arrayAddUnique':
      spec = { op, path, value: r.chance(0.9) ? scalar(r) : { not: 'primitive' }, options };
      break;
    case 'increment':
    case 'decrement': {
      const delta = r.chance(0.05) ? r.pick([0, 1.5, 0n]) : r.pick<number | bigint>([1, 2, -3, 100, 5n, 2n ** 62n, -(2n ** 62n)]);
      spec = { op, path, delta, options };
      break;
    }
  }
  // Invalid inputs only in a call of one spec: which error wins when another spec fails too is a rule
  // of its own (subdoc.test.ts), and mixing it in here would hide everything else.
  let invalidInput = false;
  if (mayBeInvalid && 'value' in spec && r.chance(0.02)) {
    // Without multi: whether a multi spec's non-array value is INVALID_VALUE or INVALID_ARGUMENT is open.
    const options = spec.options ? { ...spec.options, multi: undefined } : undefined;
    spec = { ...spec, value: r.pick([NaN, undefined as unknown as JsonValue, Infinity]), options };
    invalidInput = true;
  } else if (mayBeInvalid && r.chance(0.02)) {
    spec = { ...spec, path: [...spec.path, -2] };
    invalidInput = true;
  }
  const storePath = r.chance(0.5) ? [...spec.path] : pathString(spec.path);
  return { store: { ...spec, path: storePath }, model: spec, invalidInput };
}

function show(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? `${x}n` : x === undefined ? '<undefined>' : x));
}

/** Runs `check`, prefixing any failure with `where` so that a failure names its seed and call. */
async function within<T>(where: string, check: () => T | Promise<T>): Promise<T> {
  try {
    return await check();
  } catch (err) {
    if (err instanceof Error) err.message = `${where}\n${err.message}`;
    throw err;
  }
}

function lookupSpec(op: 'get' | 'exists' | 'count', path: PathElement[], r: Random): LookupInSpec {
  const p = r.chance(0.5) ? path : pathString(path);
  return { op, path: p };
}

function expectedLookup(doc: JsonValue, op: 'get' | 'exists' | 'count', path: PathElement[]): LookupOutcome {
  if (op === 'get') return lookupGet(doc, path);
  if (op === 'exists') return lookupExists(doc, path);
  return lookupCount(doc, path);
}

async function compareLookups(c: Collection, doc: JsonValue, paths: PathElement[][], r: Random): Promise<void> {
  for (let from = 0; from < paths.length; from += 16) {
    const batch = paths
      .slice(from, from + 16)
      .map((path) => ({ path, op: path.length === 0 ? r.pick(['get', 'count'] as const) : r.pick(['get', 'exists', 'count'] as const) }));
    const { entries } = await c.lookupIn(
      'd',
      batch.map((b) => lookupSpec(b.op, b.path, r)),
    );
    batch.forEach((b, i) => {
      const expected = expectedLookup(doc, b.op, b.path);
      const entry = entries[i];
      const actual =
        entry.error === undefined ? { value: entry.value } : { code: entry.error instanceof DocumentError ? entry.error.code : String(entry.error) };
      expect({ op: b.op, path: b.path, ...actual }).toEqual({ op: b.op, path: b.path, ...expected });
    });
  }
}

documentSuite('mutateIn against the reference model', (ctx) => {
  it.each(Array.from({ length: SEQUENCES }, (_, i) => i))('random sequence %i agrees with the model after every call', async (sequence) => {
    const seed = testSeed(1000 + sequence);
    const r = new Random(seed);
    const { docs } = await ctx.open();
    const c = docs.collection();
    let model: JsonValue | undefined = roundTripped({ a: { b: [1, 2, 3], c: 'x' }, list: [], n: 5, 'x.y': { '': null } });
    let cas = (await c.insert(model, { id: 'd' })).cas;

    for (let call = 0; call < CALLS_PER_SEQUENCE; call++) {
      // Now and then the document is removed (remove '' as the last spec) and created again by a call
      // with store semantics upsert or insert; otherwise mostly the default, replace.
      const missing = model === undefined;
      const semantics: MutateInOptions['storeSemantics'] = missing
        ? r.pick(['upsert', 'upsert', 'insert', 'replace'] as const)
        : r.chance(0.1)
          ? r.pick(['upsert', 'insert'] as const)
          : undefined;
      const base: JsonValue = model ?? {};
      const nodes = allPaths(base).length;
      const count = r.pick([1, 1, 1, 2, 2, 3, 4]);
      let specs = Array.from({ length: count }, (_, i) => randomSpec(r, base, i === 0 && !missing && semantics === undefined, nodes));
      if (specs[0].invalidInput) specs = specs.slice(0, 1);
      else if (!missing && r.chance(0.03)) specs.push({ store: MutateInSpec.remove(''), model: { op: 'remove', path: [] }, invalidInput: false });
      const options = semantics === undefined ? undefined : { storeSemantics: semantics };
      const where = `seed ${seed} (replay: DOCLAYER_SEED=${seed}), sequence ${sequence}, call ${call}\n  document: ${show(model)}\n  specs: ${show(specs.map((s) => s.store))}\n  options: ${show(options)}`;
      const expected = modelMutateIn(
        model,
        specs.map((s) => s.model),
        options,
      );

      await within(where, async () => {
        let actual:
          { ok: true; values: (JsonValue | undefined)[]; cas: string | undefined } | { ok: false; code: string; specIndex: number | undefined };
        try {
          const result = await c.mutateIn(
            'd',
            specs.map((s) => s.store),
            options,
          );
          actual = { ok: true, values: result.values, cas: result.cas };
        } catch (err) {
          if (!(err instanceof DocumentError)) throw err;
          actual = { ok: false, code: err.code, specIndex: err.specIndex };
        }
        const stored = await c.get('d').catch((err: unknown) => {
          if (err instanceof DocumentError && err.code === 'DOCUMENT_NOT_FOUND') return undefined;
          throw err;
        });
        if (expected.ok) {
          // What cas removing the document reports is left open; a document that remains has a new one.
          const { cas: newCas, ...rest } = actual as { ok: true; values: (JsonValue | undefined)[]; cas: string | undefined };
          expect(rest).toEqual({ ok: true, values: expected.values });
          if (expected.doc !== undefined) expect(typeof newCas).toBe('string');
          model = expected.doc === undefined ? undefined : roundTripped(expected.doc);
          if (model !== undefined) expect(stored?.cas).not.toBe(cas);
        } else {
          expect(actual.ok).toBe(false);
          if (!actual.ok) {
            expect(expected.codes).toContain(actual.code);
            if (expected.specIndex !== undefined) expect(actual.specIndex).toBe(expected.specIndex);
          }
          expect(stored?.cas).toBe(cas);
        }
        expect(stored?.content).toEqual(model);
        cas = stored?.cas;
        if (model === undefined) return;

        // A sample of sub-path reads: paths that exist, and some that do not.
        const existing = allPaths(model);
        const sample = Array.from({ length: 6 }, () => r.pick(existing));
        sample.push([...r.pick(existing), r.pick(KEYS)], [...r.pick(existing), r.pick([0, -1, 3])]);
        await compareLookups(c, model, sample, r);
      });
    }

    // Every sub-path of the final document, by get and by lookupIn.
    const final = model;
    if (final === undefined) return;
    await within(`seed ${seed} (replay: DOCLAYER_SEED=${seed}), sequence ${sequence}, final document ${show(final)}`, async () => {
      const paths = allPaths(final);
      for (const path of paths) {
        const want = (lookupGet(final, path) as { value: JsonValue }).value;
        expect({ path, content: (await c.get('d', path)).content }).toEqual({ path, content: want });
        expect({ path, content: (await c.get('d', pathString(path))).content }).toEqual({ path, content: want });
      }
      await compareLookups(c, final, paths, r);
    });
  });
});
