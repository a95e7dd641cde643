/**
 * The tuple type codes (FoundationDB's `design/tuple.md`), one table entry per type with its encoder,
 * decoder and comparator side by side. Codes the spec marks reserved or deprecated (0x03/0x04, 0x0a,
 * 0x1e, 0x22..0x25, 0x31, 0x32) have no entry: like FDB's own bindings, decoding them is an error.
 */
import { Buffer } from 'node:buffer';
import { TupleError } from './error';
import { Double, Float32 } from './float';
import type { Tuple, TupleItem } from './item';
import { UserType } from './user-type';
import { Uuid } from './uuid';
import { Versionstamp } from './versionstamp';
import type { Writer } from './writer';

/** A cursor over the bytes being unpacked. */
export class Reader {
  /** Nesting depth of the tuple being read; 0 is the outermost. */
  depth = 0;
  // Set by `scanTerminated` for the string it has just delimited.
  escapes = 0;
  nonAscii = false;

  constructor(
    readonly buf: Buffer,
    public pos: number,
  ) {}

  get end(): number {
    return this.buf.length;
  }
}

interface TypeCodec<T extends TupleItem> {
  /** The range of type codes this entry owns; `first` also ranks the type against the others. */
  readonly first: number;
  readonly last: number;
  encode(w: Writer, value: T): void;
  /** Reads a value whose type code, `code`, has been consumed; `r.pos` is the byte after it. */
  decode(r: Reader, code: number): T;
  /** Orders two values of this type as their encodings sort. */
  compare(a: T, b: T): number;
}

// Deep enough for any sane key (a key is at most 10 kB), shallow enough to turn cyclic arrays and
// hostile input into a TupleError well before the JS stack runs out.
const MAX_DEPTH = 1000;
const TWO_POW_32 = 0x100000000;
const utf8 = new TextDecoder('utf-8', { fatal: true });
const f64 = new DataView(new ArrayBuffer(8));

function truncated(what: string, at: number): TupleError {
  return new TupleError('TUPLE_DECODE', `truncated ${what} starting`, at);
}

/** Consumes `n` bytes of a fixed-length value and returns the offset of the first. */
function take(r: Reader, n: number, what: string): number {
  const p = r.pos;
  if (p + n > r.end) throw truncated(what, p - 1);
  r.pos = p + n;
  return p;
}

function sign(n: number): number {
  return n < 0 ? -1 : n > 0 ? 1 : 0;
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  return Buffer.compare(a, b);
}

// ---- byte and Unicode strings: 0x00 bytes escaped as 0x00 0xff, then a 0x00 terminator ----

/** Writes `src` with its 0x00 bytes escaped, and the terminator; room must already be ensured. */
function writeEscaped(w: Writer, src: Uint8Array): void {
  const b = w.buf;
  let p = w.pos;
  const n = src.length;
  if (n < 32) {
    for (let i = 0; i < n; i++) {
      const c = src[i];
      b[p++] = c;
      if (c === 0) b[p++] = 0xff;
    }
  } else {
    // Long values: copy the runs between zero bytes natively.
    let from = 0;
    for (let z = src.indexOf(0); z !== -1; z = src.indexOf(0, from)) {
      b.set(src.subarray(from, z + 1), p);
      p += z + 1 - from;
      b[p++] = 0xff;
      from = z + 1;
    }
    b.set(src.subarray(from), p);
    p += n - from;
  }
  b[p++] = 0x00;
  w.pos = p;
}

/**
 * Finds the terminator of the byte or Unicode string starting at `r.pos` and returns its offset. Leaves
 * the number of escapes in `r.escapes` and whether any byte is >= 0x80 in `r.nonAscii`.
 */
function scanTerminated(r: Reader, what: string): number {
  const b = r.buf;
  const end = r.end;
  let i = r.pos;
  let escapes = 0;
  let high = 0;
  for (;;) {
    if (i >= end) throw new TupleError('TUPLE_DECODE', `unterminated ${what} starting`, r.pos - 1);
    const c = b[i];
    if (c === 0) {
      if (i + 1 < end && b[i + 1] === 0xff) {
        escapes++;
        i += 2;
        continue;
      }
      break;
    }
    high |= c;
    i++;
  }
  r.escapes = escapes;
  r.nonAscii = high >= 0x80;
  return i;
}

/** A copy of `[start, stop)` with the escapes removed; `escapes` says how many there are. */
function unescape(b: Buffer, start: number, stop: number, escapes: number): Buffer {
  const out = Buffer.allocUnsafe(stop - start - escapes);
  if (escapes === 0) {
    if (out.length < 64) for (let i = 0; i < out.length; i++) out[i] = b[start + i];
    else b.copy(out, 0, start, stop);
    return out;
  }
  let o = 0;
  for (let i = start; i < stop; i++) {
    const c = b[i];
    out[o++] = c;
    if (c === 0) i++;
  }
  return out;
}

/**
 * The end of the byte or Unicode string whose type code is at `b[at]` (just after its terminator), or
 * -1 when it has none.
 */
export function stringEnd(b: Buffer, at: number): number {
  const n = b.length;
  for (let i = at + 1; i < n; i++) {
    if (b[i] === 0x00) {
      if (i + 1 < n && b[i + 1] === 0xff) i++;
      else return i + 1;
    }
  }
  return -1;
}

// ---- integers: 0x0c..0x1c hold up to 8 bytes, 0x0b/0x1d a length byte and up to 255 ----

const INT_ZERO = 0x14;
const NEG_BIG = 0x0b;
const POS_BIG = 0x1d;

// The largest magnitude of 0..4 bytes: negatives are stored as the one's complement, so decoding
// subtracts it. A table, because `2 ** (8 * n)` is a float power call on every negative integer read.
const ALL_ONES = [0, 0xff, 0xffff, 0xffffff, 0xffffffff];

function byteLength32(a: number): number {
  return a < 0x100 ? 1 : a < 0x10000 ? 2 : a < 0x1000000 ? 3 : 4;
}

/** The end of the integer whose type code is at `b[at]`, or -1 when the bytes end first. */
export function integerEnd(b: Buffer, at: number): number {
  const code = b[at];
  let end: number;
  if (code === POS_BIG || code === NEG_BIG) {
    if (at + 1 >= b.length) return -1;
    end = at + 2 + (code === NEG_BIG ? b[at + 1] ^ 0xff : b[at + 1]);
  } else {
    end = at + 1 + (code < INT_ZERO ? INT_ZERO - code : code - INT_ZERO);
  }
  return end <= b.length ? end : -1;
}

/** Integers within ±(2^53-1), without bigint: negatives are written as the one's complement. */
function encodeSafeInteger(w: Writer, v: number): void {
  w.ensure(9);
  const b = w.buf;
  let p = w.pos;
  if (v === 0) {
    b[p] = INT_ZERO;
    w.pos = p + 1;
    return;
  }
  const neg = v < 0;
  const a = neg ? -v : v;
  if (a < TWO_POW_32) {
    const n = byteLength32(a);
    b[p++] = neg ? INT_ZERO - n : INT_ZERO + n;
    // Bitwise ops work on the low 32 bits and Uint8Array stores keep the low 8: exactly the bytes needed.
    const x = neg ? ~a : a;
    for (let s = (n - 1) * 8; s >= 0; s -= 8) b[p++] = x >>> s;
  } else {
    let hi = Math.floor(a / TWO_POW_32);
    let lo = a >>> 0;
    const hn = byteLength32(hi);
    b[p++] = neg ? INT_ZERO - 4 - hn : INT_ZERO + 4 + hn;
    if (neg) {
      hi = ~hi;
      lo = ~lo;
    }
    for (let s = (hn - 1) * 8; s >= 0; s -= 8) b[p++] = hi >>> s;
    b[p++] = lo >>> 24;
    b[p++] = lo >>> 16;
    b[p++] = lo >>> 8;
    b[p++] = lo;
  }
  w.pos = p;
}

/**
 * Integers beyond ±(2^53-1). Up to 8 magnitude bytes use 0x0c..0x1c, so ±(2^64-1) get the 8-byte form
 * as in the Java and Go bindings (Python writes them as 0x1d/0x0b; both decode).
 */
function encodeBigInteger(w: Writer, v: bigint): void {
  const neg = v < 0n;
  let hex = (neg ? -v : v).toString(16);
  if (hex.length & 1) hex = '0' + hex;
  const n = hex.length >> 1;
  if (n > 255) throw new TupleError('TUPLE_ENCODE', `integer too large for the tuple encoding (${n} bytes > 255)`);
  w.ensure(n + 2);
  const b = w.buf;
  let p = w.pos;
  if (n <= 8) {
    b[p++] = neg ? INT_ZERO - n : INT_ZERO + n;
  } else {
    b[p++] = neg ? NEG_BIG : POS_BIG;
    b[p++] = neg ? n ^ 0xff : n;
  }
  b.write(hex, p, 'hex');
  if (neg) for (let i = p; i < p + n; i++) b[i] ^= 0xff;
  w.pos = p + n;
}

/** `n` (5..8) big-endian bytes at `p`, as a number when safe and a bigint otherwise. */
function readLongInteger(b: Buffer, p: number, n: number, neg: boolean): number | bigint {
  const hn = n - 4;
  let hi = 0;
  for (let i = 0; i < hn; i++) hi = hi * 256 + b[p + i];
  let lo = b.readUInt32BE(p + hn);
  if (neg) {
    hi = ALL_ONES[hn] - hi;
    lo = 0xffffffff - lo;
  }
  if (hi < 0x200000) {
    const m = hi * TWO_POW_32 + lo;
    return neg ? 0 - m : m;
  }
  const big = (BigInt(hi) << 32n) | BigInt(lo);
  return neg ? -big : big;
}

function readArbitraryInteger(r: Reader, neg: boolean): number | bigint {
  const b = r.buf;
  const at = r.pos - 1;
  if (r.pos >= r.end) throw truncated('integer', at);
  const n = neg ? b[r.pos] ^ 0xff : b[r.pos];
  const p = r.pos + 1;
  if (p + n > r.end) throw truncated('integer', at);
  r.pos = p + n;
  if (n === 0) return 0;
  const raw = BigInt('0x' + b.toString('hex', p, p + n));
  const v = neg ? raw - ((1n << BigInt(8 * n)) - 1n) : raw;
  return v >= -Number.MAX_SAFE_INTEGER && v <= Number.MAX_SAFE_INTEGER ? Number(v) : v;
}

// ---- IEEE floats: big-endian bits, sign bit flipped for positives and every bit for negatives ----

/** The bits of a float32 as stored, so that unsigned byte order is numeric order. */
function orderFloat32(bits: number): number {
  return (bits & 0x80000000 ? ~bits : bits ^ 0x80000000) >>> 0;
}

// For doubles the 64 bits travel as two unsigned 32-bit halves, set by `doubleHalves`.
let hiBits = 0;
let loBits = 0;

function doubleHalves(v: number | Double): void {
  if (typeof v !== 'number') {
    hiBits = Number(v.bits >> 32n);
    loBits = Number(v.bits & 0xffffffffn);
  } else if (v !== v) {
    hiBits = 0x7ff80000;
    loBits = 0;
  } else {
    f64.setFloat64(0, v);
    hiBits = f64.getUint32(0);
    loBits = f64.getUint32(4);
  }
  // To stored (order-preserving) form.
  if (hiBits & 0x80000000) {
    hiBits = ~hiBits >>> 0;
    loBits = ~loBits >>> 0;
  } else {
    hiBits = (hiBits ^ 0x80000000) >>> 0;
  }
}

function writeUint32(b: Buffer, p: number, x: number): void {
  b[p] = x >>> 24;
  b[p + 1] = x >>> 16;
  b[p + 2] = x >>> 8;
  b[p + 3] = x;
}

/** True for numbers that encode as integers: integral and not -0. */
function isIntegral(v: number): boolean {
  return Number.isInteger(v) && (v !== 0 || 1 / v > 0);
}

// ---- the table ----

const NULL: TypeCodec<null> = {
  first: 0x00,
  last: 0x00,
  encode(w) {
    w.ensure(1);
    w.buf[w.pos++] = 0x00;
  },
  decode: () => null,
  compare: () => 0,
};

const BYTES: TypeCodec<Uint8Array> = {
  first: 0x01,
  last: 0x01,
  encode(w, v) {
    w.ensure(2 * v.length + 2);
    w.buf[w.pos++] = 0x01;
    writeEscaped(w, v);
  },
  decode(r) {
    const stop = scanTerminated(r, 'byte string');
    const out = unescape(r.buf, r.pos, stop, r.escapes);
    r.pos = stop + 1;
    return out;
  },
  compare: compareBytes,
};

/**
 * Reads a Unicode string whose type code (0x02) has been consumed. Exported for the document layer,
 * which reads a string from most leaves and calls this directly rather than through the table.
 */
export function readString(r: Reader): string {
  const start = r.pos;
  const stop = scanTerminated(r, 'string');
  r.pos = stop + 1;
  if (!r.nonAscii && r.escapes === 0) {
    // Short ASCII strings (field names, small keys) build faster in JS than through a native call.
    if (stop - start > 12) return r.buf.toString('latin1', start, stop);
    const b = r.buf;
    let out = '';
    for (let i = start; i < stop; i++) out += String.fromCharCode(b[i]);
    return out;
  }
  try {
    return utf8.decode(unescape(r.buf, start, stop, r.escapes));
  } catch {
    throw new TupleError('TUPLE_DECODE', 'string is not valid UTF-8', start - 1);
  }
}

const STRING: TypeCodec<string> = {
  first: 0x02,
  last: 0x02,
  // UTF-8 by hand: it escapes 0x00 in the same pass, and rejects lone surrogates, which have no UTF-8
  // form (Buffer would silently write U+FFFD, so two different strings would share a key).
  encode(w, s) {
    const n = s.length;
    w.ensure(3 * n + 2);
    const b = w.buf;
    let p = w.pos;
    b[p++] = 0x02;
    for (let i = 0; i < n; i++) {
      let c = s.charCodeAt(i);
      if (c < 0x80) {
        b[p++] = c;
        if (c === 0) b[p++] = 0xff;
      } else if (c < 0x800) {
        b[p++] = 0xc0 | (c >> 6);
        b[p++] = 0x80 | (c & 0x3f);
      } else if (c < 0xd800 || c >= 0xe000) {
        b[p++] = 0xe0 | (c >> 12);
        b[p++] = 0x80 | ((c >> 6) & 0x3f);
        b[p++] = 0x80 | (c & 0x3f);
      } else {
        const d = i + 1 < n ? s.charCodeAt(i + 1) : 0;
        if (c >= 0xdc00 || d < 0xdc00 || d >= 0xe000) {
          throw new TupleError('TUPLE_ENCODE', `string has a lone surrogate at index ${i}`);
        }
        i++;
        c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        b[p++] = 0xf0 | (c >> 18);
        b[p++] = 0x80 | ((c >> 12) & 0x3f);
        b[p++] = 0x80 | ((c >> 6) & 0x3f);
        b[p++] = 0x80 | (c & 0x3f);
      }
    }
    b[p++] = 0x00;
    w.pos = p;
  },
  decode: readString,
  // UTF-8 byte order is code point order, which JS's `<` (UTF-16 code units) gets wrong once surrogates
  // meet characters U+E000..U+FFFF. Shifting surrogates above those units fixes it.
  compare(a, b) {
    const n = Math.min(a.length, b.length);
    for (let i = 0; i < n; i++) {
      let x = a.charCodeAt(i);
      let y = b.charCodeAt(i);
      if (x === y) continue;
      if (x >= 0xd800) x += x < 0xe000 ? 0x2000 : -0x800;
      if (y >= 0xd800) y += y < 0xe000 ? 0x2000 : -0x800;
      return x < y ? -1 : 1;
    }
    return sign(a.length - b.length);
  },
};

// Elements are written as they are, except null, which becomes 0x00 0xff so a 0x00 can end the tuple.
const NESTED: TypeCodec<Tuple> = {
  first: 0x05,
  last: 0x05,
  encode(w, items) {
    if (++w.depth > MAX_DEPTH) throw new TupleError('TUPLE_ENCODE', `tuples nested deeper than ${MAX_DEPTH}`);
    w.ensure(1);
    w.buf[w.pos++] = 0x05;
    for (let i = 0; i < items.length; i++) {
      const item = items[i];
      if (item === null) {
        w.ensure(2);
        w.buf[w.pos++] = 0x00;
        w.buf[w.pos++] = 0xff;
      } else {
        encodeItem(w, item);
        if (w.openEnded) throw new TupleError('TUPLE_ENCODE', 'a UserType cannot be nested');
      }
    }
    w.ensure(1);
    w.buf[w.pos++] = 0x00;
    w.depth--;
  },
  decode(r) {
    const at = r.pos - 1;
    if (++r.depth > MAX_DEPTH) throw new TupleError('TUPLE_DECODE', `tuples nested deeper than ${MAX_DEPTH}`, at);
    const b = r.buf;
    const out: TupleItem[] = [];
    for (;;) {
      const p = r.pos;
      if (p >= r.end) throw new TupleError('TUPLE_DECODE', 'unterminated nested tuple starting', at);
      if (b[p] === 0x00) {
        if (p + 1 < r.end && b[p + 1] === 0xff) {
          out.push(null);
          r.pos = p + 2;
        } else {
          r.pos = p + 1;
          break;
        }
      } else {
        out.push(decodeItem(r));
      }
    }
    r.depth--;
    return out;
  },
  compare: compareTuples,
};

const INTEGER: TypeCodec<number | bigint> = {
  first: NEG_BIG,
  last: POS_BIG,
  encode(w, v) {
    if (typeof v === 'number') {
      if (v >= -Number.MAX_SAFE_INTEGER && v <= Number.MAX_SAFE_INTEGER) encodeSafeInteger(w, v);
      else encodeBigInteger(w, BigInt(v));
    } else if (v >= -Number.MAX_SAFE_INTEGER && v <= Number.MAX_SAFE_INTEGER) {
      encodeSafeInteger(w, Number(v));
    } else {
      encodeBigInteger(w, v);
    }
  },
  decode(r, code) {
    if (code === INT_ZERO) return 0;
    if (code === POS_BIG || code === NEG_BIG) return readArbitraryInteger(r, code === NEG_BIG);
    const neg = code < INT_ZERO;
    const n = neg ? INT_ZERO - code : code - INT_ZERO;
    const p = take(r, n, 'integer');
    if (n > 4) return readLongInteger(r.buf, p, n, neg);
    const b = r.buf;
    let x = 0;
    for (let i = p; i < p + n; i++) x = x * 256 + b[i];
    return neg ? x - ALL_ONES[n] : x;
  },
  compare: (a, b) => (a < b ? -1 : a > b ? 1 : 0),
};

const FLOAT: TypeCodec<Float32> = {
  first: 0x20,
  last: 0x20,
  encode(w, v) {
    w.ensure(5);
    w.buf[w.pos] = 0x20;
    writeUint32(w.buf, w.pos + 1, orderFloat32(v.bits));
    w.pos += 5;
  },
  decode(r) {
    const s = r.buf.readUInt32BE(take(r, 4, 'float'));
    return Float32.fromBits((s & 0x80000000 ? s ^ 0x80000000 : ~s) >>> 0);
  },
  compare: (a, b) => sign(orderFloat32(a.bits) - orderFloat32(b.bits)),
};

const DOUBLE: TypeCodec<number | Double> = {
  first: 0x21,
  last: 0x21,
  encode(w, v) {
    w.ensure(9);
    doubleHalves(v);
    const b = w.buf;
    b[w.pos] = 0x21;
    writeUint32(b, w.pos + 1, hiBits);
    writeUint32(b, w.pos + 5, loBits);
    w.pos += 9;
  },
  // A plain number only where `pack` would write the same bits for it: other doubles come back as
  // `Double`, so that they re-encode as doubles (integral values) or keep their NaN payload.
  decode(r) {
    const p = take(r, 8, 'double');
    let hi = r.buf.readUInt32BE(p);
    let lo = r.buf.readUInt32BE(p + 4);
    if (hi & 0x80000000) {
      hi ^= 0x80000000;
    } else {
      hi = ~hi;
      lo = ~lo;
    }
    f64.setUint32(0, hi);
    f64.setUint32(4, lo);
    const v = f64.getFloat64(0);
    if (v !== v) {
      return hi >>> 0 === 0x7ff80000 && lo >>> 0 === 0 ? NaN : Double.fromBits(f64.getBigUint64(0));
    }
    return isIntegral(v) ? new Double(v) : v;
  },
  compare(a, b) {
    const x = typeof a === 'number' ? a : a.value;
    const y = typeof b === 'number' ? b : b.value;
    if (x < y) return -1;
    if (x > y) return 1;
    if (x === y && x !== 0) return 0;
    // ±0 and NaNs: only the bits tell them apart.
    doubleHalves(a);
    const ah = hiBits;
    const al = loBits;
    doubleHalves(b);
    return ah !== hiBits ? sign(ah - hiBits) : sign(al - loBits);
  },
};

const BOOLEAN: TypeCodec<boolean> = {
  first: 0x26,
  last: 0x27,
  encode(w, v) {
    w.ensure(1);
    w.buf[w.pos++] = v ? 0x27 : 0x26;
  },
  decode: (_r, code) => code === 0x27,
  compare: (a, b) => Number(a) - Number(b),
};

const UUID: TypeCodec<Uuid> = {
  first: 0x30,
  last: 0x30,
  encode(w, v) {
    w.ensure(17);
    w.buf[w.pos++] = 0x30;
    w.bytes(v.bytes);
  },
  decode(r) {
    const p = take(r, 16, 'UUID');
    return new Uuid(r.buf.subarray(p, p + 16));
  },
  compare: (a, b) => compareBytes(a.bytes, b.bytes),
};

const VERSIONSTAMP: TypeCodec<Versionstamp> = {
  first: 0x33,
  last: 0x33,
  encode(w, v) {
    w.ensure(13);
    w.buf[w.pos++] = 0x33;
    if (!v.isComplete) {
      if (w.versionstampAt >= 0) {
        throw new TupleError('TUPLE_VERSIONSTAMP', 'a tuple can hold only one incomplete versionstamp');
      }
      w.versionstampAt = w.pos;
    }
    v.writeTo(w.buf, w.pos);
    w.pos += 12;
  },
  decode: (r) => Versionstamp.fromBytes(r.buf, take(r, 12, 'versionstamp')),
  compare: (a, b) => compareBytes(a.toBytes(), b.toBytes()),
};

// See UserType for why such a value runs to the end of the key.
const USER_TYPE: TypeCodec<UserType> = {
  first: 0x40,
  last: 0x4f,
  encode(w, v) {
    w.ensure(1);
    w.buf[w.pos++] = v.code;
    w.bytes(v.bytes);
    w.openEnded = true;
  },
  decode(r, code) {
    if (r.depth > 0) {
      throw new TupleError('TUPLE_DECODE', `user type code 0x${code.toString(16)} inside a nested tuple`, r.pos - 1);
    }
    const out = new UserType(code, r.buf.subarray(r.pos));
    r.pos = r.end;
    return out;
  },
  compare: (a, b) => (a.code !== b.code ? sign(a.code - b.code) : compareBytes(a.bytes, b.bytes)),
};

/** Decoders indexed by type code; unassigned codes are undefined. */
const BY_CODE: (TypeCodec<TupleItem> | undefined)[] = new Array<TypeCodec<TupleItem> | undefined>(256).fill(undefined);
for (const c of [NULL, BYTES, STRING, NESTED, INTEGER, FLOAT, DOUBLE, BOOLEAN, UUID, VERSIONSTAMP, USER_TYPE]) {
  for (let code = c.first; code <= c.last; code++) BY_CODE[code] = c;
}

function describeValue(v: unknown): string {
  if (v === undefined) return 'undefined';
  if (typeof v === 'object' && v !== null) return `an object (${v.constructor?.name ?? 'no prototype'})`;
  return `a ${typeof v}`;
}

/** The table entry for a value, by its JS type; throws for values with no tuple encoding. */
function codecOf(v: TupleItem): TypeCodec<TupleItem> {
  switch (typeof v) {
    case 'string':
      return STRING;
    case 'number':
      return isIntegral(v) ? INTEGER : DOUBLE;
    case 'bigint':
      return INTEGER;
    case 'boolean':
      return BOOLEAN;
    case 'object':
      if (v === null) return NULL;
      if (Array.isArray(v)) return NESTED;
      if (v instanceof Uint8Array) return BYTES;
      if (v instanceof Versionstamp) return VERSIONSTAMP;
      if (v instanceof Uuid) return UUID;
      if (v instanceof Double) return DOUBLE;
      if (v instanceof Float32) return FLOAT;
      if (v instanceof UserType) return USER_TYPE;
      break;
    case 'function':
    case 'symbol':
    case 'undefined':
      // TupleItem rules these out, but JavaScript callers can still pass them.
      break;
  }
  throw new TupleError('TUPLE_ENCODE', `cannot encode ${describeValue(v)} as a tuple element`);
}

/** Appends the encoding of one element (a top-level one: null is the single byte 0x00). */
export function encodeItem(w: Writer, v: TupleItem): void {
  codecOf(v).encode(w, v);
}

/** Appends the encodings of the elements of the outermost tuple. */
export function encodeElements(w: Writer, items: Tuple): void {
  for (let i = 0; i < items.length; i++) {
    if (w.openEnded) throw new TupleError('TUPLE_ENCODE', 'a UserType must be the last element of the tuple');
    encodeItem(w, items[i]);
  }
}

/** Reads one element at `r.pos`. */
export function decodeItem(r: Reader): TupleItem {
  const code = r.buf[r.pos];
  const c = BY_CODE[code];
  if (c === undefined) {
    if (r.pos >= r.end) throw new TupleError('TUPLE_DECODE', 'an element expected, the input ends', r.pos);
    throw new TupleError('TUPLE_DECODE', `unknown type code 0x${code.toString(16).padStart(2, '0')}`, r.pos);
  }
  r.pos++;
  return c.decode(r, code);
}

function compareItems(a: TupleItem, b: TupleItem): number {
  const ca = codecOf(a);
  const cb = codecOf(b);
  if (ca !== cb) return ca.first < cb.first ? -1 : 1;
  return ca.compare(a, b);
}

/** Orders two tuples as their packings sort, element by element, a prefix first. */
export function compareTuples(a: Tuple, b: Tuple): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const c = compareItems(a[i], b[i]);
    if (c !== 0) return c;
  }
  return sign(a.length - b.length);
}
