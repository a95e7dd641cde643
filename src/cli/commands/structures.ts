import type { Collection } from '../../collection';
import { DocumentError } from '../../document/errors';
import type { DocId, JsonValue } from '../../document/types';
import type { SetMember } from '../../structures/set';
import { UsageError, type ParsedArgs } from '../args';
import { GLOBAL_OPTION_NAMES } from '../options';
import { QUEUE_JOB_OPS } from './queue-jobs';
import { formatIdArgument, parseIdArgument, parseJsonArgument } from '../argument-values';
import { requireCollection } from '../collections';
import { stringifyJson } from '../json-text';
import type { Command, CommandContext } from './command';

/**
 * The data structure commands: `list|set|queue|counter|sortedset <id> <op> [args]`, each op one method of the
 * structure's handle (`collection.list(id)` ...). Values are JSON arguments; an op that only reads
 * refuses a collection that does not exist, one that writes creates it (and the structure).
 */

type Kind = 'list' | 'set' | 'queue' | 'counter' | 'sortedset';

interface Op {
  /** Argument names, for the usage and the arity check. */
  readonly args: readonly string[];
  readonly writes: boolean;
  readonly summary: string;
  /** The result, as JSON; `undefined` for none. */
  run(collection: Collection, id: DocId, args: readonly string[]): Promise<JsonValue | undefined>;
  /** Options of its own (`--state`), if any. */
  readonly options?: readonly string[];
  /** For an op that prints many results: them, one JSON value per line (instead of `run`'s). */
  lines?(collection: Collection, id: DocId, args: ParsedArgs): AsyncIterable<JsonValue>;
}

const value = (text: string) => parseJsonArgument(text, 'the value');

function index(text: string): number {
  const n = Number(text);
  if (!/^-?\d+$/.test(text) || !Number.isSafeInteger(n)) throw new UsageError(`an index is an integer, got ${JSON.stringify(text)}`);
  return n;
}

function member(text: string): SetMember {
  const parsed = parseJsonArgument(text, 'the member');
  if (parsed !== null && typeof parsed === 'object') {
    throw new DocumentError('INVALID_VALUE', 'a set member is a JSON primitive: a string, number, boolean or null');
  }
  return parsed;
}

function amount(text: string | undefined): number | bigint {
  if (text === undefined) return 1;
  const parsed = parseJsonArgument(text, 'the amount');
  if (typeof parsed !== 'number' && typeof parsed !== 'bigint') throw new UsageError(`an amount is a number, got ${text}`);
  return parsed;
}

/** A score: a finite number. */
function score(text: string): number {
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n)) throw new UsageError(`a score is a finite number, got ${JSON.stringify(text)}`);
  return n;
}

/** A score bound as Redis writes one: a number, `-inf`/`+inf`, or `(` before it for an exclusive bound. */
function scoreBound(text: string): { value: number; exclusive: boolean } {
  const exclusive = text.startsWith('(');
  const rest = exclusive ? text.slice(1) : text;
  const lower = rest.toLowerCase();
  const value = lower === '-inf' ? -Infinity : lower === '+inf' || lower === 'inf' ? Infinity : Number(rest);
  if (rest.trim() === '' || Number.isNaN(value))
    throw new UsageError(`a score bound is a number, -inf, +inf, or one of them after "(", got ${JSON.stringify(text)}`);
  return { value, exclusive };
}

function scoreRange(minText: string, maxText: string): [number, number, { minExclusive: boolean; maxExclusive: boolean }] {
  const min = scoreBound(minText);
  const max = scoreBound(maxText);
  return [min.value, max.value, { minExclusive: min.exclusive, maxExclusive: max.exclusive }];
}

function count(text: string | undefined): number {
  if (text === undefined) return 1;
  const n = index(text);
  if (n < 0) throw new UsageError(`a count is not negative, got ${text}`);
  return n;
}

/** An op's result, or `null` for a missing element (pop of an empty queue). */
const orNull = (v: JsonValue | undefined): JsonValue => (v === undefined ? null : v);

function clear(kind: Kind): Op {
  const handle = (c: Collection, id: DocId) =>
    kind === 'list'
      ? c.list(id)
      : kind === 'set'
        ? c.set(id)
        : kind === 'queue'
          ? c.queue(id)
          : kind === 'sortedset'
            ? c.sortedSet(id)
            : c.counter(id);
  return { args: [], writes: true, summary: `remove the ${kind}`, run: async (c, id) => void (await handle(c, id).clear()) };
}

export const STRUCTURE_OPS: Record<Kind, Record<string, Op>> = {
  list: {
    push: { args: ['json'], writes: true, summary: 'append a value', run: async (c, id, [v]) => void (await c.list(id).push(value(v))) },
    unshift: { args: ['json'], writes: true, summary: 'prepend a value', run: async (c, id, [v]) => void (await c.list(id).unshift(value(v))) },
    insert: {
      args: ['index', 'json'],
      writes: true,
      summary: 'insert a value before an index',
      run: async (c, id, [i, v]) => void (await c.list(id).insert(index(i), value(v))),
    },
    set: {
      args: ['index', 'json'],
      writes: true,
      summary: 'replace the value at an index',
      run: async (c, id, [i, v]) => void (await c.list(id).set(index(i), value(v))),
    },
    get: { args: ['index'], writes: false, summary: 'the value at an index (-1: the last)', run: (c, id, [i]) => c.list(id).get(index(i)) },
    remove: {
      args: ['index'],
      writes: true,
      summary: 'remove the value at an index',
      run: async (c, id, [i]) => void (await c.list(id).removeAt(index(i))),
    },
    pop: { args: [], writes: true, summary: 'remove and print the last value', run: async (c, id) => orNull(await c.list(id).pop()) },
    shift: { args: [], writes: true, summary: 'remove and print the first value', run: async (c, id) => orNull(await c.list(id).shift()) },
    size: { args: [], writes: false, summary: 'the number of values', run: (c, id) => c.list(id).size() },
    items: { args: [], writes: false, summary: 'every value, as a JSON array', run: (c, id) => c.list(id).toArray() },
    clear: clear('list'),
  },
  set: {
    add: { args: ['member'], writes: true, summary: 'add a member; true if it was new', run: (c, id, [m]) => c.set(id).add(member(m)) },
    remove: { args: ['member'], writes: true, summary: 'remove a member; true if it was there', run: (c, id, [m]) => c.set(id).delete(member(m)) },
    contains: { args: ['member'], writes: false, summary: 'true if it is a member', run: (c, id, [m]) => c.set(id).has(member(m)) },
    size: { args: [], writes: false, summary: 'the number of members', run: (c, id) => c.set(id).size() },
    members: { args: [], writes: false, summary: 'every member, as a JSON array', run: (c, id) => c.set(id).values() },
    clear: clear('set'),
  },
  queue: {
    push: { args: ['json'], writes: true, summary: 'add a value at the tail', run: async (c, id, [v]) => void (await c.queue(id).push(value(v))) },
    pop: {
      args: [],
      writes: true,
      summary: 'remove and print the oldest value (null when empty)',
      run: async (c, id) => orNull(await c.queue(id).pop()),
    },
    peek: {
      args: [],
      writes: false,
      summary: 'the oldest value, not removed (null when empty)',
      run: async (c, id) => orNull(await c.queue(id).peek()),
    },
    size: { args: [], writes: false, summary: 'the number of values', run: (c, id) => c.queue(id).size() },
    items: {
      args: [],
      writes: false,
      summary: 'every value in pop order, as a JSON array',
      run: async (c, id) => {
        const items: JsonValue[] = [];
        for await (const item of c.queue(id).iterate()) items.push(item);
        return items;
      },
    },
    clear: clear('queue'),
    ...QUEUE_JOB_OPS,
  },
  counter: {
    get: { args: [], writes: false, summary: 'the value (0 when missing)', run: (c, id) => c.counter(id).get() },
    incr: { args: ['[by]'], writes: true, summary: 'add (default 1); print the new value', run: (c, id, [by]) => c.counter(id).incr(amount(by)) },
    decr: {
      args: ['[by]'],
      writes: true,
      summary: 'subtract (default 1); print the new value',
      run: (c, id, [by]) => c.counter(id).decr(amount(by)),
    },
    set: {
      args: ['n'],
      writes: true,
      summary: 'set the value',
      run: async (c, id, [n]) => void (await c.counter(id).set(amount(n))),
    },
    clear: clear('counter'),
  },
  sortedset: {
    add: {
      args: ['member', 'score'],
      writes: true,
      summary: "set a member's score; true if it was new",
      run: (c, id, [m, s]) => c.sortedSet(id).add(m, score(s)),
    },
    incr: {
      args: ['member', 'by'],
      writes: true,
      summary: "add to a member's score; print the new score",
      run: (c, id, [m, by]) => c.sortedSet(id).increment(m, score(by)),
    },
    remove: { args: ['member'], writes: true, summary: 'remove a member; true if it was there', run: (c, id, [m]) => c.sortedSet(id).remove(m) },
    score: {
      args: ['member'],
      writes: false,
      summary: "a member's score (null if none)",
      run: async (c, id, [m]) => orNull(await c.sortedSet(id).score(m)),
    },
    rank: {
      args: ['member'],
      writes: false,
      summary: "a member's rank from the lowest score (null if none)",
      run: async (c, id, [m]) => orNull(await c.sortedSet(id).rank(m)),
    },
    revrank: {
      args: ['member'],
      writes: false,
      summary: "a member's rank from the highest score",
      run: async (c, id, [m]) => orNull(await c.sortedSet(id).rank(m, { reverse: true })),
    },
    range: {
      args: ['start', 'stop'],
      writes: false,
      summary: '[member, score] pairs of ranks start..stop (-1: the last)',
      run: (c, id, [start, stop]) => c.sortedSet(id).range(index(start), index(stop)),
    },
    rangebyscore: {
      args: ['min', 'max'],
      writes: false,
      summary: 'pairs with scores in min..max ("(1" excludes 1; -inf, +inf; -- before a negative)',
      run: (c, id, [min, max]) => c.sortedSet(id).rangeByScore(...scoreRange(min, max)),
    },
    count: {
      args: ['min', 'max'],
      writes: false,
      summary: 'the number of members with scores in min..max',
      run: (c, id, [min, max]) => c.sortedSet(id).count(...scoreRange(min, max)),
    },
    popmin: {
      args: ['[n]'],
      writes: true,
      summary: 'remove and print the n (1) lowest pairs',
      run: (c, id, [n]) => c.sortedSet(id).popMin(count(n)),
    },
    popmax: {
      args: ['[n]'],
      writes: true,
      summary: 'remove and print the n (1) highest pairs',
      run: (c, id, [n]) => c.sortedSet(id).popMax(count(n)),
    },
    size: { args: [], writes: false, summary: 'the number of members', run: (c, id) => c.sortedSet(id).size() },
    members: { args: [], writes: false, summary: 'every [member, score] pair, lowest first', run: (c, id) => c.sortedSet(id).range(0, -1) },
    clear: clear('sortedset'),
  },
};

/** Whether `set <id> <op> ...` names an op of the set structure (rather than a document path). */
export function isSetStructureOp(op: string | undefined): boolean {
  return op !== undefined && Object.hasOwn(STRUCTURE_OPS.set, op);
}

/** Runs `<kind> <id> <op> [args]`. */
export async function runStructureOp(kind: Kind, context: CommandContext): Promise<void> {
  const [idText, opName, ...rest] = context.args.positionals;
  const ops = STRUCTURE_OPS[kind];
  if (idText === undefined || opName === undefined) throw new UsageError(`${kind} needs an id and an operation`, kind);
  const op = Object.hasOwn(ops, opName) ? ops[opName] : undefined;
  if (op === undefined) throw new UsageError(`unknown ${kind} operation ${JSON.stringify(opName)}: one of ${Object.keys(ops).join(', ')}`, kind);
  const required = op.args.filter((a) => !a.startsWith('[')).length;
  if (rest.length < required || rest.length > op.args.length) {
    throw new UsageError(`${kind} ${opName} takes ${op.args.length === 0 ? 'no arguments' : op.args.join(' ')}`, kind);
  }
  for (const name of context.args.options.keys()) {
    if (!GLOBAL_OPTION_NAMES.has(name) && !(op.options ?? []).includes(name)) throw new UsageError(`${kind} ${opName} does not take --${name}`, kind);
  }
  const id = parseIdArgument(idText);
  const collection = op.writes ? (await context.session()).collection(context.collectionName) : await requireCollection(context);
  if (op.lines !== undefined) {
    for await (const line of op.lines(collection, id, context.args)) await context.output.write(`${stringifyJson(line)}\n`);
    return;
  }
  const result = await op.run(collection, id, rest);
  await context.output.result(() => (result === undefined ? `${kind} ${formatIdArgument(id)}: ${opName} done` : stringifyJson(result)), {
    id,
    op: opName,
    result: result === undefined ? null : result,
  });
}

function structureCommand(kind: Exclude<Kind, 'set'>, summary: string): Command {
  return {
    name: kind,
    forms: [{ usage: `${kind} <id> <op> [args]`, summary }],
    details: opLines(kind),
    options: Object.values(STRUCTURE_OPS[kind]).flatMap((op) => op.options ?? []),
    createsDatabase: true,
    run: (context) => runStructureOp(kind, context),
  };
}

/** The ops of a kind, one per line, for `help`. */
export function opLines(kind: Kind): string[] {
  return Object.entries(STRUCTURE_OPS[kind]).map(
    ([name, op]) =>
      `  ${[kind, '<id>', name, ...op.args.map((a) => (a.startsWith('[') ? a : `<${a}>`)), ...(op.options ?? []).map((o) => `[--${o}]`)].join(' ').padEnd(34)} ${op.summary}`,
  );
}

export const listCommand = structureCommand('list', 'a list structure: push, pop, get, insert, ...');
export const queueCommand = structureCommand('queue', 'a queue structure: push, pop, peek, size, items, stats, jobs');
export const counterCommand = structureCommand('counter', 'a counter structure: get, incr, decr, set');
export const sortedSetCommand = structureCommand('sortedset', 'a sorted set: add, rank, range, rangebyscore, popmin, ...');
