import fc from 'fast-check';
import { Double, Float32, pack, range, strinc, unpack, UserType, Uuid, Versionstamp, type Tuple, type TupleItem } from '../../src/tuple';
import { integerEnd, Reader, readString, stringEnd } from '../../src/tuple/codec';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const bytes = (h: string) => Buffer.from(h.replace(/ /g, ''), 'hex');

/** [what, element, packed hex, what unpack returns if not the element itself] */
type Vector = [string, TupleItem, string, TupleItem?];

function checkVectors(vectors: Vector[]): void {
  const rows = vectors.map(([what, item, packed, decoded]) => ({ what, item, packed, decoded }));
  it.each(rows)('$what', ({ item, packed, decoded }) => {
    expect(hex(pack([item]))).toBe(packed.replace(/ /g, ''));
    const back = unpack(bytes(packed));
    expect(back).toEqual([decoded === undefined ? item : decoded]);
    expect(hex(pack(back))).toBe(packed.replace(/ /g, ''));
  });
}

describe('pack: the examples of design/tuple.md', () => {
  it('byte string: pack("foo\\x00bar") == 01 foo 00ff bar 00', () => {
    expect(hex(pack([Buffer.from('foo\x00bar', 'latin1')]))).toBe('01666f6f00ff62617200');
  });

  it('unicode string: pack(u"F\\u00d4O\\u0000bar") == 02 F c394 O 00ff bar 00', () => {
    expect(hex(pack(['F\u00d4O\u0000bar']))).toBe('0246c3944f00ff62617200');
  });

  it('nested tuple: pack(((b"foo\\x00bar", None, ()),)) == 05 01foo00ffbar00 00ff 0500 00', () => {
    expect(hex(pack([[Buffer.from('foo\x00bar', 'latin1'), null, []]]))).toBe('0501666f6f00ff6261720000ff050000');
  });

  it('nested tuple: () packs as 05 00 and (None,) as 05 00 ff 00, so the empty tuple sorts first', () => {
    expect(hex(pack([[]]))).toBe('0500');
    expect(hex(pack([[null]]))).toBe('0500ff00');
  });

  it('integer: pack(-5551212) == 11 ab 4b 93', () => {
    expect(hex(pack([-5551212]))).toBe('11ab4b93');
  });

  it('integer: -1 is 13 fe', () => {
    expect(hex(pack([-1]))).toBe('13fe');
  });

  it('float: pack(-42f) == 20 3d d7 ff ff', () => {
    expect(hex(pack([new Float32(-42)]))).toBe('203dd7ffff');
  });
});

describe('pack: null, booleans, byte strings', () => {
  checkVectors([
    ['null', null, '00'],
    ['false', false, '26'],
    ['true', true, '27'],
    ['empty byte string', Buffer.alloc(0), '01 00'],
    ['byte string with 0x00 and 0xff', Buffer.from([0, 0xff, 0, 0]), '01 00ff ff 00ff 00ff 00'],
    ['long byte string (native copy path)', Buffer.alloc(40, 0x61), `01${'61'.repeat(40)}00`],
    ['long byte string with zeros', Buffer.from(`${'a'.repeat(20)}\0${'b'.repeat(20)}\0`), `01${'61'.repeat(20)}00ff${'62'.repeat(20)}00ff00`],
  ]);

  it('accepts any Uint8Array and decodes a Buffer', () => {
    const packed = pack([new Uint8Array([1, 0, 2])]);
    expect(hex(packed)).toBe('010100ff0200');
    const [back] = unpack(packed);
    expect(Buffer.isBuffer(back)).toBe(true);
  });

  it('decodes a copy, not a view of the input', () => {
    const packed = pack([Buffer.from('abc')]);
    const back = unpack(packed)[0] as Buffer;
    packed[1] = 0x7a;
    expect(back.toString()).toBe('abc');
  });
});

describe('pack: Unicode strings', () => {
  checkVectors([
    ['empty', '', '02 00'],
    ['ASCII', 'users', '02 7573657273 00'],
    ['embedded NUL', 'a\0b', '02 61 00ff 62 00'],
    ['only NULs', '\0\0', '02 00ff 00ff 00'],
    ['two-byte UTF-8', 'é', '02 c3a9 00'],
    ['three-byte UTF-8', '\uffff', '02 efbfbf 00'],
    ['astral (surrogate pair)', '\u{1f600}', '02 f09f9880 00'],
    ['highest code point', '\u{10ffff}', '02 f48fbfbf 00'],
    [
      'mixed, longer than the short-string path',
      'doc-3f2a9c1e-77b0 é \u{1f600}\0x',
      '02 646f632d33663261396331652d37376230 20 c3a9 20 f09f9880 00ff 78 00',
    ],
    ['long ASCII', 'x'.repeat(50), `02${'78'.repeat(50)}00`],
  ]);
});

describe('pack: nested tuples', () => {
  checkVectors([
    ['empty', [], '05 00'],
    ['holding null (escaped as 00 ff)', [null], '05 00ff 00'],
    ['holding an empty tuple', [[]], '05 0500 00'],
    ['null two levels down', [[null]], '05 05 00ff 00 00'],
    ['mixed', ['a', 1, null, [true]], '05 026100 1501 00ff 05 27 00 00'],
  ]);

  it('writes a top-level null as a single 00', () => {
    expect(hex(pack([null, [null], null]))).toBe('00 0500ff00 00'.replace(/ /g, ''));
  });
});

describe('pack: integers', () => {
  checkVectors([
    ['0', 0, '14'],
    ['1', 1, '15 01'],
    ['-1', -1, '13 fe'],
    ['255', 255, '15 ff'],
    ['-255', -255, '13 00'],
    ['256', 256, '16 0100'],
    ['-256', -256, '12 feff'],
    ['65535', 65535, '16 ffff'],
    ['65536', 65536, '17 010000'],
    ['-65536', -65536, '11 feffff'],
    ['2^32-1', 2 ** 32 - 1, '18 ffffffff'],
    ['2^32', 2 ** 32, '19 0100000000'],
    ['-(2^32)', -(2 ** 32), '0f feffffffff'],
    ['2^53-1 (largest safe)', Number.MAX_SAFE_INTEGER, '1b 1fffffffffffff'],
    ['-(2^53-1)', -Number.MAX_SAFE_INTEGER, '0d e0000000000000'],
    ['2^53 as a number decodes as a bigint', 2 ** 53, '1b 20000000000000', 2n ** 53n],
    ['2^53', 2n ** 53n, '1b 20000000000000'],
    ['-(2^53)', -(2n ** 53n), '0d dfffffffffffff'],
    ['2^63', 2n ** 63n, '1c 8000000000000000'],
    ['2^64-1: the 8-byte form of Java and Go', 2n ** 64n - 1n, '1c ffffffffffffffff'],
    ['-(2^64-1): the 8-byte form of Java and Go', -(2n ** 64n - 1n), '0c 0000000000000000'],
    ['2^64', 2n ** 64n, '1d 09 010000000000000000'],
    ['-(2^64)', -(2n ** 64n), '0b f6 feffffffffffffffff'],
    ['2^100', 2n ** 100n, `1d 0d 10${'00'.repeat(12)}`],
    ['-(2^100)', -(2n ** 100n), `0b f2 ef${'ff'.repeat(12)}`],
    ['2^2040-1 (255 bytes, the largest)', 2n ** 2040n - 1n, `1d ff ${'ff'.repeat(255)}`],
    ['-(2^2040-1)', -(2n ** 2040n - 1n), `0b 00 ${'00'.repeat(255)}`],
    ['a small bigint decodes as a number', 7n, '15 07', 7],
    ['an integral number beyond the safe range encodes exactly', 1e20, '1d 09 056bc75e2d63100000', 10n ** 20n],
  ]);

  it('decodes the Python form of ±(2^64-1) too (0x1d / 0x0b with 8 bytes)', () => {
    expect(unpack(bytes('1d 08 ffffffffffffffff'))).toEqual([2n ** 64n - 1n]);
    expect(unpack(bytes('0b f7 0000000000000000'))).toEqual([-(2n ** 64n - 1n)]);
  });

  it('decodes non-minimal forms other bindings might write to the right value', () => {
    expect(unpack(bytes('16 0001'))).toEqual([1]);
    expect(unpack(bytes('12 fffe'))).toEqual([-1]);
    expect(unpack(bytes('13 ff'))).toEqual([0]);
    expect(Object.is(unpack(bytes('13 ff'))[0], 0)).toBe(true);
    expect(unpack(bytes('1d 02 0001'))).toEqual([1]);
    expect(unpack(bytes('1d 00'))).toEqual([0]);
  });

  it('round-trips every canonical 1..8-byte integer exactly', () => {
    const canonical = fc.tuple(fc.integer({ min: 1, max: 8 }), fc.boolean(), fc.uint8Array({ minLength: 8, maxLength: 8 })).map(([n, neg, b]) => {
      const payload = Buffer.from(b.subarray(0, n));
      // Minimal: no leading byte that carries no magnitude.
      if (payload[0] === (neg ? 0xff : 0x00)) payload[0] = neg ? 0xfe : 0x01;
      return Buffer.concat([Buffer.from([neg ? 0x14 - n : 0x14 + n]), payload]);
    });
    fc.assert(
      fc.property(canonical, (b) => pack(unpack(b)).equals(b)),
      { seed: 42, numRuns: 2000 },
    );
  });
});

describe('pack: floats and doubles', () => {
  checkVectors([
    ['float 0', new Float32(0), '20 80000000'],
    ['float -0', new Float32(-0), '20 7fffffff'],
    ['float 1', new Float32(1), '20 bf800000'],
    ['float rounds to float32', new Float32(0.1), '20 bdcccccd'],
    ['float Infinity', new Float32(Infinity), '20 ff800000'],
    ['float NaN (canonical)', new Float32(NaN), '20 ffc00000'],
    ['float NaN with a payload', Float32.fromBits(0x7fc00001), '20 ffc00001'],
    ['float negative NaN', Float32.fromBits(0xffc00000), '20 003fffff'],
    ['double 1.5', 1.5, '21 bff8000000000000'],
    ['double -1.5', -1.5, '21 4007ffffffffffff'],
    ['double -0 (a number that is not an integer)', -0, '21 7fffffffffffffff'],
    ['double Infinity', Infinity, '21 fff0000000000000'],
    ['double -Infinity', -Infinity, '21 000fffffffffffff'],
    ['double NaN (canonical)', NaN, '21 fff8000000000000'],
    ['double smallest subnormal', 5e-324, '21 8000000000000001'],
    ['integral double via Double', new Double(1), '21 bff0000000000000'],
    ['integral double -2^60 via Double', new Double(-(2 ** 60)), '21 3c4fffffffffffff'],
    ['non-integral Double decodes as a plain number', new Double(0.25), '21 bfd0000000000000', 0.25],
    ['double NaN with a payload', Double.fromBits(0x7ff8000000000001n), '21 fff8000000000001'],
    ['double negative NaN', Double.fromBits(0xfff8000000000000n), '21 0007ffffffffffff'],
  ]);

  it('writes every NaN number with the canonical bits, whatever produced it', () => {
    const weird = new Float64Array(new BigUint64Array([0xfff8000000000000n]).buffer)[0];
    expect(hex(pack([weird]))).toBe(hex(pack([NaN])));
    expect(new Double(weird).bits).toBe(0x7ff8000000000000n);
  });

  it('keeps the exact bits of any float through unpack and pack', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 4, maxLength: 4 }), (b) => {
        const packed = Buffer.concat([Buffer.from([0x20]), b]);
        return pack(unpack(packed)).equals(packed);
      }),
      { seed: 42, numRuns: 2000 },
    );
  });

  it('keeps the exact bits of any double through unpack and pack', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 8, maxLength: 8 }), (b) => {
        const packed = Buffer.concat([Buffer.from([0x21]), b]);
        return pack(unpack(packed)).equals(packed);
      }),
      { seed: 42, numRuns: 2000 },
    );
  });

  it('exposes the value of wrapped floats', () => {
    expect(new Float32(0.1).value).toBe(Math.fround(0.1));
    expect(Float32.fromBits(0x3f800000).value).toBe(1);
    expect(Double.fromBits(0x3ff0000000000000n).value).toBe(1);
    expect(+new Double(2.5)).toBe(2.5);
  });
});

describe('pack: UUIDs, versionstamps, user types', () => {
  checkVectors([
    ['UUID', new Uuid('00112233-4455-6677-8899-aabbccddeeff'), '30 00112233445566778899aabbccddeeff'],
    ['complete versionstamp', Versionstamp.complete(bytes('0102030405060708090a'), 0x0b0c), '33 0102030405060708090a 0b0c'],
    ['user type (runs to the end of the key)', new UserType(0x40, Buffer.from([1, 2, 0])), '40 010200'],
    ['user type without bytes', new UserType(0x4f), '4f'],
  ]);

  it('parses and prints UUID text', () => {
    const u = new Uuid('00112233-4455-6677-8899-AABBCCDDEEFF');
    expect(u.toString()).toBe('00112233-4455-6677-8899-aabbccddeeff');
    expect(new Uuid(u.bytes)).toEqual(u);
  });

  it('puts a user-type value after the other elements and reads it back', () => {
    const t = ['doc', 7, new UserType(0x45, Buffer.from([0x00, 0x05, 0x00]))];
    expect(hex(pack(t))).toBe('02646f6300 1507 45000500'.replace(/ /g, ''));
    expect(unpack(pack(t))).toEqual(t);
  });
});

describe('pack: tuples of several elements', () => {
  it('concatenates the encodings of the elements', () => {
    expect(hex(pack(['foo', 1, null, true, -0.5]))).toBe('02666f6f00 1501 00 27 21401fffffffffffff'.replace(/ /g, ''));
  });

  it('packs the empty tuple as no bytes', () => {
    expect(pack([]).length).toBe(0);
    expect(unpack(Buffer.alloc(0))).toEqual([]);
  });

  it('grows its buffer for large tuples', () => {
    const t: Tuple = [Buffer.alloc(100_000, 1), 'x'.repeat(70_000), Array.from({ length: 2000 }, (_, i) => i)];
    const [b, s, n] = unpack(pack(t));
    expect((b as Buffer).equals(t[0] as Buffer)).toBe(true);
    expect(s).toBe(t[1]);
    expect(n).toEqual(t[2]);
    expect(hex(pack(['small']))).toBe('02736d616c6c00');
  });

  it('unpacks any Uint8Array, including a view into a larger buffer', () => {
    const backing = Buffer.from('ff 1501 0261 00 ff'.replace(/ /g, ''), 'hex');
    expect(unpack(new Uint8Array(backing.buffer, backing.byteOffset + 1, 5))).toEqual([1, 'a']);
  });
});

describe('range', () => {
  it('spans the packing + 0x00 to the packing + 0xff', () => {
    const r = range(['a', 1]);
    expect(hex(r.begin)).toBe('026100150100');
    expect(hex(r.end)).toBe('0261001501ff');
  });

  it('covers every tuple extending the prefix, but not the prefix itself', () => {
    const r = range(['users']);
    for (const t of [
      ['users', null],
      ['users', 0],
      ['users', 'x', 'y'],
      ['users', [1]],
      ['users', 2n ** 80n],
    ]) {
      const k = pack(t);
      expect(Buffer.compare(k, r.begin)).toBeGreaterThanOrEqual(0);
      expect(Buffer.compare(k, r.end)).toBeLessThan(0);
    }
    expect(Buffer.compare(pack(['users']), r.begin)).toBeLessThan(0);
    expect(Buffer.compare(pack(['users\0']), r.end)).toBeGreaterThan(0);
  });

  it('of the empty tuple is 00..ff', () => {
    expect(range()).toEqual({ begin: Buffer.from([0x00]), end: Buffer.from([0xff]) });
  });
});

describe('strinc', () => {
  it('is exported with the tuple layer: the first key after all keys with the prefix', () => {
    expect(hex(strinc(pack(['a'])))).toBe('026101');
    expect(hex(strinc(bytes('01 ff ff')))).toBe('02');
    expect(() => strinc(bytes('ff ff'))).toThrow(RangeError);
  });
});

describe('the codec functions the document layer calls directly', () => {
  it('stringEnd and integerEnd find where an element ends, or -1 when it is cut short', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.uint8Array()), fc.oneof(fc.integer(), fc.bigInt({ min: -(2n ** 200n), max: 2n ** 200n })), (s, n) => {
        const str = pack([s]);
        const int = pack([n]);
        expect(stringEnd(Buffer.concat([str, int]), 0)).toBe(str.length);
        expect(integerEnd(Buffer.concat([int, str]), 0)).toBe(int.length);
        expect(stringEnd(str.subarray(0, str.length - 1), 0)).toBe(-1);
        if (int.length > 1) expect(integerEnd(int.subarray(0, int.length - 1), 0)).toBe(-1);
      }),
    );
    expect(stringEnd(bytes('02 61 00 ff 62'), 0)).toBe(-1);
    expect(integerEnd(bytes('1d 02 01'), 0)).toBe(-1);
    expect(integerEnd(bytes('14 02'), 0)).toBe(1);
  });

  it('readString reads what decoding the element reads', () => {
    fc.assert(
      fc.property(fc.string(), (s) => {
        const packed = Buffer.concat([pack([s]), pack([1])]);
        const r = new Reader(packed, 1);
        expect(readString(r)).toBe(s);
        expect(r.pos).toBe(pack([s]).length);
      }),
    );
  });
});
