/**
 * doclayer's public surface. The tuple layer is also available as the `tuple` namespace (its `pack`,
 * `unpack`, `range` and `compare` would otherwise read ambiguously next to the KV API) and as the
 * subpath `doclayer/tuple`; its classes are exported here by name.
 */
export * from './kv';
export * from './document';
export * from './structures';
export { open, DocLayer, type DocLayerOptions } from './open';
export * from './changes';
export { Collection } from './collection';
export {
  UniqueBuildError,
  type IndexAccess,
  type IndexDescription,
  type BuildOptions,
  type BuildProgress,
  type CreateIndexOptions,
  type IndexSpec,
  type IndexFieldSpec,
  type IndexFieldDescription,
  type IndexInterval,
  type IndexBound,
  type IndexEntry,
  type IndexScanOptions,
} from './index/index';
export { compileFilter, compareValues, typeOf, MISSING, type Filter, type CompiledFilter, type IndexValue, type ValueType } from './filter';
export {
  FindCursor,
  TOP_K_CAP,
  PAGE_BUDGET,
  ARRAY_SECTION_CAP,
  type FindOptions,
  type CountOptions,
  type FindPage,
  type FindItem,
  type Explanation,
  type SortSpec,
} from './query';
export { checkDocuments, type DocumentCheckReport, type DocumentProblem, type DocumentCheckProgress, type DocumentCheckOptions } from './check';
export * as tuple from './tuple';
export {
  Subspace,
  TupleError,
  Float32,
  Double,
  Uuid,
  Versionstamp,
  UserType,
  type Tuple,
  type TupleItem,
  type TupleRange,
  type TupleErrorCode,
} from './tuple';
