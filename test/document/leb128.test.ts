import fc from 'fast-check';
import { type DocumentError, isDocumentError } from '../../src/document/errors';
import { decodeLeb128, encodeLeb128 } from '../../src/document/keys/leb128';

const hex = (s: string) => Buffer.from(s.replace(/ /g, ''), 'hex');

function thrown(fn: () => unknown): DocumentError {
  try {
    fn();
  } catch (err) {
    if (isDocumentError(err)) return err;
    throw err;
  }
  throw new Error('expected a DocumentError, nothing was thrown');
}

/** Couchbase's collection-id examples (kv_engine docs/Collections.md), plus a few more boundaries. */
const EXAMPLES: [number, string][] = [
  [0x00, '00'],
  [0x01, '01'],
  [0x7f, '7F'],
  [0x80, '80 01'],
  [0x555, 'D5 0A'],
  [0x3fff, 'FF 7F'],
  [0x4000, '80 80 01'],
  [0x7fff, 'FF FF 01'],
  [0xbfff, 'FF FF 02'],
  [0xffff, 'FF FF 03'],
  [0x8000, '80 80 02'],
  [0x5555, 'D5 AA 01'],
  [0x1fffff, 'FF FF 7F'],
  [0x200000, '80 80 80 01'],
  [0xcafef00, '80 DE BF 65'],
  [0xfffffff, 'FF FF FF 7F'],
  [0x10000000, '80 80 80 80 01'],
  [0x7fffffff, 'FF FF FF FF 07'],
  [0x80000000, '80 80 80 80 08'],
  [0xcafef00d, '8D E0 FB D7 0C'],
  [0xffffffff, 'FF FF FF FF 0F'],
];

describe('encodeLeb128', () => {
  it.each(EXAMPLES)('encodes %i as %s', (n, bytes) => {
    expect(encodeLeb128(n).toString('hex').toUpperCase()).toBe(bytes.replace(/ /g, ''));
  });

  it.each<[string, unknown]>([
    ['a negative number', -1],
    ['a number above 32 bits', 0x100000000],
    ['a fraction', 1.5],
    ['NaN', NaN],
    ['Infinity', Infinity],
    ['a bigint', 1n],
    ['a string', '1'],
  ])('rejects %s with INVALID_ARGUMENT', (_, n) => {
    expect(thrown(() => encodeLeb128(n as number)).code).toBe('INVALID_ARGUMENT');
  });
});

describe('decodeLeb128', () => {
  it.each(EXAMPLES)('decodes %i from %s, reporting its length', (n, bytes) => {
    const encoded = hex(bytes);
    expect(decodeLeb128(encoded)).toEqual({ value: n, length: encoded.length });
  });

  it('reads at an offset and ignores what follows the last byte', () => {
    expect(decodeLeb128(hex('AA BB 80 01 FF FF'), 2)).toEqual({ value: 0x80, length: 2 });
    expect(decodeLeb128(new Uint8Array([0x05, 0x06]))).toEqual({ value: 5, length: 1 });
  });

  it.each<[string, string, number, string]>([
    ['0 as six bytes (padded, no last byte within 5)', '80 80 80 80 80 00', 0, 'no last byte within 5 bytes'],
    ['1 padded with a zero byte', '81 00', 0, 'not canonical'],
    ['0 padded with a zero byte', '80 00', 0, 'not canonical'],
    ['0x7F padded to 5 bytes', 'FF 80 80 80 00', 0, 'not canonical'],
    ['five continuation bytes', 'FF FF FF FF FF 01', 0, 'no last byte within 5 bytes'],
    ['a 5th byte with bits above 32 (0x100000000)', '80 80 80 80 10', 0, 'bits above 32'],
    ['a 5th byte of 0x7F', 'FF FF FF FF 7F', 0, 'bits above 32'],
    ['empty input', '', 0, 'ends after 0 bytes'],
    ['input ending after a continuation byte', '80', 0, 'ends after 1 byte,'],
    ['input ending inside a 5-byte encoding', 'FF FF FF FF', 0, 'ends after 4 bytes'],
    ['an offset at the end of the input', '01 02', 2, 'ends after 0 bytes'],
    ['bad bytes at an offset', '00 81 00', 1, 'not canonical'],
  ])('rejects %s with INVALID_LEB128 naming the offset', (_, bytes, offset, fragment) => {
    const err = thrown(() => decodeLeb128(hex(bytes), offset));
    expect(err.code).toBe('INVALID_LEB128');
    expect(err.position).toBe(offset);
    expect(err.message).toContain(fragment);
    expect(err.message).toContain(`offset ${offset}`);
  });

  it('rejects an offset outside the input with INVALID_ARGUMENT', () => {
    expect(thrown(() => decodeLeb128(hex('01'), 2)).code).toBe('INVALID_ARGUMENT');
    expect(thrown(() => decodeLeb128(hex('01'), -1)).code).toBe('INVALID_ARGUMENT');
    expect(thrown(() => decodeLeb128(hex('01'), 0.5)).code).toBe('INVALID_ARGUMENT');
  });
});

describe('LEB128 (property-based)', () => {
  it('round-trips every 32-bit unsigned integer, in 1 to 5 bytes', () => {
    fc.assert(
      fc.property(fc.nat({ max: 0xffffffff }), fc.uint8Array({ maxLength: 3 }), (n, tail) => {
        const encoded = encodeLeb128(n);
        const expectedLength = n === 0 ? 1 : Math.ceil(Math.log2(n + 1) / 7);
        const decoded = decodeLeb128(Buffer.concat([encoded, tail]));
        return decoded.value === n && decoded.length === encoded.length && encoded.length === expectedLength;
      }),
      { seed: 42, numRuns: 2000 },
    );
  });

  it('decodes any byte string to the value whose encoding it starts with, or rejects it', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 7 }), (bytes) => {
        let decoded: { value: number; length: number };
        try {
          decoded = decodeLeb128(bytes);
        } catch (err) {
          return isDocumentError(err, 'INVALID_LEB128');
        }
        return encodeLeb128(decoded.value).equals(Buffer.from(bytes.subarray(0, decoded.length)));
      }),
      { seed: 42, numRuns: 2000 },
    );
  });
});
