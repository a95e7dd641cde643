export { FdbEngine, fromFoundationDB, type FdbEngineOptions } from './fdb-engine';
export { FdbTransaction } from './fdb-transaction';
export { openFoundationDB, DEFAULT_FDB_API_VERSION, type OpenFoundationDBOptions } from './open';
export { FdbUnavailableError, type FdbUnavailableReason } from './errors';
export {
  FdbMutationType,
  type FdbDatabaseLike,
  type FdbTransactionLike,
  type FdbModuleLike,
  type FdbKeySelector,
  type FdbRangeOptions,
  type FdbWatch,
  type FdbTransformer,
  type FdbErrorLike,
} from './node-foundationdb';
