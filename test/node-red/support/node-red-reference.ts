/**
 * Node-RED's own code, installed as a dev dependency, typed for the tests that check the context
 * store against it: the property-expression functions of @node-red/util and the built-in memory store.
 */

import type { NodeRedApi } from '../../../src/node-red/atomic-node';

type AtomicNodeUtil = NodeRedApi['util'];

/** @node-red/util: what the atomic node uses of it, and the property-expression functions the store is checked against. */
export interface NodeRedUtil extends AtomicNodeUtil {
  normalisePropertyExpression(text: string, msg?: object): unknown[];
  getObjectProperty(obj: object, expression: string): unknown;
  setObjectProperty(obj: object, expression: string, value: unknown, createMissing?: boolean): boolean;
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
