import { Buffer } from 'node:buffer';
import { TupleError } from './error';

/**
 * A value under one of the user type codes 0x40..0x4f, kept opaque: the code and the bytes after it.
 *
 * The spec leaves these encodings to the application, so a decoder cannot know where such a value ends.
 * FDB's own bindings refuse these codes outright; this layer keeps them readable instead, under one rule:
 * a user-type value runs to the end of the key. `unpack` therefore reads everything after the code as its
 * bytes, and `pack` accepts a `UserType` only as the last element of the outermost tuple (never nested),
 * so whatever it packs it can unpack to the same values.
 */
export class UserType {
  /** The type code, 0x40..0x4f. */
  readonly code: number;
  /** The raw bytes after the code, written verbatim. Treat as read-only. */
  readonly bytes: Buffer;

  /** `bytes` is copied. */
  constructor(code: number, bytes: Uint8Array = new Uint8Array(0)) {
    if (!Number.isInteger(code) || code < 0x40 || code > 0x4f) {
      throw new TupleError('TUPLE_ENCODE', `user type codes are 0x40..0x4f, got ${code}`);
    }
    if (!(bytes instanceof Uint8Array)) throw new TupleError('TUPLE_ENCODE', 'user type bytes must be a Uint8Array');
    this.code = code;
    this.bytes = Buffer.from(bytes);
  }
}
