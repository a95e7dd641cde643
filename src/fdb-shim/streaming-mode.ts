import { ErrorCodes, KvError } from '../kv/contract/errors';
import { ShimErrorCodes } from './fdb-errors';

/** FDB's streaming modes (`FDBStreamingMode`, the package's `StreamingMode`). */
export const StreamingMode = {
  wantAll: -2,
  iterator: -1,
  exact: 0,
  small: 1,
  medium: 2,
  large: 3,
  serial: 4,
} as const;

/** Bytes per batch of the modes `exact` (none), `small`, `medium`, `large` and `serial`, as in fdb_c. */
const MODE_BYTES = [Infinity, 256, 1000, 4096, 80_000];

/** Bytes per batch of the iterator mode by iteration (1-based), growing by half each time, as in fdb_c. */
const ITERATOR_BYTES = [4096, 6144, 9216, 13_824, 20_736, 31_104, 46_656, 69_984, 80_000, 120_000];

/** How much one batch of a range read may return; `Infinity` where there is no limit. */
export interface BatchLimits {
  readonly rows: number;
  readonly bytes: number;
}

/**
 * The limits of one `getRange` batch, computed as `fdb_transaction_get_range` does: `limit` and
 * `targetBytes` (0 meaning none) capped by the mode's byte target; `wantAll` reads as `serial`, and
 * `iterator` grows its target with `iteration`.
 *
 * @throws KvError range_limits_invalid (2012) for a negative limit, exact_mode_without_limits (2210)
 *   for `exact` without a limit, client_invalid_operation (2000) for an unknown mode or an iteration
 *   below 1.
 */
export function batchLimits(limit: number, targetBytes: number, mode: number, iteration: number): BatchLimits {
  if (!Number.isInteger(limit) || limit < 0 || !Number.isInteger(targetBytes) || targetBytes < 0) {
    throw new KvError(ShimErrorCodes.range_limits_invalid, `limit ${limit}, target bytes ${targetBytes}`);
  }
  const rows = limit === 0 ? Infinity : limit;
  const requestedBytes = targetBytes === 0 ? Infinity : targetBytes;
  if (mode === StreamingMode.exact && rows === Infinity && requestedBytes === Infinity) {
    throw new KvError(ShimErrorCodes.exact_mode_without_limits);
  }
  return { rows, bytes: Math.min(requestedBytes, modeBytes(mode, iteration)) };
}

function modeBytes(mode: number, iteration: number): number {
  if (mode === StreamingMode.wantAll) return MODE_BYTES[StreamingMode.serial];
  if (mode === StreamingMode.iterator) {
    if (!Number.isInteger(iteration) || iteration < 1) {
      throw new KvError(ErrorCodes.client_invalid_operation, `iteration ${iteration} of an iterator-mode range read`);
    }
    return ITERATOR_BYTES[Math.min(iteration, ITERATOR_BYTES.length) - 1];
  }
  if (Number.isInteger(mode) && mode >= StreamingMode.exact && mode <= StreamingMode.serial) return MODE_BYTES[mode];
  throw new KvError(ErrorCodes.client_invalid_operation, `unknown streaming mode ${mode}`);
}
