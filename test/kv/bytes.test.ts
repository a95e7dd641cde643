import { compareBytes } from '../../src/kv/contract/bytes';
import { Random, testSeed } from '../support/random';

describe('compareBytes', () => {
  it(`orders byte strings as Buffer.compare does: shared prefixes of every length, differing bytes anywhere, one a prefix of the other (seed ${testSeed(31)})`, () => {
    const random = new Random(testSeed(31));
    for (let n = 0; n < 5000; n++) {
      const prefix = random.bytes(random.int(40));
      const a = Buffer.concat([prefix, random.bytes(random.int(6))]);
      // Mostly a near copy of `a` (one byte changed, cut short or extended), sometimes unrelated.
      let b: Buffer;
      const shape = random.int(4);
      if (shape === 0) b = random.bytes(random.int(45));
      else if (shape === 1) b = a.subarray(0, random.int(a.length + 1));
      else if (shape === 2) b = Buffer.concat([a, random.bytes(1 + random.int(5))]);
      else {
        b = Buffer.from(a);
        if (b.length > 0) b[random.int(b.length)] = random.int(256);
      }
      expect([n, compareBytes(a, b)]).toEqual([n, Buffer.compare(a, b)]);
      expect([n, compareBytes(b, a)]).toEqual([n, Buffer.compare(b, a)]);
    }
  });

  it('compares keys over 128 bytes too', () => {
    const long = Buffer.alloc(300, 7);
    const other = Buffer.from(long);
    other[299] = 8;
    expect(compareBytes(long, other)).toBe(-1);
    expect(compareBytes(other, long)).toBe(1);
    expect(compareBytes(long, Buffer.from(long))).toBe(0);
  });
});
