import {
  Double,
  Float32,
  pack,
  TupleError,
  unpack,
  UserType,
  Uuid,
  Versionstamp,
  type Tuple,
  type TupleErrorCode,
  type TupleItem,
} from '../../src/tuple';

const bytes = (h: string) => Buffer.from(h.replace(/ /g, ''), 'hex');

function thrown(f: () => unknown): TupleError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(TupleError);
    return e as TupleError;
  }
  throw new Error('expected a TupleError, nothing was thrown');
}

function expectDecodeError(h: string, offset: number, message: RegExp): void {
  const e = thrown(() => unpack(bytes(h)));
  expect(e.code).toBe<TupleErrorCode>('TUPLE_DECODE');
  expect(e.offset).toBe(offset);
  expect(e.message).toMatch(message);
  expect(e.message).toContain(`at byte ${offset}`);
}

describe('unpack: malformed input', () => {
  it.each([
    ['byte string without terminator', '01 6162', 0, /unterminated byte string/],
    ['byte string ending in an escape', '01 61 00ff', 0, /unterminated byte string/],
    ['string without terminator', '1501 02 61', 2, /unterminated string/],
    ['nested tuple without terminator', '05 1501', 0, /unterminated nested tuple/],
    ['nested tuple ending after an escaped null', '05 00ff', 0, /unterminated nested tuple/],
    ['nested tuple with an unterminated string inside', '05 02 61 00ff', 1, /unterminated string/],
    ['1-byte integer without its byte', '15', 0, /truncated integer/],
    ['8-byte integer with 3 bytes', '1c 010203', 0, /truncated integer/],
    ['negative 4-byte integer with 1 byte', '1501 10 ff', 2, /truncated integer/],
    ['big integer without its length', '1d', 0, /truncated integer/],
    ['big integer shorter than its length', '1d 09 0102', 0, /truncated integer/],
    ['negative big integer shorter than its length', '0b f6 fe', 0, /truncated integer/],
    ['float with 3 bytes', '20 3dd7ff', 0, /truncated float/],
    ['double with 7 bytes', '21 bff80000000000', 0, /truncated double/],
    ['UUID with 15 bytes', `30 ${'00'.repeat(15)}`, 0, /truncated UUID/],
    ['versionstamp with 11 bytes', `33 ${'00'.repeat(11)}`, 0, /truncated versionstamp/],
  ])('%s', (_what, h, offset, message) => expectDecodeError(h, offset, message));

  it('rejects every type code the spec does not define, at its offset', () => {
    const defined = new Set([0x00, 0x01, 0x02, 0x05, 0x20, 0x21, 0x26, 0x27, 0x30, 0x33]);
    for (let c = 0x0b; c <= 0x1d; c++) defined.add(c);
    for (let c = 0x40; c <= 0x4f; c++) defined.add(c);
    let rejected = 0;
    for (let code = 0; code < 256; code++) {
      if (defined.has(code)) continue;
      expectDecodeError(`14 ${code.toString(16).padStart(2, '0')} 14`, 1, /unknown type code/);
      rejected++;
    }
    // Reserved and deprecated ones included: 0x03/0x04, 0x0a, 0x1e, 0x22..0x25, 0x31, 0x32, 0xff, ...
    expect(rejected).toBe(256 - 10 - 19 - 16);
  });

  it('rejects a stray escape byte: 00 ff outside a nested tuple is null then code 0xff', () => {
    expectDecodeError('00 ff', 1, /unknown type code 0xff/);
  });

  it('rejects garbage inside a nested tuple', () => {
    expectDecodeError('05 1501 ff 00', 3, /unknown type code 0xff/);
    expectDecodeError('05 05 00ff 22 00 00', 4, /unknown type code 0x22/);
  });

  it('rejects a user type inside a nested tuple (its end cannot be known)', () => {
    expectDecodeError('05 40 00', 1, /user type code 0x40 inside a nested tuple/);
  });

  it.each([
    ['a lone continuation byte', '02 80 00'],
    ['a truncated sequence', '02 c3 00'],
    ['an overlong encoding', '02 c080 00'],
    ['an encoded surrogate', '02 eda080 00'],
    ['a code point above U+10FFFF', '02 f4908080 00'],
  ])('rejects a string with invalid UTF-8: %s', (_what, h) => {
    expectDecodeError(h, 0, /not valid UTF-8/);
  });

  it('rejects nesting deeper than 1000 levels instead of overflowing the stack', () => {
    const deep = Buffer.concat([Buffer.alloc(1001, 0x05), Buffer.alloc(1001, 0x00)]);
    const e = thrown(() => unpack(deep));
    expect(e.code).toBe('TUPLE_DECODE');
    expect(e.message).toMatch(/nested deeper than 1000/);
    const ok = Buffer.concat([Buffer.alloc(1000, 0x05), Buffer.alloc(1000, 0x00)]);
    expect(() => unpack(ok)).not.toThrow();
  });

  it('rejects input that is not a Uint8Array', () => {
    expect(thrown(() => unpack('0500' as unknown as Uint8Array)).code).toBe('TUPLE_DECODE');
  });

  it('is an Error with name TupleError', () => {
    const e = thrown(() => unpack(bytes('ff')));
    expect(e).toBeInstanceOf(Error);
    expect(e.name).toBe('TupleError');
    expect(e.message).toBe('unknown type code 0xff at byte 0');
  });
});

describe('pack: values with no encoding', () => {
  const cyclic: TupleItem[] = [];
  cyclic.push(cyclic);

  it.each([
    ['undefined', undefined],
    ['a function', () => 1],
    ['a symbol', Symbol('x')],
    ['a plain object', { a: 1 }],
    ['a Date', new Date(0)],
    ['a Number object', new Number(1)],
    ['a Map', new Map()],
    ['an ArrayBuffer', new ArrayBuffer(2)],
    ['a DataView', new DataView(new ArrayBuffer(2))],
  ])('rejects %s', (_what, value) => {
    const e = thrown(() => pack([1, value as TupleItem]));
    expect(e.code).toBe('TUPLE_ENCODE');
    expect(e.message).toMatch(/cannot encode/);
    expect(thrown(() => pack([[value as TupleItem]])).code).toBe('TUPLE_ENCODE');
  });

  it('rejects a tuple that is not an array', () => {
    expect(thrown(() => pack('abc' as unknown as Tuple)).code).toBe('TUPLE_ENCODE');
  });

  it('rejects strings with lone surrogates, which have no UTF-8 form', () => {
    for (const s of ['\ud800', 'a\udc00', '\ud800x', '\udc00\ud800']) {
      expect(thrown(() => pack([s])).message).toMatch(/lone surrogate/);
    }
  });

  it('rejects integers of more than 255 bytes', () => {
    expect(thrown(() => pack([2n ** 2040n])).code).toBe('TUPLE_ENCODE');
    expect(thrown(() => pack([-(2n ** 2040n)])).code).toBe('TUPLE_ENCODE');
  });

  it('rejects cyclic arrays instead of overflowing the stack', () => {
    expect(thrown(() => pack(cyclic)).message).toMatch(/nested deeper than 1000/);
  });

  it('rejects a user type that is not the last element of the outermost tuple', () => {
    expect(thrown(() => pack([new UserType(0x40), 1])).code).toBe('TUPLE_ENCODE');
    expect(thrown(() => pack([[new UserType(0x40)]])).code).toBe('TUPLE_ENCODE');
  });

  it('still packs after an error (the shared buffer is reset)', () => {
    expect(() => pack(['abc', undefined as unknown as TupleItem])).toThrow(TupleError);
    expect(pack(['x']).toString('hex')).toBe('027800');
  });
});

describe('wrappers: invalid arguments', () => {
  it.each([
    ['Float32.fromBits(-1)', () => Float32.fromBits(-1)],
    ['Float32.fromBits(2^32)', () => Float32.fromBits(2 ** 32)],
    ['Float32.fromBits(1.5)', () => Float32.fromBits(1.5)],
    ['Double.fromBits(-1n)', () => Double.fromBits(-1n)],
    ['Double.fromBits(2n^64n)', () => Double.fromBits(2n ** 64n)],
    ['Uuid of 15 bytes', () => new Uuid(Buffer.alloc(15))],
    ['Uuid of bad text', () => new Uuid('not-a-uuid')],
    ['UserType code 0x3f', () => new UserType(0x3f)],
    ['UserType code 0x50', () => new UserType(0x50)],
    ['Versionstamp user version 65536', () => Versionstamp.incomplete(65536)],
    ['Versionstamp user version -1', () => Versionstamp.incomplete(-1)],
    ['Versionstamp transaction version of 9 bytes', () => Versionstamp.complete(Buffer.alloc(9))],
  ])('%s throws TUPLE_ENCODE', (_what, f) => {
    expect(thrown(f).code).toBe('TUPLE_ENCODE');
  });
});
