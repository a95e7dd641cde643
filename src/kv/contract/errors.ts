/**
 * FoundationDB's error codes, carried by every engine so that code above `src/kv` can switch on them
 * whichever engine it runs on. Names and numbers are FDB's (see `error_definitions.h` in the FDB source).
 */
export const ErrorCodes = {
  operation_failed: 1000,
  transaction_too_old: 1007,
  future_version: 1009,
  not_committed: 1020,
  commit_unknown_result: 1021,
  transaction_cancelled: 1025,
  transaction_timed_out: 1031,
  too_many_watches: 1032,
  watches_disabled: 1034,
  accessed_unreadable: 1036,
  process_behind: 1037,
  database_locked: 1038,
  cluster_version_changed: 1039,
  proxy_memory_limit_exceeded: 1042,
  batch_transaction_throttled: 1051,
  grv_proxy_memory_limit_exceeded: 1078,
  operation_cancelled: 1101,
  tag_throttled: 1213,
  io_error: 1510,
  file_not_found: 1511,
  file_not_writable: 1514,
  file_corrupt: 1522,
  client_invalid_operation: 2000,
  key_outside_legal_range: 2004,
  inverted_range: 2005,
  invalid_option_value: 2006,
  read_version_already_set: 2010,
  version_invalid: 2011,
  used_during_commit: 2017,
  no_commit_version: 2021,
  incompatible_protocol_version: 2100,
  transaction_too_large: 2101,
  key_too_large: 2102,
  value_too_large: 2103,
  api_version_not_supported: 2203,
  internal_error: 4100,
} as const;

export type ErrorName = keyof typeof ErrorCodes;

const namesByCode = new Map<number, ErrorName>((Object.keys(ErrorCodes) as ErrorName[]).map((name) => [ErrorCodes[name], name]));

/** Codes after which `onError` resets the transaction for another attempt, as FDB's client does. */
const RETRYABLE = new Set<number>([1007, 1009, 1020, 1021, 1037, 1038, 1039, 1042, 1051, 1078, 1213]);

/** Codes for which a retry is safe because the failed attempt certainly did not commit. */
const RETRYABLE_NOT_COMMITTED = new Set<number>([1007, 1009, 1020, 1037, 1038, 1042, 1051, 1078, 1213]);

/** Codes after which the failed attempt may have been applied. */
const MAYBE_COMMITTED = new Set<number>([1021, 1039]);

/**
 * The one error class of the KV layer. `code` and `name` are FoundationDB's (`1020`, `'not_committed'`);
 * `retryable` says whether the retry loop runs the transaction again; `maybeCommitted` is true for
 * `commit_unknown_result` and `cluster_version_changed`, where the attempt may have been applied.
 */
export class KvError extends Error {
  readonly code: number;
  override readonly name: string;
  readonly retryable: boolean;
  readonly maybeCommitted: boolean;
  readonly retryableNotCommitted: boolean;

  constructor(code: number, message?: string) {
    const name = namesByCode.get(code) ?? 'unknown_error';
    super(message ? `${name} (${code}): ${message}` : `${name} (${code})`);
    this.code = code;
    this.name = name;
    this.retryable = RETRYABLE.has(code);
    this.maybeCommitted = MAYBE_COMMITTED.has(code);
    this.retryableNotCommitted = RETRYABLE_NOT_COMMITTED.has(code);
  }
}

/** Builds a {@link KvError} from FDB's name: `kvError('not_committed', 'conflict on key ...')`. */
export function kvError(name: ErrorName, message?: string): KvError {
  return new KvError(ErrorCodes[name], message);
}

/** True when `err` is a {@link KvError} with the given code or name. */
export function isKvError(err: unknown, codeOrName?: number | ErrorName): err is KvError {
  if (!(err instanceof KvError)) return false;
  if (codeOrName === undefined) return true;
  return typeof codeOrName === 'number' ? err.code === codeOrName : err.name === codeOrName;
}
