/**
 * Secondary indexes (docs/indexes.md): definitions stored with their collection, the order-preserving
 * key encoding of JSON values, maintenance in the writer's transaction, online builds, and the scans
 * the query layer plans with.
 */
export { IndexMaintainer } from './maintainer';
export {
  IndexAdmin,
  UniqueBuildError,
  type IndexAccess,
  type IndexDescription,
  type BuildOptions,
  type BuildProgress,
  type CreateIndexOptions,
} from './index-admin';
export type { IndexSpec, IndexFieldSpec, IndexFieldDescription } from './definition';
export { MAX_FIELDS, MAX_INCLUDE, MAX_INDEXES } from './definition';
export { MAX_ENTRIES_PER_DOCUMENT } from './compiled-index';
export type { IndexInterval, IndexBound, IndexEntry, IndexScanOptions } from './index-scan';
export { encodeValue, decodeValue } from './value-key';
