import { Buffer } from 'node:buffer';

/** The half-open key range `[begin, end)`. */
export interface KeyRange {
  readonly begin: Buffer;
  readonly end: Buffer;
}

/**
 * The first key of FDB's system keyspace: user keys are the keys below it, and reads are clamped to
 * it. (The byte 0xff, not the string `'\xff'`, which UTF-8 encodes as c3 bf.)
 */
export const MAX_USER_KEY: Buffer = Buffer.from([0xff]);
