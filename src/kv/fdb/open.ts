import type { Database } from '../contract/database';
import { ErrorCodes, KvError } from '../contract/errors';
import { describeError, FdbUnavailableError, isFdbError, toKvError } from './errors';
import { fromFoundationDB } from './fdb-engine';
import type { FdbModuleLike } from './node-foundationdb';

/**
 * The API version `openFoundationDB` selects by default: supported by every FoundationDB client from
 * 7.1 on, and at least 520, where versionstamp offsets are the 4 bytes the contract passes.
 */
export const DEFAULT_FDB_API_VERSION = 710;

/** The lowest API version the adapter accepts: below 520, FDB reads 2-byte versionstamp offsets. */
const MIN_FDB_API_VERSION = 520;

export interface OpenFoundationDBOptions {
  /**
   * The cluster file to connect with. Default: FDB's own lookup (the `FDB_CLUSTER_FILE` environment
   * variable, then `fdb.cluster` in the working directory, then the platform's default path).
   */
  clusterFile?: string;
  /**
   * The FDB API version, from 520 up to what both the installed libfdb_c and node-foundationdb (720)
   * support. FDB fixes it once per process, so every open in a process must use the same one.
   * Default {@link DEFAULT_FDB_API_VERSION}.
   */
  apiVersion?: number;
}

/** Node's (and jest's) error for a package that is not installed, as opposed to one that fails to load. */
function isPackageMissing(err: unknown): boolean {
  return (
    typeof err === 'object' &&
    err !== null &&
    (err as { code?: unknown }).code === 'MODULE_NOT_FOUND' &&
    describeError(err).startsWith("Cannot find module 'foundationdb'")
  );
}

/** The `foundationdb` package, loaded on first use: it is optional and its native module needs libfdb_c. */
function loadFoundationDB(): FdbModuleLike {
  try {
    return require('foundationdb') as FdbModuleLike;
  } catch (err) {
    throw new FdbUnavailableError(isPackageMissing(err) ? 'package-not-installed' : 'native-library-not-loaded', err);
  }
}

/**
 * Connects to a FoundationDB cluster through the optional `foundationdb` npm package and returns a
 * {@link Database} on it. The package is loaded here, not when doclayer is imported, so doclayer works
 * without it. Closing the database closes the connection.
 *
 * @throws FdbUnavailableError when the package is not installed or cannot load the FoundationDB client
 *   library libfdb_c; the message says how to install the client.
 * @throws KvError `api_version_not_supported` (2203) when `apiVersion` is below 520 or the installed
 *   client does not support it; other FDB errors of opening (a bad cluster file) with their codes.
 */
export async function openFoundationDB(options: OpenFoundationDBOptions = {}): Promise<Database> {
  const apiVersion = options.apiVersion ?? DEFAULT_FDB_API_VERSION;
  if (!Number.isInteger(apiVersion) || apiVersion < MIN_FDB_API_VERSION) {
    throw new KvError(
      ErrorCodes.api_version_not_supported,
      `API version ${apiVersion}: doclayer needs ${MIN_FDB_API_VERSION} or later (4-byte versionstamp offsets)`,
    );
  }
  const fdb = loadFoundationDB();
  try {
    fdb.setAPIVersion(apiVersion);
  } catch (err) {
    if (isFdbError(err) && err.code === ErrorCodes.api_version_not_supported) {
      const mapped = new KvError(
        err.code,
        `the installed FoundationDB client library (libfdb_c) does not support API version ${apiVersion}; ` + 'pass an apiVersion it supports',
      );
      mapped.cause = err;
      throw mapped;
    }
    throw toKvError(err);
  }
  try {
    return fromFoundationDB(fdb.open(options.clusterFile), { closeDatabase: true });
  } catch (err) {
    throw toKvError(err);
  }
}
