/**
 * Transaction.addReadConflictKey on the client's engines: the conflict range `[key, key + '\x00')`,
 * recorded from a copy of the caller's key, with the errors of `addReadConflictRange`.
 */
import type { Database } from '../../src/kv/contract/database';
import { Limits } from '../../src/kv/contract/limits';
import type { Transaction } from '../../src/kv/contract/types';
import { openMemoryDatabase } from '../../src/kv/memory/memory-engine';
import { expectKvError } from '../support/kv-assertions';

const key = (text: string) => Buffer.from(text);

/**
 * A transaction that has read (so it has a read version), relies on key `a` through
 * `addReadConflictKey` with a Buffer it then reuses for `b`, and writes `x` (so its commit is checked).
 */
async function relyingOnA(db: Database): Promise<Transaction> {
  const tr = db.createTransaction();
  await tr.get(key('other'));
  const reused = key('a');
  tr.addReadConflictKey(reused);
  reused.write('b');
  tr.set(key('x'), key('1'));
  return tr;
}

describe('Transaction.addReadConflictKey', () => {
  it('conflicts with a later commit to the key, even after the caller reuses its Buffer', async () => {
    const db = openMemoryDatabase();
    const tr = await relyingOnA(db);
    await db.transact((w) => w.set(key('a'), key('written')));
    await expect(tr.commit()).rejects.toMatchObject({ code: 1020 });
  });

  it('does not conflict with a commit to the next key or to the key the caller reused its Buffer for', async () => {
    const db = openMemoryDatabase();
    const tr = await relyingOnA(db);
    await db.transact((w) => {
      w.set(key('a\x00'), key('written'));
      w.set(key('b'), key('written'));
    });
    await expect(tr.commit()).resolves.toBeUndefined();
  });

  it('rejects a key at or past \\xff, and records nothing for a key too long to exist', async () => {
    const db = openMemoryDatabase();
    const tr = db.createTransaction();
    await expectKvError(() => tr.addReadConflictKey(Buffer.from([0xff])), 'key_outside_legal_range');
    await expectKvError(() => tr.addReadConflictKey(Buffer.from([0xff, 0])), 'key_outside_legal_range');
    const tooLong = Buffer.alloc(Limits.maxKeyBytes + 1, 1);
    tr.addReadConflictKey(tooLong);
    expect(await tr.getApproximateSize()).toBe(0);
    tr.addReadConflictKey(key('a'));
    expect(await tr.getApproximateSize()).toBe(3);
  });
});
