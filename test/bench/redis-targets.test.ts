/**
 * `npm run bench:redis` prints issue 17's target beside each row, and by how much a row falls short
 * (bench/redis.ts): the targets are the issue's, per pairing and caller count, with the looser hot-key
 * target on 32 callers of one structure.
 */
import { redisTable, targetOf, targetsMet, targetVerdict, type RedisRow } from '../../bench/redis';

const row = (engine: RedisRow['engine'], operation: string, callers: number, ratio: number): RedisRow => ({
  engine,
  pairing: engine,
  operation,
  callers,
  ours: ratio * 1000,
  redis: 1000,
  ratio,
});

describe("bench:redis's targets", () => {
  it("are issue 17's: memory 2x and 1x, LMDB 'fast' 0.5x and 1x, LMDB 'sync' 1x and 1x", () => {
    expect([1, 32].map((c) => targetOf('memory', c))).toEqual([2, 1]);
    expect([1, 32].map((c) => targetOf('lmdb-fast', c))).toEqual([0.5, 1]);
    expect([1, 32].map((c) => targetOf('lmdb-sync', c))).toEqual([1, 1]);
  });

  it('says whether a row meets its target and, when not, by what factor it falls short', () => {
    expect(targetVerdict(row('memory', 'set add', 1, 2.5))).toBe('2x met');
    expect(targetVerdict(row('memory', 'queue pop', 1, 1.6))).toBe('2x not met (1.25x short)');
    expect(targetVerdict(row('lmdb-fast', 'document get', 1, 0.5))).toBe('0.5x met');
    // 32 callers on one structure: the pairing's target, and the hot-key one beside it.
    expect(targetVerdict(row('lmdb-sync', 'queue pop', 32, 0.4))).toBe('1x not met (2.50x short); hot key 0.5x not met (1.25x short)');
    expect(targetVerdict(row('lmdb-sync', 'list push', 32, 0.6))).toBe('1x not met (1.67x short); hot key 0.5x met');
    expect(targetVerdict(row('lmdb-sync', 'list push', 1, 0.6))).toBe('1x not met (1.67x short)');
  });

  it("adds the verdict as a column of bench:redis's table only, and counts the rows met", () => {
    const rows = [row('memory', 'set add', 1, 2.5), row('lmdb-fast', 'map set', 32, 0.8)];
    const withTargets = redisTable(rows, true);
    expect(withTargets[0]).toMatch(/\| ratio \| target \(issue 17\) \|$/);
    expect(withTargets[3]).toMatch(/\| 0\.80x \| 1x not met \(1\.25x short\) \|$/);
    expect(redisTable(rows)[0]).toMatch(/\| ratio \|$/);
    expect(targetsMet(rows)).toBe("issue 17's targets: 1 of 2 rows met");
  });
});
