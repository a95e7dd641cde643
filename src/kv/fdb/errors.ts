import { KvError } from '../contract/errors';
import type { FdbErrorLike } from './node-foundationdb';

/**
 * node-foundationdb's `FDBError` (an Error with FDB's numeric `code`), recognised by shape so that the
 * adapter needs no reference to the package's class, and without `instanceof Error`, which fails for
 * errors made in another realm (a vm context, as under jest). Node's own errors carry string codes.
 */
export function isFdbError(err: unknown): err is FdbErrorLike {
  return (
    typeof err === 'object' &&
    err !== null &&
    !(err instanceof KvError) &&
    typeof (err as { code?: unknown }).code === 'number' &&
    typeof (err as { message?: unknown }).message === 'string'
  );
}

/** The message of an error from any realm, or the thrown value as text. */
export function describeError(err: unknown): string {
  const message = typeof err === 'object' && err !== null ? (err as { message?: unknown }).message : undefined;
  return typeof message === 'string' ? message : String(err);
}

/**
 * The contract's error for whatever the package threw: an `FDBError` becomes a {@link KvError} with the
 * same code (so `retryable`, `maybeCommitted` and `name` are FDB's) and FDB's description as message,
 * keeping the original as `cause`. Anything else (a KvError, a TypeError from a bad argument) is
 * returned unchanged.
 */
export function toKvError(err: unknown): unknown {
  if (!isFdbError(err)) return err;
  const mapped = new KvError(err.code, err.message);
  mapped.cause = err;
  return mapped;
}

/** Why FoundationDB could not be loaded. */
export type FdbUnavailableReason = 'package-not-installed' | 'native-library-not-loaded';

const INSTALL_HINT =
  'Install the FoundationDB client package for your platform, which provides libfdb_c ' +
  '(foundationdb-clients .deb or .rpm on Linux, FoundationDB .pkg on macOS, the .msi on Windows: ' +
  'https://github.com/apple/foundationdb/releases), then `npm install foundationdb`.';

/**
 * Thrown by `openFoundationDB` when the FoundationDB client cannot be loaded: the optional `foundationdb`
 * npm package is absent (its native build fails where the client library is missing, so npm skips it),
 * or its native module cannot load the FoundationDB client library `libfdb_c`. The message says how to
 * install the client; `cause` is the loader's error.
 */
export class FdbUnavailableError extends Error {
  override readonly name = 'FdbUnavailableError';
  /** A stable code to switch on. */
  readonly code = 'FDB_UNAVAILABLE';
  readonly reason: FdbUnavailableReason;

  constructor(reason: FdbUnavailableReason, cause: unknown) {
    super(
      reason === 'package-not-installed'
        ? 'FoundationDB is not available: the optional `foundationdb` npm package is not installed ' +
            '(npm skips it when its native build cannot find the FoundationDB client library libfdb_c). ' +
            INSTALL_HINT
        : 'FoundationDB is not available: the `foundationdb` npm package could not load the FoundationDB ' +
            'client library libfdb_c (libfdb_c.so on Linux, libfdb_c.dylib on macOS, fdb_c.dll on Windows): ' +
            `${describeError(cause)}. ${INSTALL_HINT} On macOS also set DYLD_LIBRARY_PATH=/usr/local/lib.`,
    );
    this.reason = reason;
    this.cause = cause;
  }
}
