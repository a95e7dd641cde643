/** Why {@link installFdbShim} could not install the shim. */
export type FdbShimInstallReason = 'package-not-installed' | 'already-loaded';

/**
 * Thrown by `installFdbShim` when the `foundationdb` package (whose JavaScript the shim runs under) is
 * not installed, or when its native module was already loaded, too late for the shim to replace it.
 */
export class FdbShimInstallError extends Error {
  override readonly name = 'FdbShimInstallError';
  /** A stable code to switch on. */
  readonly code = 'FDB_SHIM_INSTALL';

  constructor(
    readonly reason: FdbShimInstallReason,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
