import { stage, type StagedTransaction } from '../../kv/client/staged-transaction';
import type { ReadTransaction, Transaction } from '../../kv/contract/types';
import { approximateSizeNow } from '../../kv/client/hand-over';
import { DocumentError, isDocumentError } from '../errors';
import { entryBytes, MAX_DOCUMENT_BYTES, unflatten } from '../values/flatten';
import { MAX_DEPTH, assertJsonValue, valueDepth } from '../values/json-value';
import { childKey, decodePosition, subtreeEnd, type DocumentKeys } from '../keys/layout';
import { ARRAY_VALUE, OBJECT_VALUE, counterValue, encodeScalar, kindOf, type NodeKind } from '../values/leaf';
import { formatPath, parsePath } from '../values/path';
import {
  appendToArray,
  arrayBounds,
  clearSubtree,
  diagnose,
  failWithDiagnosis,
  insertIntoArray,
  nodeKind,
  pathError,
  prependToArray,
  probeChild,
  readSubtreeEntries,
  removeFromArray,
  resolvePath,
  writeValue,
  type Bounds,
} from '../values/tree';
import type { Cas, JsonValue, MutateInOptions, MutateInSpec, PathElement } from '../types';
import { checkCas, checkedCas, writeVersion } from '../keys/version';
import { DocTransaction } from '../doc-transaction';
import { checkSpecList, describePath, forSpec, specOp } from './spec-list';
import { readAhead, type DocumentReads } from './read-ahead';

/**
 * mutateIn: Couchbase's sub-document mutations (statuses as subjson and kv_engine give them) over the
 * tree of keys. Each spec touches only the keys below its path and the markers it checks, so specs on
 * different fields of one document commute and do not conflict.
 */

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

type MutateOp = MutateInSpec['op'];

const MUTATE_OPS: ReadonlySet<string> = new Set<MutateOp>([
  'insert',
  'upsert',
  'replace',
  'remove',
  'arrayAppend',
  'arrayPrepend',
  'arrayInsert',
  'arrayAddUnique',
  'increment',
  'decrement',
]);
const ARRAY_OPS: ReadonlySet<MutateOp> = new Set<MutateOp>(['arrayAppend', 'arrayPrepend', 'arrayInsert', 'arrayAddUnique']);
/** Ops that may not have the empty path (whole-document forms exist only for get, upsert and remove). */
const NO_EMPTY_PATH: ReadonlySet<MutateOp> = new Set<MutateOp>(['insert', 'replace', 'arrayInsert', 'increment', 'decrement']);
/** Ops for which `createPath` is invalid (Couchbase's MKDIR_P is not among their flags). */
const NO_CREATE_PATH: ReadonlySet<MutateOp> = new Set<MutateOp>(['replace', 'remove', 'arrayInsert']);
/** Ops that take `multi`. */
const MULTI_OPS: ReadonlySet<MutateOp> = new Set<MutateOp>(['arrayAppend', 'arrayPrepend', 'arrayInsert', 'arrayAddUnique']);

/** A mutate spec, checked, with its parsed path. */
interface Checked {
  readonly op: MutateOp;
  readonly elements: PathElement[];
  /** The path's syntax error: as in subjson, reported when the spec runs, not before. */
  readonly pathError?: DocumentError;
  readonly spec: MutateInSpec;
  readonly createPath: boolean;
  readonly multi: boolean;
}

/** What {@link mutateIn} did: the spec results, and whether the document still exists. */
export interface MutateOutcome {
  values: (JsonValue | undefined)[];
  removed: boolean;
}

/**
 * Applies mutate specs to one document, all or nothing: the specs run in order on a stage of `tr`
 * (each sees the document as the previous ones left it), and only when all succeed are their writes
 * applied to `tr`, with the document's new version.
 *
 * Reads: each spec's keys (its parent's entry, its node, its array's ends or subtree: the costs are
 * listed at `Collection.mutateIn`), with storeSemantics 'upsert' or 'insert' the root's entry, with
 * `cas` the version key. The specs' first reads and the version key's are issued together before the
 * CAS check and the specs run (`readsAhead`, or issued here: see `read-ahead.ts`), and both read
 * through the answers: specs on disjoint paths take one round trip of reads, with or without `cas`.
 * A spec reads through the stage, so it sees the writes of the specs before it whatever was read
 * ahead. Writes: the specs' keys and the version key, all at the end.
 *
 * @throws DocumentError INVALID_ARGUMENT for bad specs or combinations (before anything is read),
 *   DOCUMENT_NOT_FOUND, DOCUMENT_EXISTS, CAS_MISMATCH, and the first failing spec's error with its
 *   `specIndex`.
 */
export async function mutateIn(
  tr: Transaction,
  keys: DocumentKeys,
  specs: readonly MutateInSpec[],
  options: MutateInOptions,
  maxKeyBytes: number,
  /** Runs once every spec has succeeded, before their writes are applied (index maintenance: `index-port.ts`). */
  beforeApply?: (st: Transaction, removed: boolean) => Promise<void>,
  /** The specs' reads, issued ahead by {@link mutateInReads} on `tr`, unwritten since. */
  readsAhead?: ReadTransaction,
): Promise<MutateOutcome> {
  const semantics = checkedSemantics(options);
  const checked = checkMutateSpecs(checkSpecList(specs, 'mutateIn'), semantics);
  const cas = options.cas === undefined ? undefined : checkedCas(options.cas);
  const reads = readsAhead ?? readAhead(tr, keys, checked, documentReads(semantics, cas));
  // Through the reads issued ahead, which hold the version key's: the check waits for no read of its own.
  if (cas !== undefined) await checkCas(reads, keys, cas);

  // Known now on the memory and LMDB engines; a turn on FoundationDB's (no round trip).
  const sizeBefore = approximateSizeNow(tr) ?? (await tr.getApproximateSize());
  const st = stage(tr, reads);
  if (semantics !== 'replace') {
    const exists = (await st.get(keys.root)) !== undefined;
    if (exists && semantics === 'insert') throw new DocumentError('DOCUMENT_EXISTS', 'the document exists');
    if (!exists) st.set(keys.root, newRootIsArray(checked[0]) ? ARRAY_VALUE : OBJECT_VALUE);
  }
  const values: (JsonValue | undefined)[] = [];
  let removed = false;
  for (let i = 0; i < checked.length; i++) {
    try {
      const result = await mutate(st, keys, checked[i], i, maxKeyBytes);
      removed = result === REMOVED;
      values.push(result === REMOVED ? undefined : result);
    } catch (err) {
      // A missing document is the call's error, not a spec's (as in Couchbase).
      throw isDocumentError(err, 'DOCUMENT_NOT_FOUND') ? err : forSpec(err, i);
    }
  }
  if (!removed && (approximateSizeNow(st) ?? (await st.getApproximateSize())) - sizeBefore >= SIZE_CHECK_BYTES) await checkDocumentSize(st, keys);
  await beforeApply?.(st, removed);
  st.apply();
  if (removed) DocTransaction.of(tr).documentRemoved(keys);
  else
    writeVersion(
      tr,
      keys,
      checked.map((spec) => spec.elements),
    );
  return { values, removed };
}

/**
 * Issues the reads of a {@link mutateIn} of `specs` ahead (see `read-ahead.ts`), for a caller with
 * reads of its own to issue together with them; pass the result to mutateIn if `tr` is not written to
 * before it. `undefined` for specs or options mutateIn rejects: it rejects them itself, when it runs.
 */
export function mutateInReads(
  tr: Transaction,
  keys: DocumentKeys,
  specs: readonly MutateInSpec[],
  options: MutateInOptions,
): ReadTransaction | undefined {
  try {
    const semantics = checkedSemantics(options);
    const checked = checkMutateSpecs(checkSpecList(specs, 'mutateIn'), semantics);
    return readAhead(tr, keys, checked, documentReads(semantics, options.cas === undefined ? undefined : checkedCas(options.cas)));
  } catch (err) {
    if (isDocumentError(err)) return undefined;
    throw err;
  }
}

/** The document's keys mutateIn reads besides the specs': the root's entry to create it, the version to check `cas`. */
function documentReads(semantics: 'replace' | 'upsert' | 'insert', cas: Cas | undefined): DocumentReads {
  return { root: semantics !== 'replace', version: cas !== undefined };
}

/** @throws DocumentError INVALID_ARGUMENT for an unknown storeSemantics, or 'insert' with a cas. */
function checkedSemantics(options: MutateInOptions): 'replace' | 'upsert' | 'insert' {
  const semantics = options.storeSemantics ?? 'replace';
  if (semantics !== 'replace' && semantics !== 'upsert' && semantics !== 'insert') {
    throw new DocumentError('INVALID_ARGUMENT', `storeSemantics is 'replace', 'upsert' or 'insert', got ${JSON.stringify(semantics)}`);
  }
  if (semantics === 'insert' && options.cas !== undefined) {
    throw new DocumentError('INVALID_ARGUMENT', "storeSemantics 'insert' creates the document, so it takes no cas");
  }
  return semantics;
}

/**
 * Writes of at least this many bytes also measure the document they leave, so that no sub-document
 * write makes a document larger than a whole-document write could write. Smaller writes are not
 * checked (it would cost a read of the whole document each time).
 */
export const SIZE_CHECK_BYTES = 1_000_000;

/** @throws DocumentError DOCUMENT_TOO_LARGE when the document's entries exceed the limit. */
async function checkDocumentSize(st: StagedTransaction, keys: DocumentKeys): Promise<void> {
  const entries = await st.snapshot().getRangeAll(keys.root, subtreeEnd(keys.root));
  let bytes = 0;
  for (const { key, value } of entries) bytes += entryBytes(key, value);
  if (bytes > MAX_DOCUMENT_BYTES) {
    throw new DocumentError(
      'DOCUMENT_TOO_LARGE',
      `writing the whole document would take ${bytes} bytes of a transaction, over the limit of ${MAX_DOCUMENT_BYTES}`,
    );
  }
}

function checkMutateSpecs(list: readonly unknown[], semantics: 'replace' | 'upsert' | 'insert'): Checked[] {
  return list.map((raw, i): Checked => {
    const op = specOp(raw, MUTATE_OPS, i) as MutateOp;
    const spec = raw as MutateInSpec;
    const invalid = (what: string) => new DocumentError('INVALID_ARGUMENT', `spec ${i} (${op}): ${what}`, { specIndex: i });
    let elements: PathElement[] = [];
    let pathError: DocumentError | undefined;
    try {
      elements = parsePath(spec.path);
    } catch (err) {
      if (!isDocumentError(err)) throw err;
      pathError = err;
    }
    const options: unknown = spec.options;
    if (options !== undefined && (typeof options !== 'object' || options === null)) throw invalid('options must be an object');
    const createPath = (spec.options?.createPath ?? false) as unknown;
    const multi = (spec.options?.multi ?? false) as unknown;
    if (typeof createPath !== 'boolean' || typeof multi !== 'boolean') throw invalid('createPath and multi are booleans');
    if (pathError === undefined && elements.length === 0 && NO_EMPTY_PATH.has(op))
      throw invalid('the empty path (the whole document) is not allowed');
    if (createPath && NO_CREATE_PATH.has(op)) throw invalid('createPath is not allowed');
    if (multi && !MULTI_OPS.has(op)) throw invalid('multi is only for array specs');
    if (op === 'remove' && pathError === undefined && elements.length === 0 && i !== list.length - 1) {
      throw invalid('removing the whole document must be the last spec');
    }
    if (semantics === 'upsert' && (op === 'replace' || op === 'remove' || op === 'arrayInsert')) {
      throw invalid("not allowed with storeSemantics 'upsert' (it may create the document)");
    }
    if (semantics === 'insert' && op === 'remove') throw invalid("not allowed with storeSemantics 'insert'");
    return { op, elements, pathError, spec, createPath: createPath || semantics !== 'replace', multi };
  });
}

/** The root of a document created by mutateIn: an array if the first spec addresses one. */
function newRootIsArray(first: Checked): boolean {
  if (first.elements.length === 0) return ARRAY_OPS.has(first.op);
  return typeof first.elements[0] === 'number';
}

const REMOVED = Symbol('removed');

async function mutate(
  st: StagedTransaction,
  keys: DocumentKeys,
  checked: Checked,
  index: number,
  maxKeyBytes: number,
): Promise<JsonValue | undefined | typeof REMOVED> {
  const { op, elements, spec } = checked;
  if (checked.pathError !== undefined) throw checked.pathError;
  const n = elements.length;
  const last = elements[n - 1];
  switch (op) {
    case 'insert':
    case 'upsert': {
      const value = checkedValue(spec, index, n);
      if (n === 0) {
        if ((await st.get(keys.root)) === undefined) throw missingDocument();
        writeValue(st, keys.root, value, maxKeyBytes);
        return undefined;
      }
      if (typeof last !== 'string') throw invalidPath(elements, `${op} needs a path that ends with a key, not an index`);
      const parent = await parentOf(st, keys, elements, checked.createPath, maxKeyBytes);
      if (parent.kind !== 'object') throw mismatch(elements.slice(0, -1), 'an object');
      const key = childKey(parent.key, last);
      if (op === 'insert') {
        if ((await st.get(key)) !== undefined) {
          throw new DocumentError('PATH_EXISTS', `${describePath(elements)} exists`, { path: formatPath(elements) });
        }
        writeValue(st, key, value, maxKeyBytes, false);
      } else {
        writeValue(st, key, value, maxKeyBytes);
      }
      return undefined;
    }
    case 'replace': {
      const value = checkedValue(spec, index, n);
      const key = await existingNode(st, keys, elements);
      writeValue(st, key, value, maxKeyBytes);
      return undefined;
    }
    case 'remove': {
      if (n === 0) {
        if ((await st.get(keys.root)) === undefined) throw missingDocument();
        st.clearRange(keys.begin, keys.end);
        return REMOVED;
      }
      if (typeof last === 'number') {
        await removeElement(st, keys, elements, last, maxKeyBytes);
      } else {
        clearSubtree(st, await existingNode(st, keys, elements));
      }
      return undefined;
    }
    case 'arrayAppend':
    case 'arrayPrepend': {
      const values = checkedElements(checked, index, n + 1);
      const target = await arrayOrCreate(st, keys, checked, values, maxKeyBytes);
      if (target !== undefined) {
        if (op === 'arrayAppend') await appendToArray(st, target, values, maxKeyBytes);
        else await prependToArray(st, target, values, maxKeyBytes);
      }
      return undefined;
    }
    case 'arrayInsert': {
      const values = checkedElements(checked, index, n);
      if (typeof last !== 'number' || last < 0) {
        throw invalidPath(elements, 'arrayInsert needs a path that ends with an index >= 0');
      }
      const parentElements = elements.slice(0, -1);
      const path = await resolvePath(st, keys.root, parentElements);
      if (path.length < n) return failWithDiagnosis(st, elements, path);
      const arrayKey = path[n - 1];
      const bounds = await arrayBounds(st, arrayKey);
      if (bounds === 'other') throw mismatch(parentElements, 'an array');
      if (bounds === 'empty') {
        const kind = await nodeKind(st, arrayKey);
        if (kind !== 'array') return failWithDiagnosis(st, elements, path);
      }
      const length = typeof bounds === 'object' ? bounds.last - bounds.first + 1 : 0;
      if (last > length) {
        throw new DocumentError('PATH_NOT_FOUND', `index ${last} is past the end of the array (length ${length})`, {
          path: formatPath(elements),
        });
      }
      await insertIntoArray(st, arrayKey, typeof bounds === 'object' ? bounds : undefined, last, values, maxKeyBytes);
      return undefined;
    }
    case 'arrayAddUnique':
      await addUnique(st, keys, checked, index, maxKeyBytes);
      return undefined;
    case 'increment':
    case 'decrement':
      return counter(st, keys, checked, maxKeyBytes);
  }
}

function missingDocument(): DocumentError {
  return new DocumentError('DOCUMENT_NOT_FOUND', 'the document does not exist');
}

function invalidPath(elements: readonly PathElement[], what: string): DocumentError {
  return new DocumentError('INVALID_PATH', `${what}: ${JSON.stringify(formatPath(elements))}`, { path: formatPath(elements) });
}

function mismatch(elements: readonly PathElement[], want: string): DocumentError {
  return new DocumentError('PATH_MISMATCH', `${describePath(elements)} is not ${want}`, { path: formatPath(elements) });
}

/** The spec's value, checked as a JSON value that fits at a path of `components` components. */
function checkedValue(spec: MutateInSpec, index: number, components: number): JsonValue {
  const value = (spec as { value?: unknown }).value;
  assertJsonValue(value, `the value of spec ${index}`);
  checkDepth(value, components);
  return value;
}

/** The elements an array spec adds (the value, or its elements with `multi`), checked for depth. */
function checkedElements(checked: Checked, index: number, components: number): JsonValue[] {
  const value = (checked.spec as { value?: unknown }).value;
  assertJsonValue(value, `the value of spec ${index}`);
  if (!checked.multi) {
    checkDepth(value, components);
    return [value];
  }
  if (!Array.isArray(value) || value.length === 0) {
    throw new DocumentError('INVALID_ARGUMENT', 'with multi, the value is a non-empty array of the elements to add');
  }
  for (const element of value) checkDepth(element, components);
  return value;
}

/** Couchbase's rule: the components of where a value lands plus its depth are at most 32. */
function checkDepth(value: JsonValue, components: number): void {
  const depth = valueDepth(value);
  if (components + depth > MAX_DEPTH) {
    throw new DocumentError('VALUE_TOO_DEEP', `a value of depth ${depth} at a path of ${components} components is deeper than ${MAX_DEPTH} levels`);
  }
}

/** The key of the existing node at `elements`; throws the path error when there is none. */
async function existingNode(st: Transaction, keys: DocumentKeys, elements: readonly PathElement[]): Promise<Buffer> {
  const path = await resolvePath(st, keys.root, elements);
  if (path.length > elements.length) {
    const key = path[elements.length];
    if ((await st.get(key)) !== undefined) return key;
  }
  return failWithDiagnosis(st, elements, path);
}

/**
 * The node that will hold the child `elements[n-1]`: its key and kind, by resolving the parent path
 * and one point read of its entry. With `createPath`, missing parents are created as objects (never
 * array elements) when the nearest existing one is an object.
 */
async function parentOf(
  st: Transaction,
  keys: DocumentKeys,
  elements: readonly PathElement[],
  createPath: boolean,
  maxKeyBytes: number,
): Promise<{ key: Buffer; kind: NodeKind }> {
  const parentElements = elements.slice(0, -1);
  const m = parentElements.length;
  const path = await resolvePath(st, keys.root, parentElements);
  if (path.length > m) {
    const value = await st.get(path[m]);
    if (value !== undefined) return { key: path[m], kind: kindOf(value) };
  }
  const diagnosis = (await diagnose(st, parentElements, path)) ?? { code: 'PATH_NOT_FOUND' as const, node: m };
  const from = diagnosis.node;
  if (
    createPath &&
    diagnosis.code === 'PATH_NOT_FOUND' &&
    path.length > m &&
    from >= 1 &&
    parentElements.slice(from - 1).every((element) => typeof element === 'string')
  ) {
    for (let j = from; j <= m; j++) {
      if (path[j].length > maxKeyBytes) {
        throw new DocumentError(
          'KEY_TOO_LARGE',
          `the key of ${describePath(parentElements.slice(0, j))} would exceed the engine's limit of ${maxKeyBytes} bytes`,
          {
            path: formatPath(elements),
          },
        );
      }
      st.set(path[j], OBJECT_VALUE);
    }
    return { key: path[m], kind: 'object' };
  }
  throw pathError(diagnosis, elements);
}

/**
 * The key of the array at `checked`'s path, or `undefined` after creating it (holding `values`) when
 * it is missing and may be created.
 */
async function arrayOrCreate(
  st: Transaction,
  keys: DocumentKeys,
  checked: Checked,
  values: JsonValue[],
  maxKeyBytes: number,
): Promise<Buffer | undefined> {
  const { elements } = checked;
  const n = elements.length;
  const path = await resolvePath(st, keys.root, elements);
  if (path.length > n) {
    const kind = await nodeKind(st, path[n]);
    if (kind === 'array') return path[n];
    if (kind !== undefined) throw mismatch(elements, 'an array');
  }
  const last = elements[n - 1];
  if (!checked.createPath || typeof last !== 'string') return failWithDiagnosis(st, elements, path);
  const parent = await parentOf(st, keys, elements, true, maxKeyBytes);
  if (parent.kind !== 'object') throw mismatch(elements.slice(0, -1), 'an object');
  writeValue(st, childKey(parent.key, last), values, maxKeyBytes, false);
  return undefined;
}

async function removeElement(
  st: Transaction,
  keys: DocumentKeys,
  elements: readonly PathElement[],
  index: number,
  maxKeyBytes: number,
): Promise<void> {
  const parentElements = elements.slice(0, -1);
  const path = await resolvePath(st, keys.root, parentElements);
  if (path.length < elements.length) return failWithDiagnosis(st, elements, path);
  const arrayKey = path[elements.length - 1];
  // The ends need one limit-1 read each; an element in the middle needs both, to move the shorter side.
  let bounds: Bounds | undefined;
  if (index === -1 || index === 0) {
    const probe = await probeChild(st, arrayKey, index === 0 ? 'first' : 'last');
    if (probe.kind === 'position') {
      clearSubtree(st, childKey(arrayKey, probe.position));
      return;
    }
  } else {
    const found = await arrayBounds(st, arrayKey);
    if (typeof found === 'object') bounds = found;
  }
  if (bounds === undefined || index > bounds.last - bounds.first) return failWithDiagnosis(st, elements, path);
  await removeFromArray(st, arrayKey, bounds, index, maxKeyBytes);
}

/**
 * Same value and type: `1` and `"1"` differ, `1` and `1.0` are the same JS number, and an integral
 * number and a bigint of the same value are the same integer (`2 ** 60` and `2n ** 60n`).
 */
function sameScalar(a: JsonValue, b: JsonValue): boolean {
  if (typeof a === 'bigint' || typeof b === 'bigint') return sameInteger(a, b);
  return typeof a === typeof b && (typeof a === 'number' ? Object.is(a, b) : a === b);
}

function sameInteger(a: JsonValue, b: JsonValue): boolean {
  const integral = (v: JsonValue): v is number | bigint => typeof v === 'bigint' || (typeof v === 'number' && Number.isInteger(v));
  return integral(a) && integral(b) && BigInt(a) === BigInt(b);
}

async function addUnique(st: Transaction, keys: DocumentKeys, checked: Checked, index: number, maxKeyBytes: number): Promise<void> {
  const { elements } = checked;
  const value = (checked.spec as { value?: unknown }).value;
  assertJsonValue(value, `the value of spec ${index}`);
  if (checked.multi || (typeof value === 'object' && value !== null)) {
    throw new DocumentError('VALUE_CANNOT_INSERT', 'arrayAddUnique adds one primitive (string, number, boolean or null)', {
      path: formatPath(elements),
    });
  }
  checkDepth(value, elements.length + 1);
  const n = elements.length;
  const path = await resolvePath(st, keys.root, elements);
  if (path.length > n) {
    const key = path[n];
    const entries = await readSubtreeEntries(st, key);
    if (entries.length > 0) {
      if (kindOf(entries[0].value) !== 'array') throw mismatch(elements, 'an array');
      const array = unflatten(entries, 0, entries.length, key.length) as JsonValue[];
      for (const element of array) {
        if (typeof element === 'object' && element !== null) {
          throw new DocumentError('PATH_MISMATCH', `${describePath(elements)} holds objects or arrays: uniqueness is only defined for primitives`, {
            path: formatPath(elements),
          });
        }
        if (sameScalar(element, value)) {
          throw new DocumentError('PATH_EXISTS', `${describePath(elements)} already holds ${JSON.stringify(String(value))}`, {
            path: formatPath(elements),
          });
        }
      }
      const lastPosition = entries.length > 1 ? decodePosition(entries[entries.length - 1].key, key.length) : -1;
      writeValue(st, childKey(key, lastPosition + 1), value, maxKeyBytes, false);
      return;
    }
  }
  await arrayOrCreate(st, keys, checked, [value], maxKeyBytes);
}

function checkedDelta(checked: Checked): bigint {
  const delta = (checked.spec as { delta?: unknown }).delta;
  let big: bigint | undefined;
  if (typeof delta === 'number' && Number.isSafeInteger(delta) && delta !== 0) big = BigInt(delta);
  else if (typeof delta === 'bigint' && delta !== 0n && delta >= INT64_MIN && delta <= INT64_MAX) big = delta;
  if (big === undefined) {
    throw new DocumentError('DELTA_INVALID', `a delta is a non-zero safe integer or a bigint within int64, got ${String(delta)}`, {
      path: formatPath(checked.elements),
    });
  }
  return checked.op === 'increment' ? big : -big;
}

function asJsonInteger(n: bigint): number | bigint {
  return n >= -BigInt(Number.MAX_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n;
}

async function counter(st: Transaction, keys: DocumentKeys, checked: Checked, maxKeyBytes: number): Promise<JsonValue> {
  const { elements } = checked;
  const delta = checkedDelta(checked);
  const n = elements.length;
  const path = await resolvePath(st, keys.root, elements);
  if (path.length > n) {
    const key = path[n];
    const stored = await st.get(key);
    if (stored !== undefined) {
      const current = kindOf(stored) === 'scalar' ? counterValue(stored) : undefined;
      if (current === undefined) throw mismatch(elements, 'an integer');
      if (current < INT64_MIN || current > INT64_MAX) {
        throw new DocumentError('NUMBER_TOO_BIG', `${describePath(elements)} holds an integer outside int64`, {
          path: formatPath(elements),
        });
      }
      return setCounter(st, key, current + delta, elements);
    }
  }
  const last = elements[n - 1];
  if (typeof last !== 'string') return failWithDiagnosis(st, elements, path);
  const parent = await parentOf(st, keys, elements, checked.createPath, maxKeyBytes);
  if (parent.kind !== 'object') return failWithDiagnosis(st, elements, path);
  const key = childKey(parent.key, last);
  if (key.length > maxKeyBytes) {
    throw new DocumentError('KEY_TOO_LARGE', `the key of ${describePath(elements)} would exceed the engine's limit of ${maxKeyBytes} bytes`, {
      path: formatPath(elements),
    });
  }
  return setCounter(st, key, delta, elements);
}

function setCounter(st: Transaction, key: Buffer, value: bigint, elements: readonly PathElement[]): JsonValue {
  if (value < INT64_MIN || value > INT64_MAX) {
    throw new DocumentError('VALUE_CANNOT_INSERT', `the result, ${value}, is outside int64`, { path: formatPath(elements) });
  }
  const result = asJsonInteger(value);
  st.set(key, encodeScalar(result));
  return result;
}
