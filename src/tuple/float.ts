import { TupleError } from './error';

// One scratch view serves every conversion between a number and its IEEE 754 bits; the conversions are
// synchronous, so sharing it is safe and saves an allocation per value.
const scratch = new DataView(new ArrayBuffer(8));

/** The IEEE 754 single-precision bits of `value` rounded to float32, with every NaN made 0x7fc00000. */
function float32Bits(value: number): number {
  if (value !== value) return 0x7fc00000;
  scratch.setFloat32(0, value);
  return scratch.getUint32(0);
}

/**
 * A 32-bit float (type code 0x20). Plain JS numbers encode as integers or 64-bit doubles, so a float32
 * element needs this wrapper both ways. The exact bits are kept, NaN payloads included, so a decoded
 * value re-encodes to the same bytes.
 */
export class Float32 {
  /** The IEEE 754 single-precision bits, as an unsigned 32-bit integer. */
  readonly bits: number;

  /** `value` rounded to the nearest float32 (as `Math.fround` does); NaN becomes the canonical 0x7fc00000. */
  constructor(value: number) {
    this.bits = float32Bits(value);
  }

  /** A float32 with exactly these bits (an unsigned 32-bit integer), e.g. a NaN with a payload. */
  static fromBits(bits: number): Float32 {
    if (!Number.isInteger(bits) || bits < 0 || bits > 0xffffffff) {
      throw new TupleError('TUPLE_ENCODE', `Float32 bits must be an unsigned 32-bit integer, got ${bits}`);
    }
    const f = Object.create(Float32.prototype) as { bits: number };
    f.bits = bits;
    return f as Float32;
  }

  /** The value as a JS number (exact: every float32 is a double). */
  get value(): number {
    scratch.setUint32(0, this.bits);
    return scratch.getFloat32(0);
  }

  valueOf(): number {
    return this.value;
  }

  toString(): string {
    return `Float32(${this.value})`;
  }
}

/** The canonical NaN: what `pack` writes for every NaN that is not a `Double` with explicit bits. */
const CANONICAL_NAN_BITS = 0x7ff8000000000000n;

/**
 * A 64-bit double (type code 0x21) given explicitly. Plain non-integral numbers, -0, ±Infinity and NaN
 * already encode as doubles; this wrapper is for integral values (which would otherwise encode as
 * integers) and for NaNs with a payload. `unpack` returns it for exactly those doubles, so `pack(unpack(b))`
 * reproduces `b`.
 */
export class Double {
  /** The value as a JS number. */
  readonly value: number;
  /** The IEEE 754 double-precision bits, as an unsigned 64-bit bigint. */
  readonly bits: bigint;

  /** A double holding `value`; any NaN gets the canonical bits 0x7ff8000000000000. */
  constructor(value: number) {
    this.value = value;
    if (value !== value) {
      this.bits = CANONICAL_NAN_BITS;
    } else {
      scratch.setFloat64(0, value);
      this.bits = scratch.getBigUint64(0);
    }
  }

  /** A double with exactly these bits (an unsigned 64-bit bigint), e.g. a NaN with a payload. */
  static fromBits(bits: bigint): Double {
    if (bits < 0n || bits > 0xffffffffffffffffn) {
      throw new TupleError('TUPLE_ENCODE', `Double bits must be an unsigned 64-bit integer, got ${bits}`);
    }
    scratch.setBigUint64(0, bits);
    const d = Object.create(Double.prototype) as { value: number; bits: bigint };
    d.value = scratch.getFloat64(0);
    d.bits = bits;
    return d as Double;
  }

  valueOf(): number {
    return this.value;
  }

  toString(): string {
    return `Double(${this.value})`;
  }
}
