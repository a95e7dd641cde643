import { compare, Double, Float32, pack, TupleError, UserType, Uuid, Versionstamp, type Tuple, type TupleItem } from '../../src/tuple';

/** Each list is in ascending order by the spec; compare and the packings must both agree. */
function expectAscending(tuples: Tuple[]): void {
  for (let i = 0; i < tuples.length; i++) {
    for (let j = 0; j < tuples.length; j++) {
      const expected = Math.sign(i - j);
      // The pair is part of the checked value so that a failure shows which tuples disagree.
      const got = Math.sign(compare(tuples[i], tuples[j]));
      expect([tuples[i], tuples[j], got]).toEqual([tuples[i], tuples[j], expected]);
      expect(Math.sign(Buffer.compare(pack(tuples[i]), pack(tuples[j])))).toBe(expected);
    }
  }
}

describe('compare', () => {
  it('orders types by type code (null, bytes, string, nested, integer, float, double, booleans, UUID, ...)', () => {
    expectAscending([
      [null],
      [Buffer.from([0xff])],
      ['\u{10ffff}'],
      [[]],
      [-(2n ** 2000n)],
      [2n ** 2000n],
      [new Float32(-Infinity)],
      [new Float32(Infinity)],
      [-Infinity],
      [new Double(5)],
      [false],
      [true],
      [new Uuid(Buffer.alloc(16))],
      [Versionstamp.complete(Buffer.alloc(10))],
      [new UserType(0x40, Buffer.from([0xff]))],
      [new UserType(0x41)],
    ]);
  });

  it('orders strings by code point (UTF-8), not by UTF-16 unit as JS < does', () => {
    // JS puts '\u{10000}' (a surrogate pair, 0xd800...) before '\uffff'; UTF-8 puts it after.
    expect('\u{10000}' < '\uffff').toBe(true);
    const ascending = ['', '\0', 'a', 'a\0', 'a\0b', 'ab', '\u00e9', '\ud7ff', '\ue000', '\uffff', '\u{10000}', '\u{10ffff}'];
    expectAscending(ascending.map((s) => [s]));
  });

  it('orders byte strings lexicographically, a prefix first', () => {
    expectAscending([[], [0], [0, 0], [0, 1], [1], [0xff]].map((b) => [Buffer.from(b)]));
  });

  it('orders integers by value across number and bigint and every encoding size', () => {
    expectAscending(
      [
        -(2n ** 2040n - 1n),
        -(2n ** 64n),
        -(2n ** 64n - 1n),
        -(2n ** 53n),
        -Number.MAX_SAFE_INTEGER,
        -(2 ** 32),
        -256,
        -255,
        -1,
        0,
        1,
        255,
        256,
        2 ** 32,
        Number.MAX_SAFE_INTEGER,
        2n ** 53n,
        2n ** 64n - 1n,
        2n ** 64n,
        2n ** 2040n - 1n,
      ].map((n) => [n]),
    );
    expect(compare([5], [5n])).toBe(0);
    expect(compare([2 ** 60], [2n ** 60n])).toBe(0);
  });

  it('orders doubles by IEEE total order: -NaN, -Infinity, negatives, -0, 0, positives, Infinity, NaN', () => {
    expectAscending([
      [Double.fromBits(0xfff8000000000001n)],
      [Double.fromBits(0xfff8000000000000n)],
      [-Infinity],
      [new Double(-1)],
      [-0.5],
      [-5e-324],
      [-0],
      [new Double(0)],
      [5e-324],
      [0.5],
      [new Double(2)],
      [Infinity],
      [NaN],
      [Double.fromBits(0x7ff8000000000001n)],
    ]);
  });

  it('orders floats by IEEE total order', () => {
    expectAscending(
      [
        Float32.fromBits(0xffc00000),
        new Float32(-Infinity),
        new Float32(-1),
        new Float32(-0),
        new Float32(0),
        new Float32(1),
        new Float32(Infinity),
        new Float32(NaN),
      ].map((f) => [f]),
    );
  });

  it('orders nested tuples element by element, a prefix first, null before anything', () => {
    expectAscending([[[]], [[null]], [[null, null]], [[null, 1]], [['a']], [[[]]], [[0]], [[0, null]], [[1]]]);
  });

  it('orders a tuple before its extensions', () => {
    expectAscending([[], [null], [null, null], [null, 0], [0], [0, null], [0, 0]]);
  });

  it('orders versionstamps by transaction version, then user version, complete before incomplete', () => {
    const tr = (n: number) => Buffer.alloc(10, n);
    const sorted = [
      Versionstamp.complete(tr(1), 0),
      Versionstamp.complete(tr(1), 1),
      Versionstamp.complete(tr(2), 0),
      Versionstamp.incomplete(0),
      Versionstamp.incomplete(1),
    ];
    for (let i = 0; i + 1 < sorted.length; i++) expect(compare([sorted[i]], [sorted[i + 1]])).toBeLessThan(0);
  });

  it('orders UUIDs and user types by their bytes', () => {
    expectAscending([[new Uuid('00000000-0000-0000-0000-000000000001')], [new Uuid('10000000-0000-0000-0000-000000000000')]]);
    expectAscending([[new UserType(0x40)], [new UserType(0x40, Buffer.from([0]))], [new UserType(0x40, Buffer.from([1]))], [new UserType(0x41)]]);
  });

  it('throws a TupleError on elements with no encoding, as pack does', () => {
    expect(() => compare([undefined as unknown as TupleItem], [1])).toThrow(TupleError);
    expect(() => compare([1], [{} as TupleItem])).toThrow(TupleError);
  });
});
