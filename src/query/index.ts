/**
 * Queries over a collection: the planner, find/findOne/count/explain, continuation tokens. See
 * docs/queries.md.
 */
export {
  FindCursor,
  findOne,
  count,
  explain,
  prepareQuery,
  DEFAULT_PAGE_SIZE,
  type FindOptions,
  type CountOptions,
  type FindPage,
  type Explanation,
} from './find';
export { TOP_K_CAP, PAGE_BUDGET, ARRAY_SECTION_CAP, type FindItem, type QuerySource, type QueryStats } from './execute';
export type { SortSpec } from './order-key';
export { entryTuples, fieldValues, parseIndexPath } from './index-fields';
