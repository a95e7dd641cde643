import { Buffer } from 'node:buffer';
import { DocumentError, corruptData } from '../document/errors';
import type { JsonValue } from '../document/types';
import { MISSING, compareStrings, type IndexValue, type ValueType } from '../filter/value-order';

/**
 * The order-preserving byte encoding of index values: `Buffer.compare(encodeValue(a), encodeValue(b))`
 * has the sign of `compareValues(a, b)` (src/filter/value-order.ts), and equal values (1, 1.0 and 1n;
 * -0 and 0) encode to equal bytes. Every encoding is self-delimiting (no encoding is a proper prefix of
 * another), so encodings concatenate into compound keys that sort field by field, and inverting every
 * byte of a field's encoding reverses its order (a `desc` field).
 *
 * | type | bytes |
 * | --- | --- |
 * | missing | `01` |
 * | null | `02` |
 * | negative number | `03`, then the bytes of its magnitude (below), every bit inverted |
 * | zero | `04` |
 * | positive number | `05`, then its magnitude: the binary exponent `e` (x = 1.m × 2^e) plus 32768 as 2 bytes big-endian, then the bits `m` after the leading 1 (trailing zeros dropped) in 7-bit groups, each group in a byte's high bits with the low bit 1 when another group follows |
 * | string | `06`, its UTF-8 bytes with `00` written `00 ff`, then `00` |
 * | object | `07`, per (key, value) in key order (sorted by code point) `01` key-bytes-as-a-string's `00` value, then `00` |
 * | array | `08`, each element's encoding, then `00` |
 * | false, true | `09`, `0a` |
 *
 * Numbers are exact: a double's value and a bigint's are both taken as binary fractions, so 2^53+1 as
 * a bigint sorts between the doubles 2^53 and 2^53+2, and 0.5 between 0 and 1. UTF-8 byte order is
 * code point order.
 */

const TAG_MISSING = 0x01;
const TAG_NULL = 0x02;
const TAG_NEGATIVE = 0x03;
const TAG_ZERO = 0x04;
const TAG_POSITIVE = 0x05;
const TAG_STRING = 0x06;
const TAG_OBJECT = 0x07;
const TAG_ARRAY = 0x08;
const TAG_FALSE = 0x09;
const TAG_TRUE = 0x0a;
/** The byte after every tag: where the types end. */
const TAG_END = 0x0b;

const END = 0x00;
const PAIR = 0x01;
const ESCAPE = 0xff;
const EXPONENT_BIAS = 32768;

/** The first tag byte of each type, and the one after the last type. */
const FIRST_TAG: Readonly<Record<ValueType, number>> = {
  missing: TAG_MISSING,
  null: TAG_NULL,
  number: TAG_NEGATIVE,
  string: TAG_STRING,
  object: TAG_OBJECT,
  array: TAG_ARRAY,
  boolean: TAG_FALSE,
};
const NEXT_TAG: Readonly<Record<ValueType, number>> = {
  missing: TAG_NULL,
  null: TAG_NEGATIVE,
  number: TAG_STRING,
  string: TAG_OBJECT,
  object: TAG_ARRAY,
  array: TAG_FALSE,
  boolean: TAG_END,
};

/** The first byte of any encoding of a value of type `t`. */
export function typeStartByte(t: ValueType): number {
  return FIRST_TAG[t];
}

/** The first byte after every encoding of a value of type `t`. */
export function typeEndByte(t: ValueType): number {
  return NEXT_TAG[t];
}

/** The encoding of `value`. */
export function encodeValue(value: IndexValue): Buffer {
  const out: number[] = [];
  write(out, value);
  return Buffer.from(out);
}

/** `bytes` with every bit inverted: the encoding of a `desc` field, or its decoding. */
export function invert(bytes: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(bytes.length);
  for (let i = 0; i < bytes.length; i++) out[i] = ~bytes[i] & 0xff;
  return out;
}

function write(out: number[], value: IndexValue): void {
  if (value === MISSING) {
    out.push(TAG_MISSING);
    return;
  }
  if (value === null) {
    out.push(TAG_NULL);
    return;
  }
  switch (typeof value) {
    case 'boolean':
      out.push(value ? TAG_TRUE : TAG_FALSE);
      return;
    case 'number':
    case 'bigint':
      writeNumber(out, value);
      return;
    case 'string':
      out.push(TAG_STRING);
      writeString(out, value);
      return;
    default:
      break;
  }
  if (Array.isArray(value)) {
    out.push(TAG_ARRAY);
    for (const element of value) write(out, element);
    out.push(END);
    return;
  }
  if (typeof value !== 'object') throw new DocumentError('INVALID_ARGUMENT', `an index value is a JSON value, got a ${typeof value}`);
  out.push(TAG_OBJECT);
  const object = value as Record<string, JsonValue>;
  for (const key of Object.keys(object).sort(compareStrings)) {
    out.push(PAIR);
    writeString(out, key);
    write(out, object[key]);
  }
  out.push(END);
}

function writeString(out: number[], s: string): void {
  const bytes = Buffer.from(s, 'utf8');
  for (const byte of bytes) {
    out.push(byte);
    if (byte === 0) out.push(ESCAPE);
  }
  out.push(END);
}

/** {@link binaryParts} of a non-zero safe integer, in doubles (exact below 2^53): no bigint work. */
function integerParts(value: number): { odd: number; shift: number } {
  let odd = Math.abs(value);
  let shift = 0;
  while (odd % 2 === 0) {
    odd /= 2;
    shift += 1;
  }
  return { odd, shift };
}

/** A non-zero number as `odd × 2^shift`: the odd integer and the power of two. */
function binaryParts(value: number | bigint): { odd: bigint; shift: number } {
  let odd: bigint;
  let shift: number;
  if (typeof value === 'bigint') {
    odd = value < 0n ? -value : value;
    shift = 0;
  } else {
    if (!Number.isFinite(value)) throw new DocumentError('INVALID_ARGUMENT', `an index value is a finite number, got ${value}`);
    const view = new DataView(new ArrayBuffer(8));
    view.setFloat64(0, Math.abs(value));
    const high = view.getUint32(0);
    const biased = high >>> 20;
    const fraction = (BigInt(high & 0xfffff) << 32n) | BigInt(view.getUint32(4));
    odd = biased === 0 ? fraction : fraction | (1n << 52n);
    shift = (biased === 0 ? 1 : biased) - 1075;
  }
  while ((odd & 0xffffn) === 0n) {
    odd >>= 16n;
    shift += 16;
  }
  while ((odd & 1n) === 0n) {
    odd >>= 1n;
    shift += 1;
  }
  return { odd, shift };
}

function writeNumber(out: number[], value: number | bigint): void {
  if (value === 0 || value === 0n) {
    out.push(TAG_ZERO);
    return;
  }
  const negative = typeof value === 'bigint' ? value < 0n : value < 0;
  const { odd, shift } = typeof value === 'number' && Number.isSafeInteger(value) ? integerParts(value) : binaryParts(value);
  const bits = odd.toString(2).slice(1);
  const exponent = bits.length + shift;
  if (exponent + EXPONENT_BIAS < 0 || exponent + EXPONENT_BIAS > 0xffff) {
    throw new DocumentError('INVALID_ARGUMENT', 'an index value is a number too large or too small to index');
  }
  const body: number[] = [(exponent + EXPONENT_BIAS) >> 8, (exponent + EXPONENT_BIAS) & 0xff];
  const groups = Math.max(1, Math.ceil(bits.length / 7));
  const padded = bits.padEnd(groups * 7, '0');
  for (let g = 0; g < groups; g++) {
    const group = parseInt(padded.slice(g * 7, g * 7 + 7), 2);
    body.push((group << 1) | (g < groups - 1 ? 1 : 0));
  }
  out.push(negative ? TAG_NEGATIVE : TAG_POSITIVE);
  for (const byte of body) out.push(negative ? ~byte & 0xff : byte);
}

/** A cursor over encoded bytes, `invert`ed for a desc field. */
export class ValueReader {
  constructor(
    readonly bytes: Uint8Array,
    public pos: number,
    private readonly inverted = false,
  ) {}

  private next(): number {
    if (this.pos >= this.bytes.length) throw corruptData('index entry: a value ends too early');
    const byte = this.bytes[this.pos++];
    return this.inverted ? ~byte & 0xff : byte;
  }

  /** Decodes the value at the cursor and moves past it. */
  read(): IndexValue {
    const tag = this.next();
    switch (tag) {
      case TAG_MISSING:
        return MISSING;
      case TAG_NULL:
        return null;
      case TAG_FALSE:
        return false;
      case TAG_TRUE:
        return true;
      case TAG_ZERO:
        return 0;
      case TAG_POSITIVE:
      case TAG_NEGATIVE:
        return this.readNumber(tag === TAG_NEGATIVE);
      case TAG_STRING:
        return this.readString();
      case TAG_ARRAY: {
        const array: JsonValue[] = [];
        while (this.peek() !== END) array.push(this.read() as JsonValue);
        this.pos++;
        return array;
      }
      case TAG_OBJECT: {
        const object: Record<string, JsonValue> = {};
        for (;;) {
          const marker = this.next();
          if (marker === END) return object;
          if (marker !== PAIR) throw corruptData('index entry: an object pair');
          const key = this.readString();
          // Defined, not assigned: a `__proto__` key is a member like any other.
          Object.defineProperty(object, key, { value: this.read(), enumerable: true, writable: true, configurable: true });
        }
      }
      default:
        throw corruptData(`index entry: unknown value tag ${tag}`);
    }
  }

  private peek(): number {
    if (this.pos >= this.bytes.length) throw corruptData('index entry: a value ends too early');
    const byte = this.bytes[this.pos];
    return this.inverted ? ~byte & 0xff : byte;
  }

  private readString(): string {
    // Most strings hold no 00 byte: their UTF-8 bytes are decoded in place.
    if (!this.inverted) {
      const bytes = this.bytes;
      const end = bytes.indexOf(END, this.pos);
      if (end >= 0 && (end + 1 >= bytes.length || bytes[end + 1] !== ESCAPE)) {
        const s = Buffer.from(bytes.buffer, bytes.byteOffset + this.pos, end - this.pos).toString('utf8');
        this.pos = end + 1;
        return s;
      }
    }
    return this.readEscapedString();
  }

  private readEscapedString(): string {
    const bytes: number[] = [];
    for (;;) {
      const byte = this.next();
      if (byte !== END) {
        bytes.push(byte);
        continue;
      }
      if (this.pos < this.bytes.length && this.peek() === ESCAPE) {
        this.pos++;
        bytes.push(0);
        continue;
      }
      return Buffer.from(bytes).toString('utf8');
    }
  }

  private readNumber(negative: boolean): number | bigint {
    const start = this.pos;
    const fast = this.readShortNumber(negative);
    if (fast !== undefined) return fast;
    this.pos = start;
    return this.readLongNumber(negative);
  }

  /**
   * The common case without bigints: at most 7 groups (49 bits after the leading 1) and an exponent
   * far from a double's limits, where `(2^bits + m) × 2^(e − bits)` is exact (trailing zero bits
   * change neither factor's exactness). `undefined` otherwise, for {@link readLongNumber}.
   */
  private readShortNumber(negative: boolean): number | undefined {
    const flip = negative ? 0xff : 0;
    const exponent = ((((this.next() ^ flip) << 8) | (this.next() ^ flip)) >>> 0) - EXPONENT_BIAS;
    if (exponent > 1000 || exponent < -1000) return undefined;
    let mantissa = 0;
    let bits = 0;
    for (;;) {
      const byte = this.next() ^ flip;
      mantissa = mantissa * 128 + (byte >> 1);
      bits += 7;
      if ((byte & 1) === 0) break;
      if (bits === 49) return undefined;
    }
    const value = (2 ** bits + mantissa) * 2 ** (exponent - bits);
    return negative ? -value : value;
  }

  private readLongNumber(negative: boolean): number | bigint {
    const flip = (byte: number) => (negative ? ~byte & 0xff : byte);
    const exponent = ((flip(this.next()) << 8) | flip(this.next())) - EXPONENT_BIAS;
    let bits = '';
    for (;;) {
      const byte = flip(this.next());
      bits += (byte >> 1).toString(2).padStart(7, '0');
      if ((byte & 1) === 0) break;
    }
    bits = bits.replace(/0+$/, '');
    const odd = BigInt(`0b1${bits}`);
    const shift = exponent - bits.length;
    let value: number | bigint;
    if (bits.length <= 52 && exponent <= 1023 && shift >= -1074) {
      // Exact: odd has at most 53 bits and 2^shift is a double, so their product is the double written.
      value = Number(odd) * 2 ** shift;
    } else if (shift >= 0) {
      value = odd << BigInt(shift);
    } else {
      throw corruptData('index entry: a number no JSON value has');
    }
    if (!negative) return value;
    return typeof value === 'bigint' ? -value : -value;
  }
}

/** Decodes the one value `bytes` holds. */
export function decodeValue(bytes: Uint8Array): IndexValue {
  const reader = new ValueReader(bytes, 0);
  const value = reader.read();
  if (reader.pos !== bytes.length) throw corruptData('index entry: bytes after a value');
  return value;
}
