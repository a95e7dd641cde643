import { DocumentError } from '../../document/errors';

/**
 * Queue priorities (docs/queue.md, "Priorities"): an integer from 0 (the default) to
 * {@link MAX_PRIORITY}, higher popped first, FIFO within one priority. Priority 0 keeps the key layout
 * of a queue without priorities, so queues written before priorities existed read as all priority 0.
 */

/** The highest priority: priorities are integers from 0 to 2^31 - 1. */
export const MAX_PRIORITY = 2 ** 31 - 1;

/** A push's priority, checked. @throws DocumentError INVALID_ARGUMENT */
export function checkedPriority(priority: number | undefined): number {
  if (priority === undefined) return 0;
  if (!Number.isSafeInteger(priority) || priority < 0 || priority > MAX_PRIORITY) {
    throw new DocumentError('INVALID_ARGUMENT', `priority is an integer from 0 to ${MAX_PRIORITY}, got ${String(priority)}`);
  }
  return priority;
}
