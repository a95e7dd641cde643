import { Buffer } from 'node:buffer';
import { isInteger, isSafeNumber, parse, stringify } from 'lossless-json';
import type { JsonValue } from '../document/types';
import { assertJsonValue } from '../document/values/json-value';

/**
 * How an item's value (bytes, as memcached and Couchbase clients send them) is held by a doclayer
 * document, and back:
 *
 * - `json`: bytes that are JSON in the form this server writes it back (no whitespace, numbers as
 *   written), or any JSON a client marked with the JSON datatype, are the document itself; library
 *   users and sub-document operations see the JSON.
 * - `text`: other UTF-8 text is a document that is one JSON string.
 * - `binary`: anything else is a document that is one base64 string.
 *
 * So every value a client stores comes back byte for byte, except JSON marked as JSON, which comes
 * back without its insignificant whitespace. The encoding and the client's flags live in the item
 * record (see `item-record.ts`).
 */
export type ValueEncoding = 'json' | 'text' | 'binary';

export interface HeldValue {
  readonly content: JsonValue;
  readonly encoding: ValueEncoding;
}

/** The document content that holds `bytes`; `markedJson` when the client set the JSON datatype. */
export function holdValue(bytes: Buffer, markedJson: boolean): HeldValue {
  const text = bytes.toString('utf8');
  if (Buffer.byteLength(text) !== bytes.length || !Buffer.from(text, 'utf8').equals(bytes)) {
    return { content: bytes.toString('base64'), encoding: 'binary' };
  }
  const json = parseJson(text);
  if (json !== undefined && (markedJson || jsonText(json.value) === text)) return { content: json.value, encoding: 'json' };
  return { content: text, encoding: 'text' };
}

/** The bytes a held value stands for. */
export function valueBytes(content: JsonValue, encoding: ValueEncoding): Buffer {
  if (encoding === 'json') return Buffer.from(jsonText(content), 'utf8');
  const text = typeof content === 'string' ? content : jsonText(content);
  return encoding === 'text' ? Buffer.from(text, 'utf8') : Buffer.from(text, 'base64');
}

/** JSON text of a document value, integers beyond 2^53 (bigints) exactly. */
export function jsonText(value: JsonValue): string {
  return stringify(value) ?? 'null';
}

/**
 * `text` parsed as JSON the document layer can hold (integers beyond 2^53 as bigints, nesting within
 * its depth), or `undefined`.
 */
export function parseJson(text: string): { value: JsonValue } | undefined {
  const first = text.charCodeAt(0);
  // Only text that can start a JSON value is worth a parse (most binary-protocol values are not JSON).
  if (!(
    first === 0x7b ||
    first === 0x5b ||
    first === 0x22 ||
    first === 0x2d ||
    (first >= 0x30 && first <= 0x39) ||
    first === 0x74 ||
    first === 0x66 ||
    first === 0x6e ||
    first <= 0x20
  )) {
    return undefined;
  }
  try {
    const value: unknown = parse(text, null, (digits) => (isInteger(digits) && !isSafeNumber(digits) ? BigInt(digits) : Number(digits)));
    // Too deep, a lone surrogate escaped, a number beyond a double: not a document, so held as text.
    assertJsonValue(value);
    return { value };
  } catch {
    return undefined;
  }
}
