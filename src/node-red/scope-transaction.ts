import type { Collection } from '../collection';
import { isDocumentError, MutateInSpec, type JsonValue, type PathElement } from '../document';
import type { Transaction } from '../kv/contract/types';
import type { Versionstamp } from '../tuple';
import type { ContextLayout } from './context-layout';
import { fromStoredJson, toContextJson } from './context-json';
import { isContextStoreError } from './errors';
import { readProperty, writeProperty } from './object-property';
import { parsePropertyExpression, resolveExpression } from './property-expression';

/** A key's document and the path inside it, when every part below the root key is an object key. */
export interface DocumentTarget {
  readonly rootKey: string;
  readonly id: string;
  readonly path: string[];
}

/** The key's value is missing (the memory store reads `undefined`). */
export function isMissing(err: unknown): boolean {
  return isDocumentError(err, 'DOCUMENT_NOT_FOUND') || isDocumentError(err, 'PATH_NOT_FOUND');
}

/**
 * The document layer could not follow the path as JSON (a number part on an object, a key on an
 * array or a string): JavaScript's rules decide what the key means there.
 */
export function needsJavaScript(err: unknown): boolean {
  return isDocumentError(err, 'PATH_MISMATCH') || isDocumentError(err, 'INVALID_PATH');
}

/**
 * Reads and writes of one scope's keys inside one transaction attempt, with the meaning the memory
 * store gives them (`object-property.ts`), at the cost of sub-document operations:
 *
 * - A read of `a.b[0]` is one sub-document read of `b[0]` in the document of `a`.
 * - A write of `a.b.c` (object keys only) is one sub-document upsert that creates missing parents as
 *   objects, as Node-RED does; a delete is one sub-document remove.
 * - A write whose path has a number part (`a.list[3]`) reads the value above the first number part
 *   (`a.list`), applies Node-RED's rules to it, and writes it back.
 * - Where the document layer reports that the path does not fit the value (`a.length` of an array, a
 *   number part on an object), the whole document is read and Node-RED's rules decide.
 *
 * Writes note when a document comes into existence or goes ({@link writing}); {@link finish} brings
 * the key index up to date. Create one per attempt.
 */
export class ScopeTransaction {
  /** Root keys written: whether each document exists now, and when it last came into existence. */
  private readonly roots = new Map<string, { created: Versionstamp | undefined; present: boolean; createdAt?: number }>();
  private creations = 0;

  constructor(
    private readonly layout: ContextLayout,
    readonly tr: Transaction,
    readonly scope: string,
  ) {}

  get collection(): Collection {
    return this.layout.collection;
  }

  /**
   * The parts of `key` with embedded `[msg.x]` references resolved against this scope.
   *
   * @throws ContextStoreError INVALID_EXPR as Node-RED's parser throws it
   */
  resolve(key: string): Promise<unknown[]> {
    return resolveExpression(parsePropertyExpression(key), (expression) => this.lookUp(expression));
  }

  /** The document and path of a key whose parts below the root are all object keys. */
  target(parts: readonly unknown[]): DocumentTarget | undefined {
    const rest = parts.slice(1);
    if (!rest.every((part): part is string => typeof part === 'string')) return undefined;
    const rootKey = String(parts[0]);
    return { rootKey, id: this.layout.docId(this.scope, rootKey), path: rest };
  }

  /**
   * Runs `write`, a write of `rootKey`'s document (`removes`: one that may remove the whole
   * document), noting whether it creates or removes the document, so that {@link finish} can index
   * keys in the order they came into existence. Whether the key exists is read from the key index
   * before the first write (one point read, which conflicts only with transactions that create or
   * remove the key: two sets of an existing key do not conflict), and from the document after a write
   * that may have changed it.
   */
  async writing<T>(rootKey: string, write: () => Promise<T>, removes = false): Promise<T> {
    let root = this.roots.get(rootKey);
    if (root === undefined) {
      const created = await this.layout.index.created(this.tr, this.scope, rootKey);
      root = { created, present: created !== undefined };
      this.roots.set(rootKey, root);
    }
    const result = await write();
    if (!root.present || removes) {
      const present = await this.collection.exists(this.layout.docId(this.scope, rootKey), { tr: this.tr });
      if (present && !root.present) root.createdAt = this.creations++;
      root.present = present;
    }
    return result;
  }

  /** The scope's root keys in the order they were created. */
  rootKeys(): Promise<string[]> {
    return this.layout.index.inOrder(this.tr, this.scope);
  }

  /** The value at the key with these parts, as the memory store's `get` returns it. */
  async read(parts: readonly unknown[]): Promise<unknown> {
    const rootKey = String(parts[0]);
    if (parts.length === 1) return this.rootValue(rootKey);
    const path = documentPath(parts.slice(1));
    if (path !== undefined) {
      try {
        return fromStoredJson((await this.collection.get(this.layout.docId(this.scope, rootKey), path, { tr: this.tr })).content);
      } catch (err) {
        if (isMissing(err)) return undefined;
        if (!needsJavaScript(err)) throw err;
      }
    }
    return readOrUndefined(await this.holder(rootKey), parts);
  }

  /**
   * Sets the key to `value` (a JSON value; `undefined` deletes it) as the memory store's `set` does.
   * Returns whether the write reached its target: false when a parent is a string, number, boolean or
   * null, where Node-RED silently does nothing.
   *
   * @throws TypeError where Node-RED's `setObjectProperty` throws; DocumentError for what the document
   *   layer cannot store (VALUE_TOO_DEEP, DOCUMENT_TOO_LARGE, KEY_TOO_LARGE, INVALID_VALUE).
   */
  async write(parts: readonly unknown[], value: JsonValue | undefined): Promise<boolean> {
    return this.writing(String(parts[0]), () => this.writeParts(parts, value), parts.length === 1 && value === undefined);
  }

  /**
   * Brings the key index up to date with the documents written: a key that came into existence is
   * indexed (at the end, if it existed before and was deleted and set again, as in a JavaScript
   * object), one that is gone is removed. Writes only; call once, before commit.
   */
  finish(): void {
    const { index } = this.layout;
    const roots = [...this.roots].sort(([, a], [, b]) => (a.createdAt ?? -1) - (b.createdAt ?? -1));
    let userVersion = 0;
    for (const [rootKey, { created, present, createdAt }] of roots) {
      if (created !== undefined && (!present || createdAt !== undefined)) index.remove(this.tr, this.scope, rootKey, created);
      if (present && createdAt !== undefined) index.add(this.tr, this.scope, rootKey, userVersion++);
    }
  }

  private async writeParts(parts: readonly unknown[], value: JsonValue | undefined): Promise<boolean> {
    const rootKey = String(parts[0]);
    const id = this.layout.docId(this.scope, rootKey);
    const rest = parts.slice(1);
    if (rest.length === 0) {
      if (value === undefined) {
        try {
          await this.collection.remove(id, { tr: this.tr });
        } catch (err) {
          if (!isDocumentError(err, 'DOCUMENT_NOT_FOUND')) throw err;
        }
      } else {
        await this.collection.upsert(id, value, { tr: this.tr });
      }
      return true;
    }
    const target = this.target(parts);
    if (target !== undefined) {
      const spec = value === undefined ? MutateInSpec.remove(target.path) : MutateInSpec.upsert(target.path, value, { createPath: true });
      try {
        await this.collection.mutateIn(id, [spec], { tr: this.tr, storeSemantics: value === undefined ? 'replace' : 'upsert' });
        return true;
      } catch (err) {
        if (isMissing(err)) return false;
        if (!needsJavaScript(err)) throw err;
        return this.writeBelow(rootKey, [], rest, value);
      }
    }
    const anchor = rest.findIndex((part) => typeof part !== 'string');
    return this.writeBelow(rootKey, rest.slice(0, anchor) as string[], rest.slice(anchor), value);
  }

  /**
   * Writes by Node-RED's rules below the value at `anchor` (object keys under the root key): reads
   * that value, applies the write to it in memory and writes it back. An anchor the document cannot
   * reach as JSON falls back to the whole document.
   */
  private async writeBelow(rootKey: string, anchor: string[], tail: readonly unknown[], value: JsonValue | undefined): Promise<boolean> {
    const id = this.layout.docId(this.scope, rootKey);
    let current: JsonValue | undefined;
    if (anchor.length === 0) {
      current = await this.rootValue(rootKey);
    } else {
      try {
        current = fromStoredJson((await this.collection.get(id, anchor, { tr: this.tr })).content);
      } catch (err) {
        if (needsJavaScript(err)) return this.writeBelow(rootKey, [], [...anchor, ...tail], value);
        if (!isMissing(err)) throw err;
      }
    }
    // `v` stands for the anchor in its parent: the walk from the parent follows Node-RED's rules.
    const holder: Record<string, unknown> = {};
    if (current !== undefined) holder.v = current;
    const before = JSON.stringify(current);
    const reached = writeProperty(holder, ['v', ...tail], value);
    // Node-RED keeps the parents it created before a write gives up (rare: `length` of a new array).
    if (!reached && JSON.stringify(holder.v) === before) return false;
    const next = toContextJson(holder.v);
    if (next === undefined) return false;
    if (anchor.length === 0) {
      await this.collection.upsert(id, next, { tr: this.tr });
    } else {
      await this.collection.mutateIn(id, [MutateInSpec.upsert(anchor, next, { createPath: true })], {
        tr: this.tr,
        storeSemantics: 'upsert',
      });
    }
    return reached;
  }

  /** The whole value of a root key, or `undefined`. One range read. */
  private async rootValue(rootKey: string): Promise<JsonValue | undefined> {
    try {
      return fromStoredJson((await this.collection.get(this.layout.docId(this.scope, rootKey), { tr: this.tr })).content);
    } catch (err) {
      if (isDocumentError(err, 'DOCUMENT_NOT_FOUND')) return undefined;
      throw err;
    }
  }

  /** The scope's data as far as a walk from `root` needs it: an object with that one key, if set. */
  private async holder(root: unknown): Promise<object> {
    const rootKey = String(root);
    const holder = {};
    const value = await this.rootValue(rootKey);
    if (value !== undefined) Object.defineProperty(holder, rootKey, { value, enumerable: true, writable: true, configurable: true });
    return holder;
  }

  /** The value an embedded `[msg.x]` names, or `undefined` where Node-RED's lookup throws. */
  private async lookUp(expression: string): Promise<unknown> {
    const inner = expression.startsWith('msg.') ? expression.substring(4) : expression;
    let parts: unknown[];
    try {
      parts = await this.resolve(inner);
    } catch (err) {
      if (isContextStoreError(err, 'INVALID_EXPR')) return undefined;
      throw err;
    }
    return readOrUndefined(await this.holder(parts[0]), parts);
  }
}

/** `readProperty`, with `undefined` for a missing parent, as the memory store reads. */
function readOrUndefined(holder: object, parts: readonly unknown[]): unknown {
  try {
    return readProperty(holder, parts);
  } catch {
    return undefined;
  }
}

/** The parts below the root as a document path, when the document layer can follow them as JSON. */
function documentPath(rest: readonly unknown[]): PathElement[] | undefined {
  const path: PathElement[] = [];
  for (const part of rest) {
    if (typeof part === 'string' || (typeof part === 'number' && Number.isSafeInteger(part) && part >= 0)) path.push(part);
    else return undefined;
  }
  return path;
}
