/**
 * The behaviours Node-RED's own spec of the memory store tests
 * (test/unit/@node-red/runtime/lib/nodes/context/memory_spec.js in node-red/node-red), re-expressed
 * against the doclayer store. The store is asynchronous only, as Node-RED's Redis store is: the spec's
 * synchronous cases run through callbacks here, and a call that needs a result throws without one.
 */
import type { DoclayerContextStore } from '../../src/node-red/context-store';
import { callbackArguments, closeStores, get, keys, openStore, set } from './support/store-fixture';

let context: DoclayerContextStore;

beforeEach(async () => {
  context = await openStore();
});

afterEach(async () => {
  await context.clean([]);
  await closeStores();
});

describe('memory spec: #get/set', () => {
  it('stores a property', async () => {
    expect(await get(context, 'nodeX', 'foo')).toBeUndefined();
    await set(context, 'nodeX', 'foo', 'test');
    expect(await get(context, 'nodeX', 'foo')).toBe('test');
  });

  it('stores a property, creating parent properties', async () => {
    await set(context, 'nodeX', 'foo.bar', 'test');
    expect(await get(context, 'nodeX', 'foo')).toEqual({ bar: 'test' });
  });

  it('deletes a property', async () => {
    await set(context, 'nodeX', 'foo.abc.bar1', 'test1');
    await set(context, 'nodeX', 'foo.abc.bar2', 'test2');
    expect(await get(context, 'nodeX', 'foo.abc')).toEqual({ bar1: 'test1', bar2: 'test2' });
    await set(context, 'nodeX', 'foo.abc.bar1', undefined);
    expect(await get(context, 'nodeX', 'foo.abc')).toEqual({ bar2: 'test2' });
    await set(context, 'nodeX', 'foo.abc', undefined);
    expect(await get(context, 'nodeX', 'foo.abc')).toBeUndefined();
    await set(context, 'nodeX', 'foo', undefined);
    expect(await get(context, 'nodeX', 'foo')).toBeUndefined();
  });

  it('does not share context with another scope', async () => {
    expect(await get(context, 'nodeX', 'foo')).toBeUndefined();
    expect(await get(context, 'nodeY', 'foo')).toBeUndefined();
    await set(context, 'nodeX', 'foo', 'testX');
    await set(context, 'nodeY', 'foo', 'testY');
    expect(await get(context, 'nodeX', 'foo')).toBe('testX');
    expect(await get(context, 'nodeY', 'foo')).toBe('testY');
  });

  it('passes the error of an invalid key to the callback, for set and for get', async () => {
    const [setError] = await callbackArguments((cb) => context.set('nodeX', '.foo', 'test', cb));
    expect(setError).toMatchObject({ code: 'INVALID_EXPR', message: 'Invalid property expression: unexpected . at position 0' });
    const [getError] = await callbackArguments((cb) => context.get('nodeX', '.foo', cb));
    expect(getError).toMatchObject({ code: 'INVALID_EXPR' });
  });

  it('gets multiple values, all known', async () => {
    await set(context, 'nodeX', 'one', 'test1');
    await set(context, 'nodeX', 'two', 'test2');
    await set(context, 'nodeX', 'three', 'test3');
    await set(context, 'nodeX', 'four', 'test4');
    const args = await callbackArguments((cb) => context.get('nodeX', ['one', 'two', 'four'], cb));
    expect(args).toEqual([undefined, 'test1', 'test2', 'test4']);
  });

  it('gets multiple values, including unknown ones', async () => {
    await set(context, 'nodeX', 'one', 'test1');
    await set(context, 'nodeX', 'two', 'test2');
    const args = await callbackArguments((cb) => context.get('nodeX', ['one', 'unknown.with.multiple.levels'], cb));
    expect(args).toEqual([undefined, 'test1', undefined]);
  });

  it('passes the error of a bad key among multiple keys to the callback', async () => {
    await set(context, 'nodeX', 'one', 'test1');
    await set(context, 'nodeX', 'three', 'test3');
    const args = await callbackArguments((cb) => context.get('nodeX', ['one', '.foo', 'three'], cb));
    expect(args).toHaveLength(1);
    expect(args[0]).toMatchObject({ code: 'INVALID_EXPR' });
  });

  it('throws, as the Redis store does, when get has no callback', () => {
    expect(() => context.get('nodeX', 'foo', undefined as never)).toThrow(new Error('Callback must be a function'));
  });

  it('sets without a callback, and a later get sees the value', async () => {
    context.set('nodeX', 'foo', 'unobserved');
    expect(await get(context, 'nodeX', 'foo')).toBe('unobserved');
  });
});

describe('memory spec: #keys', () => {
  it('enumerates context keys, in insertion order', async () => {
    expect(await keys(context, 'nodeX')).toEqual([]);
    await set(context, 'nodeX', 'foo', 'bar');
    expect(await keys(context, 'nodeX')).toEqual(['foo']);
    await set(context, 'nodeX', 'abc.def', 'bar');
    expect(await keys(context, 'nodeX')).toEqual(['foo', 'abc']);
  });

  it('enumerates the keys of each scope', async () => {
    expect(await keys(context, 'nodeX')).toEqual([]);
    expect(await keys(context, 'nodeY')).toEqual([]);
    await set(context, 'nodeX', 'foo', 'bar');
    await set(context, 'nodeY', 'hoge', 'piyo');
    expect(await keys(context, 'nodeX')).toEqual(['foo']);
    expect(await keys(context, 'nodeY')).toEqual(['hoge']);
  });

  it('enumerates global context keys', async () => {
    expect(await keys(context, 'global')).toEqual([]);
    await set(context, 'global', 'foo', 'bar');
    expect(await keys(context, 'global')).toEqual(['foo']);
    await set(context, 'global', 'abc.def', 'bar');
    expect(await keys(context, 'global')).toEqual(['foo', 'abc']);
  });

  it('does not list set, get and keys as global context keys', async () => {
    await set(context, 'global', 'set', 'bar');
    await set(context, 'global', 'get', 'bar');
    await set(context, 'global', 'keys', 'bar');
    expect(await keys(context, 'global')).toEqual([]);
  });

  it('calls back (null, keys)', async () => {
    await set(context, 'nodeX', 'foo', 'bar');
    expect(await callbackArguments((cb) => context.keys('nodeX', cb))).toEqual([null, ['foo']]);
  });

  it('throws, as the Redis store does, when keys has no callback', () => {
    expect(() => context.keys('nodeX', undefined as never)).toThrow(new Error('Callback must be a function'));
  });
});

describe('memory spec: #delete', () => {
  it('deletes the context of one scope', async () => {
    await set(context, 'nodeX', 'foo', 'abc');
    await set(context, 'nodeY', 'foo', 'abc');
    await context.delete('nodeX');
    expect(await get(context, 'nodeX', 'foo')).toBeUndefined();
    expect(await get(context, 'nodeY', 'foo')).toBe('abc');
    expect(await keys(context, 'nodeX')).toEqual([]);
  });
});

describe('memory spec: #clean', () => {
  it('cleans unused context', async () => {
    await set(context, 'nodeX', 'foo', 'abc');
    await set(context, 'nodeY', 'foo', 'abc');
    await context.clean([]);
    expect(await get(context, 'nodeX', 'foo')).toBeUndefined();
    expect(await get(context, 'nodeY', 'foo')).toBeUndefined();
  });

  it('does not clean active context', async () => {
    await set(context, 'nodeX', 'foo', 'abc');
    await set(context, 'nodeY', 'foo', 'abc');
    await context.clean(['nodeX']);
    expect(await get(context, 'nodeX', 'foo')).toBe('abc');
    expect(await get(context, 'nodeY', 'foo')).toBeUndefined();
  });

  it('does not clean global context', async () => {
    await set(context, 'global', 'foo', 'abc');
    await context.clean(['global']);
    expect(await get(context, 'global', 'foo')).toBe('abc');
    await context.clean([]);
    expect(await get(context, 'global', 'foo')).toBe('abc');
  });

  it('keeps a node scope <nodeId>:<flowId> whose node is active, and a flow scope whose flow is', async () => {
    await set(context, 'n1:f1', 'a', 1);
    await set(context, 'n2:f1', 'a', 1);
    await set(context, 'f1', 'a', 1);
    await set(context, 'f2', 'a', 1);
    await context.clean(['n1', 'f1']);
    expect(await Promise.all(['n1:f1', 'n2:f1', 'f1', 'f2'].map((scope) => get(context, scope, 'a')))).toEqual([1, undefined, 1, undefined]);
  });
});
