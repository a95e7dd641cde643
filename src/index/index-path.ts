import { DocumentError, isDocumentError } from '../document/errors';
import type { JsonValue, PathElement } from '../document/types';
import { formatPath, parsePath } from '../document/values/path';
import { MISSING, type IndexValue } from '../filter/value-order';

/**
 * Paths of index fields: dotted object keys as the document API takes them (`customer.city`, with
 * backticks for keys holding dots), plus `[*]` after a key: every element of the array there
 * (`items[*].sku`). Array indices (`tags[0]`) are not index paths.
 *
 * What a path gives for one document (the contract of docs/indexes.md):
 * - A key on an object takes its member, MISSING when absent; on a scalar, MISSING. On an array it
 *   stops: the value is that array as one value (so a plain path never traverses arrays).
 * - `[*]` on an array fans out over its elements (an empty array gives the one value `[]`); on any
 *   other value it is that value, as a one-element array would give it.
 */

/** The `[*]` component. */
export const STAR: unique symbol = Symbol('[*]');
export type IndexPathComponent = string | typeof STAR;

/** A parsed index path: its components and its canonical text. */
export interface IndexPath {
  readonly text: string;
  readonly components: readonly IndexPathComponent[];
  /** True when it has a `[*]`. */
  readonly multikey: boolean;
}

const STAR_TEXT = '[*]';

/**
 * Parses an index path. `allowStar` is false for `include` paths (one value per document).
 *
 * @throws DocumentError INVALID_INDEX naming the path: not a string, empty, bad syntax, an array index,
 *   `[*]` where it is not allowed.
 */
export function parseIndexPath(path: unknown, what: string, allowStar = true): IndexPath {
  if (typeof path !== 'string' || path.length === 0) {
    throw new DocumentError('INVALID_INDEX', `${what}: a path is a non-empty string, got ${JSON.stringify(path) ?? typeof path}`);
  }
  const components: IndexPathComponent[] = [];
  const pieces = path.split(STAR_TEXT);
  pieces.forEach((piece, i) => {
    let text = piece;
    if (i > 0) {
      if (text.startsWith('.')) text = text.slice(1);
      else if (text.length > 0) throw invalid(what, path, `after [*] comes '.', '[*]' or the end`);
    }
    if (text.length > 0 || i === 0) {
      let elements: PathElement[];
      try {
        elements = parsePath(text);
      } catch (err) {
        if (!isDocumentError(err)) throw err;
        throw invalid(what, path, err.message.replace(/^INVALID_PATH: /, ''));
      }
      if (elements.length === 0) throw invalid(what, path, 'a path starts with a key');
      for (const element of elements) {
        if (typeof element !== 'string') throw invalid(what, path, 'array indices are not index paths (use [*] for every element)');
        components.push(element);
      }
    }
    if (i < pieces.length - 1) {
      if (!allowStar) throw invalid(what, path, '[*] is not allowed here');
      components.push(STAR);
    }
  });
  const text = components.map((c, i) => (c === STAR ? STAR_TEXT : i > 0 ? `.${fmt(c)}` : fmt(c))).join('');
  return { text, components, multikey: components.includes(STAR) };
}

function fmt(key: string): string {
  return formatPath([key]);
}

function invalid(what: string, path: string, why: string): DocumentError {
  return new DocumentError('INVALID_INDEX', `${what}: invalid index path ${JSON.stringify(path)}: ${why}`);
}

/** The values `path` gives for `doc` (one value unless it has `[*]`), MISSING for an absent document part. */
export function valuesAt(doc: JsonValue, path: IndexPath): IndexValue[] {
  let current: { value: IndexValue; done: boolean }[] = [{ value: doc, done: false }];
  for (const component of path.components) {
    const next: { value: IndexValue; done: boolean }[] = [];
    for (const item of current) {
      if (item.done) {
        next.push(item);
        continue;
      }
      const value = item.value;
      if (component === STAR) {
        if (Array.isArray(value)) {
          if (value.length === 0) next.push({ value, done: true });
          else for (const element of value) next.push({ value: element, done: false });
        } else {
          next.push(item);
        }
        continue;
      }
      if (Array.isArray(value)) next.push({ value, done: true });
      else if (value !== null && typeof value === 'object') {
        const member = Object.prototype.hasOwnProperty.call(value, component) ? (value as Record<string, JsonValue>)[component] : undefined;
        next.push({ value: member === undefined ? MISSING : member, done: member === undefined });
      } else next.push({ value: MISSING, done: true });
    }
    current = next;
  }
  return current.map((item) => item.value);
}

/**
 * Whether a write at `written` (a document path as mutateIn names it: keys and array indices) may
 * change what `path` gives. Conservative: true unless the two paths provably part at two different
 * keys of one object.
 */
export function pathTouches(path: IndexPath, written: readonly PathElement[]): boolean {
  const n = Math.min(path.components.length, written.length);
  for (let i = 0; i < n; i++) {
    const c = path.components[i];
    const w = written[i];
    if (typeof c === 'string') {
      if (typeof w === 'string') {
        if (c !== w) return false;
        continue;
      }
      // An index into an array where the path has a key: the path's value is that whole array.
      return true;
    }
    // [*] on an object is the object itself, whose every member the rest of the path may name.
    if (typeof w === 'string') return true;
  }
  return true;
}
