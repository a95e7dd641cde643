export * from './types';
export * from './errors';
export * from './key-selector';
export { Limits } from './limits';
export { Database } from './database';
export { Backoff } from './backoff';
export { toBuffer, compareBytes, keyAfter, strinc, int64LE, readInt64LE } from './bytes';
export { MemoryEngine, openMemoryDatabase } from './memory-engine';
export type { MemoryEngineOptions } from './memory-engine';
