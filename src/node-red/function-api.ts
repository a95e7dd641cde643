import type { ContextCallback, DoclayerContextStore } from './context-store';
import { findStore } from './store-registry';

/**
 * The atomic context API for Function nodes. Node-RED's Function sandbox exposes only get, set and
 * keys of a context, so the store's atomic operations reach Function nodes through an object put in
 * `functionGlobalContext` in settings.js; Node-RED copies those entries onto the global context object,
 * where a Function node reads them synchronously as `context.global.<name>`:
 *
 * ```js
 * // settings.js
 * const doclayer = require('doclayer/node-red');
 * contextStorage: { default: { module: doclayer } },
 * functionGlobalContext: { doclayer: doclayer.atomic },
 *
 * // a Function node
 * msg.payload = await context.global.doclayer.incr('global', 'count');
 * ```
 *
 * Every method takes the scope (`'global'`, a flow id, `'<nodeId>:<flowId>'`) and a key, as the store
 * does; with a callback as last argument it calls back `(err, result)`, without one it returns a
 * promise. The store is the only open doclayer context store, or the one created with a given config
 * object ({@link atomicContextFor}).
 */
export interface AtomicContext {
  /** Adds `amount` (default 1) to the number at the key (0 when missing); the result. */
  incr(scope: string, key: string, amount?: number): Promise<number>;
  incr(scope: string, key: string, callback: ContextCallback<[number]>): void;
  incr(scope: string, key: string, amount: number | undefined, callback: ContextCallback<[number]>): void;
  /** Subtracts `amount` (default 1); the result. */
  decr(scope: string, key: string, amount?: number): Promise<number>;
  decr(scope: string, key: string, callback: ContextCallback<[number]>): void;
  decr(scope: string, key: string, amount: number | undefined, callback: ContextCallback<[number]>): void;
  /** Appends to the array at the key (created when missing); the new length. */
  push(scope: string, key: string, value: unknown): Promise<number>;
  push(scope: string, key: string, value: unknown, callback: ContextCallback<[number]>): void;
  /** Prepends to the array at the key (created when missing); the new length. */
  unshift(scope: string, key: string, value: unknown): Promise<number>;
  unshift(scope: string, key: string, value: unknown, callback: ContextCallback<[number]>): void;
  /** Removes and returns the array's last element (`undefined` when there is none). */
  pop(scope: string, key: string): Promise<unknown>;
  pop(scope: string, key: string, callback: ContextCallback<[unknown]>): void;
  /** Removes and returns the array's first element (`undefined` when there is none). */
  shift(scope: string, key: string): Promise<unknown>;
  shift(scope: string, key: string, callback: ContextCallback<[unknown]>): void;
  /** Appends text to the string at the key (`''` when missing); the new string. */
  append(scope: string, key: string, text: string): Promise<string>;
  append(scope: string, key: string, text: string, callback: ContextCallback<[string]>): void;
  /** Prepends text to the string at the key (`''` when missing); the new string. */
  prepend(scope: string, key: string, text: string): Promise<string>;
  prepend(scope: string, key: string, text: string, callback: ContextCallback<[string]>): void;
}

type Start<T> = (store: DoclayerContextStore, callback: ContextCallback<[T]>) => void;

/** The atomic API on the store created with `config` (or the only open one, without `config`). */
export function atomicContextFor(config?: object): AtomicContext {
  /** Runs an operation on the store, calling back or resolving; a missing store is the operation's error. */
  function settle<T>(callback: unknown, start: Start<T>): Promise<T> | undefined {
    if (typeof callback === 'function') {
      const done = callback as ContextCallback<[T]>;
      try {
        start(findStore(config), done);
      } catch (err) {
        process.nextTick(() => done(err as Error));
      }
      return undefined;
    }
    return new Promise<T>((resolve, reject) => {
      start(findStore(config), (err, ...results) => (err ? reject(err) : resolve(results[0] as T)));
    });
  }

  /** incr and decr: `(amount?)`, `(callback)` or `(amount, callback)`. */
  const counter =
    (op: 'incr' | 'decr') =>
    (scope: string, key: string, amountOrCallback?: unknown, maybeCallback?: unknown): Promise<number> | undefined => {
      const callback = typeof amountOrCallback === 'function' ? amountOrCallback : maybeCallback;
      const amount = typeof amountOrCallback === 'function' ? undefined : (amountOrCallback as number | undefined);
      return settle<number>(callback, (store, done) => store[op](scope, key, amount, done));
    };

  const api = {
    incr: counter('incr'),
    decr: counter('decr'),
    push: (scope: string, key: string, value: unknown, callback?: unknown) =>
      settle<number>(callback, (store, done) => store.push(scope, key, value, done)),
    unshift: (scope: string, key: string, value: unknown, callback?: unknown) =>
      settle<number>(callback, (store, done) => store.unshift(scope, key, value, done)),
    pop: (scope: string, key: string, callback?: unknown) => settle<unknown>(callback, (store, done) => store.pop(scope, key, done)),
    shift: (scope: string, key: string, callback?: unknown) => settle<unknown>(callback, (store, done) => store.shift(scope, key, done)),
    append: (scope: string, key: string, text: string, callback?: unknown) =>
      settle<string>(callback, (store, done) => store.append(scope, key, text, done)),
    prepend: (scope: string, key: string, text: string, callback?: unknown) =>
      settle<string>(callback, (store, done) => store.prepend(scope, key, text, done)),
  };
  return api as AtomicContext;
}
