import { Buffer } from 'node:buffer';
import type { KeyValue, ReadTransaction, Transaction } from '../../kv/contract/types';
import { DocumentError } from '../errors';
import { emptyEntries, flatten, unflatten, type Entries } from './flatten';
import { childKey, decodePosition, descendantsBegin, elementEnd, isIntegerElement, subtreeEnd } from '../keys/layout';
import { isSharedLeaf, kindOf, type NodeKind } from './leaf';
import { getRangeAllHandedOver, setHandedOver } from '../../kv/client/hand-over';
import { copyOf } from '../../kv/contract/bytes';
import { formatPath } from './path';
import type { JsonValue, PathElement } from '../types';

/**
 * Reads and writes of subtrees and arrays inside a transaction, on data keys (see `layout.ts`). Paths
 * are resolved to keys here, and when one leads nowhere, the reason is diagnosed and its error
 * (DOCUMENT_NOT_FOUND, PATH_NOT_FOUND, PATH_MISMATCH) built here, so every operation reports it alike;
 * which of those errors an operation throws, and its other errors, are the operation's own
 * (`collection/`, `subdoc/`).
 *
 * An array's elements sit at contiguous integer positions `first..last`; index `i` is position
 * `first + i`. `first` and `last` are read with limit-1 range reads over the array's descendants, so
 * the array's marker is never rewritten by changes to its elements.
 */

// ---- reading

/** The kind of the node at `key`, by one point read; `undefined` when there is none. */
export async function nodeKind(tr: ReadTransaction, key: Uint8Array): Promise<NodeKind | undefined> {
  const value = await tr.get(key);
  return value === undefined ? undefined : kindOf(value);
}

/** The entries of the subtree at `key`, by one range read: the node first, then its descendants. */
export function readSubtreeEntries(tr: ReadTransaction, key: Uint8Array): Promise<KeyValue[]> {
  return tr.getRangeAll(key, subtreeEnd(key));
}

/** The value of the subtree at `key` (one range read), or `undefined` when there is no node. */
export async function readSubtree(tr: ReadTransaction, key: Uint8Array): Promise<JsonValue | undefined> {
  const entries = await readSubtreeEntries(tr, key);
  return entries.length === 0 ? undefined : unflatten(entries, 0, entries.length, key.length);
}

/**
 * What the first (or last) child of the node at `key` says about it, by one limit-1 range read: the
 * position of an array's first (last) element, `'other'` for a node whose children are not array
 * elements (an object's keys, a long string's chunks), `'none'` for a node without children (empty
 * container, scalar, or missing).
 */
export type ChildProbe = { readonly kind: 'position'; readonly position: number } | { readonly kind: 'other' | 'none' };

const NONE: ChildProbe = { kind: 'none' };
const OTHER: ChildProbe = { kind: 'other' };

export async function probeChild(tr: ReadTransaction, key: Uint8Array, which: 'first' | 'last'): Promise<ChildProbe> {
  const found = await getRangeAllHandedOver(tr, descendantsBegin(key), subtreeEnd(key), { limit: 1, reverse: which === 'last' });
  if (found.length === 0) return NONE;
  const child = found[0].key;
  if (!isIntegerElement(child, key.length)) return OTHER;
  return { kind: 'position', position: decodePosition(child, key.length) };
}

/** An array's first and last positions (two limit-1 reads, issued together); `undefined` when empty. */
export type Bounds = { readonly first: number; readonly last: number };

/**
 * The bounds of the array at `key`, or `'empty'` when it has no elements, or `'other'` when the node
 * has children that are not elements (it is an object). An empty result says nothing about the node
 * itself: it may be an empty array, an empty object, a scalar or missing.
 */
export async function arrayBounds(tr: ReadTransaction, key: Uint8Array): Promise<Bounds | 'empty' | 'other'> {
  const [first, last] = await Promise.all([probeChild(tr, key, 'first'), probeChild(tr, key, 'last')]);
  if (first.kind === 'position' && last.kind === 'position') return { first: first.position, last: last.position };
  return first.kind === 'other' || last.kind === 'other' ? 'other' : 'empty';
}

// ---- paths

/**
 * The data keys along `elements` from `root`: `keys[j]` is the key of the node reached after `j`
 * elements (`keys[0]` is `root`). Each index costs one limit-1 read of its array's first (or, for -1,
 * last) element. The result is shorter than `elements.length + 1` when an index could not be resolved
 * (the node before it has no array elements); {@link diagnose} says why. A complete result proves
 * nothing about existence: the caller reads the last key.
 */
export async function resolvePath(tr: ReadTransaction, root: Buffer, elements: readonly PathElement[]): Promise<Buffer[]> {
  const keys: Buffer[] = [root];
  let key = root;
  for (const element of elements) {
    if (typeof element === 'string') {
      key = childKey(key, element);
    } else {
      const probe = await probeChild(tr, key, element === -1 ? 'last' : 'first');
      if (probe.kind !== 'position') return keys;
      key = childKey(key, element === -1 ? probe.position : probe.position + element);
    }
    keys.push(key);
  }
  return keys;
}

export type PathErrorCode = 'DOCUMENT_NOT_FOUND' | 'PATH_NOT_FOUND' | 'PATH_MISMATCH';

/** Why a path leads nowhere: the code, and the first node (count of elements) that is wrong. */
export interface Diagnosis {
  readonly code: PathErrorCode;
  /** The node (number of path elements from the root) that is missing or of the wrong kind. */
  readonly node: number;
}

/**
 * Why `elements` does not lead to a node, by point reads of the nodes along `keys` (from
 * {@link resolvePath}); for the error path only. `undefined` when it does lead to one after all.
 */
export async function diagnose(tr: ReadTransaction, elements: readonly PathElement[], keys: readonly Buffer[]): Promise<Diagnosis | undefined> {
  const values = await Promise.all(keys.map((key) => tr.get(key)));
  for (let j = 0; j < values.length; j++) {
    const value = values[j];
    if (value === undefined) return { code: j === 0 ? 'DOCUMENT_NOT_FOUND' : 'PATH_NOT_FOUND', node: j };
    if (j === elements.length) return undefined;
    const kind = kindOf(value);
    if (typeof elements[j] === 'string' ? kind !== 'object' : kind !== 'array') return { code: 'PATH_MISMATCH', node: j };
  }
  // Every node exists and has the right kind, but an index found no element: out of range.
  return { code: 'PATH_NOT_FOUND', node: keys.length };
}

/** The error for a diagnosis of `elements`. */
export function pathError(diagnosis: Diagnosis, elements: readonly PathElement[]): DocumentError {
  const path = formatPath(elements);
  const { code, node } = diagnosis;
  if (code === 'DOCUMENT_NOT_FOUND') return new DocumentError(code, 'the document does not exist', { path });
  const at = formatPath(elements.slice(0, node));
  let message: string;
  if (code === 'PATH_MISMATCH') {
    const want = typeof elements[node] === 'string' ? 'an object' : 'an array';
    message = `${at === '' ? 'the document root' : JSON.stringify(at)} is not ${want}, so ${JSON.stringify(path)} cannot exist`;
  } else if (node > elements.length || node === 0) {
    message = `no value at ${JSON.stringify(path)}`;
  } else {
    message = `no value at ${JSON.stringify(path)}${node < elements.length ? ` (${JSON.stringify(at)} is missing)` : ''}`;
  }
  return new DocumentError(code, message, { path });
}

/** Reads the node at the end of `elements`; throws the path error when there is none. */
export async function failWithDiagnosis(tr: ReadTransaction, elements: readonly PathElement[], keys: readonly Buffer[]): Promise<never> {
  const diagnosis = (await diagnose(tr, elements, keys)) ?? { code: 'PATH_NOT_FOUND', node: elements.length };
  throw pathError(diagnosis, elements);
}

// ---- writing

/** Writes `entries` (which must be new keys or inside a cleared range). */
export function writeEntries(tr: Transaction, entries: Entries): void {
  const { keys, values } = entries;
  for (let i = 0; i < keys.length; i++) tr.set(keys[i], values[i]);
}

/**
 * {@link writeEntries} of entries encoded for this write and never modified afterwards (a document's,
 * a pushed element's): the memory and LMDB engines' transactions keep the Buffers instead of copies,
 * but for the leaves every document shares (`isSharedLeaf`), which they get copies of.
 */
export function writeEncodedEntries(tr: Transaction, entries: Entries): void {
  const { keys, values } = entries;
  for (let i = 0; i < keys.length; i++) {
    const value = values[i];
    setHandedOver(tr, keys[i], isSharedLeaf(value) ? copyOf(value) : value);
  }
}

/** Clears the subtree at `key`. */
export function clearSubtree(tr: Transaction, key: Uint8Array): void {
  tr.clearRange(key, subtreeEnd(key));
}

/**
 * Replaces whatever is at `key` with `value`: clears the subtree (one range clear) and writes the
 * value's entries. Flattening checks the limits before anything is written.
 */
export function writeValue(tr: Transaction, key: Buffer, value: JsonValue, maxKeyBytes: number, clear = true): void {
  const entries = flatten(value, key, maxKeyBytes);
  if (clear) clearSubtree(tr, key);
  writeEntries(tr, entries);
}

/** The entries of `values` as array elements at positions `from`, `from + 1`, ... of the array at `key`. */
export function elementEntries(key: Buffer, from: number, values: readonly JsonValue[], maxKeyBytes: number): Entries {
  const entries = emptyEntries();
  for (let i = 0; i < values.length; i++) flatten(values[i], childKey(key, from + i), maxKeyBytes, entries);
  return entries;
}

/**
 * Appends `values` to the array at `key` (the caller knows it is one): one limit-1 read for the last
 * position, then only the new elements' keys.
 */
export async function appendToArray(tr: Transaction, key: Buffer, values: readonly JsonValue[], maxKeyBytes: number): Promise<void> {
  const last = await probeChild(tr, key, 'last');
  const from = last.kind === 'position' ? last.position + 1 : 0;
  writeEntries(tr, elementEntries(key, from, values, maxKeyBytes));
}

/** Prepends `values` (in their order) to the array at `key`: as {@link appendToArray}, at the front. */
export async function prependToArray(tr: Transaction, key: Buffer, values: readonly JsonValue[], maxKeyBytes: number): Promise<void> {
  const first = await probeChild(tr, key, 'first');
  const from = (first.kind === 'position' ? first.position : 0) - values.length;
  writeEntries(tr, elementEntries(key, from, values, maxKeyBytes));
}

/**
 * Moves the elements at positions `from..to` of the array at `key` by `delta` positions: one range
 * read (or, when the caller has its entries, `held`, that read's conflict range), one range clear,
 * and one write per key moved. The destination positions outside `from..to` must be free.
 *
 * A position re-encoded at its new value may take a byte more (tuple integers grow at powers of 256),
 * so every new key is checked against `maxKeyBytes` before anything is cleared or written.
 *
 * @throws DocumentError KEY_TOO_LARGE when a moved key would exceed `maxKeyBytes`.
 */
export async function moveElements(
  tr: Transaction,
  key: Buffer,
  from: number,
  to: number,
  delta: number,
  maxKeyBytes: number,
  held?: readonly KeyValue[],
): Promise<void> {
  (await prepareMove(tr, key, from, to, delta, maxKeyBytes, held))();
}

/**
 * {@link moveElements} in two steps: the read and the checks, then (the returned function) the
 * writes. With `held`, the entries the caller read at snapshot, it records the read's conflict
 * range instead of reading.
 */
async function prepareMove(
  tr: Transaction,
  key: Buffer,
  from: number,
  to: number,
  delta: number,
  maxKeyBytes: number,
  held?: readonly KeyValue[],
): Promise<() => void> {
  if (from > to) return () => {};
  const begin = childKey(key, from);
  const end = childKey(key, to + 1);
  let entries = held;
  if (entries === undefined) entries = await tr.getRangeAll(begin, end);
  else tr.addReadConflictRange(begin, end);
  const at = key.length;
  let lastElement: Buffer | undefined;
  let lastStop = 0;
  let target: Buffer = key;
  const moved: Buffer[] = [];
  for (const { key: old } of entries) {
    const stop = elementEnd(old, at);
    // Entries of one element share its bytes: re-encode the position once per element.
    if (lastElement === undefined || stop !== lastStop || old.compare(lastElement, at, stop, at, stop) !== 0) {
      lastElement = old;
      lastStop = stop;
      target = childKey(key, decodePosition(old, at) + delta);
    }
    const next = stop === old.length ? target : Buffer.concat([target, old.subarray(stop)]);
    if (next.length > maxKeyBytes) {
      throw new DocumentError(
        'KEY_TOO_LARGE',
        `moving array element ${decodePosition(old, at)} to position ${decodePosition(old, at) + delta} makes a key of it ${next.length} bytes, over the engine's limit of ${maxKeyBytes}`,
      );
    }
    moved.push(next);
  }
  return () => {
    tr.clearRange(begin, end);
    entries.forEach(({ value }, i) => tr.set(moved[i], value));
  };
}

/**
 * The side of an index that an insert or a removal moves, chosen by the caller, with the entries of
 * its elements, which the caller has read at snapshot (the move records the conflict range of the
 * read they replace): the elements before the index (`toStart`), or those after it (from it on, for
 * an insert).
 */
export interface HeldSide {
  readonly toStart: boolean;
  readonly entries: readonly KeyValue[];
}

/**
 * Inserts `values` before index `index` of the array at `key` with bounds `bounds` (`undefined`: empty),
 * `0 <= index <= length`. The shorter side moves, or the side `held` names: elements before the index
 * move down, or elements from the index on move up, by `values.length` positions.
 */
export async function insertIntoArray(
  tr: Transaction,
  key: Buffer,
  bounds: Bounds | undefined,
  index: number,
  values: readonly JsonValue[],
  maxKeyBytes: number,
  held?: HeldSide,
): Promise<void> {
  const n = values.length;
  if (bounds === undefined) {
    writeEntries(tr, elementEntries(key, 0, values, maxKeyBytes));
    return;
  }
  const { first, last } = bounds;
  const length = last - first + 1;
  const toStart = held?.toStart ?? index <= length - index;
  const entries = elementEntries(key, first + index - (toStart ? n : 0), values, maxKeyBytes);
  if (toStart) {
    await moveElements(tr, key, first, first + index - 1, -n, maxKeyBytes, held?.entries);
  } else {
    await moveElements(tr, key, first + index, last, n, maxKeyBytes, held?.entries);
  }
  writeEntries(tr, entries);
}

/**
 * Removes element `index` (`0 <= index < length`) of the array at `key` with bounds `bounds`: clears
 * its subtree and closes the gap by moving the shorter side, or the side `held` names, one position.
 */
export async function removeFromArray(
  tr: Transaction,
  key: Buffer,
  bounds: Bounds,
  index: number,
  maxKeyBytes: number,
  held?: HeldSide,
): Promise<void> {
  const { first, last } = bounds;
  const position = first + index;
  // The moved keys are checked before the element is cleared.
  const move =
    (held?.toStart ?? index < last - position)
      ? await prepareMove(tr, key, first, position - 1, 1, maxKeyBytes, held?.entries)
      : await prepareMove(tr, key, position + 1, last, -1, maxKeyBytes, held?.entries);
  clearSubtree(tr, childKey(key, position));
  move();
}
