/**
 * Errors of the Node-RED context store. Each has a stable `code`, as Node-RED's own errors do
 * (`INVALID_EXPR` is the code `@node-red/util` gives a malformed property expression, with the same
 * messages), so flows and tests can switch on it.
 *
 * - `INVALID_EXPR`: a key that is not a valid property expression, or whose `[msg.x]` reference
 *   cannot be resolved.
 * - `INVALID_ARGUMENT`: a scope or key that is not a non-empty string, a bad store configuration, or
 *   an amount or value of the wrong type for an atomic operation.
 * - `NOT_A_NUMBER`, `NOT_AN_ARRAY`, `NOT_A_STRING`: an atomic operation found a value of the wrong
 *   type at the key.
 * - `CANNOT_SET`: an atomic operation would write under a value that cannot hold properties (a string,
 *   a number, `null`), where a plain `set` silently does nothing.
 * - `STORE_CLOSED`: the store is not open (before `open()` resolved, or after `close()`).
 * - `NO_STORE`: no open doclayer context store matches (the atomic node, the Function-node API).
 */
export type ContextStoreErrorCode =
  'INVALID_EXPR' | 'INVALID_ARGUMENT' | 'NOT_A_NUMBER' | 'NOT_AN_ARRAY' | 'NOT_A_STRING' | 'CANNOT_SET' | 'STORE_CLOSED' | 'NO_STORE';

export class ContextStoreError extends Error {
  constructor(
    readonly code: ContextStoreErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'ContextStoreError';
  }
}

/** Whether `err` is a {@link ContextStoreError}, optionally with the given code. */
export function isContextStoreError(err: unknown, code?: ContextStoreErrorCode): err is ContextStoreError {
  return err instanceof ContextStoreError && (code === undefined || err.code === code);
}
