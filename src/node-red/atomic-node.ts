import type { ContextCallback } from './context-store';
import { ContextStoreError } from './errors';
import { findStore } from './store-registry';

/**
 * The `doclayer atomic` Node-RED node: one atomic context operation per message, on a doclayer
 * context store listed in settings.js. Its properties: the store (a `contextStorage` name; empty for
 * the default store), the scope (`global`, `flow` or `node`: this node's flow or its own context),
 * the key (a property expression, or the name of a message property holding one), the operation and
 * its amount (a typed input: the number for incr/decr, the element for push/unshift, the text for
 * append/prepend). The result goes to `msg.payload`: the new number, the new length, the element
 * removed, or the new string. A failure is reported with `done(err)` (a Catch node sees it).
 *
 * Registered through the package's `node-red` field (`node-red/doclayer-atomic.js`, whose editor
 * template is `node-red/doclayer-atomic.html`).
 */

export const ATOMIC_NODE_TYPE = 'doclayer-atomic';

export type AtomicOperation = 'incr' | 'decr' | 'push' | 'unshift' | 'pop' | 'shift' | 'append' | 'prepend';

const OPERATIONS: ReadonlySet<string> = new Set<AtomicOperation>(['incr', 'decr', 'push', 'unshift', 'pop', 'shift', 'append', 'prepend']);

/** The node's properties, as the editor saves them. */
export interface AtomicNodeConfig {
  id: string;
  type: string;
  z?: string;
  name?: string;
  store?: string;
  scope?: 'global' | 'flow' | 'node';
  key?: string;
  /** `str`: `key` is the key; `msg`: `key` names the message property that holds the key. */
  keyType?: 'str' | 'msg';
  operation?: AtomicOperation;
  amount?: string;
  /** A typed-input type: num, str, json, msg, flow, global, env, ... */
  amountType?: string;
}

/** A message; the node sets `payload`. */
export type NodeMessage = { payload?: unknown } & Record<string, unknown>;

/** What the node uses of a Node-RED runtime node. */
export interface RuntimeNode {
  id: string;
  z?: string;
  /** The id a node inside a subflow instance keeps its context under (Node-RED's own `_alias`). */
  _alias?: string;
  on(event: 'input', listener: (msg: NodeMessage, send: (msg: NodeMessage) => void, done: (err?: Error) => void) => void): void;
}

/** A `contextStorage` entry of settings.js. */
export interface ContextStorageEntry {
  module?: unknown;
  config?: object;
}

/** What the node uses of Node-RED's node API (`RED`). */
export interface NodeRedApi {
  nodes: {
    createNode(node: object, config: object): void;
    registerType(type: string, constructor: (this: RuntimeNode, config: AtomicNodeConfig) => void): void;
  };
  settings: { readonly contextStorage?: Record<string, ContextStorageEntry | string> };
  util: {
    getMessageProperty(msg: object, expression: string): unknown;
    evaluateNodeProperty(
      value: string,
      type: string,
      node: object,
      msg: object,
      callback: (err: Error | null | undefined, value: unknown) => void,
    ): void;
  };
}

/** Registers the node type; Node-RED calls this when it loads the package. */
export default function registerAtomicNode(RED: NodeRedApi): void {
  function DoclayerAtomicNode(this: RuntimeNode, config: AtomicNodeConfig): void {
    RED.nodes.createNode(this, config);
    const node = this;
    node.on('input', (msg, send, done) => {
      runOperation(RED, node, config, msg).then(
        (result) => {
          msg.payload = result;
          send(msg);
          done();
        },
        (err: Error) => done(err),
      );
    });
  }
  RED.nodes.registerType(ATOMIC_NODE_TYPE, DoclayerAtomicNode);
}

/** Runs the node's operation for one message; resolves with the result for `msg.payload`. */
export async function runOperation(RED: NodeRedApi, node: RuntimeNode, config: AtomicNodeConfig, msg: NodeMessage): Promise<unknown> {
  const operation = config.operation ?? 'incr';
  if (!OPERATIONS.has(operation)) throw invalid(`unknown operation ${JSON.stringify(operation)}`);
  const store = findStore(storeConfig(RED.settings.contextStorage, config.store));
  const scope = scopeOf(node, config.scope ?? 'global');
  const key = config.keyType === 'msg' ? RED.util.getMessageProperty(msg, config.key ?? '') : config.key;
  if (typeof key !== 'string' || key === '') throw invalid('the key is empty');
  const call = <T>(start: (callback: ContextCallback<[T]>) => void) =>
    new Promise<T>((resolve, reject) => start((err, ...results) => (err ? reject(err) : resolve(results[0] as T))));
  switch (operation) {
    case 'pop':
    case 'shift':
      return call<unknown>((cb) => store[operation](scope, key, cb));
    case 'incr':
    case 'decr': {
      const amount = config.amount === undefined || config.amount === '' ? 1 : await evaluate(RED, node, config, msg);
      return call<number>((cb) => store[operation](scope, key, amount as number, cb));
    }
    case 'push':
    case 'unshift': {
      const value = await evaluate(RED, node, config, msg);
      return call<number>((cb) => store[operation](scope, key, value, cb));
    }
    case 'append':
    case 'prepend': {
      const text = await evaluate(RED, node, config, msg);
      return call<string>((cb) => store[operation](scope, key, text as string, cb));
    }
  }
}

function evaluate(RED: NodeRedApi, node: RuntimeNode, config: AtomicNodeConfig, msg: NodeMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    RED.util.evaluateNodeProperty(config.amount ?? '', config.amountType ?? 'str', node, msg, (err, value) => (err ? reject(err) : resolve(value)));
  });
}

/** The context scope the runtime gives this node's flow or node context (as `Node.context()` does). */
function scopeOf(node: RuntimeNode, scope: 'global' | 'flow' | 'node'): string {
  if (scope === 'global') return 'global';
  if (node.z === undefined) throw invalid(`a node outside a flow has no ${scope} context`);
  return scope === 'flow' ? node.z : `${node._alias ?? node.id}:${node.z}`;
}

/**
 * The `config` object of the store named `name` (empty: the default store, chosen as Node-RED
 * chooses it: the entry `default`, itself possibly the name of another, else the first entry).
 *
 * @throws ContextStoreError NO_STORE when the entry is not a doclayer store
 */
function storeConfig(storage: Record<string, ContextStorageEntry | string> | undefined, name: string | undefined): object | undefined {
  if (storage === undefined) return undefined;
  let entry = name ? storage[name] : undefined;
  if (entry === undefined) entry = 'default' in storage ? storage.default : storage[Object.keys(storage)[0]];
  if (typeof entry === 'string') entry = storage[entry];
  if (typeof entry !== 'object' || String(entry.module) !== 'doclayer/node-red') {
    throw new ContextStoreError('NO_STORE', `the context store ${JSON.stringify(name || 'default')} is not a doclayer store`);
  }
  return entry.config;
}

function invalid(message: string): ContextStoreError {
  return new ContextStoreError('INVALID_ARGUMENT', `doclayer atomic: ${message}`);
}
