import { Buffer } from 'node:buffer';
import { ErrorCodes, KvError } from '../kv/contract/errors';
import { Limits } from '../kv/contract/limits';
import type { NativeOptionValue } from './native-api';

/**
 * The option codes the shim acts on. FDB numbers them the same as transaction options
 * (`TransactionOptionCode.Timeout`, ...) and as database options that set every new transaction's
 * default (`DatabaseOptionCode.TransactionTimeout`, ...).
 */
export const TransactionOptionCode = {
  readYourWritesDisable: 51,
  timeout: 500,
  retryLimit: 501,
  maxRetryDelay: 502,
  sizeLimit: 503,
} as const;

const INT32_MAX = 2 ** 31 - 1;
/** FDB's smallest allowed `size_limit`. */
const MIN_SIZE_LIMIT = 32;
/** FDB's default `max_retry_delay`: onError's backoff grows up to this many milliseconds. */
const DEFAULT_MAX_RETRY_DELAY_MS = 1000;

function invalidValue(detail: string): KvError {
  return new KvError(ErrorCodes.invalid_option_value, detail);
}

/**
 * An integer option's value. The package passes a number; the C API's form, 8 little-endian bytes, is
 * accepted too.
 */
function integerParam(name: string, param: NativeOptionValue): number {
  if (typeof param === 'number' && Number.isInteger(param)) return param;
  if (ArrayBuffer.isView(param) && param.byteLength === 8) {
    return Number(Buffer.from(param.buffer, param.byteOffset, 8).readBigInt64LE(0));
  }
  throw invalidValue(`option ${name} takes an integer, got ${String(param)}`);
}

function inRange(name: string, value: number, min: number, max: number): number {
  if (value < min || value > max) throw invalidValue(`option ${name} must be in [${min}, ${max}], got ${value}`);
  return value;
}

/**
 * The transaction options that change what the shim does, with FDB's defaults and value ranges:
 * `timeout` (ms from the transaction's start, 0 for none), `retry_limit` (onError calls before it
 * rethrows, -1 for none), `max_retry_delay` (ms, onError's backoff ceiling) and `size_limit` (bytes,
 * checked at commit). `read_your_writes_disable` is not kept here: the transaction hands it to its
 * engine transaction. Every other option code is accepted and has no effect, as FDB's options that do
 * not apply to an in-process store (priorities, tags, tracing, causal-risk flags, ...).
 */
export class TransactionOptions {
  timeoutMs = 0;
  retryLimit = -1;
  maxRetryDelayMs = DEFAULT_MAX_RETRY_DELAY_MS;
  sizeLimit: number = Limits.maxTransactionBytes;

  copy(): TransactionOptions {
    return Object.assign(new TransactionOptions(), this);
  }

  /**
   * Applies option `code`; any code but the four above is accepted and ignored.
   * @throws KvError invalid_option_value (2006) for a value outside FDB's range for the option.
   */
  apply(code: number, param: NativeOptionValue): void {
    switch (code) {
      case TransactionOptionCode.timeout:
        this.timeoutMs = inRange('timeout', integerParam('timeout', param), 0, INT32_MAX);
        break;
      case TransactionOptionCode.retryLimit:
        this.retryLimit = inRange('retry_limit', integerParam('retry_limit', param), -1, INT32_MAX);
        break;
      case TransactionOptionCode.maxRetryDelay:
        this.maxRetryDelayMs = inRange('max_retry_delay', integerParam('max_retry_delay', param), 0, INT32_MAX);
        break;
      case TransactionOptionCode.sizeLimit:
        this.sizeLimit = inRange('size_limit', integerParam('size_limit', param), MIN_SIZE_LIMIT, Limits.maxTransactionBytes);
        break;
    }
  }
}

/**
 * Rejects what the addon cannot pass to FDB as an option's parameter, as it does: a TypeError for
 * anything but nothing, a number or bytes.
 */
export function assertOptionParam(param: NativeOptionValue): void {
  if (param === null || param === undefined || typeof param === 'number' || ArrayBuffer.isView(param)) return;
  throw new TypeError('Second argument must be a number or buffer');
}
