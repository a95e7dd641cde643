/**
 * Context stores for the tests, and promise forms of their callback API. Each store opened here is
 * closed by {@link closeStores} (call it in afterEach).
 */
import type { Database } from '../../../src/kv/contract/database';
import { openMemoryDatabase } from '../../../src/kv/memory/memory-engine';
import { DoclayerContextStore, type ContextCallback } from '../../../src/node-red/context-store';
import type { ContextStoreConfig } from '../../../src/node-red/store-config';

const opened: DoclayerContextStore[] = [];
const databases: Database[] = [];

/** A store on `config`, or on a new in-memory database when `config` names no engine or userDir; opened. */
export async function openStore(config: ContextStoreConfig = {}): Promise<DoclayerContextStore> {
  let storeConfig = config;
  const { database, path, fdb, settings } = config;
  if (database === undefined && path === undefined && fdb === undefined && settings === undefined) {
    const memory = openMemoryDatabase();
    databases.push(memory);
    storeConfig = { ...config, database: memory };
  }
  const store = new DoclayerContextStore(storeConfig);
  opened.push(store);
  await store.open();
  return store;
}

/** A new in-memory database, closed by {@link closeStores}, for several stores to share. */
export function sharedDatabase(): Database {
  const database = openMemoryDatabase();
  databases.push(database);
  return database;
}

export async function closeStores(): Promise<void> {
  await Promise.all(opened.splice(0).map((store) => store.close()));
  await Promise.all(databases.splice(0).map((database) => database.close()));
}

/** Runs a callback-style call; resolves with every argument of the callback, error first. */
export function callbackArguments(start: (callback: (...args: unknown[]) => void) => void): Promise<unknown[]> {
  return new Promise((resolve) => start((...args) => resolve(args)));
}

/** Runs a callback-style call; resolves with its first result or rejects with its error. */
export function result<T>(start: (callback: ContextCallback<[T]>) => void): Promise<T> {
  return new Promise((resolve, reject) => start((err, ...results) => (err ? reject(err) : resolve(results[0] as T))));
}

export function get(store: DoclayerContextStore, scope: string, key: string): Promise<unknown> {
  return result((callback) => store.get(scope, key, callback));
}

export function set(store: DoclayerContextStore, scope: string, key: string | string[], value: unknown): Promise<void> {
  return new Promise((resolve, reject) => store.set(scope, key, value, (err) => (err ? reject(err) : resolve())));
}

export function keys(store: DoclayerContextStore, scope: string): Promise<string[]> {
  return result((callback) => store.keys(scope, callback));
}
