/**
 * Continuation tokens: an opaque string that says where a query's next page starts. It holds the
 * position only (the last result's order key, the index cursor, the interval reached), never state
 * that grows with the result, so a page resumes in any later transaction or process. A token carries
 * a fingerprint of its query: given to a different query, it is rejected.
 */
import { Buffer } from 'node:buffer';
import { createHash } from 'crypto';
import { DocumentError } from '../document/errors';
import type { DocId, JsonValue } from '../document/types';
import { MISSING, type IndexValue } from '../filter';

/** Where a query stopped. */
export interface Position {
  /** Which plan produced it: `scan`, or the index name. */
  readonly plan: string;
  /** Index plans: the interval being read. */
  readonly interval?: number;
  /** Index plans: the last index entry consumed (resume strictly after it). */
  readonly cursor?: Buffer;
  /** The order key (values and id) of the last result returned, for ordered and sorted plans. */
  readonly lastValues?: readonly IndexValue[];
  /** The id of the last document returned, or consumed by a scan. */
  readonly lastId?: DocId;
}

type Encoded = null | boolean | string | number | Encoded[] | { [k: string]: Encoded };

export function encodeToken(fingerprint: string, position: Position): string {
  const body: { [k: string]: Encoded } = { v: 1, q: fingerprint, p: position.plan };
  if (position.interval !== undefined) body.i = position.interval;
  if (position.cursor !== undefined) body.c = position.cursor.toString('base64');
  if (position.lastValues !== undefined) body.k = position.lastValues.map(encodeValue);
  if (position.lastId !== undefined) body.d = encodeValue(position.lastId);
  return Buffer.from(JSON.stringify(body)).toString('base64url');
}

/** @throws DocumentError INVALID_QUERY for a token that is malformed or belongs to another query. */
export function decodeToken(token: unknown, fingerprint: string): Position {
  if (typeof token !== 'string' || token === '') throw badToken('a continuation token is a non-empty string');
  let body: { [k: string]: Encoded };
  try {
    body = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as { [k: string]: Encoded };
  } catch {
    throw badToken('the continuation token is not one doclayer made');
  }
  if (typeof body !== 'object' || body === null || body.v !== 1 || typeof body.p !== 'string') {
    throw badToken('the continuation token is not one doclayer made');
  }
  if (body.q !== fingerprint) throw badToken('the continuation token belongs to a different query (filter, sort or hint)');
  try {
    return {
      plan: body.p,
      interval: typeof body.i === 'number' ? body.i : undefined,
      cursor: typeof body.c === 'string' ? Buffer.from(body.c, 'base64') : undefined,
      lastValues: Array.isArray(body.k) ? body.k.map(decodeValue) : undefined,
      lastId: body.d === undefined ? undefined : (decodeValue(body.d) as DocId),
    };
  } catch {
    throw badToken('the continuation token is damaged');
  }
}

/** A fingerprint of what makes two queries the same query for paging. */
export function queryFingerprint(parts: readonly unknown[]): string {
  const text = JSON.stringify(parts, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v instanceof RegExp ? String(v) : v));
  return createHash('sha256').update(text).digest('base64url').slice(0, 16);
}

function encodeValue(v: IndexValue): Encoded {
  if (v === MISSING) return ['m'];
  if (v === null) return ['z'];
  switch (typeof v) {
    case 'boolean':
      return ['t', v];
    case 'number':
      return ['n', Object.is(v, -0) ? 0 : v];
    case 'bigint':
      return ['b', v.toString()];
    case 'string':
      return ['s', v];
    default:
      if (Array.isArray(v)) return ['a', v.map(encodeValue)];
      return ['o', Object.entries(v).map(([k, x]) => [k, encodeValue(x)])];
  }
}

function decodeValue(e: Encoded): IndexValue {
  if (!Array.isArray(e) || typeof e[0] !== 'string') throw new Error('bad value');
  const [tag, x] = e;
  switch (tag) {
    case 'm':
      return MISSING;
    case 'z':
      return null;
    case 't':
      return x === true;
    case 'n':
      if (typeof x !== 'number') throw new Error('bad number');
      return x;
    case 'b':
      return BigInt(x as string);
    case 's':
      if (typeof x !== 'string') throw new Error('bad string');
      return x;
    case 'a':
      return (x as Encoded[]).map(decodeValue) as JsonValue[];
    case 'o': {
      const out: { [k: string]: JsonValue } = {};
      for (const [k, y] of x as [string, Encoded][]) {
        Object.defineProperty(out, k, { value: decodeValue(y), enumerable: true, writable: true, configurable: true });
      }
      return out;
    }
    default:
      throw new Error('bad tag');
  }
}

function badToken(message: string): DocumentError {
  return new DocumentError('INVALID_QUERY', message);
}
