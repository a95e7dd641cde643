/**
 * ConflictLog: which commits a read version can still conflict with.
 */
import { ConflictLog } from '../../src/kv/engine-parts/conflict-log';

const key = (n: number) => Buffer.from([n]);
const range = (n: number) => ({ begin: key(n), end: key(n + 1) });

describe('ConflictLog.hasCommitsAfter', () => {
  it('is true exactly while a commit after the read version is kept', () => {
    const log = new ConflictLog(0n);
    expect(log.hasCommitsAfter(0n)).toBe(false);
    log.record(1n, 0, [range(1)]);
    log.record(2n, 0, [range(2)]);
    expect(log.hasCommitsAfter(0n)).toBe(true);
    expect(log.hasCommitsAfter(1n)).toBe(true);
    expect(log.hasCommitsAfter(2n)).toBe(false);
    log.forgetThrough(1n);
    expect(log.hasCommitsAfter(1n)).toBe(true);
    log.forgetThrough(2n);
    expect(log.hasCommitsAfter(1n)).toBe(false);
  });

  it('agrees with findConflict: without a commit after the read version there is no conflict', () => {
    const log = new ConflictLog(0n);
    log.record(1n, 0, [range(1)]);
    expect(log.findConflict(0n, [range(1)])).toEqual({ range: range(1), version: 1n });
    expect(log.hasCommitsAfter(1n)).toBe(false);
    expect(log.findConflict(1n, [range(1)])).toBeUndefined();
  });
});
