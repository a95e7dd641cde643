/**
 * Stable string codes of the document layer's errors, as Couchbase's sub-document statuses name them
 * where one exists. Users switch on `code`; messages are for people and may change.
 */
export type DocumentErrorCode =
  | 'DOCUMENT_NOT_FOUND'
  | 'DOCUMENT_EXISTS'
  | 'PATH_NOT_FOUND'
  | 'PATH_EXISTS'
  | 'PATH_MISMATCH'
  | 'CAS_MISMATCH'
  | 'DOCUMENT_LOCKED'
  | 'DOCUMENT_NOT_LOCKED'
  | 'INVALID_PATH'
  | 'INVALID_VALUE'
  | 'VALUE_TOO_DEEP'
  | 'DOCUMENT_TOO_LARGE'
  | 'KEY_TOO_LARGE'
  | 'INVALID_ARGUMENT'
  | 'DELTA_INVALID'
  | 'NUMBER_TOO_BIG'
  | 'VALUE_CANNOT_INSERT'
  | 'WRONG_KIND'
  | 'LEASE_EXPIRED'
  | 'UNKNOWN_COLLECTION'
  | 'UNKNOWN_SCOPE'
  | 'NO_COLLECTIONS_MANIFEST'
  | 'OUT_OF_RANGE'
  | 'INVALID_LEB128'
  | 'CORRUPT_DATA'
  | 'INVALID_FILTER'
  | 'UNSUPPORTED_OPERATOR'
  | 'NO_INDEX'
  | 'INVALID_QUERY'
  | 'INVALID_INDEX'
  | 'INDEX_EXISTS'
  | 'INDEX_NOT_FOUND'
  | 'INDEX_NOT_READY'
  | 'UNIQUE_VIOLATION'
  | 'TOO_MANY_INDEX_ENTRIES'
  | 'INDEX_ENTRY_TOO_LARGE';

/** Where an error happened, as far as the thrower knows it. */
export interface DocumentErrorDetails {
  /** The path concerned, in its canonical string form (see `formatPath`). */
  path?: string;
  /** The index of the failing spec in a `lookupIn`/`mutateIn` call. */
  specIndex?: number;
  /** A 0-based position: of a character in a path string, of an element in a path array, of a byte. */
  position?: number;
  /** The document id concerned. */
  id?: unknown;
  /** The underlying error, kept as the standard `Error.cause`. */
  cause?: unknown;
}

/**
 * The one error class of the document layer. `message` starts with the code, then says what is wrong
 * and where: `INVALID_PATH: unexpected ']' at position 3 in "a.b]c"`.
 */
export class DocumentError extends Error {
  override readonly name = 'DocumentError';
  readonly code: DocumentErrorCode;
  // `declare`: with ES2022 class fields a plain declaration would define each as an own `undefined`.
  declare readonly path?: string;
  declare readonly specIndex?: number;
  declare readonly position?: number;
  declare readonly id?: unknown;

  /**
   * @param message what is wrong and where. The code is prefixed unless `message` already starts with
   *   it, so callers may write either form and messages never repeat the code.
   */
  constructor(code: DocumentErrorCode, message: string, details?: DocumentErrorDetails) {
    const prefixed = message.startsWith(`${code}:`) ? message : `${code}: ${message}`;
    super(prefixed, details && 'cause' in details ? { cause: details.cause } : undefined);
    this.code = code;
    // Absent details stay absent, so errors compare and print cleanly.
    if (details?.path !== undefined) this.path = details.path;
    if (details?.specIndex !== undefined) this.specIndex = details.specIndex;
    if (details?.position !== undefined) this.position = details.position;
    if (details?.id !== undefined) this.id = details.id;
  }
}

/** True when `err` is a {@link DocumentError}, with the given code when one is given. */
export function isDocumentError(err: unknown, code?: DocumentErrorCode): err is DocumentError {
  return err instanceof DocumentError && (code === undefined || err.code === code);
}

/**
 * The error for stored bytes that no doclayer write produces: damaged data, or another program's keys
 * inside doclayer's subspace. `what` names the data and the fault: `'queue data: an item record'`.
 */
export function corruptData(what: string, cause?: unknown): DocumentError {
  return new DocumentError('CORRUPT_DATA', `corrupt ${what}`, cause === undefined ? undefined : { cause });
}
