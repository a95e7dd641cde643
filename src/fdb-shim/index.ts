/**
 * doclayer/fdb-shim: node-foundationdb (the `foundationdb` npm package) on doclayer's embedded engines.
 * `installFdbShim({ engine })` before the first `require('foundationdb')` (or the jest setup file
 * `doclayer/fdb-shim/jest-setup`) makes the package load {@link FdbShimModule}, an implementation of its
 * native module over a doclayer engine, instead of the addon that needs FoundationDB's client library.
 */
export { installFdbShim, type InstallFdbShimOptions, type JestModuleMocker } from './install';
export { FdbShimInstallError, type FdbShimInstallReason } from './install-error';
export { FdbShim, type FdbShimOptions } from './fdb-shim';
export type { FdbShimEngineOption, EngineOrDatabase } from './clusters';
export { FdbShimModule, SHIM_MAX_API_VERSION } from './native-module';
export type {
  NativeModule,
  NativeDatabase,
  NativeTransaction,
  NativeWatch,
  NativeKeyValueList,
  NativeValue,
  NativeCallback,
  NativeOptionValue,
  NativeRangeArguments,
  FdbErrorClass,
} from './native-api';
