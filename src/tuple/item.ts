import type { Double, Float32 } from './float';
import type { UserType } from './user-type';
import type { Uuid } from './uuid';
import type { Versionstamp } from './versionstamp';

/**
 * One element of a tuple, and how each kind is encoded:
 * - `null` (0x00), `false`/`true` (0x26/0x27)
 * - `Uint8Array`, including `Buffer`: byte string (0x01); always decoded as a `Buffer`
 * - `string`: Unicode string (0x02), UTF-8
 * - `number` that is an integer (but not -0), or `bigint`: integer (0x0b..0x1d), any size up to 255
 *   bytes. Decoded as `number` inside the safe range (±(2^53-1)), as `bigint` outside it.
 * - any other `number` (fractions, -0, ±Infinity, NaN): double (0x21)
 * - `Float32`: float (0x20); `Double`: double (0x21) with an integral value or exact NaN bits
 * - `Uuid` (0x30), `Versionstamp` (0x33), `UserType` (0x40..0x4f)
 * - an array: nested tuple (0x05)
 */
export type TupleItem = null | boolean | number | bigint | string | Uint8Array | Float32 | Double | Uuid | Versionstamp | UserType | Tuple;

/** A tuple: its packing is the concatenation of its elements' encodings. */
export type Tuple = readonly TupleItem[];

/** The keys of every tuple that extends a prefix, as `[begin, end)`. */
export interface TupleRange {
  begin: Buffer;
  end: Buffer;
}
