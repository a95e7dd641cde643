/**
 * The doclayer store against Node-RED's memory store, on random sequences of get, set (one key or
 * several, `undefined` to delete) and keys, with keys that mix object keys, array indices, quoted
 * names and embedded `[msg.x]` references: every call has the same outcome (values, or the kind of
 * error), and the stores hold the same data after each call.
 *
 * The model is the memory store with its data put through JSON after each call, and a call that
 * fails undone: the doclayer store keeps JSON as the localfilesystem store does (an array hole is
 * `null` once stored, also between the keys of one multi-key set), and runs each call in one
 * transaction, so a failed call (a failed multi-key set, a set that Node-RED's setObjectProperty
 * abandons with a RangeError after creating a parent) writes nothing, where the memory store keeps
 * what it wrote before the error.
 *
 * References (`a[msg.r]`) name keys that hold primitives: with an object there, Node-RED uses the live
 * object as the property name, so what it names changes as the write proceeds.
 */
import fc from 'fast-check';
import { testSeed } from '../support/random';
import { createMemoryStore, type MemoryStore } from './support/node-red-reference';
import { callbackArguments, closeStores, keys, openStore } from './support/store-fixture';

const SCOPE = 'n1:f1';

const name = fc.constantFrom('a', 'b', '0', '1', 'length');
const root = fc.constantFrom('a', 'b', 'c', '"x y"', '0');
const expression: fc.Arbitrary<string> = fc
  .tuple(
    root,
    fc.array(
      fc.oneof(
        { weight: 4, arbitrary: name.map((k) => `.${k}`) },
        { weight: 3, arbitrary: fc.integer({ min: 0, max: 3 }).map((n) => `[${n}]`) },
        { weight: 1, arbitrary: name.map((k) => `["${k}"]`) },
        { weight: 1, arbitrary: fc.constantFrom('[msg.r]', '[msg.q]') },
      ),
      { maxLength: 3 },
    ),
  )
  .map(([r, segments]) => r + segments.join(''));

const value = fc.oneof(
  fc.constantFrom(undefined, null, 0, 1, 2, 'a', 'b', 'length', '', true),
  fc.constantFrom({}, [], { a: 1 }, [1, 2], { b: [0, { a: 'x' }] }, [[], {}]),
);

/** The keys references name hold primitives (see setReference). */
const reference = fc.record({
  kind: fc.constant('set' as const),
  key: fc.constantFrom('r', 'q'),
  value: fc.constantFrom(undefined, null, 0, 1, 3, 'a', 'b', '0', 'length', true),
});

type Op =
  | { kind: 'set'; key: string; value: unknown }
  | { kind: 'setMany'; keys: string[]; values: unknown[] }
  | { kind: 'get'; key: string }
  | { kind: 'getMany'; keys: string[] }
  | { kind: 'keys' };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('set' as const), key: expression, value }) },
  { weight: 1, arbitrary: reference },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('setMany' as const),
      keys: fc.array(expression, { minLength: 1, maxLength: 3 }),
      values: fc.array(value, { maxLength: 3 }),
    }),
  },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('get' as const), key: expression }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('getMany' as const), keys: fc.array(expression, { minLength: 1, maxLength: 3 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('keys' as const) }) },
);

/** What a call did: its callback's arguments, with an error reduced to its kind. */
function described(args: unknown[]): unknown[] {
  const [err, ...rest] = args;
  if (err) return [`error ${(err as { code?: string }).code ?? (err as Error).constructor.name}`];
  return [null, ...rest.map((v) => (v === undefined ? undefined : (JSON.parse(JSON.stringify(v)) as unknown)))];
}

function memoryCall(memory: MemoryStore, op: Op): unknown[] {
  try {
    switch (op.kind) {
      case 'set':
        memory.set(SCOPE, op.key, value(op.value));
        return [null];
      case 'setMany':
        // Key by key, each stored as JSON before the next, as the doclayer store writes them.
        op.keys.forEach((key, i) => {
          memory.set(SCOPE, key, i < op.values.length ? value(op.values[i]) : null);
          persist(memory);
        });
        return [null];
      case 'get':
        return [null, memory.get(SCOPE, op.key)];
      case 'getMany':
        return [null, ...(memory.get(SCOPE, op.keys) as unknown[])];
      case 'keys':
        return [null, memory.keys(SCOPE)];
    }
  } catch (err) {
    return [err];
  }
  function value(v: unknown): unknown {
    return structuredClone(v);
  }
}

/** The memory store's data as a JSON store would hold it. */
function persist(memory: MemoryStore): void {
  const data = memory._export();
  data[SCOPE] = JSON.parse(JSON.stringify(data[SCOPE] ?? {})) as Record<string, unknown>;
}

afterEach(closeStores);

describe('DoclayerContextStore against the memory store', () => {
  it('has the same outcomes and holds the same data after every call', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 25 }), async (ops) => {
        const memory = createMemoryStore({});
        // The memory store parses nothing in a scope it has never seen; give it the scope.
        memory.set(SCOPE, 'a', undefined);
        const store = await openStore();
        for (const [i, step] of ops.entries()) {
          const before = JSON.stringify(memory._export()[SCOPE]);
          const expected = described(memoryCall(memory, step));
          if (expected[0] !== null) memory._export()[SCOPE] = JSON.parse(before) as Record<string, unknown>;
          persist(memory);
          const actual = described(
            await callbackArguments((cb) => {
              switch (step.kind) {
                case 'set':
                  return store.set(SCOPE, step.key, step.value, cb);
                case 'setMany':
                  return store.set(SCOPE, step.keys, step.values, cb);
                case 'get':
                  return store.get(SCOPE, step.key, cb);
                case 'getMany':
                  return store.get(SCOPE, step.keys, cb);
                case 'keys':
                  return store.keys(SCOPE, cb);
              }
            }),
          );
          const where = `step ${i}: ${JSON.stringify(step)}`;
          expect({ where, outcome: actual }).toEqual({ where, outcome: expected });
          const data = memory._export()[SCOPE];
          expect({ where, keys: await keys(store, SCOPE) }).toEqual({ where, keys: Object.keys(data) });
          for (const key of Object.keys(data)) {
            const [, stored] = await callbackArguments((cb) => store.get(SCOPE, JSON.stringify(key), cb));
            expect({ where, key, stored }).toEqual({ where, key, stored: data[key] });
          }
        }
        await store.close();
      }),
      { seed: testSeed(5401), numRuns: 150 },
    );
  });
});
