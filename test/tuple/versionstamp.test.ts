import { pack, packWithVersionstamp, Subspace, TupleError, unpack, Versionstamp } from '../../src/tuple';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const PLACEHOLDER = 'ff'.repeat(10);

function versionstampError(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(TupleError);
    expect((e as TupleError).code).toBe('TUPLE_VERSIONSTAMP');
    return (e as TupleError).message;
  }
  throw new Error('expected a TupleError');
}

describe('Versionstamp', () => {
  it('is incomplete until it has a transaction version', () => {
    const v = Versionstamp.incomplete(7);
    expect(v.isComplete).toBe(false);
    expect(v.trVersion).toBeNull();
    expect(hex(v.toBytes())).toBe(`${PLACEHOLDER}0007`);
    const done = v.completed(Buffer.from('00000000000000010002', 'hex'));
    expect(done.isComplete).toBe(true);
    expect(done.userVersion).toBe(7);
    expect(hex(done.toBytes())).toBe('000000000000000100020007');
    expect(versionstampError(() => done.completed(Buffer.alloc(10)))).toMatch(/already complete/);
  });

  it('treats ten 0xff bytes as incomplete, as FDB bindings do', () => {
    expect(Versionstamp.complete(Buffer.alloc(10, 0xff), 3)).toEqual(Versionstamp.incomplete(3));
    expect(Versionstamp.fromBytes(Buffer.from(`${PLACEHOLDER}0003`, 'hex'))).toEqual(Versionstamp.incomplete(3));
  });

  it('reads the 12-byte form at an offset', () => {
    const v = Versionstamp.fromBytes(Buffer.from(`aa0102030405060708090a0102`, 'hex'), 1);
    expect(hex(v.trVersion as Buffer)).toBe('0102030405060708090a');
    expect(v.userVersion).toBe(0x0102);
  });

  it('round-trips complete versionstamps through pack and unpack', () => {
    const v = Versionstamp.complete(Buffer.from('0102030405060708090a', 'hex'), 65535);
    expect(unpack(pack(['k', v]))).toEqual(['k', v]);
  });

  it('decodes a placeholder in the bytes as an incomplete versionstamp', () => {
    expect(unpack(Buffer.from(`33${PLACEHOLDER}0001`, 'hex'))).toEqual([Versionstamp.incomplete(1)]);
  });
});

describe('packWithVersionstamp', () => {
  it('appends the 4-byte little-endian offset of the placeholder', () => {
    const out = packWithVersionstamp(['a', Versionstamp.incomplete(5)]);
    // 02 61 00 | 33 <placeholder at offset 4> 0005 | offset 04000000
    expect(hex(out)).toBe(`026100 33${PLACEHOLDER}0005 04000000`.replace(/ /g, ''));
  });

  it('finds the versionstamp inside nested tuples', () => {
    const out = packWithVersionstamp([1, [null, Versionstamp.incomplete()], 'x']);
    // 1501 | 05 00ff 33 <placeholder at offset 6> 0000 00 | 027800 | 06000000
    expect(hex(out)).toBe(`1501 05 00ff 33${PLACEHOLDER}0000 00 027800 06000000`.replace(/ /g, ''));
    expect(out.readUInt32LE(out.length - 4)).toBe(6);
  });

  it('leaves complete versionstamps alone', () => {
    const complete = Versionstamp.complete(Buffer.alloc(10, 1));
    const out = packWithVersionstamp([complete, Versionstamp.incomplete()]);
    expect(out.readUInt32LE(out.length - 4)).toBe(1 + 12 + 1);
  });

  it('gives what FDB writes at commit: the tuple with the real versionstamp', () => {
    const key = packWithVersionstamp(['log', Versionstamp.incomplete(2)]);
    const offset = key.readUInt32LE(key.length - 4);
    const committed = Buffer.from(key.subarray(0, key.length - 4));
    Buffer.from('0000000000000abc0001', 'hex').copy(committed, offset);
    expect(unpack(committed)).toEqual(['log', Versionstamp.complete(Buffer.from('0000000000000abc0001', 'hex'), 2)]);
  });

  it('rejects a tuple without an incomplete versionstamp', () => {
    expect(versionstampError(() => packWithVersionstamp(['a', Versionstamp.complete(Buffer.alloc(10))]))).toMatch(/found none/);
  });

  it('rejects a tuple with more than one incomplete versionstamp', () => {
    const two = [Versionstamp.incomplete(), [Versionstamp.incomplete(1)]];
    expect(versionstampError(() => packWithVersionstamp(two))).toMatch(/only one incomplete versionstamp/);
  });

  it('is required for incomplete versionstamps: pack and range refuse them', () => {
    expect(versionstampError(() => pack([Versionstamp.incomplete()]))).toMatch(/use packWithVersionstamp/);
    const space = new Subspace(['a']);
    expect(versionstampError(() => space.range([Versionstamp.incomplete()]))).toMatch(/use packWithVersionstamp/);
  });

  it('counts the subspace prefix in the offset', () => {
    const space = new Subspace(['events'], Buffer.from([0xfe]));
    const out = space.packWithVersionstamp([Versionstamp.incomplete()]);
    expect(out.readUInt32LE(out.length - 4)).toBe(space.key.length + 1);
    expect(hex(out.subarray(0, space.key.length))).toBe(hex(space.key));
  });
});
