import { Buffer } from 'node:buffer';
import { corruptData, DocumentError } from '../../document/errors';
import { assertJsonValue, hasLoneSurrogate, MAX_DEPTH, valueDepth } from '../../document/values/json-value';
import { fromTuple } from '../../document/values/leaf';
import { decodeLeb128, encodeLeb128 } from '../../document/keys/leb128';
import type { JsonValue } from '../../document/types';
import { Double, pack, unpack, type Tuple, type TupleItem } from '../../tuple';

/**
 * What is stored at an item's key (see docs/queue.md, "Values"): one value per item,
 *
 * ```
 * flags (1 byte: bit 0 leased, bit 1 job id) | attempts (unsigned LEB128) | [job id: 12 bytes] | payload
 * ```
 *
 * The job id (job.ts) is the versionstamp of the item's push: its key says it while the item stays at
 * its push key, and the record carries it (bit 1) once the item has moved (leased, nacked,
 * dead-lettered). Records written before job ids (without bit 1) still decode.
 *
 * where the payload is the item as one tuple: scalars as tuple scalars (numbers and bigints as the
 * document layer stores them, so an item reads back exactly as a document leaf would), an array as a
 * nested tuple of its elements, an object as a nested tuple of an empty byte string (which no JSON
 * value packs to) followed by its keys and values in order. One value per item keeps a pop to one
 * limit-1 range read and one clear, and a move (lease, nack, dead-letter) to one rewritten key.
 */

/** Largest payload of one item: FDB's value limit (100,000 bytes) less the header and a receipt's byte. */
export const MAX_ITEM_BYTES = 99_900;

const LEASED = 0x01;
const JOB_ID = 0x02;
const JOB_ID_BYTES = 12;
const OBJECT_TAG = Buffer.alloc(0);

/** An item as stored. `payload` may be a view of a read-only Buffer from the engine. */
export interface ItemRecord {
  readonly leased: boolean;
  /** How many times the item was leased: deliveries that may be retried. */
  readonly attempts: number;
  readonly payload: Buffer;
  /** The job id carried by a moved item (12 bytes: its push's versionstamp); see job.ts. */
  readonly jobId?: Buffer;
}

/**
 * The payload of a value, checked as a document value one level down (it is an element of the queue's
 * array).
 *
 * @throws DocumentError INVALID_VALUE, VALUE_TOO_DEEP, DOCUMENT_TOO_LARGE (over {@link MAX_ITEM_BYTES}).
 */
export function encodePayload(value: JsonValue): Buffer {
  // One walk that checks and converts; anything it does not accept goes through the full checks,
  // which name the problem (and accept nothing the walk refused: it refuses only what they reject).
  let item = checkedTuple(value, 1);
  if (item === REFUSED) {
    assertJsonValue(value, 'the item');
    if (valueDepth(value) > MAX_DEPTH - 1) {
      throw new DocumentError('VALUE_TOO_DEEP', `a queue item is at most ${MAX_DEPTH - 1} levels deep`);
    }
    item = toTuple(value);
  }
  const payload = pack([item]);
  if (payload.length > MAX_ITEM_BYTES) {
    throw new DocumentError('DOCUMENT_TOO_LARGE', `the item takes ${payload.length} bytes; a queue item is at most ${MAX_ITEM_BYTES}`);
  }
  return payload;
}

export function decodePayload(payload: Uint8Array): JsonValue {
  const items = unpack(payload);
  if (items.length !== 1) throw corrupt('an item payload');
  return fromTupleItem(items[0]);
}

export function encodeRecord(leased: boolean, attempts: number, payload: Uint8Array, jobId?: Uint8Array): Buffer {
  const count = encodeLeb128(attempts);
  const idLength = jobId === undefined ? 0 : JOB_ID_BYTES;
  const out = Buffer.allocUnsafe(1 + count.length + idLength + payload.length);
  out[0] = (leased ? LEASED : 0) | (jobId === undefined ? 0 : JOB_ID);
  count.copy(out, 1);
  if (jobId !== undefined) out.set(jobId.subarray(0, JOB_ID_BYTES), 1 + count.length);
  out.set(payload, 1 + count.length + idLength);
  return out;
}

export function decodeRecord(value: Buffer): ItemRecord {
  if (value.length < 2 || (value[0] & ~(LEASED | JOB_ID)) !== 0) throw corrupt('an item record');
  const { value: attempts, length } = decodeLeb128(value, 1);
  const leased = (value[0] & LEASED) !== 0;
  if ((value[0] & JOB_ID) === 0) return { leased, attempts, payload: value.subarray(1 + length) };
  const at = 1 + length;
  if (value.length < at + JOB_ID_BYTES + 1) throw corrupt('an item record');
  return { leased, attempts, jobId: value.subarray(at, at + JOB_ID_BYTES), payload: value.subarray(at + JOB_ID_BYTES) };
}

/** The record of a fresh item: not leased, no attempts. */
export function freshRecord(payload: Uint8Array): Buffer {
  // `encodeRecord(false, 0, payload)`: flags 0, attempts 0 (one LEB128 byte), the payload.
  const out = Buffer.allocUnsafe(2 + payload.length);
  out[0] = 0;
  out[1] = 0;
  out.set(payload, 2);
  return out;
}

/** What {@link checkedTuple} returns for a value it does not accept. */
const REFUSED = Symbol('refused');

/** Deepest an item may be (it is an element of the queue's array, one level down in its document). */
const MAX_ITEM_DEPTH = MAX_DEPTH - 1;

/**
 * {@link toTuple} of a value `assertJsonValue` accepts whose depth, counted from `level` for the value
 * itself, is at most {@link MAX_ITEM_DEPTH}: the same checks in the same walk, each property read once.
 * Returns {@link REFUSED} for anything else (including a cycle, which exceeds the depth), without saying
 * what: the caller runs the full checks for the message.
 */
function checkedTuple(value: unknown, level: number): TupleItem | typeof REFUSED {
  switch (typeof value) {
    case 'string':
      return hasLoneSurrogate(value) ? REFUSED : value;
    case 'boolean':
    case 'bigint':
      return value;
    case 'number':
      if (!Number.isFinite(value)) return REFUSED;
      // As toTuple: an integral number beyond the safe range is a double.
      return Number.isInteger(value) && !Number.isSafeInteger(value) ? new Double(value) : value;
    case 'object':
      break;
    default:
      return REFUSED;
  }
  if (value === null) return null;
  if (Array.isArray(value)) {
    const array = value as readonly unknown[];
    if (array.length > 0 && level >= MAX_ITEM_DEPTH) return REFUSED;
    const out: TupleItem[] = new Array<TupleItem>(array.length);
    for (let i = 0; i < array.length; i++) {
      if (!(i in array)) return REFUSED;
      const child = checkedTuple(array[i], level + 1);
      if (child === REFUSED) return REFUSED;
      out[i] = child;
    }
    return out;
  }
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return REFUSED;
  const object = value as Readonly<Record<string, unknown>>;
  for (const symbol of Object.getOwnPropertySymbols(object)) {
    if (Object.prototype.propertyIsEnumerable.call(object, symbol)) return REFUSED;
  }
  const keys = Object.keys(object);
  if (keys.length > 0 && level >= MAX_ITEM_DEPTH) return REFUSED;
  const out: TupleItem[] = [OBJECT_TAG];
  for (const key of keys) {
    if (hasLoneSurrogate(key)) return REFUSED;
    const child = checkedTuple(object[key], level + 1);
    if (child === REFUSED) return REFUSED;
    out.push(key, child);
  }
  return out;
}

function toTuple(value: JsonValue): TupleItem {
  // As in a document's leaves (`encodeScalar`): an integral number beyond the safe range is a double,
  // so that it reads back as a number and not as a bigint.
  if (typeof value === 'number' && Number.isInteger(value) && !Number.isSafeInteger(value)) return new Double(value);
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(toTuple);
  const out: TupleItem[] = [OBJECT_TAG];
  for (const key of Object.keys(value)) out.push(key, toTuple(value[key]));
  return out;
}

/** `Array.isArray` for a tuple element: it alone would narrow a readonly tuple's elements to `any`. */
function isTuple(item: TupleItem): item is Tuple {
  return Array.isArray(item);
}

function fromTupleItem(item: TupleItem): JsonValue {
  if (!isTuple(item)) return fromTuple(item);
  if (item.length > 0 && item[0] instanceof Uint8Array) {
    const object: { [key: string]: JsonValue } = {};
    for (let i = 1; i < item.length; i += 2) {
      const key = item[i];
      if (typeof key !== 'string' || i + 1 >= item.length) throw corrupt('an object in an item');
      const value = fromTupleItem(item[i + 1]);
      // defineProperty for `__proto__`, an ordinary key as in documents (assigning it would set the
      // prototype); plain assignment for the others, which V8 makes far faster.
      if (key === '__proto__') Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
      else object[key] = value;
    }
    return object;
  }
  return item.map(fromTupleItem);
}

function corrupt(what: string): Error {
  return corruptData(`queue data: ${what}`);
}
