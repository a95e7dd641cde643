import { DocumentError } from '../errors';
import { formatPath, loneSurrogateIndex } from './path';
import type { JsonValue, PathElement } from '../types';

/**
 * Deepest value a document holds, as Couchbase counts depth: a scalar or an empty container is 1 and
 * each level of nesting adds 1. The components of the path a value is written at plus the value's own
 * depth must not exceed it (that check, which needs the path, is the caller's).
 */
export const MAX_DEPTH = 32;

/**
 * Asserts that `value` is a JSON value the document layer stores exactly as given, so that what is
 * read back equals what was written. Beyond what `JSON.stringify` accepts:
 *
 * - accepted: `null`, booleans, strings, finite numbers, `bigint` (integers beyond 2^53), arrays and
 *   plain objects (prototype `Object.prototype` or `null`). `-0` is accepted and left as it is (JSON
 *   text has no -0; whether it survives storage is the encoding's business). The same object may
 *   appear more than once (it is stored as copies).
 * - rejected rather than silently changed or dropped, as `JSON.stringify` would: `undefined`,
 *   functions, symbols, `NaN` and `±Infinity`, objects of any other class (`Date`, `Map`, `Set`,
 *   `RegExp`, `Buffer` and typed arrays, boxed primitives, class instances), arrays with holes, objects
 *   with enumerable symbol keys, and strings or keys with a lone UTF-16 surrogate (UTF-8 cannot hold
 *   one).
 * - ignored, as by `JSON.stringify`: non-enumerable properties, and properties of arrays other than
 *   their elements `0..length-1`.
 *
 * The walk is iterative and stops at the first problem, so a 100,000-deep value fails with
 * VALUE_TOO_DEEP rather than overflowing the stack.
 *
 * @param what names the value in messages, e.g. `'the value of spec 2'`.
 * @throws DocumentError INVALID_VALUE for the first value not accepted, or for a cycle; the message and
 *   `path` give where it is (`INVALID_VALUE: undefined at a.b[2]`).
 * @throws DocumentError VALUE_TOO_DEEP when the value's depth exceeds {@link MAX_DEPTH}.
 */
export function assertJsonValue(value: unknown, what?: string): asserts value is JsonValue {
  walk(value, MAX_DEPTH, what);
}

/**
 * The depth of `value`: a scalar or an empty container is 1, each level of nesting adds 1 (`5` and
 * `{}` are 1, `[3, 4]` is 2, `[[5]]` is 3). Any depth is measured, without recursion.
 *
 * @throws DocumentError INVALID_VALUE when `value` is not in fact a JSON value (see
 *   {@link assertJsonValue}); typed callers pass values that are.
 */
export function valueDepth(value: JsonValue): number {
  return walk(value, Infinity, undefined);
}

/** A native scan, so that the common case (no surrogates at all) skips the pairing check. */
const ANY_SURROGATE = /[\ud800-\udfff]/;

/** True when `s` holds a lone UTF-16 surrogate, which UTF-8 cannot hold. */
export function hasLoneSurrogate(s: string): boolean {
  return ANY_SURROGATE.test(s) && loneSurrogateIndex(s) >= 0;
}

/** A container being walked: its children and the index of the next one. */
interface Frame {
  readonly container: object;
  readonly array: readonly unknown[] | undefined;
  readonly object: Readonly<Record<string, unknown>> | undefined;
  readonly keys: readonly string[] | undefined;
  readonly size: number;
  next: number;
}

const NO_FRAMES: readonly Frame[] = [];

/**
 * Validates `root` depth-first with an explicit stack; returns its depth. The depth of a value is the
 * greatest nesting level of any node in it (the root is at level 1), which needs no post-order pass.
 * A cycle is a container that is its own ancestor: the stack's containers are kept in a set.
 */
function walk(root: unknown, maxDepth: number, what: string | undefined): number {
  // A scalar (a pushed number, a counter's value) needs no stack and no set.
  const rootFrame = enter(root, NO_FRAMES, what);
  if (rootFrame === undefined) return 1;
  const stack: Frame[] = [];
  const ancestors = new Set<object>();
  stack.push(rootFrame);
  ancestors.add(rootFrame.container);
  let depth = 1;
  while (stack.length > 0) {
    const top = stack[stack.length - 1];
    if (top.next === top.size) {
      stack.pop();
      ancestors.delete(top.container);
      continue;
    }
    const i = top.next++;
    let child: unknown;
    if (top.array) {
      if (!(i in top.array)) throw invalidValue('an array hole (a missing element)', stack, what);
      child = top.array[i];
    } else {
      child = (top.object as Readonly<Record<string, unknown>>)[(top.keys as readonly string[])[i]];
    }
    const level = stack.length + 1;
    if (level > depth) {
      depth = level;
      if (depth > maxDepth) {
        throw new DocumentError('VALUE_TOO_DEEP', `deeper than ${maxDepth} levels at ${where(stack)}${inWhat(what)}`, { path: pathString(stack) });
      }
    }
    const frame = enter(child, stack, what);
    if (frame === undefined) continue;
    if (ancestors.has(frame.container)) throw invalidValue('a cycle (a container inside itself)', stack, what);
    stack.push(frame);
    ancestors.add(frame.container);
  }
  return depth;
}

/**
 * Checks one value found at the path the stack describes: a frame for a container to walk into, or
 * `undefined` for a valid scalar.
 */
function enter(value: unknown, stack: readonly Frame[], what: string | undefined): Frame | undefined {
  switch (typeof value) {
    case 'string':
      if (hasLoneSurrogate(value)) throw invalidValue('a string with a lone UTF-16 surrogate', stack, what);
      return undefined;
    case 'boolean':
    case 'bigint':
      return undefined;
    case 'number':
      if (!Number.isFinite(value)) throw invalidValue(String(value), stack, what);
      return undefined;
    case 'undefined':
      throw invalidValue('undefined', stack, what);
    case 'function':
      throw invalidValue('a function', stack, what);
    case 'symbol':
      throw invalidValue('a symbol', stack, what);
    case 'object':
      break;
  }
  if (value === null) return undefined;
  const container = value;
  if (Array.isArray(container)) {
    const array = container as readonly unknown[];
    return { container, array, object: undefined, keys: undefined, size: array.length, next: 0 };
  }
  const proto: unknown = Object.getPrototypeOf(container);
  if (proto !== Object.prototype && proto !== null) {
    throw invalidValue(`an object of class ${className(container)} (only plain objects and arrays are JSON)`, stack, what);
  }
  const object = container as Readonly<Record<string, unknown>>;
  for (const symbol of Object.getOwnPropertySymbols(object)) {
    if (Object.prototype.propertyIsEnumerable.call(object, symbol)) {
      throw invalidValue(`an object with a symbol key (${String(symbol)})`, stack, what);
    }
  }
  const keys = Object.keys(object);
  for (const key of keys) {
    if (hasLoneSurrogate(key)) throw invalidValue(`an object key with a lone UTF-16 surrogate (${JSON.stringify(key)})`, stack, what);
  }
  return { container, array: undefined, object, keys, size: keys.length, next: 0 };
}

function className(value: object): string {
  const ctor: unknown = (value as { constructor?: unknown }).constructor;
  return typeof ctor === 'function' && ctor.name ? ctor.name : 'unknown';
}

/** The path to the value being looked at: each frame's current child. */
function pathElements(stack: readonly Frame[]): PathElement[] {
  return stack.map((frame) => (frame.keys ? frame.keys[frame.next - 1] : frame.next - 1));
}

function pathString(stack: readonly Frame[]): string {
  return formatPath(pathElements(stack));
}

function where(stack: readonly Frame[]): string {
  return stack.length === 0 ? 'the root' : pathString(stack);
}

function inWhat(what: string | undefined): string {
  return what === undefined ? '' : ` in ${what}`;
}

function invalidValue(description: string, stack: readonly Frame[], what: string | undefined): DocumentError {
  return new DocumentError('INVALID_VALUE', `${description} at ${where(stack)}${inWhat(what)}`, {
    path: pathString(stack),
  });
}
