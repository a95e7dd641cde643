import fc from 'fast-check';
import { pack, Subspace, TupleError, type Tuple } from '../../src/tuple';
import { tuple } from './arbitraries';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

describe('Subspace', () => {
  const users = new Subspace(['app', 'users']);

  it('has the packed prefix tuple as its key', () => {
    expect(hex(users.key)).toBe(hex(pack(['app', 'users'])));
    expect(new Subspace().key.length).toBe(0);
  });

  it('puts a raw prefix before the prefix tuple', () => {
    const s = new Subspace(['x'], Buffer.from([0x15, 0x2a]));
    expect(hex(s.key)).toBe('152a027800');
  });

  it('can be made from raw bytes alone', () => {
    const s = Subspace.fromRaw(Buffer.from([0xfe, 0x00]));
    expect(hex(s.key)).toBe('fe00');
    expect(hex(s.pack([1]))).toBe('fe001501');
    expect(s.unpack(Buffer.from('fe001501', 'hex'))).toEqual([1]);
  });

  it('packs a tuple after its prefix', () => {
    expect(hex(users.pack(['alice', 3]))).toBe(hex(pack(['app', 'users', 'alice', 3])));
    expect(hex(users.pack())).toBe(hex(users.key));
  });

  it('unpacks what follows its prefix', () => {
    expect(users.unpack(users.pack(['alice', [1, null]]))).toEqual(['alice', [1, null]]);
    expect(users.unpack(users.key)).toEqual([]);
  });

  it('refuses to unpack a key outside it', () => {
    for (const key of [pack(['app', 'orders', 1]), pack(['app']), Buffer.alloc(0)]) {
      try {
        users.unpack(key);
        throw new Error('expected a TupleError');
      } catch (e) {
        expect(e).toBeInstanceOf(TupleError);
        expect((e as TupleError).code).toBe('TUPLE_SUBSPACE');
      }
    }
  });

  it('tells which keys it contains', () => {
    expect(users.contains(users.key)).toBe(true);
    expect(users.contains(users.pack(['bob']))).toBe(true);
    expect(users.contains(pack(['app', 'usersx']))).toBe(false);
    expect(users.contains(pack(['app']))).toBe(false);
    expect(new Subspace().contains(Buffer.from([0xff]))).toBe(true);
  });

  it('has the FDB range of its tuples: prefix + 00 to prefix + ff', () => {
    expect(users.range()).toEqual({
      begin: Buffer.concat([users.key, Buffer.from([0x00])]),
      end: Buffer.concat([users.key, Buffer.from([0xff])]),
    });
    const r = users.range(['alice']);
    expect(hex(r.begin)).toBe(`${hex(users.pack(['alice']))}00`);
    expect(hex(r.end)).toBe(`${hex(users.pack(['alice']))}ff`);
  });

  it('nests: a child subspace extends the prefix', () => {
    const alice = users.subspace(['alice']);
    expect(hex(alice.key)).toBe(hex(new Subspace(['app', 'users', 'alice']).key));
    expect(alice.unpack(alice.pack(['email']))).toEqual(['email']);
    expect(users.unpack(alice.pack(['email']))).toEqual(['alice', 'email']);
    expect(Subspace.fromRaw(Buffer.from([1])).subspace([2]).key).toEqual(Buffer.from([1, 0x15, 2]));
  });

  it('keeps every key it packs inside its range and readable back', () => {
    const raw = new Subspace(['p', 1], Buffer.from([0x42, 0x00]));
    fc.assert(
      fc.property(tuple, (t: Tuple) => {
        const key = raw.pack(t);
        const { begin, end } = raw.range();
        const inside = t.length === 0 || (Buffer.compare(key, begin) >= 0 && Buffer.compare(key, end) < 0);
        return inside && raw.contains(key) && pack(raw.unpack(key)).equals(pack(t));
      }),
      { seed: 42, numRuns: 300 },
    );
  });
});
