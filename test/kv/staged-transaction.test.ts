import type { Database } from '../../src/kv/contract/database';
import { isKvError } from '../../src/kv/contract/errors';
import { firstGreaterOrEqual, firstGreaterThan, lastLessOrEqual, lastLessThan } from '../../src/kv/contract/key-selector';
import { Limits } from '../../src/kv/contract/limits';
import { openMemoryDatabase } from '../../src/kv/memory/memory-engine';
import { stage, StagedTransaction } from '../../src/kv/client/staged-transaction';
import type { AtomicOp, KeyValue, ReadTransaction } from '../../src/kv/contract/types';
import { KeyspaceFuzz } from '../support/keyspace-fuzz';
import { KeyspaceModel } from '../support/keyspace-model';
import { expectKvError } from '../support/kv-assertions';
import { printablePairs } from '../support/printable';
import { Random, testSeed } from '../support/random';

const KEYSPACE_END = Buffer.from([0xff]);

/** `prefix` + 10 placeholder bytes + 4-byte little-endian offset of the placeholder. */
function versionstampTemplate(prefix: string): Buffer {
  const offset = Buffer.alloc(4);
  offset.writeUInt32LE(Buffer.byteLength(prefix), 0);
  return Buffer.concat([Buffer.from(prefix), Buffer.alloc(10), offset]);
}

/** A database holding `pairs`, committed. */
async function databaseWith(pairs: Record<string, string>): Promise<Database> {
  const db = openMemoryDatabase();
  await db.transact((tr) => {
    for (const [key, value] of Object.entries(pairs)) tr.set(key, value);
  });
  return db;
}

async function everything(reader: ReadTransaction | Database): Promise<string[]> {
  return printablePairs(await reader.getRangeAll('', KEYSPACE_END));
}

describe('stage', () => {
  it('returns a StagedTransaction over the given parent', () => {
    const parent = openMemoryDatabase().createTransaction();
    const staged = stage(parent);
    expect(staged).toBeInstanceOf(StagedTransaction);
    expect(staged.parent).toBe(parent);
  });
});

describe('StagedTransaction reads', () => {
  it("see the parent's committed data, the parent's own pending writes and the staged writes on top", async () => {
    const db = await databaseWith({ a: '1', b: '2', c: '3', d: '4' });
    const parent = db.createTransaction();
    parent.set('b', 'parent');
    parent.clear('c');
    const staged = stage(parent);
    staged.set('a', 'staged');
    staged.clear('d');
    staged.set('e', '5');
    expect(await everything(staged)).toEqual(["'a'='staged'", "'b'='parent'", "'e'='5'"]);
    expect(await everything(staged.snapshot())).toEqual(["'a'='staged'", "'b'='parent'", "'e'='5'"]);
    expect((await staged.get('a'))?.toString()).toBe('staged');
    expect((await staged.get('b'))?.toString()).toBe('parent');
    expect(await staged.get('d')).toBeUndefined();
  });

  it('merge staged range clears, hiding the parent keys inside them but not keys staged after the clear', async () => {
    const db = await databaseWith({ a: '1', b: '2', c: '3', d: '4', e: '5' });
    const staged = stage(db.createTransaction());
    staged.clearRange('b', 'e');
    staged.set('c', 'again');
    expect(await everything(staged)).toEqual(["'a'='1'", "'c'='again'", "'e'='5'"]);
    expect(printablePairs(await staged.getRangeAll('', KEYSPACE_END, { reverse: true, limit: 2 }))).toEqual(["'e'='5'", "'c'='again'"]);
    expect(await staged.get('b')).toBeUndefined();
  });

  it('fill a limit with the parent keys that follow the ones the stage hides, in both directions', async () => {
    const db = await databaseWith({ a: '1', b: '2', c: '3', d: '4' });
    const staged = stage(db.createTransaction());
    staged.clear('a');
    staged.clear('d');
    staged.set('0', 'first');
    staged.set('z', 'last');
    expect(printablePairs(await staged.getRangeAll('a', KEYSPACE_END, { limit: 2 }))).toEqual(["'b'='2'", "'c'='3'"]);
    expect(printablePairs(await staged.getRangeAll('', 'z', { limit: 2, reverse: true }))).toEqual(["'c'='3'", "'b'='2'"]);
  });

  it('apply staged atomic operations to the value the parent holds', async () => {
    const db = await databaseWith({ n: '\x05' });
    const staged = stage(db.createTransaction());
    staged.add('n', Buffer.from([3]));
    staged.add('m', Buffer.from([7]));
    staged.compareAndClear('n', Buffer.from([8]));
    expect(await staged.get('n')).toBeUndefined();
    expect(await staged.get('m')).toEqual(Buffer.from([7]));
    expect(printablePairs(await staged.getRangeAll('', KEYSPACE_END))).toEqual(["'m'='\\x07'"]);
  });

  it('resolve key selectors over the merged view', async () => {
    const db = await databaseWith({ a: '', c: '', e: '' });
    const staged = stage(db.createTransaction());
    staged.clear('c');
    staged.set('d', '');
    expect((await staged.getKey(firstGreaterThan('a'))).toString()).toBe('d');
    expect((await staged.getKey(lastLessThan('e'))).toString()).toBe('d');
    expect((await staged.getKey(lastLessOrEqual('c'))).toString()).toBe('a');
    expect(await staged.getKey(lastLessThan('a'))).toEqual(Buffer.alloc(0));
    expect(await staged.getKey(firstGreaterThan('e'))).toEqual(KEYSPACE_END);
    expect(printablePairs(await staged.getRangeAll(firstGreaterThan('a'), firstGreaterOrEqual('e', 1)))).toEqual(["'d'=''", "'e'=''"]);
  });

  it('stream getRange in batches that agree with getRangeAll', async () => {
    const pairs: Record<string, string> = {};
    for (let i = 0; i < 300; i++) pairs[`k${String(i).padStart(3, '0')}`] = String(i);
    const db = await databaseWith(pairs);
    const staged = stage(db.createTransaction());
    staged.clearRange('k100', 'k200');
    for (let i = 0; i < 300; i += 7) staged.set(`k${String(i).padStart(3, '0')}x`, 'staged');
    for (const options of [{}, { reverse: true }, { limit: 150 }, { limit: 90, reverse: true }, { batchSize: 5, limit: 33 }]) {
      const streamed: KeyValue[] = [];
      for await (const kv of staged.getRange('k', 'l', options)) streamed.push(kv);
      expect({ options, pairs: printablePairs(streamed) }).toEqual({
        options,
        pairs: printablePairs(await staged.getRangeAll('k', 'l', options)),
      });
    }
  });

  it('return copies: changing a result does not change a staged value', async () => {
    const staged = stage(openMemoryDatabase().createTransaction());
    staged.set('k', 'v');
    (await staged.get('k'))?.fill(0);
    (await staged.getRangeAll('', KEYSPACE_END))[0].value.fill(0);
    expect((await staged.get('k'))?.toString()).toBe('v');
  });

  it("add the parent's read conflicts, so a concurrent write to what was read fails the parent's commit", async () => {
    const db = await databaseWith({ a: '1', r: '1' });
    const parent = db.createTransaction();
    const staged = stage(parent);
    await staged.get('a');
    await staged.getRangeAll('q', 's');
    staged.set('w', 'x');
    staged.apply();
    await db.set('r', '2');
    await expectKvError(parent.commit(), 'not_committed');
  });

  it('through snapshot() add no read conflicts', async () => {
    const db = await databaseWith({ a: '1' });
    const parent = db.createTransaction();
    const staged = stage(parent);
    await staged.snapshot().get('a');
    await staged.snapshot().getRangeAll('', KEYSPACE_END);
    staged.set('w', 'x');
    staged.apply();
    await db.set('a', '2');
    await expect(parent.commit()).resolves.toBeUndefined();
  });

  it('do not ask the parent for keys whose staged value does not depend on it', async () => {
    const db = openMemoryDatabase();
    const parent = db.createTransaction();
    parent.setVersionstampedValue('v', versionstampTemplate(''));
    await expectKvError(parent.get('v'), 'accessed_unreadable');
    const staged = stage(parent);
    staged.set('v', 'known');
    expect((await staged.get('v'))?.toString()).toBe('known');
  });

  it('fail with accessed_unreadable (1036) on a staged versionstamped value or where a staged versionstamped key may land', async () => {
    const db = await databaseWith({ a: '1', z: '1' });
    const staged = stage(db.createTransaction());
    staged.setVersionstampedValue('v', versionstampTemplate(''));
    await expectKvError(staged.get('v'), 'accessed_unreadable');
    await expectKvError(staged.getRangeAll('u', 'w'), 'accessed_unreadable');
    staged.setVersionstampedKey(versionstampTemplate('p/'), 'x');
    await expectKvError(staged.getRangeAll('p/', 'p0'), 'accessed_unreadable');
    await expectKvError(staged.get(Buffer.concat([Buffer.from('p/'), Buffer.alloc(10, 0x42)])), 'accessed_unreadable');
    // A limited read that stops before those keys is fine, as in the memory engine.
    expect(printablePairs(await staged.getRangeAll('a', 'w', { limit: 1 }))).toEqual(["'a'='1'"]);
    expect(printablePairs(await staged.getRangeAll('a', KEYSPACE_END, { limit: 1, reverse: true }))).toEqual(["'z'='1'"]);
  });

  it('reject bad arguments as the memory engine does', async () => {
    const staged = stage(openMemoryDatabase().createTransaction());
    await expectKvError(staged.get(Buffer.from([0xff, 0x01])), 'key_outside_legal_range');
    await expectKvError(staged.getRangeAll('a', Buffer.from([0xff, 0x00])), 'key_outside_legal_range');
    await expectKvError(staged.getRangeAll('a', 'b', { limit: -1 }), 'client_invalid_operation');
    await expectKvError(staged.getKey({ key: 'a', orEqual: false, offset: 0.5 }), 'client_invalid_operation');
    expect(await staged.get(Buffer.alloc(Limits.maxKeyBytes + 1, 0x61))).toBeUndefined();
    expect(await staged.getRangeAll('b', 'a')).toEqual([]);
  });
});

describe('StagedTransaction writes', () => {
  it('reach the parent only through apply()', async () => {
    const db = await databaseWith({ a: '1', b: '2', n: '\x01' });
    const parent = db.createTransaction();
    const before = await parent.getApproximateSize();
    const staged = stage(parent);
    staged.set('c', '3');
    staged.clear('a');
    staged.clearRange('b', 'c');
    staged.add('n', 1);
    staged.setVersionstampedKey(versionstampTemplate('vk/'), 'x');
    staged.setVersionstampedValue('vv', versionstampTemplate(''));
    staged.addReadConflictKey('a');
    staged.addWriteConflictRange('x', 'y');
    expect(await parent.getApproximateSize()).toBe(before);
    expect(await everything(parent)).toEqual(["'a'='1'", "'b'='2'", "'n'='\\x01'"]);
    await parent.commit();
    expect(await everything(db)).toEqual(["'a'='1'", "'b'='2'", "'n'='\\x01'"]);
  });

  it('are replayed on the parent by apply(), in the order they were made', async () => {
    const db = await databaseWith({ a: '1', b: '2', c: '3', n: '\x01' });
    const parent = db.createTransaction();
    const staged = stage(parent);
    staged.set('d', '4');
    staged.clearRange('a', 'e');
    staged.set('b', 'after the clear');
    staged.add('n', 2);
    staged.max('n', Buffer.from([0x02]));
    staged.setVersionstampedValue('vv', versionstampTemplate('stamp:'));
    staged.setVersionstampedKey(versionstampTemplate('vk/'), 'keyed');
    staged.apply();
    const stamp = parent.getVersionstamp();
    await parent.commit();
    const versionstamp = await stamp;
    const all = await db.getRangeAll('', KEYSPACE_END);
    expect(printablePairs(all.filter((kv) => !kv.key.toString().startsWith('vk/') && kv.key.toString() !== 'vv'))).toEqual([
      "'b'='after the clear'",
      "'n'='\\x03'",
    ]);
    expect(await db.get('vv')).toEqual(Buffer.concat([Buffer.from('stamp:'), versionstamp]));
    expect(await db.get(Buffer.concat([Buffer.from('vk/'), versionstamp]))).toEqual(Buffer.from('keyed'));
  });

  it('leave an empty stage after apply(), so applying again adds nothing', async () => {
    const db = openMemoryDatabase();
    const parent = db.createTransaction();
    const staged = stage(parent);
    staged.add('n', 1);
    staged.apply();
    staged.apply();
    expect(await staged.get('n')).toEqual(Buffer.from([1, 0, 0, 0, 0, 0, 0, 0]));
    staged.add('n', 1);
    staged.apply();
    await parent.commit();
    expect(await db.get('n')).toEqual(Buffer.from([2, 0, 0, 0, 0, 0, 0, 0]));
  });

  it('replay staged conflict ranges: a staged write conflict makes a concurrent reader fail', async () => {
    const db = await databaseWith({ k: '1' });
    const reader = db.createTransaction();
    await reader.get('k');
    reader.set('other', 'x');
    const parent = db.createTransaction();
    const staged = stage(parent);
    staged.addWriteConflictKey('k');
    staged.apply();
    await parent.commit();
    await expectKvError(reader.commit(), 'not_committed');
  });

  it('replay staged read conflict ranges: the parent fails when the range changes concurrently', async () => {
    const db = openMemoryDatabase();
    for (const apply of [false, true]) {
      const parent = db.createTransaction();
      await parent.getReadVersion();
      const staged = stage(parent);
      staged.addReadConflictRange('r', 's');
      parent.set('w', 'x');
      if (apply) staged.apply();
      await db.set('r1', String(apply));
      const outcome = await parent.commit().then(
        () => 'committed',
        (err: unknown) => (isKvError(err, 'not_committed') ? 'not_committed' : String(err)),
      );
      expect({ apply, outcome }).toEqual({ apply, outcome: apply ? 'not_committed' : 'committed' });
    }
  });

  it('are validated at the call, as the parent would validate them, and not staged when invalid', async () => {
    const db = openMemoryDatabase();
    const parent = db.createTransaction();
    const staged = stage(parent);
    const system = Buffer.from([0xff, 0x00]);
    await expectKvError(() => staged.set(system, 'v'), 'key_outside_legal_range');
    await expectKvError(() => staged.clear(system), 'key_outside_legal_range');
    await expectKvError(() => staged.clearRange('a', system), 'key_outside_legal_range');
    await expectKvError(() => staged.add(system, 1), 'key_outside_legal_range');
    await expectKvError(() => staged.clearRange('b', 'a'), 'inverted_range');
    await expectKvError(() => staged.addReadConflictRange('b', 'a'), 'inverted_range');
    await expectKvError(() => staged.addWriteConflictRange('b', 'a'), 'inverted_range');
    await expectKvError(() => staged.set(Buffer.alloc(Limits.maxKeyBytes + 1), 'v'), 'key_too_large');
    await expectKvError(() => staged.set('k', Buffer.alloc(Limits.maxValueBytes + 1)), 'value_too_large');
    await expectKvError(() => staged.atomicOp('nope' as AtomicOp, 'k', 'p'), 'client_invalid_operation');
    await expectKvError(() => staged.setVersionstampedKey('short', 'v'), 'client_invalid_operation');
    await expectKvError(() => staged.setVersionstampedValue('k', Buffer.from([1, 0, 0, 0, 0])), 'client_invalid_operation');
    // Limits allow exactly the limit; FDB's range end may be exactly 0xff; an oversized key clears nothing.
    staged.set(Buffer.alloc(Limits.maxKeyBytes, 0x61), Buffer.alloc(Limits.maxValueBytes));
    staged.clearRange('z', KEYSPACE_END);
    staged.clear(Buffer.alloc(Limits.maxKeyBytes + 1, 0x61));
    staged.apply();
    await parent.commit();
    expect((await db.getRangeAll('', KEYSPACE_END)).map((kv) => [kv.key.length, kv.value.length])).toEqual([
      [Limits.maxKeyBytes, Limits.maxValueBytes],
    ]);
  });

  it('stage over a stage: an inner apply() reaches only the outer stage', async () => {
    const db = openMemoryDatabase();
    const parent = db.createTransaction();
    const outer = stage(parent);
    const inner = stage(outer);
    inner.set('k', 'v');
    inner.apply();
    expect((await outer.get('k'))?.toString()).toBe('v');
    expect(await parent.get('k')).toBeUndefined();
    outer.apply();
    expect((await parent.get('k'))?.toString()).toBe('v');
  });
});

describe('StagedTransaction lifecycle', () => {
  it('refuses commit() and onError() with client_invalid_operation (2000)', async () => {
    const staged = stage(openMemoryDatabase().createTransaction());
    await expect(staged.commit()).rejects.toThrow('a staged transaction is applied to its parent, not committed');
    await expectKvError(staged.commit(), 'client_invalid_operation');
    await expectKvError(staged.onError(new Error('x')), 'client_invalid_operation');
  });

  it('discards the staged writes on reset(), and stays usable', async () => {
    const db = openMemoryDatabase();
    const parent = db.createTransaction();
    const staged = stage(parent);
    staged.set('a', '1');
    staged.reset();
    expect(await staged.get('a')).toBeUndefined();
    staged.set('b', '2');
    staged.apply();
    await parent.commit();
    expect(await everything(db)).toEqual(["'b'='2'"]);
  });

  it('discards the staged writes on cancel(), then fails with transaction_cancelled (1025) until reset()', async () => {
    const db = openMemoryDatabase();
    const parent = db.createTransaction();
    const staged = stage(parent);
    staged.set('a', '1');
    staged.cancel();
    await expectKvError(() => staged.apply(), 'transaction_cancelled');
    await expectKvError(() => staged.set('b', '2'), 'transaction_cancelled');
    await expectKvError(staged.get('a'), 'transaction_cancelled');
    staged.reset();
    expect(await staged.get('a')).toBeUndefined();
    parent.set('p', '1');
    await parent.commit();
    expect(await everything(db)).toEqual(["'p'='1'"]);
  });

  it('keeps the stage when the parent refuses apply(), having applied nothing', async () => {
    const db = openMemoryDatabase();
    const parent = db.createTransaction();
    const staged = stage(parent);
    staged.set('a', '1');
    parent.cancel();
    await expectKvError(() => staged.apply(), 'transaction_cancelled');
    parent.reset();
    staged.apply();
    await parent.commit();
    expect(await everything(db)).toEqual(["'a'='1'"]);
  });

  it("delegates getReadVersion, getVersionstamp, getCommittedVersion and watch to the parent, and adds its staged bytes to the parent's size", async () => {
    const db = openMemoryDatabase();
    const parent = db.createTransaction();
    const staged = stage(parent);
    expect(await staged.getReadVersion()).toBe(await parent.getReadVersion());
    const size = await parent.getApproximateSize();
    staged.set('k', 'v');
    expect(await staged.getApproximateSize()).toBeGreaterThan(size);
    const stamp = staged.getVersionstamp();
    const watch = staged.watch('k');
    staged.apply();
    await parent.commit();
    expect(staged.getCommittedVersion()).toBe(parent.getCommittedVersion());
    expect((await stamp).length).toBe(10);
    await db.set('k', 'changed');
    await expect(watch.promise).resolves.toBe(true);
  });
});

describe('StagedTransaction against a plain model (seeded)', () => {
  /**
   * Rounds of: random committed data, random pending writes in the parent, then random staged writes
   * interleaved with reads through the stage (get, getKey, range reads both directions with limits,
   * streamed and not, through the stage and its snapshot view) checked against a {@link KeyspaceModel};
   * then that the parent still sees only its own writes, and after apply() and commit the model's data.
   */
  it('reads the merged view and applies exactly the staged writes', async () => {
    const seed = testSeed(0x57a6e);
    const rnd = new Random(seed);
    const replay = `seed ${seed} (replay with DOCLAYER_SEED=${seed})`;
    const fuzz = new KeyspaceFuzz(rnd, { minOffset: -3, selectorChance: 0.4, preferExisting: true });

    for (let round = 0; round < 60; round++) {
      const log: string[] = [];
      const fail = (what: string, expected: unknown, actual: unknown): never => {
        throw new Error(
          `the staged view differs from the model, ${replay}, round ${round}: ${what}\n` +
            `  expected ${JSON.stringify(expected)}\n  actual   ${JSON.stringify(actual)}\n  operations: ${log.join('; ')}`,
        );
      };
      const same = (what: string, expected: unknown, actual: unknown) => {
        if (JSON.stringify(expected) !== JSON.stringify(actual)) fail(what, expected, actual);
      };

      const db = openMemoryDatabase();
      const committed = new KeyspaceModel();
      await db.transact((tr) => {
        for (let i = rnd.int(20); i > 0; i--) log.push(`committed ${fuzz.write(tr, committed)}`);
      });
      const parent = db.createTransaction();
      const parentModel = committed.clone();
      for (let i = rnd.int(6); i > 0; i--) log.push(`parent ${fuzz.write(parent, parentModel)}`);
      const staged = stage(parent);
      const model = parentModel.clone();

      const checkReads = async (reads: number) => {
        for (let i = 0; i < reads; i++) {
          const view = rnd.chance(0.3) ? staged.snapshot() : staged;
          await fuzz.read(view, view === staged ? 'staged' : 'snapshot', model, same);
        }
      };

      await checkReads(3);
      for (let step = rnd.between(1, 16); step > 0; step--) {
        log.push(`staged ${fuzz.write(staged, model)}`);
        await checkReads(4);
      }

      const all = (m: KeyspaceModel) => printablePairs(m.range(firstGreaterOrEqual(''), firstGreaterOrEqual(KEYSPACE_END)));
      same('the parent before apply()', all(parentModel), await everything(parent.snapshot()));
      staged.apply();
      same('the parent after apply()', all(model), await everything(parent.snapshot()));
      await parent.commit();
      same('the committed data', all(model), await everything(db));
    }
  });
});

describe('the metadata version through a stage', () => {
  it("is the parent's until the stage bumps it; then unreadable (1036) there, and the bump reaches the parent only when applied", async () => {
    const db = openMemoryDatabase();
    const parent = db.createTransaction();
    const staged = stage(parent);
    expect(await staged.getMetadataVersion()).toBeUndefined();
    staged.bumpMetadataVersion();
    await expectKvError(staged.getMetadataVersion(), 'accessed_unreadable');
    await expectKvError(staged.snapshot().getMetadataVersion(), 'accessed_unreadable');
    expect(await parent.getMetadataVersion()).toBeUndefined();
    staged.apply();
    await expectKvError(parent.getMetadataVersion(), 'accessed_unreadable');
    const stamp = parent.getVersionstamp();
    await parent.commit();
    expect((await db.transact((tr) => tr.getMetadataVersion()))?.equals(await stamp)).toBe(true);
  });

  it('a cancelled stage drops its bump', async () => {
    const db = openMemoryDatabase();
    const parent = db.createTransaction();
    const staged = stage(parent);
    staged.bumpMetadataVersion();
    staged.reset();
    expect(await staged.getMetadataVersion()).toBeUndefined();
    parent.set('k', 'v');
    await parent.commit();
    expect(await db.transact((tr) => tr.getMetadataVersion())).toBeUndefined();
  });
});
