import { Buffer } from 'node:buffer';
import { TupleError } from './error';

const UUID_TEXT = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** An RFC 4122 UUID (type code 0x30): 16 bytes in network byte order, which is also their sort order. */
export class Uuid {
  /** The 16 bytes, big-endian. Treat as read-only: the tuple layer does not copy it again. */
  readonly bytes: Buffer;

  /** From 16 bytes (copied) or the text form `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` (any case). */
  constructor(value: Uint8Array | string) {
    if (typeof value === 'string') {
      if (!UUID_TEXT.test(value)) throw new TupleError('TUPLE_ENCODE', `not a UUID: ${JSON.stringify(value)}`);
      this.bytes = Buffer.from(value.replace(/-/g, ''), 'hex');
    } else {
      if (!(value instanceof Uint8Array) || value.length !== 16) {
        throw new TupleError('TUPLE_ENCODE', 'a UUID is exactly 16 bytes');
      }
      this.bytes = Buffer.from(value);
    }
  }

  /** The lower-case text form, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`. */
  toString(): string {
    const h = this.bytes.toString('hex');
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  }
}
