/**
 * The filter language (MongoDB's query operators plus `$prefix`) and the canonical value order. Pure
 * functions over JSON values; no KV access. See docs/queries.md.
 */
export { compileFilter, type CompiledFilter } from './compile-filter';
export type { Filter, FilterNode, ValueTest, ElementMatch, ElementTest } from './filter-tree';
export { passes } from './match';
export { someValueAt, valuesAt } from './path-values';
export { MISSING, TYPE_ORDER, typeOf, typeRank, compareValues, type IndexValue, type ValueType } from './value-order';
