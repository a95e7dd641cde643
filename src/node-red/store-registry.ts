import type { DoclayerContextStore } from './context-store';
import { ContextStoreError } from './errors';

/**
 * The doclayer context stores Node-RED created in this process, so that what runs outside the
 * context API (the doclayer atomic node, the Function-node API) can reach the store behind a
 * `contextStorage` entry. Node-RED creates a store by calling the module with the entry's `config`
 * object, and the node finds that entry in `RED.settings.contextStorage`: so stores are found by their
 * config object, or, when only one is open, without one.
 *
 * The registry lives on `globalThis` under a registered symbol: the settings file and Node-RED's node
 * loader may load two copies of the package (one installed for settings.js, one in the user
 * directory), and both must see the same stores.
 */
interface Registry {
  readonly byConfig: WeakMap<object, DoclayerContextStore>;
  readonly stores: Set<DoclayerContextStore>;
}

const REGISTRY = Symbol.for('doclayer.node-red.context-stores');

function registry(): Registry {
  const holder = globalThis as { [REGISTRY]?: Registry };
  holder[REGISTRY] ??= { byConfig: new WeakMap(), stores: new Set() };
  return holder[REGISTRY];
}

/** Records a store Node-RED created with `config`. */
export function registerStore(config: object, store: DoclayerContextStore): void {
  const { byConfig, stores } = registry();
  byConfig.set(config, store);
  stores.add(store);
}

/**
 * The open store created with `config`; without `config` (or when none was created with it, as when
 * Node-RED passes a fresh `{}` for an entry that has no `config`), the only open store.
 *
 * @throws ContextStoreError NO_STORE when there is no such store, or several and no config to choose
 */
export function findStore(config?: object): DoclayerContextStore {
  const { byConfig, stores } = registry();
  for (const store of stores) if (!store.isOpen && store.wasClosed) stores.delete(store);
  const named = config === undefined ? undefined : byConfig.get(config);
  if (named !== undefined && named.isOpen) return named;
  const open = [...stores].filter((store) => store.isOpen);
  if (open.length === 1) return open[0];
  throw new ContextStoreError(
    'NO_STORE',
    open.length === 0
      ? 'no doclayer context store is open: list one in contextStorage in settings.js'
      : `${open.length} doclayer context stores are open: choose one by its config (atomicContextFor(config))`,
  );
}
