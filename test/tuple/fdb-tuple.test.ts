/**
 * Cross-check against `fdb-tuple`, the encoder of node-foundationdb: on every value both libraries
 * support, the bytes must be identical.
 */
import fc from 'fast-check';
import * as fdbTuple from 'fdb-tuple';
import { Double, Float32, pack, packWithVersionstamp, UserType, Uuid, Versionstamp, type Tuple, type TupleItem } from '../../src/tuple';
import { tuple } from './arbitraries';

type FdbItem = ReturnType<typeof fdbTuple.unpack>[number];

/** The same value in fdb-tuple's representation; undefined where fdb-tuple has none (user types). */
function toFdb(item: TupleItem): FdbItem | undefined {
  if (Array.isArray(item)) {
    const out: FdbItem[] = [];
    for (const x of item as Tuple) {
      const y = toFdb(x);
      if (y === undefined) return undefined;
      out.push(y);
    }
    return out;
  }
  if (item instanceof Float32) {
    const raw = Buffer.alloc(4);
    raw.writeUInt32BE(item.bits);
    return { type: 'float', value: item.value, rawEncoding: raw };
  }
  if (item instanceof Double) {
    const raw = Buffer.alloc(8);
    raw.writeBigUInt64BE(item.bits);
    return { type: 'double', value: item.value, rawEncoding: raw };
  }
  if (item instanceof Uuid) return { type: 'uuid', value: item.bytes };
  if (item instanceof Versionstamp) {
    return item.isComplete ? { type: 'versionstamp', value: item.toBytes() } : { type: 'unbound versionstamp', code: item.userVersion };
  }
  if (item instanceof UserType) return undefined;
  if (item instanceof Uint8Array) return Buffer.from(item);
  return item as FdbItem;
}

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

describe('fdb-tuple agreement', () => {
  it('packs the spec examples and integer boundaries to the same bytes', () => {
    const values: TupleItem[] = [
      null,
      true,
      false,
      '',
      'F\u00d4O\u0000bar',
      '\u{1f600}',
      Buffer.from('foo\x00bar', 'latin1'),
      [Buffer.from('foo\x00bar', 'latin1'), null, []],
      -5551212,
      0,
      -1,
      255,
      -255,
      256,
      -256,
      Number.MAX_SAFE_INTEGER,
      -Number.MAX_SAFE_INTEGER,
      2n ** 53n,
      -(2n ** 53n),
      2n ** 64n - 1n,
      -(2n ** 64n - 1n),
      2n ** 64n,
      -(2n ** 64n),
      2n ** 1000n,
      -(2n ** 1000n),
      1.5,
      -0,
      Infinity,
      -Infinity,
      NaN,
      new Float32(-42),
      new Double(3),
      new Uuid('00112233-4455-6677-8899-aabbccddeeff'),
      Versionstamp.complete(Buffer.from('0102030405060708090a', 'hex'), 7),
    ];
    for (const v of values) {
      expect([v, hex(pack([v]))]).toEqual([v, hex(fdbTuple.pack([toFdb(v) as FdbItem]))]);
    }
  });

  it('packs random tuples to the same bytes', () => {
    fc.assert(
      fc.property(tuple, (t) => {
        const theirs = toFdb(t);
        fc.pre(theirs !== undefined);
        return pack(t).equals(fdbTuple.pack(theirs));
      }),
      { seed: 42, numRuns: 1000 },
    );
  });

  it('puts the versionstamp placeholder at the same offset', () => {
    fc.assert(
      fc.property(tuple, tuple, (a, b) => {
        const t = [...a, [Versionstamp.incomplete(9)], ...b];
        const theirs = toFdb(t);
        fc.pre(theirs !== undefined);
        const ours = packWithVersionstamp(t);
        const { data, stampPos } = fdbTuple.packUnboundVersionstamp(theirs);
        return ours.subarray(0, ours.length - 4).equals(data) && ours.readUInt32LE(ours.length - 4) === stampPos;
      }),
      { seed: 42, numRuns: 300 },
    );
  });
});
