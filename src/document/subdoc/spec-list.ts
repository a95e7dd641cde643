import { DocumentError, isDocumentError } from '../errors';
import { formatPath } from '../values/path';
import type { PathElement } from '../types';

/**
 * The spec list of a lookupIn or mutateIn call: its size limit, each spec's op, and errors tagged with
 * the index of the spec they belong to.
 */

/** Most specs in one lookupIn or mutateIn call, as in Couchbase. */
export const MAX_SPECS = 16;

export function checkSpecList(specs: unknown, what: string): readonly unknown[] {
  if (!Array.isArray(specs)) throw new DocumentError('INVALID_ARGUMENT', `${what} takes an array of specs`);
  if (specs.length === 0 || specs.length > MAX_SPECS) {
    throw new DocumentError('INVALID_ARGUMENT', `${what} takes 1 to ${MAX_SPECS} specs, got ${specs.length}`);
  }
  return specs;
}

export function specOp(spec: unknown, ops: ReadonlySet<string>, index: number): string {
  const op = typeof spec === 'object' && spec !== null ? (spec as { op?: unknown }).op : undefined;
  if (typeof op !== 'string' || !ops.has(op)) {
    throw new DocumentError('INVALID_ARGUMENT', `spec ${index} has no known op (${JSON.stringify(op) ?? 'undefined'})`, {
      specIndex: index,
    });
  }
  return op;
}

/** The same error, with the index of the spec it belongs to. */
export function forSpec(err: unknown, index: number): unknown {
  if (!isDocumentError(err)) return err;
  return new DocumentError(err.code, `${err.message} (spec ${index})`, {
    path: err.path,
    specIndex: index,
    position: err.position,
    id: err.id,
    cause: err.cause,
  });
}

export function describePath(elements: readonly PathElement[]): string {
  return elements.length === 0 ? 'the document root' : JSON.stringify(formatPath(elements));
}
