import { compareBytes } from '../../src/kv/contract/bytes';
import type { KeyRange } from '../../src/kv/contract/key-range';
import { WriteSet } from '../../src/kv/client/write-set';
import { Random, testSeed } from '../support/random';

/**
 * `WriteSet.writeConflicts` against a model: the union of a one-key range per key written one by one,
 * each range clear and each added range, sorted, with overlapping and touching ranges merged. Written
 * here from scratch, without the library's range helpers.
 */
function modelConflicts(ranges: KeyRange[]): string[] {
  const sorted = ranges.filter((r) => compareBytes(r.begin, r.end) < 0).sort((a, b) => compareBytes(a.begin, b.begin));
  const out: { begin: Buffer; end: Buffer }[] = [];
  for (const r of sorted) {
    const last = out[out.length - 1];
    if (last !== undefined && compareBytes(r.begin, last.end) <= 0) {
      if (compareBytes(r.end, last.end) > 0) last.end = r.end;
    } else {
      out.push({ begin: r.begin, end: r.end });
    }
  }
  return out.map(show);
}

function show(r: KeyRange): string {
  return `[${r.begin.toString('hex')}, ${r.end.toString('hex')})`;
}

describe('WriteSet.writeConflicts', () => {
  const seed = testSeed(17);

  it(`is the coalesced union of the written keys and the ranges, whether or not the log was indexed (seed ${seed})`, () => {
    const rnd = new Random(seed);
    // Short keys over a small alphabet, so that keys fall inside, at the bounds of and between ranges.
    const key = (): Buffer => Buffer.from(Array.from({ length: rnd.between(1, 3) }, () => 0x61 + rnd.int(4)));
    const range = (): [Buffer, Buffer] => {
      const [a, b] = [key(), key()];
      return compareBytes(a, b) <= 0 ? [a, b] : [b, a];
    };
    let withPointsOutside = 0;
    for (let round = 0; round < 1500; round++) {
      const writes = new WriteSet();
      const expected: KeyRange[] = [];
      const point = (k: Buffer) => expected.push({ begin: k, end: Buffer.concat([k, Buffer.from([0])]) });
      const indexAt = rnd.chance(0.5) ? rnd.int(12) : -1;
      for (let i = rnd.int(16); i > 0; i--) {
        if (i === indexAt) expect(writes.keys).toBeDefined();
        const r = rnd.next();
        if (r < 0.35) {
          const k = key();
          writes.set(k, Buffer.from([1]));
          point(k);
        } else if (r < 0.45) {
          const k = key();
          writes.clear(k);
          point(k);
        } else if (r < 0.55) {
          const k = key();
          writes.atomic('add', k, Buffer.from([1]));
          point(k);
        } else if (r < 0.6) {
          const k = key();
          writes.setVersionstampedValue(k, { bytes: Buffer.alloc(10), offset: 0 });
          point(k);
        } else if (r < 0.85) {
          const [a, b] = range();
          if (compareBytes(a, b) < 0) writes.clearRange(a, b);
          expected.push({ begin: a, end: b });
        } else {
          const [a, b] = range();
          writes.addConflictRange(a, b);
          expected.push({ begin: a, end: b });
        }
      }
      const actual = writes.writeConflicts().map(show);
      const want = modelConflicts(expected);
      if (want.length > 1) withPointsOutside++;
      expect(`round ${round}: ${actual.join(' ')}`).toBe(`round ${round}: ${want.join(' ')}`);
    }
    // The rounds covered more than trivial unions.
    expect(withPointsOutside).toBeGreaterThan(500);
  });

  it('leaves out the keys of a document rewrite, which its clear covers, and keeps the others', () => {
    const writes = new WriteSet();
    const doc = (id: string, leaf: string) => Buffer.from(`d/${id}/${leaf}`);
    for (const id of ['b', 'a']) {
      writes.clearRange(Buffer.from(`d/${id}/`), Buffer.from(`d/${id}0`));
      for (const leaf of ['name', 'age', 'tags/0']) writes.set(doc(id, leaf), Buffer.from('x'));
    }
    writes.set(Buffer.from('index/a'), Buffer.from(''));
    writes.set(Buffer.from('c'), Buffer.from(''));
    expect(writes.writeConflicts().map((r) => `[${r.begin.toString('latin1')}, ${r.end.toString('latin1')})`)).toEqual([
      '[c, c\u0000)',
      '[d/a/, d/a0)',
      '[d/b/, d/b0)',
      '[index/a, index/a\u0000)',
    ]);
  });
});
