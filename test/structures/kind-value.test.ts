/**
 * The kind metadata value every structure operation reads: each kind's name, with or without an
 * expiry after it, and nothing else.
 */
import { DocumentError } from '../../src/document/errors';
import { decodeStoredKind, encodeKind, type StructureKind } from '../../src/document/keys/kind';

const KINDS: StructureKind[] = ['list', 'map', 'set', 'queue', 'counter', 'text', 'sortedset'];

describe('decodeStoredKind', () => {
  it('reads back every kind, with and without an expiry', () => {
    for (const kind of KINDS) {
      expect(decodeStoredKind(encodeKind(kind))).toEqual({ kind, expiresAt: undefined });
      expect(decodeStoredKind(encodeKind(kind, 1_700_000_000_123))).toEqual({ kind, expiresAt: 1_700_000_000_123 });
    }
  });

  it('reads a value that is a view into a larger buffer', () => {
    const whole = Buffer.from('xxsetyy', 'latin1');
    expect(decodeStoredKind(whole.subarray(2, 5))).toEqual({ kind: 'set', expiresAt: undefined });
    expect(decodeStoredKind(new Uint8Array(whole.buffer, whole.byteOffset + 2, 3))).toEqual({ kind: 'set', expiresAt: undefined });
  });

  it('refuses a name that is not a kind, or only part of one, as CORRUPT_DATA', () => {
    for (const bad of ['', 'se', 'sets', 'sorted', 'Set', 'document']) {
      expect(() => decodeStoredKind(Buffer.from(bad, 'latin1'))).toThrow(DocumentError);
      expect(
        (() => {
          try {
            decodeStoredKind(Buffer.from(bad, 'latin1'));
          } catch (error) {
            return (error as DocumentError).code;
          }
        })(),
      ).toBe('CORRUPT_DATA');
    }
  });
});
