/**
 * Node-RED's own code, installed as a dev dependency, typed for the tests that check the context
 * store against it: the property-expression functions of @node-red/util and the built-in memory store.
 */

export interface NodeRedUtil {
  normalisePropertyExpression(text: string, msg?: object): unknown[];
  getObjectProperty(obj: object, expression: string): unknown;
  setObjectProperty(obj: object, expression: string, value: unknown, createMissing?: boolean): boolean;
  getMessageProperty(msg: object, expression: string): unknown;
  evaluateNodeProperty(
    value: string,
    type: string,
    node: object,
    msg: object,
    callback: (err: Error | null | undefined, value: unknown) => void,
  ): void;
}

type Callback = (err: Error | null | undefined, ...values: unknown[]) => void;

/** The memory store's contract, as `@node-red/runtime/lib/nodes/context/memory.js` implements it. */
export interface MemoryStore {
  open(): Promise<void>;
  close(): Promise<void>;
  get(scope: string, key: string | string[], callback?: Callback): unknown;
  set(scope: string, key: string | string[], value: unknown, callback?: Callback): void;
  keys(scope: string, callback?: Callback): string[] | undefined;
  delete(scope: string): Promise<void>;
  clean(activeNodes: string[]): Promise<void>;
  _export(): Record<string, Record<string, unknown>>;
}

export const nodeRedUtil = (require('@node-red/util') as { util: NodeRedUtil }).util;

export const createMemoryStore = require('@node-red/runtime/lib/nodes/context/memory') as (config: object) => MemoryStore;
