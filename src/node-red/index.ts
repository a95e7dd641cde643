import { DoclayerContextStore as Store, type ContextCallback as Callback } from './context-store';
import { ContextStoreError as StoreError, isContextStoreError as isStoreError, type ContextStoreErrorCode as ErrorCode } from './errors';
import { atomicContextFor as atomicFor, type AtomicContext as Atomic } from './function-api';
import type { ContextStoreConfig as Config } from './store-config';
import { registerStore } from './store-registry';

/**
 * `doclayer/node-red`: a Node-RED context store on doclayer, shared safely by several Node-RED
 * processes, with Node-RED's atomic context API. The module itself is the store's factory, as
 * `contextStorage` in settings.js expects:
 *
 * ```js
 * contextStorage: { default: { module: require('doclayer/node-red') } },
 * ```
 *
 * Properties: `atomic` (the atomic API for Function nodes, to list in `functionGlobalContext`),
 * `atomicContextFor(config)`, `DoclayerContextStore`, `ContextStoreError`, `isContextStoreError`.
 */
function doclayerContextStore(config?: Config): Store {
  const store = new Store(config ?? {});
  registerStore(config ?? store.config, store);
  return store;
}

// Node-RED logs a store's module as `module=<toString()>` when the module has its own toString.
doclayerContextStore.toString = () => 'doclayer/node-red';

// A namespace merged with the function: `export =` gives CommonJS `module.exports = factory`.
namespace doclayerContextStore {
  export const DoclayerContextStore = Store;
  export type DoclayerContextStore = Store;
  export type ContextStoreConfig = Config;
  export type ContextCallback<T extends unknown[] = []> = Callback<T>;
  export type AtomicContext = Atomic;
  export const ContextStoreError = StoreError;
  export type ContextStoreError = StoreError;
  export type ContextStoreErrorCode = ErrorCode;
  export const isContextStoreError = isStoreError;
  /** The atomic API on the only open doclayer context store; see `function-api.ts`. */
  export const atomic: AtomicContext = atomicFor();
  /** The atomic API on the store Node-RED created with this `config` object. */
  export const atomicContextFor = atomicFor;
}

export = doclayerContextStore;
