import { KvError } from '../kv/contract/errors';
import type { FdbErrorClass } from './native-api';

/**
 * FDB's descriptions of the errors the shim reports (`fdb_get_error`, from FDB's
 * `error_definitions.h`): node-foundationdb's `FDBError` carries the description as its message.
 */
const DESCRIPTIONS: ReadonlyMap<number, string> = new Map([
  [1000, 'Operation failed'],
  [1007, 'Transaction is too old to perform reads or be committed'],
  [1009, 'Request for future version'],
  [1020, 'Transaction not committed due to conflict with another transaction'],
  [1021, 'Transaction may or may not have committed'],
  [1025, 'Operation aborted because the transaction was cancelled'],
  [1031, 'Operation aborted because the transaction timed out'],
  [1032, 'Too many watches currently set'],
  [1034, 'Watches cannot be set if read your writes is disabled'],
  [1036, 'Read or wrote an unreadable key'],
  [1037, 'Storage process does not have recent mutations'],
  [1038, 'Database is locked'],
  [1042, 'CommitProxy commit memory limit exceeded'],
  [1078, 'GetReadVersion proxy memory limit exceeded'],
  [1101, 'Asynchronous operation cancelled'],
  [1213, 'Transaction tag is being throttled'],
  [2000, 'Invalid API call'],
  [2004, 'Key outside legal range'],
  [2005, 'Range begin key larger than end key'],
  [2006, 'Option set with an invalid value'],
  [2007, 'Option not valid in this context'],
  [2010, 'Transaction already has a read version set'],
  [2011, 'Version not valid'],
  [2012, 'Range limits not valid'],
  [2017, 'Operation issued while a commit was outstanding'],
  [2018, 'Unrecognized atomic mutation type'],
  [2021, 'Transaction is read-only and therefore does not have a commit version'],
  [2101, 'Transaction exceeds byte limit'],
  [2102, 'Key length exceeds limit'],
  [2103, 'Value length exceeds limit'],
  [2108, 'Operation not supported'],
  [2200, 'API version is not set'],
  [2201, 'API version may be set only once'],
  [2202, 'API version not valid'],
  [2203, 'API version not supported'],
  [2210, 'EXACT streaming mode requires limits, but none were given'],
  [4100, 'An internal error occurred'],
]);

/** FDB's error codes that the shim reports and `src/kv/errors.ts` has no name for. */
export const ShimErrorCodes = {
  invalid_option: 2007,
  range_limits_invalid: 2012,
  invalid_mutation_type: 2018,
  api_version_unset: 2200,
  api_version_already_set: 2201,
  api_version_invalid: 2202,
  exact_mode_without_limits: 2210,
} as const;

/** Stands in for node-foundationdb's `FDBError` until its native.js has handed the class over. */
class DetachedFdbError extends Error {
  constructor(
    description: string,
    readonly code: number,
  ) {
    super(description);
  }
}

/**
 * Makes the errors the addon would: instances of node-foundationdb's own `FDBError` class, which the
 * package's retry loop recognises with `instanceof`. The class is read when an error is made, because
 * the package hands it to the module only after loading it (`mod.FDBError = FDBError` in native.js).
 */
export class FdbErrors {
  constructor(private readonly errorClass: () => FdbErrorClass | undefined) {}

  /**
   * The error with FDB's `code`. Its message is FDB's description; `detail` (why the shim or the engine
   * failed) is appended when FDB's text alone would not say what happened.
   */
  fromCode(code: number, detail?: string): Error & { code: number } {
    const description = DESCRIPTIONS.get(code) ?? 'Unknown error';
    const ErrorClass = this.errorClass() ?? DetachedFdbError;
    return new ErrorClass(detail ? `${description}: ${detail}` : description, code);
  }

  /**
   * An engine's {@link KvError} as the `FDBError` with its code, keeping the original as `cause`.
   * Anything else (a TypeError from a bad argument, an engine bug) is returned unchanged.
   */
  fromEngine(err: KvError): Error & { code: number };
  fromEngine(err: unknown): unknown;
  fromEngine(err: unknown): unknown {
    if (!(err instanceof KvError)) return err;
    const mapped = this.fromCode(err.code);
    (mapped as { cause?: unknown }).cause = err;
    return mapped;
  }
}

/** True when `err` carries FDB's numeric `code` (an `FDBError`, or a {@link KvError}). */
export function hasFdbCode(err: unknown, code: number): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === code;
}
