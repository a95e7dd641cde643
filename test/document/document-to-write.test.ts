import { DocumentToWrite } from '../../src/document/collection/document-to-write';
import { DocumentKeys } from '../../src/document/keys/layout';
import type { JsonValue } from '../../src/document/types';
import { flatten } from '../../src/document/values/flatten';
import { Limits } from '../../src/kv/contract/limits';
import { documentErrorCode } from '../support/document-assertions';

const MAX_KEY = Limits.maxKeyBytes;
const cached = new DocumentKeys(Buffer.from('c1'), 'id');
const other = new DocumentKeys(Buffer.from('c2'), 'id');
const doc: JsonValue = { b: [1, 'two'], a: { z: null, y: true } };
const tooLarge: JsonValue = { chunks: Array.from({ length: 100 }, () => 'x'.repeat(99_000)) };

describe('DocumentToWrite', () => {
  it('gives the entries flatten gives, at the root the cached manifest suggested and at any other', () => {
    const document = new DocumentToWrite(doc, MAX_KEY, cached);
    expect(document.keysIn(cached.collectionPrefix, 'id')).toBe(cached);
    expect(document.entriesAt(cached.root)).toEqual(flatten(doc, cached.root, MAX_KEY));
    const keys = document.keysIn(other.collectionPrefix, 'id');
    expect(keys.root).toEqual(other.root);
    expect(document.entriesAt(keys.root)).toEqual(flatten(doc, other.root, MAX_KEY));
    expect(new DocumentToWrite(doc, MAX_KEY, undefined).entriesAt(other.root)).toEqual(flatten(doc, other.root, MAX_KEY));
  });

  it('reuses the entries for the same root (a retry, another call of a batch)', () => {
    const document = new DocumentToWrite(doc, MAX_KEY, undefined);
    const first = document.entriesAt(other.root);
    expect(document.entriesAt(Buffer.from(other.root))).toBe(first);
  });

  it('fails at once with INVALID_VALUE or VALUE_TOO_DEEP, with or without a suggested root', () => {
    for (const likely of [cached, undefined]) {
      expect(documentErrorCode(() => new DocumentToWrite({ a: undefined } as unknown as JsonValue, MAX_KEY, likely))).toBe('INVALID_VALUE');
      // Past a part that reaches the size limit first: the value is still refused as not JSON.
      expect(documentErrorCode(() => new DocumentToWrite({ ...(tooLarge as object), z: NaN }, MAX_KEY, likely))).toBe('INVALID_VALUE');
      let deep: JsonValue = 1;
      for (let i = 0; i < 40; i++) deep = [deep];
      expect(documentErrorCode(() => new DocumentToWrite(deep, MAX_KEY, likely))).toBe('VALUE_TOO_DEEP');
    }
  });

  it('throws a limit only when the write asks for the entries, where flattening in its transaction would', () => {
    const document = new DocumentToWrite(tooLarge, MAX_KEY, cached);
    expect(documentErrorCode(() => document.entriesAt(cached.root))).toBe('DOCUMENT_TOO_LARGE');
    expect(documentErrorCode(() => document.entriesAt(other.root))).toBe('DOCUMENT_TOO_LARGE');
    const longKey = new DocumentToWrite({ ['k'.repeat(MAX_KEY)]: 1 }, MAX_KEY, cached);
    expect(documentErrorCode(() => longKey.entriesAt(cached.root))).toBe('KEY_TOO_LARGE');
  });
});
