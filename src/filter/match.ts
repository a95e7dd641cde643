/**
 * Evaluation of a checked filter ({@link FilterNode}) against one document, with MongoDB's semantics:
 * a path test holds when some value the path reaches passes it (path-values.ts), comparisons hold
 * only within one type bracket of the canonical order (`$gt: 5` never matches a string), and `null`
 * in `$eq`, `$in`, `$gte` and `$lte` also matches a missing path.
 */
import type { JsonValue } from '../document/types';
import type { ElementTest, FilterNode, ValueTest } from './filter-tree';
import { someValueAt } from './path-values';
import { compareValues, MISSING, typeOf, type IndexValue } from './value-order';

/** True when `doc` matches `node`. A document that is an array is seen as an object keyed `'0'`, `'1'`, .... */
export function matchesNode(node: FilterNode, doc: JsonValue): boolean {
  return matchDocument(node, Array.isArray(doc) ? arrayAsDocument(doc) : doc);
}

function matchDocument(node: FilterNode, doc: JsonValue): boolean {
  switch (node.kind) {
    case 'true':
      return true;
    case 'false':
      return false;
    case 'and':
      return node.children.every((c) => matchDocument(c, doc));
    case 'or':
      return node.children.some((c) => matchDocument(c, doc));
    case 'not':
      return !matchDocument(node.child, doc);
    case 'path': {
      const test = node.test;
      const wholeArrays = test.op === '$size' || test.op === '$elemMatch';
      return someValueAt(doc, node.parts, !wholeArrays, (v) => passes(test, v));
    }
  }
}

/** True when the single value `v` (no array traversal at `v`) passes `test`. */
export function passes(test: ValueTest, v: IndexValue): boolean {
  switch (test.op) {
    case '$eq':
      return equalsOperand(v, test.value);
    case '$in':
      return test.values.some((x) => equalsOperand(v, x));
    case '$gt':
    case '$gte':
    case '$lt':
    case '$lte': {
      const operand = test.value;
      const inclusive = test.op === '$gte' || test.op === '$lte';
      if (v === MISSING) return operand === null && inclusive;
      if (typeOf(v) !== typeOf(operand)) return false;
      const c = compareValues(v, operand);
      if (c === 0) return inclusive;
      return test.op === '$gt' || test.op === '$gte' ? c > 0 : c < 0;
    }
    case '$exists':
      return v !== MISSING;
    case '$prefix':
      return typeof v === 'string' && v.startsWith(test.prefix);
    case '$size':
      return Array.isArray(v) && v.length === test.size;
    case '$elemMatch': {
      if (!Array.isArray(v)) return false;
      const element = test.element;
      if (element.kind === 'value') return v.some((e) => passesElement(element.test, e));
      return v.some((e) => typeof e === 'object' && e !== null && matchesNode(element.filter, e));
    }
  }
}

function passesElement(test: ElementTest, e: JsonValue): boolean {
  switch (test.kind) {
    case 'test':
      return passes(test.test, e);
    case 'and':
      return test.children.every((c) => passesElement(c, e));
    case 'not':
      return !passesElement(test.child, e);
  }
}

/** Equality as `$eq` means it: `null` also matches a missing path. */
function equalsOperand(v: IndexValue, operand: JsonValue): boolean {
  if (operand === null) return v === null || v === MISSING;
  return v !== MISSING && compareValues(v, operand) === 0;
}

function arrayAsDocument(array: readonly JsonValue[]): { [key: string]: JsonValue } {
  const out: { [key: string]: JsonValue } = {};
  array.forEach((v, i) => {
    out[String(i)] = v;
  });
  return out;
}
