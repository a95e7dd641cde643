import type { JsonValue } from '../document';
import { open as openDocuments } from '../open';
import type { Database } from '../kv/contract/database';
import type { Transaction } from '../kv/contract/types';
import { concatTo, increment, pushTo, takeFrom, type ArrayEnd } from './atomic-operations';
import { ContextLayout } from './context-layout';
import { toContextJson } from './context-json';
import { ContextStoreError } from './errors';
import { ScopeOrder } from './scope-order';
import { ScopeTransaction } from './scope-transaction';
import { checkConfig, DEFAULT_PREFIX, openConfiguredDatabase, type ContextStoreConfig } from './store-config';

/** A Node-RED callback: an error or `null`/`undefined`, then the results (absent after an error). */
export type ContextCallback<T extends unknown[] = []> = (err: Error | null | undefined, ...results: Partial<T>) => void;

/** How many keys `delete` and `clean` remove per transaction. */
const DELETE_BATCH = 100;

/** Keys the memory store hides from `keys('global')` (they would shadow the context's own methods). */
const HIDDEN_GLOBAL_KEYS = new Set(['set', 'get', 'keys']);

/**
 * A Node-RED context store on doclayer, with the contract of Node-RED's built-in stores
 * (`@node-red/runtime/lib/nodes/context/memory.js`), asynchronous only as the Redis store is, and the
 * atomic context API of Node-RED's design (incr, decr, push, pop, shift, unshift, append, prepend).
 *
 * Scopes are `global`, a flow id or `<nodeId>:<flowId>`; keys are property expressions. Each context
 * root key is a document (see `context-layout.ts`); every call is one serializable transaction,
 * retried on conflict, so several Node-RED processes can share the store. Values are stored as JSON
 * (see `context-json.ts`).
 *
 * Callbacks: `get` calls back `(undefined, ...values)`, `set` `(undefined)`, `keys` `(null, keys)`,
 * the atomic operations `(null, result)`, as the memory store and the design do; on failure each
 * calls back `(err)`. `get`, `keys` and the atomic operations throw `Error('Callback must be a
 * function')` without one; `set` without one runs unobserved (a failure is reported with
 * `process.emitWarning`).
 *
 * Errors passed to callbacks: ContextStoreError (`errors.ts`: INVALID_EXPR for a malformed key, the
 * atomic operations' NOT_A_NUMBER, NOT_AN_ARRAY, NOT_A_STRING, CANNOT_SET, ...), DocumentError for a
 * value the document layer cannot store (VALUE_TOO_DEEP past 32 levels, DOCUMENT_TOO_LARGE,
 * KEY_TOO_LARGE), TypeError where Node-RED's own property functions throw or for a bigint, and
 * KvError from the engine.
 */
export class DoclayerContextStore {
  readonly config: ContextStoreConfig;
  private database: Database | undefined;
  private ownsDatabase = false;
  private layout: ContextLayout | undefined;
  private opening: Promise<void> | undefined;
  private closed = false;
  private readonly order = new ScopeOrder();
  private readonly pending = new Set<Promise<unknown>>();

  /** @throws ContextStoreError INVALID_ARGUMENT for a bad config */
  constructor(config: ContextStoreConfig = {}) {
    this.config = checkConfig(config);
  }

  /** Opens the database (creating an LMDB folder if needed). Reads and writes nothing. */
  open(): Promise<void> {
    this.opening ??= (async () => {
      const { database, owned } = await openConfiguredDatabase(this.config);
      const prefixes = ContextLayout.prefixes(this.config.prefix ?? DEFAULT_PREFIX);
      this.layout = new ContextLayout(await openDocuments({ database, prefix: prefixes.documents }), prefixes.index);
      this.database = database;
      this.ownsDatabase = owned;
    })();
    return this.opening;
  }

  /** Waits for the operations issued so far, then closes the database if the store opened it. */
  async close(): Promise<void> {
    this.closed = true;
    await this.opening?.catch(() => undefined);
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
    if (this.ownsDatabase) await this.database?.close();
    this.database = undefined;
  }

  /** Whether operations can run: opened and not closed. */
  get isOpen(): boolean {
    return this.database !== undefined && !this.closed;
  }

  /** Whether `close()` was called. */
  get wasClosed(): boolean {
    return this.closed;
  }

  /**
   * Reads one key, or several (`key` an array) in one transaction.
   * Callback: `(undefined, value)` or `(undefined, ...values)`; `(err)` for an invalid key.
   */
  get(scope: string, key: string | string[], callback: ContextCallback<unknown[]>): void {
    requireCallback(callback);
    const keys = Array.isArray(key) ? key : [key];
    this.run(scope, 'read', async (st) => {
      const values: unknown[] = [];
      for (const k of keys) values.push(await st.read(await st.resolve(checkKey(k))));
      return values;
    }).then(
      (values) => callback(undefined, ...values),
      (err: Error) => callback(err),
    );
  }

  /**
   * Sets one key, or several in one transaction (`key` an array; missing values are `null`, as in the
   * memory store). `undefined` deletes; an array element is spliced out. Callback: `(undefined)` or
   * `(err)`; without one, the set runs unobserved.
   */
  set(scope: string, key: string | string[], value: unknown, callback?: ContextCallback): void {
    if (callback !== undefined) requireCallback(callback);
    let writes: { key: string; value: JsonValue | undefined }[];
    try {
      const keys = Array.isArray(key) ? key : [key];
      const values = Array.isArray(key) ? (Array.isArray(value) ? value : [value]) : [value];
      writes = keys.map((k, i) => ({ key: checkKey(k), value: toContextJson(i < values.length ? values[i] : null) }));
    } catch (err) {
      this.report(err as Error, callback);
      return;
    }
    this.run(scope, 'write', async (st) => {
      for (const write of writes) await st.write(await st.resolve(write.key), write.value);
    }).then(
      () => callback?.(undefined),
      (err: Error) => this.report(err, callback),
    );
  }

  /** The scope's root keys in the order they were created (`keys('global')` leaves out set, get, keys). */
  keys(scope: string, callback: ContextCallback<[string[]]>): void {
    requireCallback(callback);
    this.run(scope, 'read', async (st) => {
      const keys = orderedAsObjectKeys(await st.rootKeys());
      return scope === 'global' ? keys.filter((k) => !HIDDEN_GLOBAL_KEYS.has(k)) : keys;
    }).then(
      (keys) => callback(null, keys),
      (err: Error) => callback(err),
    );
  }

  /** Removes every key of the scope, in transactions of up to 100 keys. */
  async delete(scope: string): Promise<void> {
    const remove = this.scopeRemover();
    await this.track(this.order.write(checkScope(scope), () => remove(scope)));
  }

  /**
   * Removes every scope except `global` whose node or flow id (the part before `:`) is not in
   * `activeNodes`, as the memory store does.
   */
  async clean(activeNodes: readonly string[]): Promise<void> {
    const layout = this.requireLayout();
    const database = this.requireDatabase();
    const remove = this.scopeRemover();
    const active = new Set(activeNodes);
    await this.track(
      (async () => {
        const scopes = await database.transact((tr) => layout.index.scopes(tr.snapshot()));
        const stale = scopes.filter((scope) => scope !== 'global' && !active.has(scope.split(':')[0]));
        await Promise.all(stale.map((scope) => this.order.write(scope, () => remove(scope))));
      })(),
    );
  }

  /**
   * Adds `amount` (default 1) to the number at the key, `0` when missing; calls back `(null, result)`.
   * Errors: INVALID_ARGUMENT (amount not a finite number), NOT_A_NUMBER, CANNOT_SET.
   */
  incr(scope: string, key: string, amount: number | ContextCallback<[number]> | undefined, callback?: ContextCallback<[number]>): void;
  incr(scope: string, key: string, callback: ContextCallback<[number]>): void;
  incr(scope: string, key: string, amountOrCallback?: number | ContextCallback<[number]>, maybeCallback?: ContextCallback<[number]>): void {
    this.count(scope, key, amountOrCallback, maybeCallback, 1);
  }

  /** `incr` by `-amount` (default 1). */
  decr(scope: string, key: string, amount: number | ContextCallback<[number]> | undefined, callback?: ContextCallback<[number]>): void;
  decr(scope: string, key: string, callback: ContextCallback<[number]>): void;
  decr(scope: string, key: string, amountOrCallback?: number | ContextCallback<[number]>, maybeCallback?: ContextCallback<[number]>): void {
    this.count(scope, key, amountOrCallback, maybeCallback, -1);
  }

  /** Appends `value` to the array at the key (created when missing); calls back `(null, newLength)`. */
  push(scope: string, key: string, value: unknown, callback: ContextCallback<[number]>): void {
    this.addElement(scope, key, value, callback, 'last');
  }

  /** Prepends `value` to the array at the key (created when missing); calls back `(null, newLength)`. */
  unshift(scope: string, key: string, value: unknown, callback: ContextCallback<[number]>): void {
    this.addElement(scope, key, value, callback, 'first');
  }

  /** Removes the array's last element; calls back `(null, element)` (`undefined` when there is none). */
  pop(scope: string, key: string, callback: ContextCallback<[unknown]>): void {
    this.takeElement(scope, key, callback, 'last');
  }

  /** Removes the array's first element; calls back `(null, element)` (`undefined` when there is none). */
  shift(scope: string, key: string, callback: ContextCallback<[unknown]>): void {
    this.takeElement(scope, key, callback, 'first');
  }

  /** Appends `text` to the string at the key (`''` when missing); calls back `(null, newString)`. */
  append(scope: string, key: string, text: string, callback: ContextCallback<[string]>): void {
    this.addText(scope, key, text, callback, 'last');
  }

  /** Prepends `text` to the string at the key (`''` when missing); calls back `(null, newString)`. */
  prepend(scope: string, key: string, text: string, callback: ContextCallback<[string]>): void {
    this.addText(scope, key, text, callback, 'first');
  }

  private count(
    scope: string,
    key: string,
    amountOrCallback: number | ContextCallback<[number]> | undefined,
    maybeCallback: ContextCallback<[number]> | undefined,
    sign: 1 | -1,
  ): void {
    const callback = typeof amountOrCallback === 'function' ? amountOrCallback : maybeCallback;
    const amount = typeof amountOrCallback === 'function' || amountOrCallback === undefined ? 1 : amountOrCallback;
    requireCallback(callback);
    if (typeof amount !== 'number' || !Number.isFinite(amount)) {
      later(callback, new ContextStoreError('INVALID_ARGUMENT', `the amount is a finite number, got ${describe(amount)}`));
      return;
    }
    this.atomic(scope, key, callback, (st, parts, k) => increment(st, k, parts, sign * amount));
  }

  private addElement(scope: string, key: string, value: unknown, callback: ContextCallback<[number]>, end: ArrayEnd): void {
    requireCallback(callback);
    let element: JsonValue;
    try {
      element = toContextJson(value) ?? null;
    } catch (err) {
      later(callback, err as Error);
      return;
    }
    this.atomic(scope, key, callback, (st, parts, k) => pushTo(st, k, parts, element, end));
  }

  private takeElement(scope: string, key: string, callback: ContextCallback<[unknown]>, end: ArrayEnd): void {
    requireCallback(callback);
    this.atomic(scope, key, callback, (st, parts, k) => takeFrom(st, k, parts, end));
  }

  private addText(scope: string, key: string, text: string, callback: ContextCallback<[string]>, end: ArrayEnd): void {
    requireCallback(callback);
    if (typeof text !== 'string') {
      later(callback, new ContextStoreError('INVALID_ARGUMENT', `the text to add is a string, got ${describe(text)}`));
      return;
    }
    this.atomic(scope, key, callback, (st, parts, k) => concatTo(st, k, parts, text, end));
  }

  private atomic<T>(
    scope: string,
    key: string,
    callback: ContextCallback<[T]>,
    operation: (st: ScopeTransaction, parts: unknown[], key: string) => Promise<T>,
  ): void {
    this.run(scope, 'write', async (st) => {
      const k = checkKey(key);
      return operation(st, await st.resolve(k), k);
    }).then(
      (result) => callback(null, result),
      (err: Error) => callback(err),
    );
  }

  /**
   * Runs `body` in a transaction on `scope`, in program order with this store's other operations on
   * it; a write brings the key index up to date before commit.
   */
  private run<T>(scope: string, kind: 'read' | 'write', body: (st: ScopeTransaction) => Promise<T>): Promise<T> {
    let checked: string;
    let layout: ContextLayout;
    let database: Database;
    try {
      checked = checkScope(scope);
      layout = this.requireLayout();
      database = this.requireDatabase();
    } catch (err) {
      return Promise.reject(err);
    }
    // Checked when the call is made: a call made before close() runs even if it waits past it.
    const transact = () =>
      database.transact(async (tr: Transaction) => {
        const st = new ScopeTransaction(layout, tr, checked);
        const result = await body(st);
        if (kind === 'write') st.finish();
        return result;
      });
    return this.track(kind === 'read' ? this.order.read(checked, transact) : this.order.write(checked, transact));
  }

  /** A function that removes a scope's keys, in transactions of up to {@link DELETE_BATCH} keys. */
  private scopeRemover(): (scope: string) => Promise<void> {
    const layout = this.requireLayout();
    const database = this.requireDatabase();
    return async (scope) => {
      for (;;) {
        const removed = await database.transact(async (tr) => {
          const batch = await layout.index.some(tr, scope, DELETE_BATCH);
          for (const { rootKey, created } of batch) {
            const id = layout.docId(scope, rootKey);
            if (await layout.collection.exists(id, { tr })) await layout.collection.remove(id, { tr });
            layout.index.remove(tr, scope, rootKey, created);
          }
          return batch.length;
        });
        if (removed < DELETE_BATCH) return;
      }
    };
  }

  private track<T>(operation: Promise<T>): Promise<T> {
    this.pending.add(operation);
    const forget = () => this.pending.delete(operation);
    operation.then(forget, forget);
    return operation;
  }

  private requireLayout(): ContextLayout {
    if (this.closed || this.layout === undefined) {
      throw new ContextStoreError('STORE_CLOSED', 'the doclayer context store is not open');
    }
    return this.layout;
  }

  private requireDatabase(): Database {
    if (this.database === undefined) throw new ContextStoreError('STORE_CLOSED', 'the doclayer context store is not open');
    return this.database;
  }

  /** Calls back with the error, or without a callback reports it: nobody else would see it. */
  private report(err: Error, callback: ContextCallback | undefined): void {
    if (callback) later(callback, err);
    else process.emitWarning(`a context set without a callback failed: ${err.message}`, { code: 'DOCLAYER_CONTEXT_SET_FAILED' });
  }
}

function requireCallback(callback: unknown): asserts callback is (...args: never[]) => void {
  if (typeof callback !== 'function') throw new Error('Callback must be a function');
}

/** Calls back asynchronously, as for every other outcome, so callers see one behaviour. */
function later(callback: (err: Error) => void, err: Error): void {
  process.nextTick(() => callback(err));
}

/** @throws ContextStoreError INVALID_ARGUMENT */
function checkScope(scope: unknown): string {
  if (typeof scope !== 'string' || scope === '' || scope.includes('\u0000')) {
    throw new ContextStoreError('INVALID_ARGUMENT', `a scope is a non-empty string without NUL, got ${describe(scope)}`);
  }
  return scope;
}

/** @throws ContextStoreError INVALID_ARGUMENT */
function checkKey(key: unknown): string {
  if (typeof key !== 'string') throw new ContextStoreError('INVALID_ARGUMENT', `a key is a string, got ${describe(key)}`);
  return key;
}

function describe(value: unknown): string {
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- not an object here (TypeScript cannot narrow `unknown` by exclusion): a primitive or a function, with its own toString.
  return typeof value === 'string' ? JSON.stringify(value) : typeof value === 'object' ? (value === null ? 'null' : 'an object') : String(value);
}

/** Keys in the order `Object.keys` lists them: array-index keys ascending first, then creation order. */
function orderedAsObjectKeys(keys: readonly string[]): string[] {
  const indices = keys.filter(isArrayIndex).sort((a, b) => Number(a) - Number(b));
  return [...indices, ...keys.filter((k) => !isArrayIndex(k))];
}

function isArrayIndex(key: string): boolean {
  return /^(0|[1-9]\d*)$/.test(key) && Number(key) < 2 ** 32 - 1;
}
