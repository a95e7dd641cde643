import type { JsonValue, MutateInSpec, PathElement } from '../../src/document/types';

/**
 * A plain-JavaScript reference model of Couchbase's sub-document rules (the fact sheet's section 1,
 * itself from subjson and kv_engine), over path element arrays. The random model test applies the same
 * `mutateIn` calls to it and to the store and expects the same documents and the same errors.
 *
 * Where the sources leave a choice open, the model accepts each possible answer: an outcome's `codes`
 * lists every acceptable error code.
 *
 * Error names are the layer's: PATH_INVALID is INVALID_PATH, VALUE_CANTINSERT is VALUE_CANNOT_INSERT,
 * NUM_RANGE is NUMBER_TOO_BIG, and the server's whole-request EINVAL/INVALID_COMBO is INVALID_ARGUMENT.
 */

/** Couchbase's depth limit: path components where a value lands plus the value's depth. */
export const MAX_DEPTH = 32;
export const MAX_PATH_COMPONENTS = 31;
export const MAX_SPECS = 16;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** A spec as the model takes it: the path already split into elements. */
export type ModelSpec = MutateInSpec extends infer S ? (S extends MutateInSpec ? Omit<S, 'path'> & { path: readonly PathElement[] } : never) : never;

export type ModelOutcome =
  { ok: true; doc: JsonValue | undefined; values: (JsonValue | undefined)[] } | { ok: false; codes: string[]; specIndex: number | undefined };

/** A failure of one spec. */
class SpecFailure extends Error {
  constructor(readonly codes: string[]) {
    super(codes.join(' or '));
  }
}

function fail(...codes: string[]): never {
  throw new SpecFailure(codes);
}

export function isObject(v: JsonValue | undefined): v is { [key: string]: JsonValue } {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function isPrimitive(v: JsonValue): boolean {
  return v === null || typeof v !== 'object';
}

/**
 * Whether `v` is a value JSON can hold exactly: no `undefined`, functions, symbols, non-finite numbers
 * or cycles.
 */
export function isJsonValue(v: unknown, ancestors: Set<object> = new Set()): boolean {
  switch (typeof v) {
    case 'string':
    case 'boolean':
    case 'bigint':
      return true;
    case 'number':
      return Number.isFinite(v);
    case 'object': {
      if (v === null) return true;
      if (ancestors.has(v)) return false;
      ancestors.add(v);
      const ok = Object.values(v).every((e) => isJsonValue(e, ancestors));
      ancestors.delete(v);
      return ok;
    }
    default:
      return false;
  }
}

/** Couchbase's depth: a scalar or an empty container is 1, each level of nesting adds 1. */
export function depthOf(v: JsonValue): number {
  if (Array.isArray(v)) return 1 + v.reduce<number>((m, e) => Math.max(m, depthOf(e)), 0);
  if (isObject(v)) return 1 + Object.values(v).reduce<number>((m, e) => Math.max(m, depthOf(e)), 0);
  return 1;
}

export function clone<T extends JsonValue | undefined>(v: T): T {
  if (Array.isArray(v)) return v.map((e) => clone(e)) as T;
  if (isObject(v)) {
    const out: { [key: string]: JsonValue } = {};
    for (const [k, e] of Object.entries(v)) out[k] = clone(e);
    return out as T;
  }
  return v;
}

/** Same primitive, compared as Couchbase compares JSON text: `1` is not `"1"`, `true` is not `"true"`. */
function samePrimitive(a: JsonValue, b: JsonValue): boolean {
  const integral = (v: JsonValue): v is number | bigint => typeof v === 'bigint' || (typeof v === 'number' && Number.isInteger(v));
  if (typeof a === 'bigint' || typeof b === 'bigint') return integral(a) && integral(b) && BigInt(a) === BigInt(b);
  return Object.is(a, b) || (a === b && a !== 0);
}

/** Where a path leads in a document. */
type Walk =
  | { kind: 'found'; parent: JsonValue | undefined; key: PathElement | undefined; node: JsonValue }
  /** Element `at` of the path does not exist in `container`, the value at the elements before it. */
  | { kind: 'missing'; at: number; container: JsonValue }
  | { kind: 'mismatch' };

/** An array position for index `e` (-1 = last), or undefined when out of range. */
function position(array: readonly JsonValue[], e: number): number | undefined {
  const i = e === -1 ? array.length - 1 : e;
  return i >= 0 && i < array.length ? i : undefined;
}

export function walk(doc: JsonValue, path: readonly PathElement[]): Walk {
  let node: JsonValue = doc;
  let parent: JsonValue | undefined;
  let key: PathElement | undefined;
  for (let i = 0; i < path.length; i++) {
    const e = path[i];
    if (Array.isArray(node)) {
      if (typeof e === 'string') return { kind: 'mismatch' };
      const at = position(node, e);
      if (at === undefined) return { kind: 'missing', at: i, container: node };
      parent = node;
      key = at;
      node = node[at];
    } else if (isObject(node)) {
      if (typeof e === 'number') return { kind: 'mismatch' };
      if (!Object.prototype.hasOwnProperty.call(node, e)) return { kind: 'missing', at: i, container: node };
      parent = node;
      key = e;
      node = node[e];
    } else {
      return { kind: 'mismatch' };
    }
  }
  return { kind: 'found', parent, key, node };
}

/** Whether the layer's parser takes `path`: at most 31 components, indices are safe integers >= -1. */
export function validPath(path: readonly PathElement[]): boolean {
  return path.length <= MAX_PATH_COMPONENTS && path.every((e) => typeof e === 'string' || (Number.isSafeInteger(e) && e >= -1));
}

/** The result of a lookup spec on `doc`: a value, or that spec's error code. */
export type LookupOutcome = { value: JsonValue } | { code: string };

export function lookupGet(doc: JsonValue, path: readonly PathElement[]): LookupOutcome {
  if (!validPath(path)) return { code: 'INVALID_PATH' };
  const w = walk(doc, path);
  if (w.kind === 'found') return { value: w.node };
  return { code: w.kind === 'missing' ? 'PATH_NOT_FOUND' : 'PATH_MISMATCH' };
}

export function lookupExists(doc: JsonValue, path: readonly PathElement[]): LookupOutcome {
  if (!validPath(path)) return { code: 'INVALID_PATH' };
  const w = walk(doc, path);
  if (w.kind === 'found') return { value: true };
  return w.kind === 'missing' ? { value: false } : { code: 'PATH_MISMATCH' };
}

export function lookupCount(doc: JsonValue, path: readonly PathElement[]): LookupOutcome {
  if (!validPath(path)) return { code: 'INVALID_PATH' };
  const w = walk(doc, path);
  if (w.kind !== 'found') return { code: w.kind === 'missing' ? 'PATH_NOT_FOUND' : 'PATH_MISMATCH' };
  if (Array.isArray(w.node)) return { value: w.node.length };
  if (isObject(w.node)) return { value: Object.keys(w.node).length };
  return { code: 'PATH_MISMATCH' };
}

/**
 * Makes room for a value at `path` (whose last element is a key) under createPath rules: the missing
 * parents are created as objects. Returns the object the last key goes into.
 */
function parentForKey(doc: JsonValue, path: readonly PathElement[], createPath: boolean): { [key: string]: JsonValue } {
  const parentPath = path.slice(0, -1);
  const w = walk(doc, parentPath);
  if (w.kind === 'mismatch') fail('PATH_MISMATCH');
  if (w.kind === 'found') {
    if (!isObject(w.node)) fail('PATH_MISMATCH');
    return w.node;
  }
  // A missing parent: only objects are ever created, so every missing element must be a key, and the
  // first of them must go into an object.
  if (!createPath) fail('PATH_NOT_FOUND');
  const missing = parentPath.slice(w.at);
  if (missing.some((e) => typeof e === 'number') || !isObject(w.container)) fail('PATH_NOT_FOUND');
  let node = w.container;
  for (const e of missing as string[]) {
    const created: { [key: string]: JsonValue } = {};
    node[e] = created;
    node = created;
  }
  return node;
}

function toInt(v: JsonValue): bigint | undefined {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
  return undefined;
}

/** A bigint as the layer returns integers: a number when safe, otherwise a bigint. */
export function asStoredInteger(n: bigint): number | bigint {
  return n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n;
}

function deltaOf(delta: unknown): bigint {
  let d: bigint | undefined;
  if (typeof delta === 'bigint') d = delta;
  else if (typeof delta === 'number' && Number.isSafeInteger(delta)) d = BigInt(delta);
  if (d === undefined || d === 0n || d < INT64_MIN || d > INT64_MAX) fail('DELTA_INVALID');
  return d;
}

/** Errors a spec has before the document is looked at: its path's shape and its value. */
function validate(spec: ModelSpec): void {
  const p = spec.path;
  const codes: string[] = [];
  if (!validPath(p)) fail('INVALID_PATH');
  const last = p[p.length - 1];
  const value = 'value' in spec ? spec.value : undefined;
  const multi = spec.options?.multi === true;
  const valid = !('value' in spec) || isJsonValue(spec.value);
  if (!valid) codes.push('INVALID_VALUE');
  const tooDeep = (depth: () => number): void => {
    if (valid && depth() > MAX_DEPTH) codes.push('VALUE_TOO_DEEP');
  };
  switch (spec.op) {
    case 'insert':
    case 'upsert':
      if (typeof last === 'number') codes.push('INVALID_PATH');
      tooDeep(() => p.length + depthOf(value as JsonValue));
      break;
    case 'replace':
      tooDeep(() => p.length + depthOf(value as JsonValue));
      break;
    case 'arrayAppend':
    case 'arrayPrepend':
    case 'arrayInsert': {
      if (spec.op === 'arrayInsert' && (typeof last !== 'number' || last < 0)) codes.push('INVALID_PATH');
      const elements = multi ? (value as JsonValue[]) : [value as JsonValue];
      const landsAt = spec.op === 'arrayInsert' ? p.length : p.length + 1;
      tooDeep(() => landsAt + elements.reduce<number>((m, e) => Math.max(m, depthOf(e)), 0));
      break;
    }
    case 'arrayAddUnique':
      // The sources say only that addUnique takes one value: a multi spec is refused one way or the other.
      if (multi) codes.push('INVALID_ARGUMENT', 'VALUE_CANNOT_INSERT');
      if (valid && !isPrimitive(value as JsonValue)) codes.push('VALUE_CANNOT_INSERT');
      tooDeep(() => p.length + 2);
      break;
    case 'increment':
    case 'decrement':
      try {
        deltaOf(spec.delta);
      } catch (err) {
        if (!(err instanceof SpecFailure)) throw err;
        codes.push(...err.codes);
      }
      break;
    case 'remove':
      break;
  }
  if (codes.length > 0) fail(...codes);
}

/** Applies one spec to `doc` in place (or returns a new root); returns the spec's result value. */
function applySpec(doc: JsonValue, spec: ModelSpec, createPath: boolean): { doc: JsonValue; value: JsonValue | undefined } {
  const p = spec.path;
  validate(spec);
  const last = p[p.length - 1];
  switch (spec.op) {
    case 'insert':
    case 'upsert': {
      if (p.length === 0) return { doc: clone(spec.value), value: undefined };
      const parent = parentForKey(doc, p, createPath);
      const key = last as string;
      if (spec.op === 'insert' && Object.prototype.hasOwnProperty.call(parent, key)) fail('PATH_EXISTS');
      parent[key] = clone(spec.value);
      return { doc, value: undefined };
    }
    case 'replace':
    case 'remove': {
      const w = walk(doc, p);
      if (w.kind !== 'found') fail(w.kind === 'missing' ? 'PATH_NOT_FOUND' : 'PATH_MISMATCH');
      const parent = w.parent as JsonValue;
      if (Array.isArray(parent)) {
        if (spec.op === 'replace') parent[w.key as number] = clone(spec.value);
        else parent.splice(w.key as number, 1);
      } else if (isObject(parent)) {
        if (spec.op === 'replace') parent[w.key as string] = clone(spec.value);
        else delete parent[w.key as string];
      }
      return { doc, value: undefined };
    }
    case 'arrayAppend':
    case 'arrayPrepend':
    case 'arrayAddUnique': {
      const elements = spec.options?.multi ? (spec.value as JsonValue[]) : [spec.value];
      const w = walk(doc, p);
      if (w.kind === 'mismatch') fail('PATH_MISMATCH');
      if (w.kind === 'missing') {
        if (!createPath || typeof last === 'number') fail('PATH_NOT_FOUND');
        parentForKey(doc, p, createPath)[last] = elements.map((e) => clone(e));
        return { doc, value: undefined };
      }
      const array = w.node;
      if (!Array.isArray(array)) fail('PATH_MISMATCH');
      if (spec.op === 'arrayAddUnique') {
        const firstDuplicate = array.findIndex((e) => isPrimitive(e) && samePrimitive(e, spec.value));
        const firstContainer = array.findIndex((e) => !isPrimitive(e));
        if (firstContainer >= 0 && (firstDuplicate < 0 || firstContainer < firstDuplicate)) fail('PATH_MISMATCH');
        // subjson reports what its scan meets first; whether it goes on after a match is not certain.
        if (firstDuplicate >= 0) fail(...(firstContainer >= 0 ? ['PATH_EXISTS', 'PATH_MISMATCH'] : ['PATH_EXISTS']));
      }
      if (spec.op === 'arrayPrepend') array.unshift(...elements.map((e) => clone(e)));
      else array.push(...elements.map((e) => clone(e)));
      return { doc, value: undefined };
    }
    case 'arrayInsert': {
      const elements = spec.options?.multi ? (spec.value as JsonValue[]) : [spec.value];
      const w = walk(doc, p.slice(0, -1));
      if (w.kind !== 'found') fail(w.kind === 'missing' ? 'PATH_NOT_FOUND' : 'PATH_MISMATCH');
      if (!Array.isArray(w.node)) fail('PATH_MISMATCH');
      const at = last as number;
      if (at > w.node.length) fail('PATH_NOT_FOUND');
      w.node.splice(at, 0, ...elements.map((e) => clone(e)));
      return { doc, value: undefined };
    }
    case 'increment':
    case 'decrement': {
      const delta = deltaOf(spec.delta) * (spec.op === 'decrement' ? -1n : 1n);
      const w = walk(doc, p);
      if (w.kind === 'mismatch') fail('PATH_MISMATCH');
      if (w.kind === 'missing') {
        if (typeof last === 'number') fail('PATH_NOT_FOUND');
        const created = asStoredInteger(delta);
        parentForKey(doc, p, createPath)[last] = created;
        return { doc, value: created };
      }
      const current = toInt(w.node);
      if (current === undefined) fail('PATH_MISMATCH');
      if (current < INT64_MIN || current > INT64_MAX) fail('NUMBER_TOO_BIG');
      const next = current + delta;
      if (next < INT64_MIN || next > INT64_MAX) fail('VALUE_CANNOT_INSERT');
      const stored = asStoredInteger(next);
      if (Array.isArray(w.parent)) w.parent[w.key as number] = stored;
      else if (isObject(w.parent)) w.parent[w.key as string] = stored;
      else return { doc: stored, value: stored };
      return { doc, value: stored };
    }
  }
}

/**
 * Errors of the call as a whole, found before any spec runs: the server's validator (EINVAL /
 * INVALID_COMBO for the whole request) and the SDK's argument checks.
 */
function callErrors(specs: readonly ModelSpec[], storeSemantics: 'replace' | 'upsert' | 'insert'): string | undefined {
  if (specs.length === 0 || specs.length > MAX_SPECS) return 'INVALID_ARGUMENT';
  for (let i = 0; i < specs.length; i++) {
    const s = specs[i];
    const empty = s.path.length === 0;
    if (empty && ['insert', 'replace', 'arrayInsert', 'increment', 'decrement'].includes(s.op)) return 'INVALID_ARGUMENT';
    if (s.options?.createPath && ['replace', 'remove', 'arrayInsert'].includes(s.op)) return 'INVALID_ARGUMENT';
    if ((s.op === 'arrayAppend' || s.op === 'arrayPrepend' || s.op === 'arrayInsert') && s.options?.multi) {
      if (!Array.isArray(s.value) || s.value.length === 0) return 'INVALID_ARGUMENT';
    }
    if (storeSemantics === 'upsert' && ['replace', 'remove', 'arrayInsert'].includes(s.op)) return 'INVALID_ARGUMENT';
    if (storeSemantics === 'insert' && s.op === 'remove') return 'INVALID_ARGUMENT';
    // A whole-document remove ends the document: nothing may follow it.
    if (s.op === 'remove' && empty && i !== specs.length - 1) return 'INVALID_ARGUMENT';
  }
  return undefined;
}

/** The root a missing document is created with: an array when the first spec addresses one. */
export function newDocumentRoot(first: ModelSpec): JsonValue {
  const arrayOp = first.op === 'arrayAppend' || first.op === 'arrayPrepend' || first.op === 'arrayAddUnique';
  if ((arrayOp && first.path.length === 0) || typeof first.path[0] === 'number') return [];
  return {};
}

/**
 * The outcome of `mutateIn(specs)` on `doc` (`undefined`: no such document): all specs apply in order
 * on the evolving document, or the first failure is reported and nothing changes.
 */
export function mutateIn(
  doc: JsonValue | undefined,
  specs: readonly ModelSpec[],
  options: { storeSemantics?: 'replace' | 'upsert' | 'insert' } = {},
): ModelOutcome {
  const semantics = options.storeSemantics ?? 'replace';
  const callError = callErrors(specs, semantics);
  if (callError) return { ok: false, codes: [callError], specIndex: undefined };
  if (doc === undefined && semantics === 'replace') return { ok: false, codes: ['DOCUMENT_NOT_FOUND'], specIndex: undefined };
  if (doc !== undefined && semantics === 'insert') return { ok: false, codes: ['DOCUMENT_EXISTS'], specIndex: undefined };
  let working: JsonValue | undefined = doc === undefined ? newDocumentRoot(specs[0]) : clone(doc);
  const createPathForAll = semantics !== 'replace';
  const values: (JsonValue | undefined)[] = [];
  for (let i = 0; i < specs.length; i++) {
    const spec = specs[i];
    if (spec.op === 'remove' && spec.path.length === 0) {
      working = undefined;
      values.push(undefined);
      continue;
    }
    try {
      const result = applySpec(working as JsonValue, spec, createPathForAll || spec.options?.createPath === true);
      working = result.doc;
      values.push(result.value);
    } catch (err) {
      if (err instanceof SpecFailure) return { ok: false, codes: err.codes, specIndex: i };
      throw err;
    }
  }
  return { ok: true, doc: working, values };
}

/** Every path in `doc` that leads to a value, the root (`[]`) first, parents before children. */
export function allPaths(doc: JsonValue, prefix: PathElement[] = []): PathElement[][] {
  const out: PathElement[][] = [prefix];
  if (Array.isArray(doc)) doc.forEach((e, i) => out.push(...allPaths(e, [...prefix, i])));
  else if (isObject(doc)) for (const [k, e] of Object.entries(doc)) out.push(...allPaths(e, [...prefix, k]));
  return out;
}

/**
 * A path in Couchbase's string syntax as the layer documents it: keys that are empty or contain `.`,
 * `[`, `]` or a backtick are backtick-quoted, with backticks doubled.
 */
export function pathString(path: readonly PathElement[]): string {
  let out = '';
  path.forEach((e, i) => {
    if (typeof e === 'number') {
      out += `[${e}]`;
      return;
    }
    const key = e === '' || /[.[\]`]/.test(e) ? '`' + e.replace(/`/g, '``') + '`' : e;
    out += i === 0 ? key : `.${key}`;
  });
  return out;
}
