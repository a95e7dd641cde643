/**
 * `compileFilter`: checks a MongoDB-style filter document and turns it into a {@link FilterNode} tree
 * that matches documents and that the query planner reads. Every operator is checked when the filter
 * is compiled, before anything is read: an operator outside the supported set is UNSUPPORTED_OPERATOR
 * (never ignored), a malformed operand is INVALID_FILTER.
 *
 * Supported: `$eq $ne $gt $gte $lt $lte $in $nin $exists $and $or $nor $not $elemMatch $all $size`
 * with MongoDB's semantics, and `$prefix` (doclayer's own): the value is a string starting with the
 * operand, as MongoDB's anchored `{$regex: '^...'}` on a literal prefix. See docs/queries.md.
 */
import { DocumentError } from '../document/errors';
import type { JsonValue } from '../document/types';
import { assertJsonValue } from '../document/values/json-value';
import type { ElementMatch, ElementTest, Filter, FilterNode, ValueTest } from './filter-tree';
import { matchesNode } from './match';

/** A checked filter. */
export interface CompiledFilter {
  /** The filter as given. */
  readonly source: Filter;
  /** The checked tree: what {@link CompiledFilter.matches} evaluates and the planner reads. */
  readonly root: FilterNode;
  /** True when `doc` matches the filter. Pure: reads nothing but `doc`. */
  matches(doc: JsonValue): boolean;
}

const LOGICAL = new Set(['$and', '$or', '$nor']);

/** Operators that test the value at a path, with the function that checks each one's operand. */
const PATH_OPERATORS = new Set([
  '$eq',
  '$ne',
  '$gt',
  '$gte',
  '$lt',
  '$lte',
  '$in',
  '$nin',
  '$exists',
  '$not',
  '$elemMatch',
  '$all',
  '$size',
  '$prefix',
]);

/**
 * Checks `filter` and compiles it. `{}` matches every document.
 *
 * @throws DocumentError INVALID_FILTER for a filter that is not a plain object, a malformed path, an
 *   operand of the wrong type (`$in` without an array, `$size` that is not a non-negative integer,
 *   `$and` with an empty array, ...), a value that is not JSON, or an object mixing operators and keys.
 * @throws DocumentError UNSUPPORTED_OPERATOR for any `$`-operator outside the supported set (`$regex`,
 *   `$where`, `$expr`, `$type`, ...), naming it and where it was.
 */
export function compileFilter(filter: unknown): CompiledFilter {
  const root = parseDocumentFilter(filter, 'the filter');
  return {
    source: filter as Filter,
    root,
    matches: (doc) => matchesNode(root, doc),
  };
}

function parseDocumentFilter(filter: unknown, where: string): FilterNode {
  if (!isPlainObject(filter)) throw invalid(`${where} must be an object, got ${describe(filter)}`);
  const children: FilterNode[] = [];
  for (const [key, value] of Object.entries(filter)) {
    if (key.startsWith('$')) {
      if (!LOGICAL.has(key)) throw unsupported(key, where);
      children.push(parseLogical(key, value, where));
    } else {
      children.push(parseField(key, value));
    }
  }
  return conjunction(children);
}

function parseLogical(op: string, value: unknown, where: string): FilterNode {
  if (!Array.isArray(value) || value.length === 0) {
    throw invalid(`${op} in ${where} takes a non-empty array of filters, got ${describe(value)}`);
  }
  const children = value.map((f, i) => parseDocumentFilter(f, `${op}[${i}]`));
  if (op === '$and') return conjunction(children);
  const or: FilterNode = children.length === 1 ? children[0] : { kind: 'or', children };
  return op === '$or' ? or : { kind: 'not', child: or };
}

function parseField(path: string, value: unknown): FilterNode {
  const parts = parsePathParts(path);
  if (isOperatorObject(value, path)) {
    return conjunction(Object.entries(value).map(([op, operand]) => parseOperator(path, parts, op, operand)));
  }
  return pathNode(path, parts, { op: '$eq', value: jsonOperand(value, path, 'the value') });
}

function parseOperator(path: string, parts: readonly string[], op: string, operand: unknown): FilterNode {
  const node = (test: ValueTest): FilterNode => pathNode(path, parts, test);
  switch (op) {
    case '$eq':
    case '$gt':
    case '$gte':
    case '$lt':
    case '$lte':
      return node({ op, value: jsonOperand(operand, path, op) });
    case '$ne':
      return not(node({ op: '$eq', value: jsonOperand(operand, path, op) }));
    case '$in':
      return node({ op: '$in', values: listOperand(operand, path, op) });
    case '$nin':
      return not(node({ op: '$in', values: listOperand(operand, path, op) }));
    case '$exists':
      return existsOperand(operand, path) ? node({ op: '$exists' }) : not(node({ op: '$exists' }));
    case '$prefix':
      return node({ op: '$prefix', prefix: prefixOperand(operand, path) });
    case '$size':
      return node({ op: '$size', size: sizeOperand(operand, path) });
    case '$elemMatch':
      return node({ op: '$elemMatch', element: elementMatch(operand, path) });
    case '$all': {
      const items = allOperand(operand, path);
      return items.length === 0 ? { kind: 'false' } : conjunction(items.map(node));
    }
    case '$not': {
      if (!isOperatorObject(operand, path)) {
        throw invalid(`$not at "${path}" takes an object of operators, e.g. {$not: {$gt: 5}}, got ${describe(operand)}`, path);
      }
      return not(conjunction(Object.entries(operand).map(([o, x]) => parseOperator(path, parts, o, x))));
    }
    default:
      throw unsupported(op, `"${path}"`, path);
  }
}

/** `$elemMatch`'s operand: operators on the element itself, or a filter on the element as a document. */
function elementMatch(operand: unknown, path: string): ElementMatch {
  if (!isPlainObject(operand)) throw invalid(`$elemMatch at "${path}" takes an object, got ${describe(operand)}`, path);
  const keys = Object.keys(operand);
  if (keys.length > 0 && keys[0].startsWith('$') && !LOGICAL.has(keys[0])) {
    return { kind: 'value', test: elementTests(operand, path) };
  }
  return { kind: 'document', filter: parseDocumentFilter(operand, `$elemMatch at "${path}"`) };
}

function elementTests(operators: { [key: string]: unknown }, path: string): ElementTest {
  const children = Object.entries(operators).map(([op, operand]) => elementTest(op, operand, path));
  return children.length === 1 ? children[0] : { kind: 'and', children };
}

function elementTest(op: string, operand: unknown, path: string): ElementTest {
  if (!op.startsWith('$')) {
    throw invalid(`$elemMatch at "${path}" mixes operators and keys ("${op}"); use one form`, path);
  }
  if (!PATH_OPERATORS.has(op)) throw unsupported(op, `$elemMatch at "${path}"`, path);
  if (op === '$not') {
    if (!isOperatorObject(operand, path)) {
      throw invalid(`$not at "${path}" takes an object of operators, got ${describe(operand)}`, path);
    }
    return { kind: 'not', child: elementTests(operand, path) };
  }
  // Every other operator parses as on a path; its single-value tests apply to the element.
  return fromNode(parseOperator(path, [], op, operand));
}

/** The element-test form of a node `parseOperator` made for the empty path. */
function fromNode(node: FilterNode): ElementTest {
  switch (node.kind) {
    case 'path':
      return { kind: 'test', test: node.test };
    case 'not':
      return { kind: 'not', child: fromNode(node.child) };
    case 'and':
      return { kind: 'and', children: node.children.map(fromNode) };
    case 'true':
      return { kind: 'and', children: [] };
    case 'false':
      return { kind: 'not', child: { kind: 'and', children: [] } };
    case 'or':
      throw new DocumentError('INVALID_FILTER', 'INVALID_FILTER: $or inside $elemMatch value tests');
  }
}

function parsePathParts(path: string): string[] {
  const parts = path.split('.');
  if (parts.some((p) => p === '')) {
    throw invalid(`"${path}" is not a valid path: components are separated by single dots and are not empty`, path);
  }
  if (parts.some((p) => p.startsWith('$'))) {
    throw invalid(`"${path}" is not a valid path: a component may not start with "$"`, path);
  }
  return parts;
}

function jsonOperand(operand: unknown, path: string, op: string): JsonValue {
  if (operand instanceof RegExp) {
    throw new DocumentError('UNSUPPORTED_OPERATOR', `regular expressions are not supported (${op} at "${path}"); use $prefix for a prefix match`, {
      path,
    });
  }
  try {
    assertJsonValue(operand, `${op} at "${path}"`);
  } catch (err) {
    if (err instanceof DocumentError) throw invalid(err.message.replace(/^[A-Z_]+: /, ''), path);
    throw err;
  }
  if (isPlainObject(operand) && Object.keys(operand).some((k) => k.startsWith('$'))) {
    throw invalid(`${op} at "${path}" takes a value, not operators (${Object.keys(operand).join(', ')})`, path);
  }
  return operand;
}

function listOperand(operand: unknown, path: string, op: string): JsonValue[] {
  if (!Array.isArray(operand)) throw invalid(`${op} at "${path}" takes an array, got ${describe(operand)}`, path);
  return operand.map((v: unknown) => jsonOperand(v, path, op));
}

function existsOperand(operand: unknown, path: string): boolean {
  if (typeof operand === 'boolean') return operand;
  if (typeof operand === 'number' && Number.isFinite(operand)) return operand !== 0;
  throw invalid(`$exists at "${path}" takes true or false, got ${describe(operand)}`, path);
}

function prefixOperand(operand: unknown, path: string): string {
  if (typeof operand !== 'string') throw invalid(`$prefix at "${path}" takes a string, got ${describe(operand)}`, path);
  return operand;
}

function sizeOperand(operand: unknown, path: string): number {
  const n = typeof operand === 'bigint' ? Number(operand) : operand;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) {
    throw invalid(`$size at "${path}" takes a non-negative integer, got ${describe(operand)}`, path);
  }
  return n;
}

/** `$all`'s items: values (each an `$eq`) or `{$elemMatch: ...}` objects. */
function allOperand(operand: unknown, path: string): ValueTest[] {
  if (!Array.isArray(operand)) throw invalid(`$all at "${path}" takes an array, got ${describe(operand)}`, path);
  return operand.map((item: unknown): ValueTest => {
    if (isPlainObject(item) && Object.keys(item)[0] === '$elemMatch') {
      if (Object.keys(item).length !== 1) throw invalid(`$all at "${path}": an $elemMatch item has no other keys`, path);
      return { op: '$elemMatch', element: elementMatch(item.$elemMatch, path) };
    }
    return { op: '$eq', value: jsonOperand(item, path, '$all') };
  });
}

/**
 * True when `value` is an object of operators (`{$gt: 1}`); false for a value compared by equality.
 * An object mixing operators and keys is rejected: MongoDB reads it by its first key, which is
 * surprising either way.
 */
function isOperatorObject(value: unknown, path: string): value is { [key: string]: unknown } {
  if (!isPlainObject(value)) return false;
  const keys = Object.keys(value);
  const operators = keys.filter((k) => k.startsWith('$')).length;
  if (operators === 0) return false;
  if (operators !== keys.length) {
    throw invalid(`the object at "${path}" mixes operators and keys (${keys.join(', ')}); use one form`, path);
  }
  return true;
}

function pathNode(path: string, parts: readonly string[], test: ValueTest): FilterNode {
  return { kind: 'path', path, parts, test };
}

function not(child: FilterNode): FilterNode {
  return { kind: 'not', child };
}

function conjunction(children: FilterNode[]): FilterNode {
  const kept = children.filter((c) => c.kind !== 'true');
  if (kept.length === 0) return { kind: 'true' };
  return kept.length === 1 ? kept[0] : { kind: 'and', children: kept };
}

function isPlainObject(value: unknown): value is { [key: string]: unknown } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function describe(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (typeof value === 'bigint') return `${value}n`;
  if (value instanceof RegExp) return String(value);
  try {
    const text = JSON.stringify(value);
    return text.length > 60 ? `${text.slice(0, 57)}...` : text;
  } catch {
    return typeof value;
  }
}

function invalid(message: string, path?: string): DocumentError {
  return new DocumentError('INVALID_FILTER', message, path === undefined ? undefined : { path });
}

function unsupported(op: string, where: string, path?: string): DocumentError {
  return new DocumentError(
    'UNSUPPORTED_OPERATOR',
    `${op} in ${where} is not supported; the supported operators are ${[...LOGICAL, ...PATH_OPERATORS].join(' ')}`,
    path === undefined ? undefined : { path },
  );
}
