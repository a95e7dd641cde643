import { Buffer } from 'node:buffer';
import type { KeyRange } from '../contract/key-range';

/**
 * One commit's entry in the conflict log kept in the store: when it committed (ms, on the committing
 * engine's clock) and its coalesced write conflict ranges. Encoded as
 * `float64BE(time) uint32BE(count) { uint32BE(len) begin uint32BE(len) end }*`.
 */
export interface ConflictRecord {
  readonly time: number;
  readonly ranges: readonly KeyRange[];
}

export function encodeConflictRecord(record: ConflictRecord): Buffer {
  let size = 12;
  for (const range of record.ranges) size += 8 + range.begin.length + range.end.length;
  const out = Buffer.allocUnsafe(size);
  out.writeDoubleBE(record.time, 0);
  out.writeUInt32BE(record.ranges.length, 8);
  let at = 12;
  for (const range of record.ranges) {
    at = writeBytes(out, at, range.begin);
    at = writeBytes(out, at, range.end);
  }
  return out;
}

/** @throws Error when `bytes` is not an encoded record (a damaged store). */
export function decodeConflictRecord(bytes: Buffer): ConflictRecord {
  const time = conflictRecordTime(bytes);
  const count = bytes.readUInt32BE(8);
  const ranges: KeyRange[] = [];
  let at = 12;
  for (let i = 0; i < count; i++) {
    const begin = readBytes(bytes, at);
    at += 4 + begin.length;
    const end = readBytes(bytes, at);
    at += 4 + end.length;
    ranges.push({ begin, end });
  }
  if (at !== bytes.length) throw new Error('malformed conflict record: trailing bytes');
  return { time, ranges };
}

/** The commit time of an encoded record, without decoding its ranges. */
export function conflictRecordTime(bytes: Buffer): number {
  if (bytes.length < 12) throw new Error('malformed conflict record: too short');
  return bytes.readDoubleBE(0);
}

function writeBytes(out: Buffer, at: number, bytes: Buffer): number {
  out.writeUInt32BE(bytes.length, at);
  out.set(bytes, at + 4);
  return at + 4 + bytes.length;
}

function readBytes(bytes: Buffer, at: number): Buffer {
  const length = bytes.readUInt32BE(at);
  if (at + 4 + length > bytes.length) throw new Error('malformed conflict record: truncated');
  return bytes.subarray(at + 4, at + 4 + length);
}
