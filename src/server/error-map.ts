import { Status } from './protocol';

/**
 * Couchbase's error map (GET_ERROR_MAP): for each status this server answers with, its name, a
 * description and the attributes clients decide retries by.
 */

const ENTRIES: readonly [number, string, string, readonly string[]][] = [
  [Status.Success, 'SUCCESS', 'Success', ['success']],
  [Status.KeyNotFound, 'KEY_ENOENT', 'Not Found', ['item-only']],
  [Status.KeyExists, 'KEY_EEXISTS', 'key already exists, or CAS mismatch', ['item-only']],
  [Status.TooBig, 'E2BIG', 'Value is too big', ['invalid-input']],
  [Status.InvalidArguments, 'EINVAL', 'Invalid packet', ['internal', 'invalid-input']],
  [Status.NotStored, 'NOT_STORED', 'Not stored', ['item-only']],
  [Status.DeltaBadValue, 'DELTA_BADVAL', 'Existing document not a number', ['item-only', 'invalid-input']],
  [Status.NoBucket, 'NO_BUCKET', 'Not connected to a bucket', ['conn-state-invalidated']],
  [Status.Locked, 'LOCKED', 'Requested resource is locked', ['item-locked', 'item-only', 'retry-later']],
  [Status.NotLocked, 'NOT_LOCKED', 'Requested resource is not locked', ['item-only']],
  [Status.OutOfRange, 'ERANGE', 'Out of range', ['invalid-input']],
  [Status.AuthError, 'AUTH_ERROR', 'Authentication failed', ['auth', 'conn-state-invalidated']],
  [Status.AuthContinue, 'AUTH_CONTINUE', 'Continue authentication', ['auth', 'special-handling']],
  [Status.Eaccess, 'EACCESS', 'No access', ['support']],
  [Status.UnknownCommand, 'UNKNOWN_COMMAND', 'Unknown command', ['support']],
  [Status.NotSupported, 'NOT_SUPPORTED', 'Operation not supported', ['support']],
  [Status.InternalError, 'EINTERNAL', 'Internal error', ['internal']],
  [Status.TemporaryFailure, 'ETMPFAIL', 'Temporary failure', ['temp', 'retry-now']],
  [Status.UnknownCollection, 'UNKNOWN_COLLECTION', 'Unknown collection', ['fetch-config', 'item-only']],
  [Status.UnknownScope, 'UNKNOWN_SCOPE', 'Unknown scope', ['fetch-config', 'item-only']],
  [Status.SubdocPathNotFound, 'SUBDOC_PATH_ENOENT', 'Subdoc: path not found', ['item-only', 'subdoc']],
  [Status.SubdocPathMismatch, 'SUBDOC_PATH_MISMATCH', 'Subdoc: path mismatch', ['item-only', 'subdoc']],
  [Status.SubdocPathInvalid, 'SUBDOC_PATH_EINVAL', 'Subdoc: invalid path', ['invalid-input', 'subdoc']],
  [Status.SubdocPathTooBig, 'SUBDOC_PATH_E2BIG', 'Subdoc: path too big', ['invalid-input', 'subdoc']],
  [Status.SubdocDocTooDeep, 'SUBDOC_DOC_E2DEEP', 'Subdoc: document too deep', ['item-only', 'subdoc']],
  [Status.SubdocValueCannotInsert, 'SUBDOC_VALUE_CANTINSERT', 'Subdoc: cannot insert value', ['item-only', 'subdoc']],
  [Status.SubdocDocNotJson, 'SUBDOC_DOC_NOTJSON', 'Subdoc: document is not JSON', ['item-only', 'subdoc']],
  [Status.SubdocNumRange, 'SUBDOC_NUM_ERANGE', 'Subdoc: number out of range', ['item-only', 'subdoc']],
  [Status.SubdocDeltaRange, 'SUBDOC_DELTA_EINVAL', 'Subdoc: invalid delta', ['invalid-input', 'subdoc']],
  [Status.SubdocPathExists, 'SUBDOC_PATH_EEXISTS', 'Subdoc: path exists', ['item-only', 'subdoc']],
  [Status.SubdocValueTooDeep, 'SUBDOC_VALUE_ETOODEEP', 'Subdoc: value too deep', ['invalid-input', 'subdoc']],
  [Status.SubdocInvalidCombo, 'SUBDOC_INVALID_COMBO', 'Subdoc: invalid combination of commands', ['invalid-input', 'subdoc']],
  [Status.SubdocMultiPathFailure, 'SUBDOC_MULTI_PATH_FAILURE', 'Subdoc: one of the paths failed', ['item-only', 'subdoc']],
];

export function errorMap(requested: number): object {
  const errors: Record<string, { name: string; desc: string; attrs: readonly string[] }> = {};
  for (const [status, name, desc, attrs] of ENTRIES) errors[status.toString(16)] = { name, desc, attrs };
  return { version: Math.min(Math.max(requested, 1), 2), revision: 1, errors };
}
