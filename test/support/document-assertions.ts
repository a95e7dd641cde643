import { DocumentError } from '../../src/document/errors';
import type { Database } from '../../src/kv/contract/database';
import { printablePairs } from './printable';

/** The code of the `DocumentError` that `fn` throws, or `undefined` when it returns; rethrows any other error. */
export function documentErrorCode(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    if (err instanceof DocumentError) return err.code;
    throw err;
  }
  return undefined;
}

/** What a failing document operation must say besides its code. */
export interface ExpectedErrorDetails {
  specIndex?: number;
  position?: number;
}

/**
 * Asserts that `action` fails with a `DocumentError` of `code` (or one of `code`, when the sources
 * allow either), and with the given `specIndex`/`position`; returns the error for further checks.
 */
export async function expectDocumentError(
  action: Promise<unknown> | (() => unknown),
  code: string | readonly string[],
  details: ExpectedErrorDetails = {},
): Promise<DocumentError> {
  const codes = typeof code === 'string' ? [code] : code;
  let outcome: { ok: true; value: unknown } | { ok: false; error: unknown };
  try {
    outcome = { ok: true, value: await (typeof action === 'function' ? action() : action) };
  } catch (error) {
    outcome = { ok: false, error };
  }
  if (outcome.ok) {
    throw new Error(`expected DocumentError ${codes.join(' or ')}, but it succeeded with ${show(outcome.value)}`);
  }
  const error = outcome.error;
  if (!(error instanceof DocumentError)) {
    throw new Error(`expected DocumentError ${codes.join(' or ')}, got ${String(error)}`, { cause: error });
  }
  if (!codes.includes(error.code)) {
    throw new Error(`expected DocumentError ${codes.join(' or ')}, got ${error.message}`, { cause: error });
  }
  if ('specIndex' in details && error.specIndex !== details.specIndex) {
    throw new Error(`expected specIndex ${details.specIndex}, got ${error.specIndex} (${error.message})`, { cause: error });
  }
  if ('position' in details && error.position !== details.position) {
    throw new Error(`expected position ${details.position}, got ${error.position} (${error.message})`, { cause: error });
  }
  return error;
}

/** Every pair of the user keyspace, printable, for "nothing changed" assertions. */
export async function dumpKeyspace(kv: Database): Promise<string[]> {
  const tr = kv.engine.createTransaction();
  try {
    return printablePairs(await tr.getRangeAll(Buffer.alloc(0), Buffer.from([0xff])));
  } finally {
    tr.cancel();
  }
}

function show(value: unknown): string {
  try {
    return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v));
  } catch {
    return String(value);
  }
}
