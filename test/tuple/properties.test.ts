import fc from 'fast-check';
import { isDeepStrictEqual } from 'util';
import { compare, pack, TupleError, unpack, UserType, type Tuple } from '../../src/tuple';
import { pooledTuple, tuple } from './arbitraries';

const sign = (n: number) => Math.sign(n) || 0;
/** A user-type value must end the key, so only tuples without one can be extended. */
const extensible = (t: Tuple) => !t.some((item) => item instanceof UserType);

describe('round trips (property-based)', () => {
  it('unpack(pack(t)) deep-equals t for random nested tuples', () => {
    fc.assert(
      fc.property(tuple, (t) => isDeepStrictEqual(unpack(pack(t)), t)),
      { seed: 42, numRuns: 1000 },
    );
  });

  it('pack(unpack(b)) equals b for every packed tuple b', () => {
    fc.assert(
      fc.property(tuple, (t) => {
        const b = pack(t);
        return pack(unpack(b)).equals(b);
      }),
      { seed: 42, numRuns: 1000 },
    );
  });

  it('packs the concatenation of two tuples as the concatenation of their packings', () => {
    fc.assert(
      fc.property(pooledTuple, pooledTuple, (a, b) => {
        fc.pre(extensible(a));
        return pack([...a, ...b]).equals(Buffer.concat([pack(a), pack(b)]));
      }),
      { seed: 42, numRuns: 500 },
    );
  });
});

describe('compare (property-based)', () => {
  it('agrees with the byte order of the packings on tuples sharing elements', () => {
    fc.assert(
      fc.property(pooledTuple, pooledTuple, (a, b) => sign(compare(a, b)) === sign(Buffer.compare(pack(a), pack(b)))),
      { seed: 42, numRuns: 5000 },
    );
  });

  it('agrees with the byte order of the packings on random tuples with a common prefix', () => {
    fc.assert(
      fc.property(tuple, tuple, tuple, (prefix, x, y) => {
        fc.pre(extensible(prefix));
        const a = [...prefix, ...x];
        const b = [...prefix, ...y];
        return sign(compare(a, b)) === sign(Buffer.compare(pack(a), pack(b))) && sign(compare(x, y)) === sign(Buffer.compare(pack(x), pack(y)));
      }),
      { seed: 42, numRuns: 500 },
    );
  });

  it('is antisymmetric and zero exactly on equal packings', () => {
    fc.assert(
      fc.property(pooledTuple, pooledTuple, (a, b) => {
        return sign(compare(a, b)) === -sign(compare(b, a)) && compare(a, a) === 0 && (compare(a, b) === 0) === pack(a).equals(pack(b));
      }),
      { seed: 42, numRuns: 2000 },
    );
  });
});

describe('unpack on arbitrary bytes (fuzz)', () => {
  const noise = fc.oneof(
    fc.uint8Array({ maxLength: 24 }),
    // Bytes that are mostly type codes and escapes, to get deeper into the decoder.
    fc
      .array(fc.constantFrom(0x00, 0xff, 0x01, 0x02, 0x05, 0x0b, 0x0c, 0x13, 0x14, 0x15, 0x1c, 0x1d, 0x21, 0x33, 0x40), {
        maxLength: 24,
      })
      .map((a) => Uint8Array.from(a)),
  );

  it('either decodes or throws a TupleError, never anything else', () => {
    fc.assert(
      fc.property(noise, (b) => {
        try {
          unpack(b);
          return true;
        } catch (e) {
          return e instanceof TupleError && e.code === 'TUPLE_DECODE';
        }
      }),
      { seed: 42, numRuns: 3000 },
    );
  });

  it('decodes to values that pack and decode to the same values again', () => {
    fc.assert(
      fc.property(noise, (b) => {
        let items;
        try {
          items = unpack(b);
        } catch {
          return true;
        }
        let again;
        try {
          again = pack(items);
        } catch (e) {
          // The only decodable thing pack refuses is a placeholder versionstamp.
          return e instanceof TupleError && e.code === 'TUPLE_VERSIONSTAMP';
        }
        return isDeepStrictEqual(unpack(again), items);
      }),
      { seed: 42, numRuns: 5000 },
    );
  });
});
