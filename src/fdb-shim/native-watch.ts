import { ErrorCodes } from '../kv/contract/errors';
import type { Watch } from '../kv/contract/types';
import { hasFdbCode, type FdbErrors } from './fdb-errors';
import type { NativeWatch } from './native-api';
import type { PendingOperations } from './pending-operations';

/**
 * The errors the addon turns into `false` when asked to ignore the standard ones: the watch was
 * cancelled, or its transaction was cancelled or failed to commit on a conflict.
 */
const STANDARD_ERRORS: readonly number[] = [ErrorCodes.operation_cancelled, ErrorCodes.transaction_cancelled, ErrorCodes.not_committed];

/**
 * An engine's {@link Watch} as the addon's watch object. The engine resolves `false` when the watch is
 * cancelled, where FDB sets the watch's future to operation_cancelled (1101); like the addon, the
 * promise then resolves `false` if `ignoreStandardErrors`, and otherwise rejects with the `FDBError`.
 * Tracked in `pending`, so that the transaction's timeout fails it, as FDB's does.
 */
export function nativeWatch(watch: Watch, ignoreStandardErrors: boolean, errors: FdbErrors, pending: PendingOperations): NativeWatch {
  const outcome = pending.track(
    watch.promise.then((fired) => {
      if (fired) return true;
      throw errors.fromCode(ErrorCodes.operation_cancelled);
    }),
  );
  const promise = outcome.catch((err: unknown) => {
    const mapped = errors.fromEngine(err);
    if (ignoreStandardErrors && STANDARD_ERRORS.some((code) => hasFdbCode(mapped, code))) return false;
    throw mapped;
  });
  return { promise, cancel: () => watch.cancel() };
}
