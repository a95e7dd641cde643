import type { Transaction } from '../../kv/contract/types';
import { NOT_INDEXED, type IndexPort, type IndexWrite } from '../index-port';
import type { DocumentKeys } from '../keys/layout';
import type { MutateInSpec, JsonValue, PathElement } from '../types';
import { parsePath } from '../values/path';

export type { IndexWrite } from '../index-port';

/**
 * The index side of the document writes (see `index-port.ts`): each write path calls these, so its own
 * code only gains a line or two. Every promise started early has a rejection handler attached, so a
 * write that fails first (DOCUMENT_EXISTS, ...) leaves no unhandled rejection behind.
 */

/**
 * Starts the index side of a write of the document at `keys` in collection `collectionId`: reads the
 * catalog (1 point read per transaction) and, when the collection has indexes and `readBefore`, the
 * document's indexed parts (issued with the catalog read when the indexes are the ones last seen).
 * Nothing for a collection this write creates.
 */
export function startIndexWrite(
  port: IndexPort | undefined,
  tr: Transaction,
  target: { readonly id: number; readonly create?: () => void },
  keys: DocumentKeys,
  readBefore: boolean,
  expiresAt: number | undefined | 'unknown' = 'unknown',
): Promise<IndexWrite | undefined> {
  if (port === undefined || target.create !== undefined) return Promise.resolve(undefined);
  const started = readBefore
    ? port.indexesWithState(tr, target.id, keys, expiresAt)
    : port.indexesOf(tr, target.id).then((indexes) => (indexes === undefined ? undefined : { indexes, before: NOT_INDEXED }));
  started.catch(() => undefined);
  return started;
}

/**
 * Moves the document's entries to what `doc` (written with `expiresAt`) gives, or to none when `doc`
 * is `undefined` (removed), given what {@link startIndexWrite} started (awaited). Called before the document's own writes, so that a unique violation or a
 * limit leaves the document as it was.
 */
export function finishIndexWrite(
  started: IndexWrite | undefined,
  tr: Transaction,
  keys: DocumentKeys,
  doc: JsonValue | undefined,
  expiresAt: number | undefined,
): Promise<void> | undefined {
  // Not async: a write to a collection without indexes (the common case) makes no promise here.
  if (started === undefined) return undefined;
  const after = doc === undefined ? NOT_INDEXED : started.indexes.stateOf(keys, doc, expiresAt);
  return started.indexes.update(tr, keys, started.before, after);
}

/**
 * Rewrites the entries of a document whose content stays `doc` and whose expiry becomes `expiresAt`
 * (touch): entries record the expiry. Nothing for a document the indexes do not hold (a structure).
 */
export async function reexpireIndexEntries(
  write: Promise<IndexWrite | undefined>,
  tr: Transaction,
  keys: DocumentKeys,
  doc: JsonValue,
  expiresAt: number | undefined,
): Promise<void> {
  const started = await write;
  if (started === undefined || !started.before.exists) return;
  await started.indexes.update(tr, keys, started.before, started.indexes.stateOf(keys, doc, expiresAt));
}

/** Clears the index entries of the document at `keys` before it is deleted (read, then cleared). */
export async function removeIndexEntries(port: IndexPort | undefined, tr: Transaction, collectionId: number, keys: DocumentKeys): Promise<void> {
  const indexes = await port?.indexesOf(tr, collectionId);
  if (indexes === undefined) return;
  await indexes.update(tr, keys, await indexes.read(tr, keys, 'unknown'), NOT_INDEXED);
}

/** The paths of mutateIn specs, `undefined` when one does not parse (the write then counts as touching every index). */
export function specPaths(specs: readonly MutateInSpec[]): PathElement[][] | undefined {
  if (!Array.isArray(specs)) return undefined;
  try {
    return specs.map((spec) => parsePath((spec as { path: string }).path));
  } catch {
    return undefined;
  }
}
