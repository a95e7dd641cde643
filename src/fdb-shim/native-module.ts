import { ErrorCodes, KvError } from '../kv/contract/errors';
import type { Clusters } from './clusters';
import { FdbErrors, ShimErrorCodes } from './fdb-errors';
import { ErrorPredicate, type FdbErrorClass, type NativeDatabase, type NativeModule, type NativeOptionValue } from './native-api';
import { ShimNativeDatabase } from './native-database';
import { assertOptionParam } from './transaction-options';

/** The newest API version the shim serves: the one node-foundationdb 2.x is built against. */
export const SHIM_MAX_API_VERSION = 720;

/** The oldest API version node-foundationdb accepts. */
const MIN_API_VERSION = 500;

/**
 * An instance of node-foundationdb's native module over the shim's {@link Clusters}: what
 * `require('node-gyp-build')(foundationdbRoot)` returns in place of the compiled addon. Like the
 * addon, it selects an API version once, then opens databases; the network calls do nothing (there is
 * no network), network options are accepted and ignored, and `errorPredicate` answers from doclayer's
 * {@link KvError} classification of FDB's codes.
 */
export class FdbShimModule implements NativeModule {
  readonly type = 'napi';
  /** Set by node-foundationdb's native.js right after loading; the module makes its errors with it. */
  FDBError: FdbErrorClass | undefined;
  private apiVersion: number | undefined;
  private readonly errors = new FdbErrors(() => this.FDBError);

  constructor(private readonly clusters: Clusters) {}

  /**
   * @throws FDBError api_version_not_supported (2203) outside 500..720, api_version_already_set (2201)
   *   for a second, different version.
   */
  setAPIVersion(version: number): void {
    this.setAPIVersionImpl(version, SHIM_MAX_API_VERSION);
  }

  /** @throws FDBError as {@link setAPIVersion}, and api_version_invalid (2202) above `headerVersion`. */
  setAPIVersionImpl(version: number, headerVersion: number): void {
    if (this.apiVersion !== undefined) {
      if (version === this.apiVersion) return;
      throw this.errors.fromCode(ShimErrorCodes.api_version_already_set, `already set to ${this.apiVersion}`);
    }
    if (!Number.isInteger(version) || version < MIN_API_VERSION || version > SHIM_MAX_API_VERSION) {
      throw this.errors.fromCode(
        ErrorCodes.api_version_not_supported,
        `the shim serves API versions ${MIN_API_VERSION} to ${SHIM_MAX_API_VERSION}, not ${version}`,
      );
    }
    if (version > headerVersion) {
      throw this.errors.fromCode(ShimErrorCodes.api_version_invalid, `${version} is above the header's ${headerVersion}`);
    }
    this.apiVersion = version;
  }

  startNetwork(): void {}

  stopNetwork(): void {}

  /**
   * A database on the cluster `clusterFile` names (see {@link Clusters}).
   * @throws FDBError api_version_unset (2200) before {@link setAPIVersion}.
   */
  createDatabase(clusterFile?: string | null): NativeDatabase {
    if (this.apiVersion === undefined) throw this.errors.fromCode(ShimErrorCodes.api_version_unset);
    let engine;
    try {
      engine = this.clusters.engine(clusterFile ?? undefined);
    } catch (err) {
      throw this.errors.fromEngine(err);
    }
    return new ShimNativeDatabase(engine, this.errors, this.apiVersion);
  }

  setNetworkOption(code: number, param: NativeOptionValue): void {
    assertOptionParam(param);
  }

  /** `fdb_error_predicate`: whether `code` is retryable, maybe committed, or retryable and not committed. */
  errorPredicate(test: number, code: number): boolean {
    const err = new KvError(code);
    switch (test) {
      case ErrorPredicate.retryable:
        return err.retryable;
      case ErrorPredicate.maybeCommitted:
        return err.maybeCommitted;
      case ErrorPredicate.retryableNotCommitted:
        return err.retryableNotCommitted;
      default:
        return false;
    }
  }
}
