/**
 * The atomic context API of Node-RED's design (designs/atomic-context-api): incr and decr, then the
 * design's next phase, array push/pop/shift/unshift and string append/prepend, on root keys and on
 * nested paths.
 */
import type { DoclayerContextStore } from '../../src/node-red/context-store';
import { callbackArguments, closeStores, get, keys, openStore, result, set } from './support/store-fixture';

let store: DoclayerContextStore;
const S = 'global';

beforeEach(async () => {
  store = await openStore();
});

afterEach(closeStores);

const incr = (key: string, amount?: number) => result<number>((cb) => store.incr(S, key, amount, cb));
const decr = (key: string, amount?: number) => result<number>((cb) => store.decr(S, key, amount, cb));
const push = (key: string, value: unknown) => result<number>((cb) => store.push(S, key, value, cb));
const unshift = (key: string, value: unknown) => result<number>((cb) => store.unshift(S, key, value, cb));
const pop = (key: string) => result<unknown>((cb) => store.pop(S, key, cb));
const shift = (key: string) => result<unknown>((cb) => store.shift(S, key, cb));
const append = (key: string, text: string) => result<string>((cb) => store.append(S, key, text, cb));
const prepend = (key: string, text: string) => result<string>((cb) => store.prepend(S, key, text, cb));

describe('incr', () => {
  it('sets a missing key to 0 before adding 1, and returns the value after the increment', async () => {
    expect(await incr('count')).toBe(1);
    expect(await incr('count')).toBe(2);
    expect(await get(store, S, 'count')).toBe(2);
  });

  it('adds the amount given, a negative one too', async () => {
    expect(await incr('count', 5)).toBe(5);
    expect(await incr('count', -7)).toBe(-2);
  });

  it('takes the callback as third argument', async () => {
    expect(await callbackArguments((cb) => store.incr(S, 'count', cb))).toEqual([null, 1]);
  });

  it('increments a nested path, creating the parents as objects', async () => {
    expect(await incr('stats.http.errors', 2)).toBe(2);
    expect(await incr('stats.http.errors')).toBe(3);
    expect(await get(store, S, 'stats')).toEqual({ http: { errors: 3 } });
  });

  it('adds floats, to a float or an integer value, as JavaScript adds them', async () => {
    expect(await incr('t', 0.1)).toBe(0.1);
    expect(await incr('t', 0.2)).toBe(0.1 + 0.2);
    await set(store, S, 'n.x', 1.5);
    expect(await incr('n.x', 1)).toBe(2.5);
    await set(store, S, 'n.y', 2);
    expect(await incr('n.y', 0.5)).toBe(2.5);
  });

  it('adds past 2^53 in floating point, as JavaScript does', async () => {
    await set(store, S, 'big.n', 2 ** 53);
    expect(await incr('big.n', 1)).toBe(2 ** 53 + 1);
    expect(await get(store, S, 'big.n')).toBe(2 ** 53);
  });

  it('increments an array element and a key holding an object key path', async () => {
    await set(store, S, 'counts', [1, 2]);
    expect(await incr('counts[1]', 10)).toBe(12);
    expect(await incr('counts[3]')).toBe(1);
    expect(await get(store, S, 'counts')).toEqual([1, 12, null, 1]);
  });

  it('fails when the value is not a number, and changes nothing', async () => {
    await set(store, S, 'name', 'ada');
    await expect(incr('name')).rejects.toMatchObject({ code: 'NOT_A_NUMBER' });
    await set(store, S, 'o.v', { n: 1 });
    await expect(incr('o.v')).rejects.toMatchObject({ code: 'NOT_A_NUMBER' });
    expect(await get(store, S, 'name')).toBe('ada');
  });

  it('fails when the amount is not a number', async () => {
    await expect(result((cb) => store.incr(S, 'count', '2' as unknown as number, cb))).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(incr('count', NaN)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(incr('count', Infinity)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    expect(await keys(store, S)).toEqual([]);
  });

  it('fails where set would silently do nothing: under a string', async () => {
    await set(store, S, 's', 'text');
    await expect(incr('s.count')).rejects.toMatchObject({ code: 'CANNOT_SET' });
  });

  it('fails with INVALID_EXPR for an invalid key', async () => {
    await expect(incr('a..b')).rejects.toMatchObject({ code: 'INVALID_EXPR' });
  });

  it('throws without a callback, as the design says a store without synchronous access must', () => {
    expect(() => store.incr(S, 'count', 1)).toThrow(new Error('Callback must be a function'));
  });
});

describe('decr', () => {
  it('subtracts 1 or the amount, from 0 for a missing key', async () => {
    expect(await decr('left')).toBe(-1);
    expect(await decr('left', 4)).toBe(-5);
    expect(await decr('nested.left', 0.5)).toBe(-0.5);
  });

  it('fails for an amount that is not a number', async () => {
    await expect(result((cb) => store.decr(S, 'left', 'x' as unknown as number, cb))).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });
});

describe('push and unshift', () => {
  it('create a missing array and return the new length', async () => {
    expect(await push('queue', 'a')).toBe(1);
    expect(await push('queue', 'b')).toBe(2);
    expect(await unshift('queue', 'z')).toBe(3);
    expect(await get(store, S, 'queue')).toEqual(['z', 'a', 'b']);
  });

  it('work on nested arrays and add an array as one element', async () => {
    expect(await push('jobs.pending', [1, 2])).toBe(1);
    expect(await unshift('jobs.pending', { id: 7 })).toBe(2);
    expect(await get(store, S, 'jobs')).toEqual({ pending: [{ id: 7 }, [1, 2]] });
  });

  it('store the element as JSON (undefined becomes null)', async () => {
    expect(await push('list', undefined)).toBe(1);
    expect(await push('list', new Date(0))).toBe(2);
    expect(await get(store, S, 'list')).toEqual([null, '1970-01-01T00:00:00.000Z']);
  });

  it('fail on a value that is not an array', async () => {
    await set(store, S, 'o', { a: 1 });
    await expect(push('o', 1)).rejects.toMatchObject({ code: 'NOT_AN_ARRAY' });
    await expect(unshift('o.a', 1)).rejects.toMatchObject({ code: 'NOT_AN_ARRAY' });
  });
});

describe('pop and shift', () => {
  it('remove and return the last and the first element', async () => {
    await set(store, S, 'q', [1, { two: 2 }, 3, 4]);
    expect(await pop('q')).toBe(4);
    expect(await shift('q')).toBe(1);
    expect(await shift('q')).toEqual({ two: 2 });
    expect(await get(store, S, 'q')).toEqual([3]);
  });

  it('work on nested arrays and array elements', async () => {
    await set(store, S, 'a', { lists: [[1, 2], [3]] });
    expect(await pop('a.lists')).toEqual([3]);
    expect(await shift('a.lists[0]')).toBe(1);
    expect(await get(store, S, 'a')).toEqual({ lists: [[2]] });
  });

  it('return undefined for an empty array and for a missing key, and create nothing', async () => {
    await set(store, S, 'empty', []);
    expect(await pop('empty')).toBeUndefined();
    expect(await shift('missing')).toBeUndefined();
    expect(await pop('missing.deeper')).toBeUndefined();
    expect(await keys(store, S)).toEqual(['empty']);
  });

  it('fail on a value that is not an array', async () => {
    await set(store, S, 's', 'text');
    await expect(pop('s')).rejects.toMatchObject({ code: 'NOT_AN_ARRAY' });
    await set(store, S, 'o', {});
    await expect(shift('o')).rejects.toMatchObject({ code: 'NOT_AN_ARRAY' });
  });
});

describe('append and prepend', () => {
  it('add text at either end, from an empty string for a missing key, and return the new string', async () => {
    expect(await append('log', 'b')).toBe('b');
    expect(await append('log', 'c')).toBe('bc');
    expect(await prepend('log', 'a')).toBe('abc');
    expect(await append('nested.log', 'x')).toBe('x');
    expect(await get(store, S, 'nested')).toEqual({ log: 'x' });
  });

  it('fail on a value that is not a string, and for text that is not a string', async () => {
    await set(store, S, 'n', 5);
    await expect(append('n', 'x')).rejects.toMatchObject({ code: 'NOT_A_STRING' });
    await expect(result((cb) => store.append(S, 'log', 5 as unknown as string, cb))).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });
});

describe('atomic operations and keys', () => {
  it('list the keys they create in creation order', async () => {
    await incr('c');
    await push('a', 1);
    await append('b', 'x');
    expect(await keys(store, S)).toEqual(['c', 'a', 'b']);
  });
});
