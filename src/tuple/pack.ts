import { Buffer } from 'node:buffer';
import { compareTuples, decodeItem, encodeElements, Reader } from './codec';
import { TupleError } from './error';
import type { Tuple, TupleItem, TupleRange } from './item';
import { acquireWriter, releaseWriter, type Writer } from './writer';

const NO_PREFIX = new Uint8Array(0);

/** Writes `prefix` and `tuple` into a borrowed writer, then lets `finish` turn it into the result. */
function withPacked<T>(prefix: Uint8Array, tuple: Tuple, finish: (w: Writer) => T): T {
  if (!Array.isArray(tuple)) throw new TupleError('TUPLE_ENCODE', 'a tuple must be an array');
  const w = acquireWriter();
  try {
    if (prefix.length > 0) w.bytes(prefix);
    encodeElements(w, tuple);
    return finish(w);
  } finally {
    releaseWriter(w);
  }
}

function refuseIncomplete(w: Writer): void {
  if (w.versionstampAt >= 0) {
    throw new TupleError('TUPLE_VERSIONSTAMP', 'pack cannot write an incomplete versionstamp: use packWithVersionstamp');
  }
}

function complete(w: Writer): Buffer {
  refuseIncomplete(w);
  return w.result(0);
}

function withOffset(w: Writer): Buffer {
  if (w.versionstampAt < 0) {
    throw new TupleError('TUPLE_VERSIONSTAMP', 'packWithVersionstamp needs exactly one incomplete versionstamp, found none');
  }
  const out = w.result(4);
  out.writeUInt32LE(w.versionstampAt, w.pos);
  return out;
}

function rangeOf(w: Writer): TupleRange {
  refuseIncomplete(w);
  const begin = w.result(1);
  begin[w.pos] = 0x00;
  const end = Buffer.from(begin);
  end[w.pos] = 0xff;
  return { begin, end };
}

/** `prefix` followed by the packing of `tuple`. Shared by the functions below and `Subspace`. */
export function packPrefixed(prefix: Uint8Array, tuple: Tuple): Buffer {
  return withPacked(prefix, tuple, complete);
}

/** As `packWithVersionstamp`, after `prefix`; the offset counts the prefix. */
export function packPrefixedWithVersionstamp(prefix: Uint8Array, tuple: Tuple): Buffer {
  return withPacked(prefix, tuple, withOffset);
}

/** As `range`, after `prefix`. */
export function rangePrefixed(prefix: Uint8Array, tuple: Tuple): TupleRange {
  return withPacked(prefix, tuple, rangeOf);
}

/** Decodes the tuple in `bytes` from offset `start` to the end. */
export function unpackFrom(bytes: Uint8Array, start: number): TupleItem[] {
  if (!(bytes instanceof Uint8Array)) throw new TupleError('TUPLE_DECODE', 'can only unpack a Uint8Array');
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  const r = new Reader(buf, start);
  const out: TupleItem[] = [];
  while (r.pos < buf.length) out.push(decodeItem(r));
  return out;
}

/**
 * Encodes a tuple as a key: byte order of the results is the order of `compare`, and a tuple's packing
 * is a prefix of the packing of every tuple that extends it.
 *
 * @throws TupleError `TUPLE_ENCODE` for an element with no encoding, `TUPLE_VERSIONSTAMP` if the tuple
 * holds an incomplete versionstamp.
 */
export function pack(tuple: Tuple): Buffer {
  return packPrefixed(NO_PREFIX, tuple);
}

/**
 * Decodes a packed tuple. Byte strings come back as `Buffer`s, integers inside ±(2^53-1) as numbers and
 * larger ones as bigints, and a double as a plain number unless `pack` would write that number as an
 * integer (or with other NaN bits), in which case it is a `Double`; so `pack(unpack(b))` equals `b` for
 * anything `pack` wrote. Non-minimal integer encodings other bindings may write (Python's 0x1d/0x0b form
 * of ±(2^64-1), leading zero bytes) decode to the right value and re-pack in the minimal form. A
 * versionstamp placeholder (ten 0xff bytes) decodes as an incomplete `Versionstamp`, which only
 * `packWithVersionstamp` writes back.
 *
 * @throws TupleError `TUPLE_DECODE`, with the offset of the faulty byte, for bytes that are not a tuple.
 */
export function unpack(bytes: Uint8Array): TupleItem[] {
  return unpackFrom(bytes, 0);
}

/**
 * Encodes a tuple holding exactly one incomplete `Versionstamp` for FDB's `SET_VERSIONSTAMPED_KEY` (or
 * `_VALUE`): the packing followed by the 4-byte little-endian offset of the versionstamp's ten placeholder
 * bytes (the API version 520+ form). FDB writes the transaction version there at commit and drops the
 * offset.
 *
 * @throws TupleError `TUPLE_VERSIONSTAMP` if the tuple holds no incomplete versionstamp or more than one.
 */
export function packWithVersionstamp(tuple: Tuple): Buffer {
  return packPrefixedWithVersionstamp(NO_PREFIX, tuple);
}

/**
 * The keys of all tuples that extend `prefix` (and not `prefix` itself), FDB style: `begin` is its
 * packing + 0x00 and `end` its packing + 0xff.
 */
export function range(prefix: Tuple = []): TupleRange {
  return rangePrefixed(NO_PREFIX, prefix);
}

/**
 * Orders two tuples exactly as the byte order of their packings, without packing them: returns a
 * negative number, zero or a positive number. Strings compare by code point (UTF-8 order), not by
 * UTF-16 units as JS's `<` does.
 *
 * @throws TupleError `TUPLE_ENCODE` when it meets an element with no encoding.
 */
export function compare(a: Tuple, b: Tuple): number {
  return compareTuples(a, b);
}
