/**
 * What went wrong, so callers can switch on it without parsing messages:
 * - `TUPLE_DECODE`: the bytes are not a valid tuple (truncated, unknown type code, invalid UTF-8, ...).
 * - `TUPLE_ENCODE`: a value has no tuple encoding (undefined, a function, a plain object, ...).
 * - `TUPLE_VERSIONSTAMP`: the number of incomplete versionstamps does not suit the call.
 * - `TUPLE_SUBSPACE`: a key handed to a subspace does not start with its prefix.
 */
export type TupleErrorCode = 'TUPLE_DECODE' | 'TUPLE_ENCODE' | 'TUPLE_VERSIONSTAMP' | 'TUPLE_SUBSPACE';

/** The one error class of the tuple layer. */
export class TupleError extends Error {
  override readonly name = 'TupleError';
  readonly code: TupleErrorCode;
  /** For `TUPLE_DECODE`, the offset in the input of the byte at fault; otherwise undefined. */
  readonly offset: number | undefined;

  constructor(code: TupleErrorCode, message: string, offset?: number) {
    super(offset === undefined ? message : `${message} at byte ${offset}`);
    this.code = code;
    this.offset = offset;
  }
}
