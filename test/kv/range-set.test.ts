/**
 * coalesceRanges: sorted, merged, empty ranges dropped, whatever order the list comes in.
 */
import { coalesceRanges } from '../../src/kv/client/range-set';
import type { KeyRange } from '../../src/kv/contract/key-range';
import { Random, testSeed } from '../support/random';

/** The plain definition: drop the empty ranges, sort by begin, merge what overlaps or touches. */
function coalescedByDefinition(ranges: readonly KeyRange[]): KeyRange[] {
  const out: KeyRange[] = [];
  for (const range of ranges.filter((r) => Buffer.compare(r.begin, r.end) < 0).sort((a, b) => Buffer.compare(a.begin, b.begin))) {
    const last = out[out.length - 1];
    if (last && Buffer.compare(range.begin, last.end) <= 0) {
      if (Buffer.compare(range.end, last.end) > 0) out[out.length - 1] = { begin: last.begin, end: range.end };
    } else {
      out.push(range);
    }
  }
  return out;
}

const key = (n: number) => Buffer.from([n]);

describe('coalesceRanges', () => {
  it('merges a list in order, and one out of order', () => {
    const points = [1, 2, 4, 7].map((n) => ({ begin: key(n), end: Buffer.from([n, 0]) }));
    expect(coalesceRanges(points)).toEqual(points);
    expect(coalesceRanges([...points].reverse())).toEqual(points);
    const touching = [
      { begin: key(1), end: key(3) },
      { begin: key(3), end: key(5) },
      { begin: key(2), end: key(4) },
    ];
    expect(coalesceRanges(touching)).toEqual([{ begin: key(1), end: key(5) }]);
    expect(coalesceRanges([{ begin: key(4), end: key(4) }, ...points.slice(0, 2)])).toEqual(points.slice(0, 2));
  });

  it('matches its definition on random lists, mostly in order or not', () => {
    const seed = testSeed(911);
    const random = new Random(seed);
    for (let run = 0; run < 2_000; run++) {
      const ranges: KeyRange[] = [];
      let at = 0;
      for (let i = random.int(12); i > 0; i--) {
        // Mostly ascending, as a transaction's reads and writes usually come.
        at = random.chance(0.8) ? at + random.int(4) : random.int(40);
        const begin = Buffer.from([at, ...(random.chance(0.5) ? [random.int(3)] : [])]);
        const end = random.chance(0.1) ? begin : Buffer.from([at + random.int(4), ...(random.chance(0.5) ? [0] : [])]);
        ranges.push({ begin, end });
      }
      expect({ seed, run, coalesced: coalesceRanges(ranges) }).toEqual({ seed, run, coalesced: coalescedByDefinition(ranges) });
    }
  });

  it('merges a list of ordered runs into the same ranges as its definition', () => {
    // The shapes a commit meets: a high range recorded before the rest (the metadata version's read),
    // reads of two places in the order an algorithm needs them, the write sets of a batch of commits.
    const seed = testSeed(1717);
    const random = new Random(seed);
    for (let run = 0; run < 1_000; run++) {
      const ranges: KeyRange[] = [];
      for (let runs = 1 + random.int(6); runs > 0; runs--) {
        let at = random.int(200);
        for (let i = random.int(8); i > 0; i--) {
          at += random.int(6);
          const begin = Buffer.from([at, ...(random.chance(0.5) ? [random.int(3)] : [])]);
          const end = random.chance(0.1) ? begin : Buffer.from([Math.min(at + random.int(4), 255), ...(random.chance(0.5) ? [0] : [])]);
          ranges.push({ begin, end });
        }
      }
      if (random.chance(0.2)) ranges.reverse();
      expect({ seed, run, coalesced: coalesceRanges(ranges) }).toEqual({ seed, run, coalesced: coalescedByDefinition(ranges) });
    }
  });

  it('merges ordered runs without sorting the list (a high range read first costs no sort at commit)', () => {
    const sort = jest.spyOn(Array.prototype, 'sort');
    try {
      const metadataVersion = { begin: Buffer.from('\xff/metadataVersion', 'latin1'), end: Buffer.from('\xff/metadataVersion\x00', 'latin1') };
      const head = [5, 3, 7, 9].map((n) => ({ begin: key(n), end: key(n + 1) }));
      expect(coalesceRanges([head[0], metadataVersion, head[1], head[2], head[3]])).toEqual([
        { begin: key(3), end: key(4) },
        { begin: key(5), end: key(6) },
        { begin: key(7), end: key(8) },
        { begin: key(9), end: key(10) },
        metadataVersion,
      ]);
      expect(sort).not.toHaveBeenCalled();
    } finally {
      sort.mockRestore();
    }
  });
});
