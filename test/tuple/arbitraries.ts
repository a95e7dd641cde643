/**
 * fast-check arbitraries for tuples, shared by the property tests. Values are generated in the form
 * `unpack` returns them (integers inside the safe range as numbers, integral doubles as `Double`, ...),
 * so that `unpack(pack(t))` can be compared with `t` directly.
 */
import fc from 'fast-check';
import { Double, Float32, UserType, Uuid, Versionstamp, type Tuple, type TupleItem } from '../../src/tuple';

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** What unpack returns for an integer. */
export function asDecodedInteger(n: number | bigint): number | bigint {
  return typeof n === 'bigint' && n >= -MAX_SAFE && n <= MAX_SAFE ? Number(n) : n;
}

/** What unpack returns for a double: a plain number unless pack would write it differently. */
export function asDecodedDouble(d: number | Double): number | Double {
  const v = typeof d === 'number' ? d : d.value;
  if (Number.isNaN(v)) return typeof d === 'number' || d.bits === 0x7ff8000000000000n ? NaN : d;
  if (Number.isInteger(v) && !Object.is(v, -0)) return typeof d === 'number' ? new Double(v) : d;
  return v;
}

const INTEGER_BOUNDARIES = [0n, 1n, 255n, 256n, 65535n, 65536n, 2n ** 32n - 1n, 2n ** 32n, 2n ** 53n - 1n, 2n ** 53n]
  .concat([2n ** 56n - 1n, 2n ** 56n, 2n ** 63n, 2n ** 64n - 1n, 2n ** 64n, 2n ** 2040n - 1n])
  .flatMap((n) => [n, -n]);

export const integer: fc.Arbitrary<number | bigint> = fc
  .oneof(
    fc.integer({ min: -70000, max: 70000 }),
    fc.maxSafeInteger(),
    fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }),
    fc.bigInt({ min: -(2n ** 2040n - 1n), max: 2n ** 2040n - 1n }),
    fc.constantFrom(...INTEGER_BOUNDARIES),
  )
  .map(asDecodedInteger);

export const double: fc.Arbitrary<number | Double> = fc
  .oneof(
    fc.double(),
    fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map((bits) => Double.fromBits(bits)),
  )
  .map(asDecodedDouble);

export const float32: fc.Arbitrary<Float32> = fc.oneof(
  fc.float().map((f) => new Float32(f)),
  fc.integer({ min: 0, max: 0xffffffff }).map((bits) => Float32.fromBits(bits)),
);

export const string: fc.Arbitrary<string> = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.string({ unit: fc.constantFrom('\0', 'a', '\u00ff', '\u07ff', '\u0800', '\uffff', '\u{10000}', '\u{10ffff}') }),
);

export const bytes: fc.Arbitrary<Buffer> = fc
  .oneof(
    fc.uint8Array({ maxLength: 80 }),
    fc.array(fc.constantFrom(0x00, 0x01, 0xfe, 0xff), { maxLength: 40 }).map((a) => Uint8Array.from(a)),
  )
  .map((u) => Buffer.from(u));

export const uuid: fc.Arbitrary<Uuid> = fc.uint8Array({ minLength: 16, maxLength: 16 }).map((b) => new Uuid(b));

/** Complete versionstamps only: `pack` refuses incomplete ones. */
export const versionstamp: fc.Arbitrary<Versionstamp> = fc
  .tuple(fc.uint8Array({ minLength: 10, maxLength: 10 }), fc.integer({ min: 0, max: 0xffff }))
  .filter(([tr]) => tr.some((b) => b !== 0xff))
  .map(([tr, user]) => Versionstamp.complete(tr, user));

export const userType: fc.Arbitrary<UserType> = fc
  .tuple(fc.integer({ min: 0x40, max: 0x4f }), fc.uint8Array({ maxLength: 20 }))
  .map(([code, b]) => new UserType(code, b));

export const leaf: fc.Arbitrary<TupleItem> = fc.oneof(fc.constant(null), fc.boolean(), integer, double, float32, string, bytes, uuid, versionstamp);

const { item } = fc.letrec<{ item: TupleItem; nested: TupleItem[] }>((tie) => ({
  item: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, tie('nested')),
  nested: fc.array(tie('item'), { maxLength: 5 }),
}));

/** Any element that may appear anywhere in a tuple. */
export const tupleItem: fc.Arbitrary<TupleItem> = item;

/** `arb` one time in eight, null otherwise. */
function rarely<T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | null> {
  return fc.oneof({ arbitrary: fc.constant(null), weight: 7 }, { arbitrary: arb, weight: 1 });
}

/** Any tuple `pack` accepts, sometimes ending with a user-type value. */
export const tuple: fc.Arbitrary<Tuple> = fc
  .tuple(fc.array(item, { maxLength: 6 }), rarely(userType))
  .map(([items, last]) => (last === null ? items : [...items, last]));

/**
 * Elements drawn from a small pool, so that two tuples often share a prefix or differ only in one
 * element of the same type: the interesting cases for ordering.
 */
const poolLeaf: fc.Arbitrary<TupleItem> = fc.constantFrom<TupleItem>(
  null,
  false,
  true,
  0,
  1,
  -1,
  255,
  256,
  -255,
  -256,
  Number.MAX_SAFE_INTEGER,
  -Number.MAX_SAFE_INTEGER,
  2n ** 64n - 1n,
  -(2n ** 64n - 1n),
  2n ** 64n,
  -(2n ** 64n),
  2n ** 100n,
  -(2n ** 100n),
  '',
  'a',
  'a\0',
  'ab',
  '\u00e9',
  '\uffff',
  '\u{10000}',
  '\ue000',
  Buffer.alloc(0),
  Buffer.from([0]),
  Buffer.from([0, 0xff]),
  Buffer.from([1]),
  -0,
  0.5,
  -0.5,
  NaN,
  Infinity,
  -Infinity,
  new Double(1),
  new Double(-1),
  Double.fromBits(0xfff8000000000001n),
  new Float32(1.5),
  new Float32(-0),
  new Float32(0),
  Float32.fromBits(0x7fc00001),
  new Uuid('00000000-0000-0000-0000-000000000000'),
  new Uuid('ffffffff-ffff-ffff-ffff-ffffffffffff'),
  Versionstamp.complete(Buffer.alloc(10, 1), 0),
  Versionstamp.complete(Buffer.alloc(10, 1), 1),
  Versionstamp.complete(Buffer.alloc(10, 2), 0),
);

const { poolItem } = fc.letrec<{ poolItem: TupleItem; poolNested: TupleItem[] }>((tie) => ({
  poolItem: fc.oneof({ depthSize: 'small' }, poolLeaf, tie('poolNested')),
  poolNested: fc.array(tie('poolItem'), { maxLength: 3 }),
}));

/** Short tuples of pooled elements, sometimes with a trailing user-type value. */
export const pooledTuple: fc.Arbitrary<Tuple> = fc
  .tuple(fc.array(poolItem, { maxLength: 4 }), rarely(fc.constantFrom(new UserType(0x40), new UserType(0x40, Buffer.from([0])), new UserType(0x4f))))
  .map(([items, last]) => (last === null ? items : [...items, last]));
