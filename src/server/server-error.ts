import { isDocumentError } from '../document/errors';
import { isKvError } from '../kv/contract/errors';
import { Status, type StatusCode } from './protocol';

/** A failure of one command, answered with `status` (the connection stays open). */
export class CommandError extends Error {
  override readonly name = 'CommandError';
  constructor(
    readonly status: StatusCode,
    message: string,
    /** A body to answer with instead of the message (the 0x88 error's manifest uid). */
    readonly body?: Buffer,
  ) {
    super(message);
  }
}

/**
 * The status a command's error answers with. Without xerror (HELLO) a client knows only memcached's
 * statuses, so the lock errors fall back to temporary failure, as Couchbase Server does.
 */
export function statusOf(err: unknown, xerror: boolean): StatusCode {
  if (err instanceof CommandError) return err.status;
  if (isDocumentError(err)) {
    switch (err.code) {
      case 'DOCUMENT_NOT_FOUND':
        return Status.KeyNotFound;
      case 'DOCUMENT_EXISTS':
      case 'CAS_MISMATCH':
        return Status.KeyExists;
      case 'DOCUMENT_LOCKED':
        return xerror ? Status.Locked : Status.TemporaryFailure;
      case 'DOCUMENT_NOT_LOCKED':
        return xerror ? Status.NotLocked : Status.TemporaryFailure;
      case 'DOCUMENT_TOO_LARGE':
      case 'KEY_TOO_LARGE':
        return Status.TooBig;
      case 'UNKNOWN_COLLECTION':
        return Status.UnknownCollection;
      case 'UNKNOWN_SCOPE':
        return Status.UnknownScope;
      default:
        return Status.InvalidArguments;
    }
  }
  if (isKvError(err, 'transaction_too_large') || isKvError(err, 'value_too_large') || isKvError(err, 'key_too_large')) return Status.TooBig;
  if (isKvError(err)) return Status.TemporaryFailure;
  return Status.InternalError;
}
