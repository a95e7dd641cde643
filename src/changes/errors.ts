/**
 * Stable codes of the change feed's errors. Users switch on `code`; messages are for people.
 *
 * - `INVALID_TOKEN`: a `since` that is not a token the feed gave out.
 * - `WRONG_COLLECTION`: a token of another collection's feed.
 * - `HISTORY_EXPIRED`: a `since` older than the feed's retained history (tombstones after it were
 *   discarded): the reader must resync (read the collection afresh, then follow from the feed's end).
 * - `CHANGES_DISABLED`: the collection keeps no change feed (its manifest `history` is off).
 * - `INVALID_ARGUMENT`: any other bad option (a consumer name that is not a string, a bad limit).
 * - `CORRUPT_DATA`: stored feed bytes that no doclayer write produces.
 */
export type ChangeFeedErrorCode = 'INVALID_TOKEN' | 'WRONG_COLLECTION' | 'HISTORY_EXPIRED' | 'CHANGES_DISABLED' | 'INVALID_ARGUMENT' | 'CORRUPT_DATA';

/** The change feed's one error class; `message` starts with the code. */
export class ChangeFeedError extends Error {
  override readonly name = 'ChangeFeedError';

  constructor(
    readonly code: ChangeFeedErrorCode,
    message: string,
  ) {
    super(`${code}: ${message}`);
  }
}

/** True when `err` is a {@link ChangeFeedError}, with the given code when one is given. */
export function isChangeFeedError(err: unknown, code?: ChangeFeedErrorCode): err is ChangeFeedError {
  return err instanceof ChangeFeedError && (code === undefined || err.code === code);
}
