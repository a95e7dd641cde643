import { Buffer } from 'node:buffer';
import { randomFillSync } from 'node:crypto';
import { Uuid, type TupleItem } from '../../tuple';
import { DocumentError } from '../errors';
import { loneSurrogateIndex } from '../values/path';
import type { DocId } from '../types';

/**
 * Document ids: generating them and mapping them to and from the tuple element in their keys.
 *
 * Generated ids are UUIDv7 (RFC 9562): a 48-bit Unix millisecond timestamp first, so ids sort by
 * creation time. Time order is locality: the documents inserted together sit together in the key
 * space, a scan in id order is a scan in insertion order, and inserts append at the end of the
 * B-tree instead of splitting pages all over it. They are stored as the tuple layer's 16-byte UUID
 * (17 bytes with its type code) rather than as the 36-character text (38 bytes as a tuple string),
 * which every key of the document repeats.
 */

const CANONICAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

// Random bytes are drawn from the CSPRNG in blocks, not 10 bytes per id.
const POOL_BYTES = 16 * 256;
const pool = Buffer.allocUnsafe(POOL_BYTES);
let poolAt = POOL_BYTES;

function randomBytes(n: number): number {
  if (poolAt + n > POOL_BYTES) {
    randomFillSync(pool);
    poolAt = 0;
  }
  const at = poolAt;
  poolAt += n;
  return at;
}

// Monotonic within a millisecond (RFC 9562 §6.2, method 1): the 12 bits of rand_a are a counter that
// starts at a random value below 2^11 each millisecond and counts up; if it ever runs out, the
// timestamp is moved on by one millisecond, so ids from one process never go backwards.
let lastMs = -1;
let counter = 0;

/** A new UUIDv7 in canonical lowercase text form; ids from one process increase strictly. */
export function generateId(): string {
  let ms = Date.now();
  if (ms > lastMs) {
    lastMs = ms;
    const at = randomBytes(2);
    counter = ((pool[at] << 8) | pool[at + 1]) & 0x7ff;
  } else {
    ms = lastMs;
    counter++;
    if (counter > 0xfff) {
      lastMs = ms = lastMs + 1;
      const at = randomBytes(2);
      counter = ((pool[at] << 8) | pool[at + 1]) & 0x7ff;
    }
  }
  const bytes = Buffer.allocUnsafe(16);
  bytes.writeUIntBE(ms, 0, 6);
  bytes[6] = 0x70 | (counter >>> 8);
  bytes[7] = counter & 0xff;
  const at = randomBytes(8);
  pool.copy(bytes, 8, at, at + 8);
  bytes[8] = 0x80 | (bytes[8] & 0x3f);
  return new Uuid(bytes).toString();
}

/**
 * The tuple element a document id is stored as. A string that is a canonical lowercase UUID becomes a
 * tuple UUID (and reads back as that string); any other string is a tuple string; an integer is a tuple
 * integer (`-0` as `0`).
 *
 * @throws DocumentError INVALID_ARGUMENT for anything else: an empty string, a string with a lone
 *   surrogate, a number that is not a safe integer, any other type.
 */
export function docIdElement(id: unknown): TupleItem {
  switch (typeof id) {
    case 'string':
      if (id.length === 0) throw new DocumentError('INVALID_ARGUMENT', 'a document id cannot be the empty string');
      if (id.length === 36 && CANONICAL_UUID.test(id)) return new Uuid(id);
      if (loneSurrogateIndex(id) >= 0) {
        throw new DocumentError('INVALID_ARGUMENT', 'a document id cannot hold a lone UTF-16 surrogate');
      }
      return id;
    case 'number':
      if (Number.isSafeInteger(id)) return id + 0;
      throw new DocumentError('INVALID_ARGUMENT', `a numeric document id is a safe integer, got ${id}`);
    case 'bigint':
      return id;
    default:
      throw new DocumentError('INVALID_ARGUMENT', `a document id is a string or an integer, got ${describe(id)}`);
  }
}

/** The id a stored tuple element stands for: the inverse of {@link docIdElement}. */
export function docIdOf(element: TupleItem): DocId {
  if (typeof element === 'string' || typeof element === 'number' || typeof element === 'bigint') return element;
  if (element instanceof Uuid) return element.toString();
  throw new DocumentError('INVALID_ARGUMENT', 'a key holds a document id of an unknown type');
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}
