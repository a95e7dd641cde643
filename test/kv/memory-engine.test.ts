import type { Database } from '../../src/kv/contract/database';
import { isKvError, KvError, kvError } from '../../src/kv/contract/errors';
import { firstGreaterOrEqual, firstGreaterThan, lastLessOrEqual, lastLessThan } from '../../src/kv/contract/key-selector';
import { Limits } from '../../src/kv/contract/limits';
import { MemoryEngine, openMemoryDatabase, type MemoryEngineOptions } from '../../src/kv/memory/memory-engine';
import type { Transaction } from '../../src/kv/contract/types';
import { expectKvError, settledWithin } from '../support/kv-assertions';
import { Random, testSeed } from '../support/random';

/** The byte 0xff, where FDB's system keyspace begins (the string '\xff' would be UTF-8, 0xc3 0xbf). */
const SYSTEM_KEYS = Buffer.from([0xff]);

/** A clock the test moves by hand. */
function manualClock(start = 1_000_000) {
  let now = start;
  return {
    now: () => now,
    advance(ms: number) {
      now += ms;
    },
  };
}

/** `prefix` + 10 placeholder bytes + 4-byte little-endian offset of the placeholder. */
function versionstampTemplate(prefix: string, suffix = ''): Buffer {
  const offset = Buffer.alloc(4);
  offset.writeUInt32LE(Buffer.byteLength(prefix), 0);
  return Buffer.concat([Buffer.from(prefix), Buffer.alloc(10), Buffer.from(suffix), offset]);
}

async function committed(db: Database, fn: (tr: Transaction) => unknown): Promise<Transaction> {
  const tr = db.createTransaction();
  await fn(tr);
  await tr.commit();
  return tr;
}

/** The outcome of `count` single-write commits under `faults`: one letter per commit. */
async function faultPattern(faults: MemoryEngineOptions['faults'], count: number): Promise<string> {
  const db = openMemoryDatabase({ faults });
  let pattern = '';
  for (let i = 0; i < count; i++) {
    const tr = db.createTransaction();
    tr.set(`k${i}`, 'v');
    try {
      await tr.commit();
      pattern += '.';
    } catch (err) {
      pattern += isKvError(err, 'not_committed') ? 'N' : isKvError(err, 'commit_unknown_result') ? 'U' : 'O';
    }
  }
  return pattern;
}

describe('MemoryEngine', () => {
  it('is named memory and opens as a Database', async () => {
    const db = openMemoryDatabase();
    expect(db.engine).toBeInstanceOf(MemoryEngine);
    expect(db.engine.name).toBe('memory');
    await db.set('a', '1');
    expect((await db.get('a'))?.toString()).toBe('1');
  });

  describe('versions', () => {
    it('gives each writing commit a strictly greater version, advancing about 1,000,000 per second', async () => {
      const clock = manualClock();
      const db = openMemoryDatabase({ now: clock.now });
      const first = (await committed(db, (tr) => tr.set('a', '1'))).getCommittedVersion();
      const sameMs = (await committed(db, (tr) => tr.set('a', '2'))).getCommittedVersion();
      clock.advance(1000);
      const secondLater = (await committed(db, (tr) => tr.set('a', '3'))).getCommittedVersion();
      expect(sameMs).toBeGreaterThan(first);
      expect(secondLater - sameMs).toBeGreaterThanOrEqual(999_000n);
      expect(secondLater - sameMs).toBeLessThanOrEqual(1_000_000n);
    });

    it('keeps versions increasing when the clock goes backwards', async () => {
      const clock = manualClock();
      const db = openMemoryDatabase({ now: clock.now });
      const before = (await committed(db, (tr) => tr.set('a', '1'))).getCommittedVersion();
      clock.advance(-60_000);
      const after = (await committed(db, (tr) => tr.set('a', '2'))).getCommittedVersion();
      expect(after).toBeGreaterThan(before);
    });

    it('reads at the latest committed version, and commits after it', async () => {
      const db = openMemoryDatabase();
      const writer = await committed(db, (tr) => tr.set('a', '1'));
      const tr = db.createTransaction();
      expect(await tr.getReadVersion()).toBe(writer.getCommittedVersion());
      tr.set('b', '1');
      await tr.commit();
      expect(tr.getCommittedVersion()).toBeGreaterThan(writer.getCommittedVersion());
    });

    it('reports -1 for a read-only commit, and no versionstamp', async () => {
      const db = openMemoryDatabase();
      const tr = db.createTransaction();
      const stamp = tr.getVersionstamp();
      await tr.get('a');
      await tr.commit();
      expect(tr.getCommittedVersion()).toBe(-1n);
      await expectKvError(stamp, 'no_commit_version');
    });

    it('gives a transaction with only a write conflict range a commit version and a versionstamp', async () => {
      const db = openMemoryDatabase();
      const tr = db.createTransaction();
      tr.addWriteConflictKey('a');
      const stamp = tr.getVersionstamp();
      await tr.commit();
      expect(tr.getCommittedVersion()).toBeGreaterThan(0n);
      expect((await stamp).readBigUInt64BE(0)).toBe(tr.getCommittedVersion());
    });
  });

  describe('snapshot isolation', () => {
    it('takes the read version at the first read, not when the transaction is created', async () => {
      const db = openMemoryDatabase();
      const tr = db.createTransaction();
      await db.set('a', 'later');
      expect((await tr.get('a'))?.toString()).toBe('later');
    });

    it('lets a long reader see one version throughout, while writers commit under it', async () => {
      const db = openMemoryDatabase();
      await db.transact((tr) => {
        for (let i = 0; i < 1000; i++) tr.set(`k${String(i).padStart(4, '0')}`, 'v0');
      });
      const reader = db.createTransaction();
      const firstPage = await reader.getRangeAll('k', 'l', { limit: 10 });
      for (let round = 1; round <= 20; round++) {
        await db.transact((tr) => {
          tr.clearRange('k0100', 'k0200');
          for (let i = 0; i < 1000; i += 7) tr.set(`k${String(i).padStart(4, '0')}`, `v${round}`);
          tr.set(`k9${round}`, 'new');
        });
      }
      const all = await reader.getRangeAll('k', 'l');
      expect(firstPage.map((kv) => kv.key.toString())).toEqual(all.slice(0, 10).map((kv) => kv.key.toString()));
      expect(all).toHaveLength(1000);
      expect(all.every((kv) => kv.value.toString() === 'v0')).toBe(true);
      expect(await reader.getKey(lastLessThan('l'))).toEqual(Buffer.from('k0999'));
      await reader.commit();

      const now = await db.getRangeAll('k', 'l');
      // 100 keys cleared, of which the 14 multiples of 7 were set again, and 20 new keys.
      expect(now).toHaveLength(1000 - 100 + 14 + 20);
    });

    it('keeps snapshots immutable: values handed out or passed in can be modified without effect', async () => {
      const db = openMemoryDatabase();
      const key = Buffer.from('key');
      const value = Buffer.from('value');
      const tr = db.createTransaction();
      tr.set(key, value);
      key[0] = 0x7a;
      value[0] = 0x7a;
      await tr.commit();
      const read = await db.get('key');
      expect(read?.toString()).toBe('value');
      read![0] = 0x7a;
      expect((await db.get('key'))?.toString()).toBe('value');
    });
  });

  describe('read conflicts', () => {
    /**
     * Whether a transaction that ran `reads` (then wrote something) fails to commit after `concurrent`
     * committed in between, on a fresh database holding `initial`.
     */
    async function conflictsAfter(
      initial: string[],
      reads: (tr: Transaction) => Promise<unknown>,
      concurrent: (tr: Transaction) => void,
    ): Promise<boolean> {
      const db = openMemoryDatabase();
      await db.transact((tr) => initial.forEach((key) => tr.set(key, 'initial')));
      const tr = db.createTransaction();
      await reads(tr);
      await db.transact(concurrent);
      tr.set('unrelated-write', 'x');
      try {
        await tr.commit();
        return false;
      } catch (err) {
        if (isKvError(err, 'not_committed')) return true;
        throw err;
      }
    }

    it('reading a key the transaction set or cleared adds no read conflict, as FDB', async () => {
      const reads = async (tr: Transaction) => {
        tr.set('a', 'mine');
        tr.clear('b');
        await tr.get('a');
        await tr.get('b');
      };
      expect(await conflictsAfter([], reads, (tr) => (tr.set('a', 'theirs'), tr.set('b', 'theirs')))).toBe(false);
    });

    it('reading a range the transaction cleared adds no read conflict for the cleared part', async () => {
      const reads = async (tr: Transaction) => {
        tr.clearRange('a', 'm');
        await tr.getRangeAll('a', 'z');
      };
      expect(await conflictsAfter([], reads, (tr) => tr.set('c', 'theirs'))).toBe(false);
      expect(await conflictsAfter([], reads, (tr) => tr.set('p', 'theirs'))).toBe(true);
    });

    it('reading a key after an atomic operation on it adds a read conflict, as FDB', async () => {
      const reads = async (tr: Transaction) => {
        tr.add('n', 1);
        expect((await tr.get('n'))?.readBigInt64LE(0)).toBe(1n);
      };
      expect(await conflictsAfter([], reads, (tr) => tr.add('n', 5))).toBe(true);
    });

    it('an atomic operation never read back adds no read conflict', async () => {
      expect(
        await conflictsAfter(
          [],
          async (tr) => tr.add('n', 1),
          (tr) => tr.add('n', 5),
        ),
      ).toBe(false);
    });

    it('getKey conflicts only over the keys its selector examined', async () => {
      const initial = ['b', 'd', 'f'];
      const reads = async (tr: Transaction) => expect((await tr.getKey(firstGreaterThan('b'))).toString()).toBe('d');
      expect(await conflictsAfter(initial, reads, (tr) => tr.set('e', '1'))).toBe(false);
      expect(await conflictsAfter(initial, reads, (tr) => tr.set('c', '1'))).toBe(true);
      expect(await conflictsAfter(initial, reads, (tr) => tr.clear('d'))).toBe(true);
    });

    it('an iterator stopped early conflicts only over the batches it fetched', async () => {
      const initial = Array.from({ length: 100 }, (_, i) => `k${String(i).padStart(3, '0')}`);
      const reads = async (tr: Transaction) => {
        for await (const kv of tr.getRange('k', 'l', { batchSize: 5 })) {
          if (kv.key.toString() === 'k002') break;
        }
      };
      expect(await conflictsAfter(initial, reads, (tr) => tr.set('k050', '2'))).toBe(false);
      expect(await conflictsAfter(initial, reads, (tr) => tr.set('k003', '2'))).toBe(true);
    });
  });

  describe('the 5-second window, on a controlled clock', () => {
    it('fails a read with transaction_too_old (1007) once the read version is over 5 s old', async () => {
      const clock = manualClock();
      const db = openMemoryDatabase({ now: clock.now });
      const tr = db.createTransaction();
      await tr.get('a');
      clock.advance(Limits.maxTransactionAgeMs);
      await tr.get('a');
      clock.advance(1);
      await expectKvError(tr.get('a'), 'transaction_too_old');
      await expectKvError(tr.getRangeAll('a', 'b'), 'transaction_too_old');
    });

    it('commits an old transaction whose reads were all snapshot reads: it has nothing to check (FDB’s resolver)', async () => {
      const clock = manualClock();
      const db = openMemoryDatabase({ now: clock.now });
      const tr = db.createTransaction();
      await tr.snapshot().get('a');
      clock.advance(6000);
      tr.set('a', '1');
      await tr.commit();
      expect((await db.get('a'))?.toString()).toBe('1');
    });

    it('fails with transaction_too_old when commits after the read version were pruned, even if the clock went back', async () => {
      const clock = manualClock();
      const db = openMemoryDatabase({ now: clock.now });
      const tr = db.createTransaction();
      await tr.get('a');
      clock.advance(6000);
      await db.set('b', '1');
      clock.advance(6000);
      await db.set('c', '1'); // prunes the commit of 'b'
      clock.advance(-12_000);
      tr.set('a', '1');
      await expectKvError(tr.commit(), 'transaction_too_old');
      expect(await db.get('a')).toBeUndefined();
    });
  });

  describe('fault injection', () => {
    const faults = { seed: 42, notCommitted: 0.2, unknownResult: 0.1, tooOld: 0.1 };

    it('is off by default', async () => {
      expect(await faultPattern(undefined, 200)).toBe('.'.repeat(200));
    });

    it('is deterministic: the same seed fails the same commits the same way', async () => {
      const first = await faultPattern(faults, 300);
      expect(await faultPattern(faults, 300)).toBe(first);
      expect(await faultPattern({ ...faults, seed: 43 }, 300)).not.toBe(first);
    });

    it('injects each fault at about its fraction', async () => {
      const pattern = await faultPattern({ ...faults, seed: testSeed(1) }, 4000);
      const share = (letter: string) => pattern.split(letter).length / pattern.length;
      expect(share('N')).toBeGreaterThan(0.17);
      expect(share('N')).toBeLessThan(0.23);
      expect(share('U')).toBeGreaterThan(0.08);
      expect(share('U')).toBeLessThan(0.12);
      expect(share('O')).toBeGreaterThan(0.08);
      expect(share('O')).toBeLessThan(0.12);
    });

    it('applies a commit_unknown_result commit and discards the others', async () => {
      const db = openMemoryDatabase({ faults: { seed: 1, notCommitted: 0.3, unknownResult: 0.3, tooOld: 0.3 } });
      for (let i = 0; i < 200; i++) {
        const tr = db.createTransaction();
        tr.set(`k${i}`, 'v');
        let outcome = 'ok';
        try {
          await tr.commit();
        } catch (err) {
          expect(err).toBeInstanceOf(KvError);
          outcome = (err as KvError).name;
        }
        const landed = (await db.engine.createTransaction().snapshot().get(`k${i}`)) !== undefined;
        expect({ i, outcome, landed }).toEqual({
          i,
          outcome,
          landed: outcome === 'ok' || outcome === 'commit_unknown_result',
        });
      }
    });

    it('never faults a read-only commit', async () => {
      const db = openMemoryDatabase({ faults: { seed: 7, notCommitted: 1 } });
      for (let i = 0; i < 50; i++) {
        const tr = db.createTransaction();
        await tr.get('a');
        tr.watch('a').cancel();
        await tr.commit();
      }
      const writer = db.createTransaction();
      writer.set('a', '1');
      await expectKvError(writer.commit(), 'not_committed');
    });

    it('lets the retry loop finish idempotent work under every kind of fault', async () => {
      const db = openMemoryDatabase({ faults: { seed: testSeed(2), notCommitted: 0.1, unknownResult: 0.1, tooOld: 0.1 } });
      for (let i = 0; i < 30; i++) await db.transact((tr) => tr.set(`k${i}`, `${i}`));
      const all = await db.transact((tr) => tr.getRangeAll('k', 'l'));
      expect(all).toHaveLength(30);
    });

    it('rejects fractions outside [0, 1] or adding up to more than 1 with invalid_option_value (2006)', async () => {
      await expectKvError(() => new MemoryEngine({ faults: { seed: 1, notCommitted: 1.5 } }), 'invalid_option_value');
      await expectKvError(() => new MemoryEngine({ faults: { seed: 1, tooOld: -0.1 } }), 'invalid_option_value');
      await expectKvError(() => new MemoryEngine({ faults: { seed: 1, notCommitted: 0.6, unknownResult: 0.6 } }), 'invalid_option_value');
    });
  });

  describe('versionstamped writes before commit', () => {
    it('makes the keys a versionstamped key may become unreadable (1036), and nothing else', async () => {
      const db = openMemoryDatabase();
      await db.transact((tr) => (tr.set('q/', 'before'), tr.set('r', 'after')));
      const tr = db.createTransaction();
      tr.setVersionstampedKey(versionstampTemplate('q/'), 'item');
      await expectKvError(tr.getRangeAll('q/', 'q0'), 'accessed_unreadable');
      await expectKvError(tr.getKey(lastLessOrEqual(Buffer.from('q/\xff', 'latin1'))), 'accessed_unreadable');
      expect((await tr.get('q/'))?.toString()).toBe('before');
      expect((await tr.getRangeAll('r', 's')).map((kv) => kv.key.toString())).toEqual(['r']);
      expect(await tr.getRangeAll('q/', 'r', { limit: 1 })).toHaveLength(1);
      await tr.commit();
    });

    it('makes the keys of a versionstamped key written after a read unreadable (1036) too, from the read version on', async () => {
      const db = openMemoryDatabase();
      await db.transact((tr) => tr.set('p/', 'below every stamp'));
      const tr = db.createTransaction();
      tr.setVersionstampedKey(versionstampTemplate('q/'), 'first');
      expect((await tr.getRangeAll('r', 's')).map((kv) => kv.key.toString())).toEqual([]);
      const readVersion = await tr.getReadVersion();
      tr.setVersionstampedKey(versionstampTemplate('p/'), 'second');
      await expectKvError(tr.getRangeAll('q/', 'q0'), 'accessed_unreadable');
      await expectKvError(tr.getRangeAll('p/', 'p0'), 'accessed_unreadable');
      // Below the read version's stamp no commit of this transaction can land: readable.
      const lowest = Buffer.concat([Buffer.from('p/'), Buffer.alloc(10)]);
      lowest.writeBigUInt64BE(readVersion + 1n, 2);
      expect((await tr.getRangeAll('p/', lowest)).map((kv) => kv.value.toString())).toEqual(['below every stamp']);
      await tr.commit();
    });

    it('makes a key holding a versionstamped value unreadable (1036) until it is set again', async () => {
      const db = openMemoryDatabase();
      const tr = db.createTransaction();
      tr.setVersionstampedValue('v', versionstampTemplate('stamp:'));
      await expectKvError(tr.get('v'), 'accessed_unreadable');
      await expectKvError(tr.snapshot().getRangeAll('a', 'z'), 'accessed_unreadable');
      tr.set('v', 'plain');
      expect((await tr.get('v'))?.toString()).toBe('plain');
    });

    it('conflicts on the final key only: a limited read of the head does not conflict with a push', async () => {
      const db = openMemoryDatabase();
      await db.transact((tr) => tr.setVersionstampedKey(versionstampTemplate('q/'), 'head'));
      const consumer = db.createTransaction();
      const [head] = await consumer.getRangeAll('q/', 'q0', { limit: 1 });
      await db.transact((tr) => tr.setVersionstampedKey(versionstampTemplate('q/'), 'pushed'));
      consumer.clear(head.key);
      await consumer.commit();
      expect((await db.getRangeAll('q/', 'q0')).map((kv) => kv.value.toString())).toEqual(['pushed']);
    });

    it('rejects a template whose placeholder does not fit with client_invalid_operation (2000)', async () => {
      const tr = openMemoryDatabase().createTransaction();
      const bad = Buffer.concat([Buffer.from('short'), Buffer.from([0, 0, 0, 0])]);
      await expectKvError(() => tr.setVersionstampedKey(bad, 'v'), 'client_invalid_operation');
      await expectKvError(() => tr.setVersionstampedValue('k', bad), 'client_invalid_operation');
      await expectKvError(() => tr.setVersionstampedKey('abc', 'v'), 'client_invalid_operation');
    });
  });

  describe('watches', () => {
    it('fires at once for a change made later by the watching transaction itself', async () => {
      const db = openMemoryDatabase();
      await db.set('k', 'a');
      const tr = db.createTransaction();
      const unchanged = tr.watch('k');
      tr.set('k', 'a');
      expect(await settledWithin(unchanged.promise, 20)).toEqual({ state: 'pending' });
      tr.set('k', 'b');
      expect(await unchanged.promise).toBe(true);
    });

    it('compares against the value the transaction wrote before watching', async () => {
      const db = openMemoryDatabase();
      const tr = db.createTransaction();
      tr.set('k', 'mine');
      const watch = tr.watch('k');
      await tr.commit();
      expect(await settledWithin(watch.promise, 20)).toEqual({ state: 'pending' });
      await db.set('k', 'mine');
      expect(await settledWithin(watch.promise, 20)).toEqual({ state: 'pending' });
      await db.set('k', 'theirs');
      expect(await watch.promise).toBe(true);
    });

    it('fires at commit when the key changed between the read version and the commit', async () => {
      const db = openMemoryDatabase();
      const tr = db.createTransaction();
      const watch = tr.watch('k');
      await db.set('k', 'changed');
      await tr.commit();
      expect(await watch.promise).toBe(true);
    });

    it('fires for a range clear covering the key', async () => {
      const db = openMemoryDatabase();
      await db.set('k', '1');
      const watch = await db.transact((tr) => tr.watch('k'));
      await db.clearRange('a', 'z');
      expect(await watch.promise).toBe(true);
    });

    it('reports argument errors through the promise, not by throwing', async () => {
      const tr = openMemoryDatabase().createTransaction();
      await expectKvError(tr.watch(Buffer.concat([SYSTEM_KEYS, Buffer.from('/x')])).promise, 'key_outside_legal_range');
      await expectKvError(tr.watch(Buffer.alloc(Limits.maxKeyBytes + 1)).promise, 'key_too_large');
    });

    it('fails a watch past the limit with too_many_watches (1032) when its transaction commits', async () => {
      const db = openMemoryDatabase();
      const tr = db.createTransaction();
      const watches = [];
      for (let i = 0; i <= Limits.maxWatches; i++) watches.push(tr.watch(`k${i}`));
      await tr.commit();
      await expectKvError(watches[Limits.maxWatches].promise, 'too_many_watches');
      watches[0].cancel();
      expect(await watches[0].promise).toBe(false);
      const another = await db.transact((t) => t.watch('another'));
      await db.set('another', '1');
      expect(await another.promise).toBe(true);
      for (const watch of watches) watch.cancel();
    });

    it('rejects the pending watches of a reset transaction with transaction_cancelled (1025)', async () => {
      const tr = openMemoryDatabase().createTransaction();
      const watch = tr.watch('k');
      tr.reset();
      await expectKvError(watch.promise, 'transaction_cancelled');
    });

    it('resolves every watch false when the engine closes', async () => {
      const db = openMemoryDatabase();
      const watch = await db.transact((tr) => tr.watch('k'));
      await db.close();
      expect(await watch.promise).toBe(false);
      await expectKvError(() => db.createTransaction(), 'client_invalid_operation');
    });
  });

  describe('limits, as FDB applies them', () => {
    it('reads a key over the size limit as missing, and clearing one does nothing', async () => {
      const db = openMemoryDatabase();
      const tr = db.createTransaction();
      const big = Buffer.alloc(Limits.maxKeyBytes + 1, 0x61);
      expect(await tr.get(big)).toBeUndefined();
      tr.clear(big);
      expect(await tr.getApproximateSize()).toBe(0);
      tr.clearRange(Buffer.alloc(Limits.maxKeyBytes + 5, 0x61), 'b');
      await tr.commit();
    });

    it('throws write errors synchronously and applies nothing from the failed call', async () => {
      const db = openMemoryDatabase();
      const tr = db.createTransaction();
      tr.set('ok', '1');
      expect(() => tr.set('bad', Buffer.alloc(Limits.maxValueBytes + 1))).toThrow(KvError);
      expect(() => tr.atomicOp('nope' as never, 'k', 'v')).toThrow(KvError);
      expect(() => tr.clearRange('b', 'a')).toThrow(KvError);
      await tr.commit();
      expect((await db.getRangeAll('', SYSTEM_KEYS)).map((kv) => kv.key.toString())).toEqual(['ok']);
    });

    it('counts read conflict ranges in the transaction size', async () => {
      const tr = openMemoryDatabase().createTransaction();
      await tr.get('abc');
      expect(await tr.getApproximateSize()).toBe(7);
    });

    it('reports transaction_too_large (2101) at commit and applies nothing', async () => {
      const db = openMemoryDatabase();
      const tr = db.createTransaction();
      const value = Buffer.alloc(Limits.maxValueBytes);
      for (let i = 0; i < 101; i++) tr.set(`k${i}`, value);
      await expectKvError(tr.commit(), 'transaction_too_large');
      expect(await db.getRangeAll('', SYSTEM_KEYS)).toEqual([]);
    });
  });

  describe('transaction lifecycle', () => {
    it('fails operations during and after commit with used_during_commit (2017), until reset', async () => {
      const db = openMemoryDatabase();
      const tr = db.createTransaction();
      tr.set('a', '1');
      const commit = tr.commit();
      await expectKvError(() => tr.set('b', '1'), 'used_during_commit');
      await commit;
      await expectKvError(tr.commit(), 'used_during_commit');
      await expectKvError(tr.get('a'), 'used_during_commit');
      await expectKvError(tr.getVersionstamp(), 'used_during_commit');
      tr.reset();
      expect((await tr.get('a'))?.toString()).toBe('1');
    });

    it('fails a commit cancelled while in flight with transaction_cancelled (1025), applying nothing', async () => {
      const db = openMemoryDatabase();
      const tr = db.createTransaction();
      tr.set('a', '1');
      const commit = tr.commit();
      tr.cancel();
      await expectKvError(commit, 'transaction_cancelled');
      expect(await db.get('a')).toBeUndefined();
    });

    it('onError resets after a retryable error and rejects anything else', async () => {
      const db = openMemoryDatabase();
      const tr = db.createTransaction();
      tr.set('a', '1');
      await tr.onError(new KvError(1020));
      await tr.commit();
      expect(await db.get('a')).toBeUndefined();
      tr.reset();
      await expect(tr.onError(new Error('boom'))).rejects.toThrow('boom');
      await expectKvError(tr.onError(new KvError(2004)), 'key_outside_legal_range');
      tr.cancel();
      await expectKvError(tr.onError(new KvError(1020)), 'transaction_cancelled');
    });

    it('backs off longer on each retry of the same transaction', async () => {
      // The delays asked of the timer, not the time that passed: a loaded machine stretches every wait.
      const tr = openMemoryDatabase().createTransaction();
      const delays: number[] = [];
      const timer = jest.spyOn(global, 'setTimeout');
      const retry = async () => {
        timer.mockClear();
        await tr.onError(new KvError(1020));
        delays.push(...timer.mock.calls.map((call) => Number(call[1] ?? 0)));
      };
      try {
        for (let i = 0; i < 4; i++) await retry();
        // FDB's schedule: 10 ms doubling, each wait jittered into [0.5, 1] of its step.
        expect(delays).toHaveLength(4);
        expect(delays[0]).toBeGreaterThanOrEqual(5);
        expect(delays[0]).toBeLessThanOrEqual(10);
        expect(delays[3]).toBeGreaterThanOrEqual(40);
        expect(delays[3]).toBeLessThanOrEqual(80);
        tr.reset();
        await retry();
        expect(delays[4]).toBeLessThanOrEqual(10);
      } finally {
        timer.mockRestore();
      }
    });

    it('fails a range iterator with transaction_cancelled (1025) when the transaction is reset between batches', async () => {
      const db = openMemoryDatabase();
      await db.transact((tr) => {
        for (let i = 0; i < 10; i++) tr.set(`k${i}`, '1');
      });
      const tr = db.createTransaction();
      const iterator = tr.getRange('k', 'l', { batchSize: 2 })[Symbol.asyncIterator]();
      await iterator.next();
      await iterator.next();
      tr.reset();
      await expectKvError(iterator.next(), 'transaction_cancelled');
    });
  });

  describe('serializability under concurrency', () => {
    it('keeps the total of concurrent transfers constant for every reader, under injected faults', async () => {
      const random = new Random(testSeed(4));
      const db = openMemoryDatabase({ faults: { seed: testSeed(5), notCommitted: 0.05, tooOld: 0.05 } });
      const accounts = 20;
      const account = (i: number) => `acct/${String(i).padStart(2, '0')}`;
      await db.transact((tr) => {
        for (let i = 0; i < accounts; i++) tr.set(account(i), String(100));
      });
      const total = async (tr: Transaction) => (await tr.getRangeAll('acct/', 'acct0')).reduce((sum, kv) => sum + Number(kv.value.toString()), 0);

      const transfers = Array.from({ length: 40 }, async () => {
        for (let n = 0; n < 5; n++) {
          const from = random.int(accounts);
          const to = (from + 1 + random.int(accounts - 1)) % accounts;
          const amount = 1 + random.int(10);
          await db.transact(async (tr) => {
            const a = Number((await tr.get(account(from)))!.toString());
            await new Promise((resolve) => setImmediate(resolve));
            const b = Number((await tr.get(account(to)))!.toString());
            tr.set(account(from), String(a - amount));
            tr.set(account(to), String(b + amount));
          });
        }
      });
      const audits = Array.from({ length: 10 }, async () => {
        for (let n = 0; n < 5; n++) {
          expect(await db.transact(total)).toBe(accounts * 100);
          await new Promise((resolve) => setImmediate(resolve));
        }
      });
      await Promise.all([...transfers, ...audits]);
      expect(await db.transact(total)).toBe(accounts * 100);
    });
  });

  describe('read-your-writes, against a model', () => {
    it('merges random sets, clears, range clears and atomic adds in streamed and collected range reads', async () => {
      const random = new Random(testSeed(3));
      const keys = Array.from({ length: 24 }, (_, i) => `k${String.fromCharCode(97 + i)}`);
      for (let round = 0; round < 40; round++) {
        const db = openMemoryDatabase();
        const model = new Map<string, Buffer>();
        await db.transact((tr) => {
          for (const key of keys) {
            if (random.chance(0.5)) {
              const value = Buffer.from([random.int(256)]);
              tr.set(key, value);
              model.set(key, value);
            }
          }
        });
        const tr = db.createTransaction();
        for (let op = 0; op < 30; op++) {
          const key = random.pick(keys);
          const choice = random.int(4);
          if (choice === 0) {
            const value = Buffer.from([random.int(256)]);
            tr.set(key, value);
            model.set(key, value);
          } else if (choice === 1) {
            tr.clear(key);
            model.delete(key);
          } else if (choice === 2) {
            const [a, b] = [random.pick(keys), random.pick(keys)].sort();
            tr.clearRange(a, b);
            for (const k of [...model.keys()]) if (k >= a && k < b) model.delete(k);
          } else {
            tr.add(key, Buffer.from([1]));
            const old = model.get(key);
            model.set(key, Buffer.from([old && old.length > 0 ? (old[0] + 1) & 0xff : 1]));
          }
          if (random.chance(0.3)) {
            const [a, b] = [random.pick(keys), random.pick(keys)].sort();
            const reverse = random.chance(0.5);
            const limit = random.int(5);
            const expected = [...model.entries()]
              .filter(([k]) => k >= a && k < b)
              .sort(([x], [y]) => (x < y ? -1 : 1))
              .map(([k, v]) => `${k}=${v.toString('hex')}`);
            if (reverse) expected.reverse();
            const wanted = limit === 0 ? expected : expected.slice(0, limit);
            const collected = await tr.getRangeAll(a, b, { reverse, limit });
            const streamed = [];
            for await (const kv of tr.getRange(a, b, { reverse, limit, batchSize: 2 })) streamed.push(kv);
            const show = (kvs: { key: Buffer; value: Buffer }[]) => kvs.map((kv) => `${kv.key.toString()}=${kv.value.toString('hex')}`);
            expect({ round, op, got: show(collected) }).toEqual({ round, op, got: wanted });
            expect({ round, op, got: show(streamed) }).toEqual({ round, op, got: wanted });
            const present = [...model.keys()].sort();
            const next = present.find((k) => k >= a);
            expect(await tr.getKey(firstGreaterOrEqual(a))).toEqual(next === undefined ? SYSTEM_KEYS : Buffer.from(next));
            const previous = [...present].reverse().find((k) => k < a);
            expect((await tr.getKey(lastLessThan(a))).toString()).toBe(previous ?? '');
          }
        }
      }
    });
  });

  describe('commits of many keys (merged into the store as one sorted run)', () => {
    const key = (i: number) => `run/${String(i).padStart(4, '0')}`;
    const many = Array.from({ length: 300 }, (_, i) => 2 * i + 1);

    it('stores every key of a large unsorted commit with duplicates, the last write of a key winning', async () => {
      const db = openMemoryDatabase();
      await db.transact((tr) => {
        tr.set('run/', 'below');
        tr.set('run0', 'above');
      });
      const random = new Random(testSeed(11));
      const order = [...many].sort(() => random.int(3) - 1);
      await db.transact((tr) => {
        for (const i of order) tr.set(key(i), `first ${i}`);
        for (const i of order.slice(0, 50)) tr.set(key(i), `second ${i}`);
      });
      const stored = await db.getRangeAll('run/', 'run1');
      const second = new Set(order.slice(0, 50));
      expect(stored.map((kv) => `${kv.key.toString()}=${kv.value.toString()}`)).toEqual([
        'run/=below',
        ...many.map((i) => `${key(i)}=${second.has(i) ? 'second' : 'first'} ${i}`),
        'run0=above',
      ]);
    });

    it('leaves older snapshots unchanged, and rewrites keys already stored among them', async () => {
      const db = openMemoryDatabase();
      await db.transact((tr) => tr.set(key(301), 'old'));
      const reader = db.createTransaction();
      expect((await reader.getRangeAll('run/', 'run0')).length).toBe(1);
      await db.transact((tr) => {
        for (const i of many) tr.set(key(i), `new ${i}`);
      });
      expect((await reader.getRangeAll('run/', 'run0')).map((kv) => kv.value.toString())).toEqual(['old']);
      expect((await db.get(key(301)))!.toString()).toBe('new 301');
      expect((await db.getRangeAll('run/', 'run0')).length).toBe(many.length);
    });

    it('conflicts with a reader of a written key, not with a reader of a key between two written ones', async () => {
      const db = openMemoryDatabase();
      const readsWritten = db.createTransaction();
      const readsGap = db.createTransaction();
      await readsWritten.get(key(201));
      await readsGap.get(key(200));
      await readsGap.getRangeAll(key(202), key(203));
      await db.transact((tr) => {
        for (const i of many) tr.set(key(i), 'v');
      });
      readsWritten.set('other', 'x');
      readsGap.set('other', 'x');
      await expectKvError(readsWritten.commit(), 'not_committed');
      await readsGap.commit();
    });

    it('fires a watch on one of the keys, and not one on a key between them', async () => {
      const db = openMemoryDatabase();
      const tr = db.createTransaction();
      const written = tr.watch(key(101));
      const between = tr.watch(key(100));
      await tr.commit();
      await db.transact((t) => {
        for (const i of many) t.set(key(i), 'v');
      });
      expect(await settledWithin(written.promise, 1000)).toEqual({ state: 'fulfilled', value: true });
      expect(await settledWithin(between.promise, 50)).toEqual({ state: 'pending' });
      between.cancel();
    });
  });

  describe('a range clear followed by writes inside it (applied as one replacement)', () => {
    const key = (i: number) => `doc/${String(i).padStart(3, '0')}`;

    it(`ends as clearing and then writing one by one would (seed ${testSeed(23)})`, async () => {
      const random = new Random(testSeed(23));
      const db = openMemoryDatabase();
      const model = new Map<string, string>();
      for (let round = 0; round < 60; round++) {
        const reader = db.createTransaction();
        const before = (await reader.getRangeAll('doc/', 'doc0')).map((kv) => `${kv.key.toString()}=${kv.value.toString()}`);
        await db.transact((tr) => {
          for (let step = 0; step < 3; step++) {
            const from = random.int(200);
            const to = from + 1 + random.int(random.int(4) === 0 ? 150 : 12);
            tr.clearRange(key(from), key(to));
            for (const k of [...model.keys()]) if (k >= key(from) && k < key(to)) model.delete(k);
            // Writes inside the cleared range, unsorted, some twice; a large one into an empty range now and then.
            const writes = random.int(5) === 0 ? to - from : random.int(8);
            for (let w = 0; w < writes; w++) {
              const k = key(from + random.int(to - from));
              const value = `r${round} s${step} w${w}`;
              tr.set(k, value);
              model.set(k, value);
            }
            if (random.int(3) === 0) {
              // A write outside it ends the replacement.
              const outside = key(to + random.int(20));
              tr.set(outside, `out ${round}`);
              model.set(outside, `out ${round}`);
            }
          }
        });
        const stored = await db.getRangeAll('doc/', 'doc0');
        const expected = [...model].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
        expect(stored.map((kv) => [kv.key.toString(), kv.value.toString()])).toEqual(expected);
        // The snapshot taken before the commit did not change.
        expect((await reader.getRangeAll('doc/', 'doc0')).map((kv) => `${kv.key.toString()}=${kv.value.toString()}`)).toEqual(before);
      }
    });

    it('gives a versionstamped value inside the range its stamp', async () => {
      const db = openMemoryDatabase();
      await db.transact((tr) => tr.set(key(2), 'old'));
      let versionstamp: Promise<Buffer> | undefined;
      await committed(db, (t) => {
        t.clearRange(key(0), key(10));
        t.set(key(3), 'new');
        t.setVersionstampedValue(key(2), versionstampTemplate('v:'));
        versionstamp = t.getVersionstamp();
      });
      const stamp = await versionstamp!;
      expect(await db.getRangeAll(key(0), key(10))).toEqual([
        { key: Buffer.from(key(2)), value: Buffer.concat([Buffer.from('v:'), stamp]) },
        { key: Buffer.from(key(3)), value: Buffer.from('new') },
      ]);
    });

    it('conflicts with a reader of a key written again inside the range, or deleted by it', async () => {
      const db = openMemoryDatabase();
      await db.transact((tr) => {
        for (let i = 0; i < 10; i++) tr.set(key(i), 'v');
      });
      const readsRewritten = db.createTransaction();
      const readsDeleted = db.createTransaction();
      const readsOutside = db.createTransaction();
      await readsRewritten.get(key(3));
      await readsDeleted.get(key(4));
      await readsOutside.get(key(9));
      await db.transact((tr) => {
        tr.clearRange(key(2), key(6));
        tr.set(key(3), 'v');
        tr.set(key(5), 'new');
      });
      for (const t of [readsRewritten, readsDeleted, readsOutside]) t.set('other', 'x');
      await expectKvError(readsRewritten.commit(), 'not_committed');
      await expectKvError(readsDeleted.commit(), 'not_committed');
      await readsOutside.commit();
    });

    it('fires the watches of keys whose value changed or went, not of a key given its own value again', async () => {
      const db = openMemoryDatabase();
      await db.transact((tr) => {
        for (let i = 0; i < 10; i++) tr.set(key(i), 'v');
      });
      const tr = db.createTransaction();
      const changed = tr.watch(key(3));
      const deleted = tr.watch(key(4));
      const same = tr.watch(key(5));
      const added = tr.watch(key(20));
      await tr.commit();
      await db.transact((t) => {
        t.clearRange(key(2), key(30));
        t.set(key(3), 'changed');
        t.set(key(5), 'v');
        t.set(key(20), 'new');
      });
      for (const watch of [changed, deleted, added]) expect(await settledWithin(watch.promise, 1000)).toEqual({ state: 'fulfilled', value: true });
      expect(await settledWithin(same.promise, 50)).toEqual({ state: 'pending' });
      same.cancel();
    });
  });

  describe('performance', () => {
    it('takes snapshots without copying the store: 2,000 short transactions over 100,000 keys', async () => {
      const db = openMemoryDatabase();
      await db.transact((tr) => {
        for (let i = 0; i < 100_000; i++) tr.set(`key${String(i).padStart(6, '0')}`, 'v');
      });
      const start = Date.now();
      for (let i = 0; i < 2000; i++) {
        await db.transact(async (tr) => {
          const key = `key${String((i * 7919) % 100_000).padStart(6, '0')}`;
          await tr.get(key);
          tr.set(key, `${i}`);
        });
      }
      // Copying the store per transaction would take minutes; this takes well under a second unloaded.
      expect(Date.now() - start).toBeLessThan(5000);
    });
  });
});

describe('MemoryEngine.setReadVersion', () => {
  it('holds the versions its transactions read at, and no other superseded one (transaction_too_old, 1007)', async () => {
    const db = openMemoryDatabase();
    const unread = db.createTransaction();
    unread.set('k', 'v1');
    await unread.commit();
    const reader = db.createTransaction();
    expect(await reader.get('k')).toEqual(Buffer.from('v1'));
    await db.set('k', 'v2');

    const atRead = db.createTransaction();
    atRead.setReadVersion(await reader.getReadVersion());
    expect(await atRead.get('k')).toEqual(Buffer.from('v1'));
    const beforeRead = db.createTransaction();
    beforeRead.setReadVersion(unread.getCommittedVersion() - 1n);
    await expectKvError(beforeRead.get('k'), 'transaction_too_old');
  });

  it('forgets a superseded version once no open transaction reads at it: its readers committed, were reset or cancelled', async () => {
    const db = openMemoryDatabase();
    await db.set('k', 'v1');
    const readers = [db.createTransaction(), db.createTransaction(), db.createTransaction()];
    for (const reader of readers) expect(await reader.get('k')).toEqual(Buffer.from('v1'));
    const version = await readers[0].getReadVersion();
    await db.set('k', 'v2');
    const readAt = async () => {
      const tr = db.createTransaction();
      tr.setReadVersion(version);
      try {
        return await tr.get('k');
      } finally {
        tr.cancel();
      }
    };

    await readers[0].commit();
    expect(await readAt()).toEqual(Buffer.from('v1'));
    readers[1].reset();
    expect(await readAt()).toEqual(Buffer.from('v1'));
    readers[2].cancel();
    await expectKvError(readAt(), 'transaction_too_old');
    // Asked after the commit, the read version is still the one the transaction read at.
    expect(await readers[0].getReadVersion()).toBe(version);
  });

  it('keeps the latest version readable after its readers are done, until a commit supersedes it', async () => {
    const db = openMemoryDatabase();
    await db.set('k', 'v1');
    const version = await db.transact((tr) => tr.getReadVersion());
    const tr = db.createTransaction();
    tr.setReadVersion(version);
    expect(await tr.get('k')).toEqual(Buffer.from('v1'));
    tr.cancel();
    await db.set('k', 'v2');
    const late = db.createTransaction();
    late.setReadVersion(version);
    await expectKvError(late.get('k'), 'transaction_too_old');
  });
});

describe('MemoryEngine reads and conflict checks while others commit', () => {
  it("checks an open transaction's reads against every commit since its read version, however many came between", async () => {
    const db = openMemoryDatabase();
    await db.set('k', 'v1');
    const reader = db.createTransaction();
    const atRead = db.createTransaction();
    expect(await reader.get('k')).toEqual(Buffer.from('v1'));
    const version = await reader.getReadVersion();
    // Blind commits (nobody else reads), then one that writes what the reader read, then more.
    for (let i = 0; i < 50; i++) await db.transact((tr) => tr.set(`other${i}`, 'x'));
    await db.set('k', 'v2');
    for (let i = 0; i < 50; i++) await db.transact((tr) => tr.set(`later${i}`, 'x'));

    atRead.setReadVersion(version);
    expect(await atRead.get('k')).toEqual(Buffer.from('v1'));
    atRead.set('mine', 'y');
    await expectKvError(atRead.commit(), 'not_committed');
    reader.set('mine', 'y');
    await expectKvError(reader.commit(), 'not_committed');
    expect(await db.get('mine')).toBeUndefined();
  });

  it('commits a transaction whose reads no commit since its read version touched', async () => {
    const db = openMemoryDatabase();
    await db.set('k', 'v1');
    const reader = db.createTransaction();
    expect(await reader.get('k')).toEqual(Buffer.from('v1'));
    for (let i = 0; i < 50; i++) await db.transact(async (tr) => tr.set(`other${i}`, (await tr.get(`other${i}`)) ?? 'x'));
    reader.set('mine', 'y');
    await reader.commit();
    expect(await db.get('mine')).toEqual(Buffer.from('y'));
  });

  it('commits each of over a thousand open transactions that read at as many versions, none failing as too old', async () => {
    const db = openMemoryDatabase();
    const open: Transaction[] = [];
    for (let i = 0; i < 1100; i++) {
      const tr = db.createTransaction();
      expect(await tr.get(`read${i}`)).toBeUndefined();
      open.push(tr);
      // A commit between reads: each transaction reads at a version of its own.
      await db.set('tick', String(i));
    }
    for (const [i, tr] of open.entries()) {
      tr.set(`wrote${i}`, 'x');
      await tr.commit();
    }
    expect(await db.getRangeAll('wrote', 'wrotf', { limit: 2000 })).toHaveLength(1100);
  });

  it('reads at its read version while other transactions commit, also during the backoff of an onError for an error of its own', async () => {
    const db = openMemoryDatabase();
    await db.transact((tr) => ['a', 'b', 'c'].forEach((k) => tr.set(k, `${k}1`)));
    const reader = db.createTransaction();
    expect(await reader.get('a')).toEqual(Buffer.from('a1'));
    // One commit while the reader reads, then one by a transaction that read alone at the new version.
    await db.transact(async (tr) => tr.set('b', `${(await tr.get('b'))!.toString()}+`));
    await db.transact(async (tr) => tr.set('c', `${(await tr.get('c'))!.toString()}+`));
    expect((await reader.getRangeAll('', '\xff')).map((p) => p.value.toString())).toEqual(['a1', 'b1', 'c1']);

    reader.cancel();

    const retrying = db.createTransaction();
    expect(await retrying.get('a')).toEqual(Buffer.from('a1'));
    const retry = retrying.onError(kvError('not_committed', 'an error of the caller, not of a commit'));
    await db.set('a', 'a2');
    expect(await retrying.get('a')).toEqual(Buffer.from('a1'));
    await retry;
    expect(await retrying.get('a')).toEqual(Buffer.from('a2'));
  });
});
