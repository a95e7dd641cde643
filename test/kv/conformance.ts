import { int64LE, readInt64LE } from '../../src/kv/contract/bytes';
import type { Database } from '../../src/kv/contract/database';
import { isKvError, kvError } from '../../src/kv/contract/errors';
import { firstGreaterOrEqual, firstGreaterThan, lastLessOrEqual, lastLessThan } from '../../src/kv/contract/key-selector';
import { Limits } from '../../src/kv/contract/limits';
import type { AtomicOp, Bytes, KeySelector, KeyValue, Transaction } from '../../src/kv/contract/types';
import type { FaultInjectionOptions } from '../../src/kv/engine-parts/fault-injector';
import { atomicCases } from '../support/atomic-cases';
import { Barrier } from '../support/barrier';
import { expectKvError, settledWithin } from '../support/kv-assertions';
import { KeyspaceFuzz } from '../support/keyspace-fuzz';
import { KeyspaceModel } from '../support/keyspace-model';
import { printable, printablePairs } from '../support/printable';
import { Random, testSeed } from '../support/random';

/**
 * How the conformance suite gets databases from an engine. Each test opens its own (the suite closes
 * them after the test); the optional methods unlock the tests that need them, and the suite skips
 * those tests, saying why, for engines that cannot provide them (a real FDB cluster injects no faults
 * and has no clock to turn).
 */
export interface ConformanceFactory {
  /** A fresh, empty database. */
  open(): Promise<Database>;
  /** A fresh, empty database whose commits fail as `faults` says. */
  openWithFaults?(faults: FaultInjectionOptions): Promise<Database>;
  /** A fresh, empty database whose engine reads the time (in ms) from `now`, for the 5-second limit. */
  openWithClock?(now: () => number): Promise<Database>;
  /** Called once after the whole suite. */
  cleanup?(): Promise<void>;
  /** Where the engine's limits are tighter than FDB's (an embedded store's smaller keys, say). */
  limits?: { maxKeyBytes?: number };
}

/**
 * The end of the user keyspace, the byte 0xff. (Not the string `'\xff'`, which UTF-8 encodes as c3 bf.)
 */
const KEYSPACE_END = Buffer.from([0xff]);

/** A versionstamp's placeholder: 10 bytes that the commit replaces. */
const PLACEHOLDER = Buffer.alloc(10);

/** `bytes` followed by FDB's 4-byte little-endian offset of the versionstamp placeholder. */
function withVersionstampOffset(bytes: Buffer, offset: number): Buffer {
  const suffix = Buffer.alloc(4);
  suffix.writeUInt32LE(offset, 0);
  return Buffer.concat([bytes, suffix]);
}

function keysOf(pairs: readonly KeyValue[]): string[] {
  return pairs.map((kv) => kv.key.toString('latin1'));
}

/** Commits `tr`, reporting a conflict as a value rather than an error. */
async function commitOutcome(tr: Transaction): Promise<'committed' | 'not_committed'> {
  try {
    await tr.commit();
    return 'committed';
  } catch (err) {
    if (isKvError(err, 'not_committed')) return 'not_committed';
    throw err;
  }
}

async function counter(db: Database, key: Bytes): Promise<bigint> {
  return readInt64LE(await db.get(key));
}

/**
 * The KV contract of `src/kv/contract/types.ts`, as one suite every engine runs:
 * `kvConformanceSuite('memory', { open: async () => openMemoryDatabase(), ... })`.
 */
export function kvConformanceSuite(name: string, factory: ConformanceFactory): void {
  const maxKeyBytes = factory.limits?.maxKeyBytes ?? Limits.maxKeyBytes;

  describe(`KV conformance: ${name}`, () => {
    const opened: Database[] = [];
    const track = (db: Database): Database => (opened.push(db), db);
    const open = async (): Promise<Database> => track(await factory.open());

    afterEach(async () => {
      await Promise.all(opened.splice(0).map((db) => db.close()));
    });
    afterAll(async () => {
      await factory.cleanup?.();
    });

    describe('serializable isolation', () => {
      it('prevents a lost update between two read-modify-write transactions', async () => {
        const db = await open();
        await db.set('counter', int64LE(10));
        const a = db.createTransaction();
        const b = db.createTransaction();
        const seenByA = readInt64LE(await a.get('counter'));
        const seenByB = readInt64LE(await b.get('counter'));
        a.set('counter', int64LE(seenByA + 1n));
        b.set('counter', int64LE(seenByB + 1n));
        await a.commit();
        await expectKvError(b.commit(), 'not_committed');
        expect(await counter(db, 'counter')).toBe(11n);
      });

      it('lands both increments when each read-modify-write runs in transact, retrying the loser once', async () => {
        const db = await open();
        await db.set('counter', int64LE(10));
        const bothHaveRead = new Barrier(2);
        let attempts = 0;
        const increment = async () => {
          let first = true;
          await db.transact(async (tr) => {
            attempts++;
            const seen = readInt64LE(await tr.get('counter'));
            if (first) {
              first = false;
              await bothHaveRead.arrive();
            }
            tr.set('counter', int64LE(seen + 1n));
          });
        };
        await Promise.all([increment(), increment()]);
        expect(await counter(db, 'counter')).toBe(12n);
        // Both read 10 before either committed: exactly one of them conflicts and runs again.
        expect(attempts).toBe(3);
      });

      it('prevents write skew: of two transactions that each read x and y and write one of them, the second fails', async () => {
        const db = await open();
        await db.transact((tr) => {
          tr.set('x', '1');
          tr.set('y', '1');
        });
        // Each may take its own key off call only if the other is still on call.
        const a = db.createTransaction();
        const b = db.createTransaction();
        for (const tr of [a, b]) expect([await tr.get('x'), await tr.get('y')]).toEqual([Buffer.from('1'), Buffer.from('1')]);
        a.set('x', '0');
        b.set('y', '0');
        expect(await commitOutcome(a)).toBe('committed');
        expect(await commitOutcome(b)).toBe('not_committed');
        expect([await db.get('x'), await db.get('y')]).toEqual([Buffer.from('0'), Buffer.from('1')]);
      });

      it('prevents a phantom: a range read conflicts with a key another transaction inserts into the range', async () => {
        const db = await open();
        await db.transact((tr) => {
          tr.set('p/1', '');
          tr.set('p/2', '');
        });
        const a = db.createTransaction();
        const rows = await a.getRangeAll('p/', 'p0');
        a.set('summary', String(rows.length));
        await db.set('p/3', '');
        await expectKvError(a.commit(), 'not_committed');
        expect(await db.get('summary')).toBeUndefined();
      });

      it('does not conflict with a key inserted outside the range read', async () => {
        const db = await open();
        await db.set('p/1', '');
        const a = db.createTransaction();
        const rows = await a.getRangeAll('p/', 'p0');
        a.set('summary', String(rows.length));
        await db.set('q/1', '');
        expect(await commitOutcome(a)).toBe('committed');
        expect(await db.get('summary')).toEqual(Buffer.from('1'));
      });

      describe('a range read with a limit conflicts only over the keys it could have returned', () => {
        /** A reads 2 of p/a..p/d, then B writes `key` and commits, then A (which also wrote) commits. */
        async function limitedReadThenWrite(reverse: boolean, key: string) {
          const db = await open();
          await db.transact((tr) => ['p/a', 'p/b', 'p/c', 'p/d'].forEach((k) => tr.set(k, 'old')));
          const a = db.createTransaction();
          const seen = keysOf(await a.getRangeAll('p/', 'p0', { limit: 2, reverse }));
          a.set('summary', seen.join(','));
          await db.set(key, 'new');
          return { seen, outcome: await commitOutcome(a) };
        }

        it('forward: a key inserted after the last returned key does not conflict', async () => {
          expect(await limitedReadThenWrite(false, 'p/b0')).toEqual({ seen: ['p/a', 'p/b'], outcome: 'committed' });
        });

        it('forward: a write to an existing key beyond the last returned key does not conflict', async () => {
          expect(await limitedReadThenWrite(false, 'p/c')).toEqual({ seen: ['p/a', 'p/b'], outcome: 'committed' });
        });

        it('forward: a key inserted before the last returned key conflicts', async () => {
          expect(await limitedReadThenWrite(false, 'p/a0')).toEqual({ seen: ['p/a', 'p/b'], outcome: 'not_committed' });
        });

        it('reverse: a key inserted before the last returned key does not conflict', async () => {
          expect(await limitedReadThenWrite(true, 'p/b0')).toEqual({ seen: ['p/d', 'p/c'], outcome: 'committed' });
        });

        it('reverse: a key inserted after the last returned key conflicts', async () => {
          expect(await limitedReadThenWrite(true, 'p/c0')).toEqual({ seen: ['p/d', 'p/c'], outcome: 'not_committed' });
        });
      });

      it('getKey conflicts with an insert that would change what its selector resolved to', async () => {
        const db = await open();
        await db.transact((tr) => {
          tr.set('a', '');
          tr.set('c', '');
        });
        const a = db.createTransaction();
        expect(printable(await a.getKey(firstGreaterOrEqual('b')))).toBe("'c'");
        a.set('out', '1');
        await db.set('b5', '');
        await expectKvError(a.commit(), 'not_committed');
      });

      it('does not conflict when the concurrent write is to a different key', async () => {
        const db = await open();
        const a = db.createTransaction();
        await a.get('mine');
        a.set('mine', '1');
        await db.set('theirs', '1');
        expect(await commitOutcome(a)).toBe('committed');
      });

      it('conflicts with a concurrent clearRange over a key it read', async () => {
        const db = await open();
        await db.set('k/1', 'v');
        const a = db.createTransaction();
        await a.get('k/1');
        a.set('out', '1');
        await db.clearRange('k/', 'k0');
        await expectKvError(a.commit(), 'not_committed');
      });

      it('reads at one version: a commit after the read version is invisible to its later reads', async () => {
        const db = await open();
        await db.set('k', 'before');
        const a = db.createTransaction();
        expect(await a.get('k')).toEqual(Buffer.from('before'));
        await db.transact((tr) => {
          tr.set('k', 'after');
          tr.set('k2', 'new');
        });
        expect(await a.get('k')).toEqual(Buffer.from('before'));
        expect(await a.get('k2')).toBeUndefined();
        expect(keysOf(await a.getRangeAll('k', 'l'))).toEqual(['k']);
      });

      it('does not conflict with a commit that precedes its read version', async () => {
        const db = await open();
        await db.set('k', 'first');
        const a = db.createTransaction();
        expect(await a.get('k')).toEqual(Buffer.from('first'));
        a.set('k', 'second');
        expect(await commitOutcome(a)).toBe('committed');
      });

      it('lets two blind writes to one key both commit, the later commit winning', async () => {
        const db = await open();
        const a = db.createTransaction();
        const b = db.createTransaction();
        await a.getReadVersion();
        await b.getReadVersion();
        a.set('k', 'a');
        b.set('k', 'b');
        await a.commit();
        await b.commit();
        expect(await db.get('k')).toEqual(Buffer.from('b'));
      });

      it('commits a read-only transaction despite concurrent writes to what it read, without a commit version', async () => {
        const db = await open();
        const a = db.createTransaction();
        await a.get('k');
        await db.set('k', 'changed');
        expect(await commitOutcome(a)).toBe('committed');
        expect(a.getCommittedVersion()).toBe(-1n);
      });

      it('gives a writing transaction a commit version after its read version, and later transactions read at or after it', async () => {
        const db = await open();
        const a = db.createTransaction();
        const readVersion = await a.getReadVersion();
        a.set('k', 'v');
        await a.commit();
        expect(a.getCommittedVersion()).toBeGreaterThan(readVersion);
        expect(await db.createTransaction().getReadVersion()).toBeGreaterThanOrEqual(a.getCommittedVersion());
      });
    });

    describe('snapshot reads and explicit conflict ranges', () => {
      it('a snapshot read adds no conflict: its read-modify-write commits over a concurrent write', async () => {
        const db = await open();
        await db.set('counter', int64LE(10));
        const a = db.createTransaction();
        const seen = readInt64LE(await a.snapshot().get('counter'));
        await db.set('counter', int64LE(100));
        a.set('counter', int64LE(seen + 1n));
        expect(await commitOutcome(a)).toBe('committed');
        expect(await counter(db, 'counter')).toBe(11n);
      });

      it('addReadConflictKey makes the snapshot read conflict again', async () => {
        const db = await open();
        await db.set('counter', int64LE(10));
        const a = db.createTransaction();
        const seen = readInt64LE(await a.snapshot().get('counter'));
        a.addReadConflictKey('counter');
        await db.set('counter', int64LE(100));
        a.set('counter', int64LE(seen + 1n));
        await expectKvError(a.commit(), 'not_committed');
        expect(await counter(db, 'counter')).toBe(100n);
      });

      it('a snapshot range read adds no conflict with an insert into the range', async () => {
        const db = await open();
        await db.set('p/1', '');
        const a = db.createTransaction();
        a.set('summary', String((await a.snapshot().getRangeAll('p/', 'p0')).length));
        await db.set('p/2', '');
        expect(await commitOutcome(a)).toBe('committed');
      });

      it('addReadConflictRange makes it conflict again', async () => {
        const db = await open();
        await db.set('p/1', '');
        const a = db.createTransaction();
        a.set('summary', String((await a.snapshot().getRangeAll('p/', 'p0')).length));
        a.addReadConflictRange('p/', 'p0');
        await db.set('p/2', '');
        await expectKvError(a.commit(), 'not_committed');
      });

      it('a snapshot read sees the transaction’s own writes', async () => {
        const db = await open();
        await db.set('k', 'committed');
        const a = db.createTransaction();
        a.set('k', 'pending');
        expect(await a.snapshot().get('k')).toEqual(Buffer.from('pending'));
      });

      it('a read answered by the transaction’s own set or clear adds no read conflict', async () => {
        const db = await open();
        const a = db.createTransaction();
        a.set('set-first', 'mine');
        a.clear('cleared-first');
        expect(await a.get('set-first')).toEqual(Buffer.from('mine'));
        expect(await a.get('cleared-first')).toBeUndefined();
        await db.transact((tr) => {
          tr.set('set-first', 'theirs');
          tr.set('cleared-first', 'theirs');
        });
        expect(await commitOutcome(a)).toBe('committed');
        expect(await db.get('set-first')).toEqual(Buffer.from('mine'));
        expect(await db.get('cleared-first')).toBeUndefined();
      });

      it('a range read over the transaction’s own clearRange adds no read conflict there', async () => {
        const db = await open();
        await db.set('p/1', 'old');
        const a = db.createTransaction();
        a.clearRange('p/', 'p0');
        expect(await a.getRangeAll('p/', 'p0')).toEqual([]);
        await db.set('p/2', 'theirs');
        expect(await commitOutcome(a)).toBe('committed');
        expect(await db.getRangeAll('p/', 'p0')).toEqual([]);
      });

      it('a read of a key with a pending atomic operation does add one, as its value depends on the stored one', async () => {
        const db = await open();
        await db.set('n', int64LE(1));
        const a = db.createTransaction();
        a.add('n', 1);
        expect(await a.get('n')).toEqual(int64LE(2));
        await db.set('n', int64LE(10));
        await expectKvError(a.commit(), 'not_committed');
      });

      it('addWriteConflictKey makes a transaction conflict with readers of that key, without writing it', async () => {
        const db = await open();
        const reader = db.createTransaction();
        await reader.get('guard');
        reader.set('reader-out', '1');
        await db.transact((tr) => {
          tr.addWriteConflictKey('guard');
          tr.set('writer-out', '1');
        });
        await expectKvError(reader.commit(), 'not_committed');
        expect(await db.get('guard')).toBeUndefined();
      });

      it('addWriteConflictRange does the same for every key in the range, and none outside it', async () => {
        const db = await open();
        const inside = db.createTransaction();
        const outside = db.createTransaction();
        await inside.get('g/5');
        await outside.get('h');
        inside.set('inside-out', '1');
        outside.set('outside-out', '1');
        await db.transact((tr) => {
          tr.addWriteConflictRange('g/', 'g0');
          tr.set('writer-out', '1');
        });
        await expectKvError(inside.commit(), 'not_committed');
        expect(await commitOutcome(outside)).toBe('committed');
      });
    });

    describe('atomic operations', () => {
      for (const op of Object.keys(atomicCases) as AtomicOp[]) {
        describe(`${op}, as FDB defines it`, () => {
          for (const c of atomicCases[op]) {
            it(c.title, async () => {
              const db = await open();
              // The same case through atomicOp(op, ...) and through the named method.
              const viaAtomicOp = 'via-atomicOp';
              const viaMethod = 'via-method';
              if (c.existing !== undefined) {
                const existing = c.existing;
                await db.transact((tr) => {
                  tr.set(viaAtomicOp, existing);
                  tr.set(viaMethod, existing);
                });
              }
              const expected = printable(c.expected);
              const tr = db.createTransaction();
              tr.atomicOp(op, viaAtomicOp, c.param);
              tr[op](viaMethod, c.param);
              expect({
                readOwnWrite: [printable(await tr.get(viaAtomicOp)), printable(await tr.get(viaMethod))],
              }).toEqual({ readOwnWrite: [expected, expected] });
              await tr.commit();
              expect({
                committed: [printable(await db.get(viaAtomicOp)), printable(await db.get(viaMethod))],
              }).toEqual({ committed: [expected, expected] });
            });
          }
        });
      }

      it('add takes a number or bigint delta as an 8-byte little-endian integer', async () => {
        const db = await open();
        await db.set('n', int64LE(4));
        await db.transact((tr) => tr.add('n', 3));
        expect(await db.get('n')).toEqual(int64LE(7));
        await db.transact((tr) => tr.add('n', -10n));
        expect(await db.get('n')).toEqual(int64LE(-3));
        await db.transact((tr) => tr.add('fresh', 2n ** 40n));
        expect(await counter(db, 'fresh')).toBe(2n ** 40n);
      });

      it('100 concurrent transactions adding to one key sum exactly, without a single conflict', async () => {
        const db = await open();
        const writers = 100;
        const allHaveReadVersions = new Barrier(writers);
        let attempts = 0;
        await Promise.all(
          Array.from({ length: writers }, async () => {
            let first = true;
            await db.transact(async (tr) => {
              attempts++;
              await tr.getReadVersion();
              if (first) {
                first = false;
                await allHaveReadVersions.arrive();
              }
              tr.add('hits', 1);
            });
          }),
        );
        expect(await counter(db, 'hits')).toBe(BigInt(writers));
        expect(attempts).toBe(writers);
      });

      it('adds no read conflict: an add commits over a concurrent write to its key and applies on top of it', async () => {
        const db = await open();
        await db.set('n', int64LE(1));
        const a = db.createTransaction();
        await a.getReadVersion();
        a.add('n', 1);
        await db.set('n', int64LE(10));
        expect(await commitOutcome(a)).toBe('committed');
        expect(await counter(db, 'n')).toBe(11n);
      });

      it('is a write: it conflicts with a transaction that read its key', async () => {
        const db = await open();
        const reader = db.createTransaction();
        await reader.get('n');
        reader.set('out', '1');
        await db.transact((tr) => tr.add('n', 1));
        await expectKvError(reader.commit(), 'not_committed');
      });
    });

    describe('read-your-writes', () => {
      it('get sees the transaction’s own set and clear before commit; other transactions do not', async () => {
        const db = await open();
        await db.set('gone', 'committed');
        const tr = db.createTransaction();
        tr.set('new', 'pending');
        tr.clear('gone');
        expect(await tr.get('new')).toEqual(Buffer.from('pending'));
        expect(await tr.get('gone')).toBeUndefined();
        expect(await db.get('new')).toBeUndefined();
        expect(await db.get('gone')).toEqual(Buffer.from('committed'));
      });

      it('a range read merges pending sets, clears and range clears with committed keys, in both directions', async () => {
        const db = await open();
        await db.transact((tr) => ['a', 'b', 'c', 'd', 'e', 'f'].forEach((k) => tr.set(k, 'old')));
        const tr = db.createTransaction();
        tr.clearRange('b', 'd');
        tr.set('c', 'new');
        tr.clear('e');
        tr.set('e2', 'new');
        const expected = ["'a'='old'", "'c'='new'", "'d'='old'", "'e2'='new'", "'f'='old'"];
        expect(printablePairs(await tr.getRangeAll('a', 'g'))).toEqual(expected);
        expect(printablePairs(await tr.getRangeAll('a', 'g', { reverse: true }))).toEqual([...expected].reverse());
        expect(printablePairs(await tr.getRangeAll('a', 'g', { limit: 3 }))).toEqual(expected.slice(0, 3));
        expect(printablePairs(await tr.getRangeAll('a', 'g', { limit: 3, reverse: true }))).toEqual([...expected].reverse().slice(0, 3));
      });

      it('an atomic operation reads back as applied to the committed value', async () => {
        const db = await open();
        await db.set('n', int64LE(5));
        const tr = db.createTransaction();
        tr.add('n', 1);
        tr.add('n', 1);
        expect(await tr.get('n')).toEqual(int64LE(7));
        tr.set('n', int64LE(100));
        tr.add('n', 1);
        expect(await tr.get('n')).toEqual(int64LE(101));
      });

      it('a first read after many writes sees them in the order they were made: atomic operations, range clears over them, sets', async () => {
        const db = await open();
        await db.transact((tr) => {
          tr.set('n/a', int64LE(5));
          tr.set('n/b', int64LE(5));
          tr.set('n/c', int64LE(5));
        });
        const tr = db.createTransaction();
        tr.add('n/a', 1); // on the committed 5
        tr.add('n/b', 1);
        tr.clearRange('n/b', 'n/c'); // hides n/b and its add
        tr.add('n/b', 2); // on nothing: 2
        tr.set('n/c', int64LE(10));
        tr.add('n/c', 1); // on the set: 11
        tr.add('n/d', 3); // on nothing stored: 3
        // Nothing read yet: these reads are the first to need the writes in key order.
        expect(await tr.get('n/a')).toEqual(int64LE(6));
        expect(await tr.get('n/b')).toEqual(int64LE(2));
        expect((await tr.getRangeAll('n/', 'n0')).map((kv) => [kv.key.toString(), kv.value])).toEqual([
          ['n/a', int64LE(6)],
          ['n/b', int64LE(2)],
          ['n/c', int64LE(11)],
          ['n/d', int64LE(3)],
        ]);
        tr.add('n/a', 1); // after the reads, on what they saw
        expect(await tr.get('n/a')).toEqual(int64LE(7));
        await tr.commit();
        expect((await db.getRangeAll('n/', 'n0')).map((kv) => kv.value)).toEqual([int64LE(7), int64LE(2), int64LE(11), int64LE(3)]);
      });

      it('getRange iterates in batches, yielding the same pairs as getRangeAll', async () => {
        const db = await open();
        await db.transact((tr) => {
          for (let i = 0; i < 25; i++) tr.set(`k/${String(i).padStart(2, '0')}`, String(i));
        });
        const tr = db.createTransaction();
        tr.set('k/07x', 'pending');
        tr.clear('k/11');
        for (const options of [
          { batchSize: 4 },
          { batchSize: 4, reverse: true },
          { batchSize: 3, limit: 10 },
          { batchSize: 1, limit: 5, reverse: true },
        ]) {
          const iterated: KeyValue[] = [];
          for await (const kv of tr.getRange('k/', 'k0', options)) iterated.push(kv);
          expect({ options, pairs: printablePairs(iterated) }).toEqual({
            options,
            pairs: printablePairs(await tr.getRangeAll('k/', 'k0', options)),
          });
        }
      });

      it('matches a plain model of committed data plus pending operations, for get, getKey and range reads (seeded)', async () => {
        const seed = testSeed(1);
        const db = await open();
        await checkReadYourWritesAgainstModel(db, new Random(seed), `seed ${seed} (replay with DOCLAYER_SEED=${seed})`);
      });
    });

    describe("disableReadYourWrites (FDB's read_your_writes_disable)", () => {
      it("reads see the database as of the read version, not the transaction's own writes", async () => {
        const db = await open();
        await db.transact((tr) => ['a', 'b', 'c'].forEach((k) => tr.set(k, 'old')));
        const tr = db.createTransaction();
        tr.disableReadYourWrites();
        tr.set('a', 'new');
        tr.set('a2', 'new');
        tr.clear('b');
        tr.clearRange('c', 'd');
        expect(await tr.get('a')).toEqual(Buffer.from('old'));
        expect(await tr.get('a2')).toBeUndefined();
        expect(await tr.snapshot().get('b')).toEqual(Buffer.from('old'));
        expect(printablePairs(await tr.getRangeAll('a', 'z'))).toEqual(["'a'='old'", "'b'='old'", "'c'='old'"]);
        expect(keysOf(await tr.getRangeAll('a', 'z', { reverse: true, limit: 2 }))).toEqual(['c', 'b']);
        expect(printable(await tr.getKey(firstGreaterThan('a')))).toBe("'b'");
        await tr.commit();
        expect(printablePairs(await db.getRangeAll('a', 'z'))).toEqual(["'a'='new'", "'a2'='new'"]);
      });

      it('a read of a key the transaction cleared still conflicts with a commit that wrote it', async () => {
        const db = await open();
        await db.set('k', 'old');
        const tr = db.createTransaction();
        tr.disableReadYourWrites();
        tr.clear('k');
        expect(await tr.get('k')).toEqual(Buffer.from('old'));
        await db.set('k', 'other');
        await expectKvError(tr.commit(), 'not_committed');
      });

      it('fails with client_invalid_operation (2000) once the transaction has read or written', async () => {
        const db = await open();
        const reader = db.createTransaction();
        await reader.get('k');
        await expectKvError(() => reader.disableReadYourWrites(), 'client_invalid_operation');
        const writer = db.createTransaction();
        writer.set('k', 'v');
        await expectKvError(() => writer.disableReadYourWrites(), 'client_invalid_operation');
        expect(await writer.get('k')).toEqual(Buffer.from('v'));
      });

      it('makes watch fail with watches_disabled (1034)', async () => {
        const db = await open();
        const tr = db.createTransaction();
        tr.disableReadYourWrites();
        await expectKvError(tr.watch('k').promise, 'watches_disabled');
      });

      it("lasts one attempt: after reset, and in the retry loop's next attempt, reads see the writes again", async () => {
        const db = await open();
        const tr = db.createTransaction();
        tr.disableReadYourWrites();
        tr.set('k', 'v');
        expect(await tr.get('k')).toBeUndefined();
        tr.reset();
        tr.set('k', 'v');
        expect(await tr.get('k')).toEqual(Buffer.from('v'));

        await db.set('counter', 'old');
        const seen: Array<string | undefined> = [];
        let attempts = 0;
        await db.transact(async (t) => {
          if (attempts++ === 0) t.disableReadYourWrites();
          t.set('counter', 'mine');
          seen.push((await t.get('counter'))?.toString());
          if (attempts === 1) throw kvError('not_committed', 'a conflict, for the test');
        });
        expect(seen).toEqual(['old', 'mine']);
      });
    });

    describe('setReadVersion', () => {
      it("reads, and checks conflicts, as of another transaction's read version", async () => {
        const db = await open();
        await db.set('k', 'v1');
        const first = db.createTransaction();
        expect(await first.get('k')).toEqual(Buffer.from('v1'));
        const version = await first.getReadVersion();
        await db.set('k', 'v2');

        const tr = db.createTransaction();
        tr.setReadVersion(version);
        expect(await tr.getReadVersion()).toBe(version);
        expect(await tr.get('k')).toEqual(Buffer.from('v1'));
        expect(printablePairs(await tr.getRangeAll('', KEYSPACE_END))).toEqual(["'k'='v1'"]);
        tr.set('other', 'x');
        // The write of v2 came after the read version: reading k conflicts with it.
        await expectKvError(tr.commit(), 'not_committed');
        expect(await db.get('other')).toBeUndefined();
      });

      it('reads at the latest version, the committed version of the last commit', async () => {
        const db = await open();
        const writer = db.createTransaction();
        writer.set('k', 'v');
        await writer.commit();
        const tr = db.createTransaction();
        tr.setReadVersion(writer.getCommittedVersion());
        expect(await tr.get('k')).toEqual(Buffer.from('v'));
        tr.set('k', 'w');
        await tr.commit();
        expect(await db.get('k')).toEqual(Buffer.from('w'));
      });

      it('fails reads with future_version (1009) for a version after the last commit', async () => {
        const db = await open();
        await db.set('k', 'v');
        const latest = await db.transact((t) => t.getReadVersion());
        const tr = db.createTransaction();
        tr.setReadVersion(latest + 1_000_000_000n);
        await expectKvError(tr.get('k'), 'future_version');
      });

      it('fails with version_invalid (2011) for a version below 1, and read_version_already_set (2010) once it has one', async () => {
        const db = await open();
        const tr = db.createTransaction();
        await expectKvError(() => tr.setReadVersion(0n), 'version_invalid');
        const version = await tr.getReadVersion();
        await expectKvError(() => tr.setReadVersion(version), 'read_version_already_set');
        const reader = db.createTransaction();
        await reader.get('k');
        await expectKvError(() => reader.setReadVersion(version), 'read_version_already_set');
        const twice = db.createTransaction();
        twice.setReadVersion(version);
        await expectKvError(() => twice.setReadVersion(version), 'read_version_already_set');
        twice.reset();
        twice.setReadVersion(version);
        expect(await twice.getReadVersion()).toBe(version);
      });

      const withClock = factory.openWithClock ? it : it.skip;
      withClock(
        `fails reads with transaction_too_old (1007) for a version superseded over 5 s ago${factory.openWithClock ? '' : ' (skipped: the engine has no controllable clock)'}`,
        async () => {
          const clock = { now: 1_000_000 };
          const db = track(await factory.openWithClock!(() => clock.now));
          await db.set('k', 'v1');
          const first = db.createTransaction();
          await first.get('k');
          const version = await first.getReadVersion();
          await db.set('k', 'v2');
          clock.now += Limits.maxTransactionAgeMs + 1000;
          const tr = db.createTransaction();
          tr.setReadVersion(version);
          await expectKvError(tr.get('k'), 'transaction_too_old');
        },
      );
    });

    describe('key selectors', () => {
      const committedKeys = ['a', 'c', 'e', 'g'];
      async function withKeys(): Promise<Database> {
        const db = await open();
        await db.transact((tr) => committedKeys.forEach((k) => tr.set(k, k)));
        return db;
      }
      const name = (sel: KeySelector) => `(${printable(Buffer.from(sel.key))}, orEqual ${sel.orEqual}, offset ${sel.offset})`;
      async function resolveAll(db: Database, cases: Array<[KeySelector, string]>) {
        const tr = db.createTransaction();
        const actual: string[] = [];
        for (const [sel] of cases) actual.push(`${name(sel)} -> ${printable(await tr.getKey(sel))}`);
        // Expected keys are written as latin1 strings, so that '\xff' is the byte 0xff.
        return { actual, expected: cases.map(([sel, key]) => `${name(sel)} -> ${printable(Buffer.from(key, 'latin1'))}`) };
      }

      it('getKey resolves firstGreaterOrEqual, firstGreaterThan, lastLessOrEqual and lastLessThan', async () => {
        const { actual, expected } = await resolveAll(await withKeys(), [
          [firstGreaterOrEqual('c'), 'c'],
          [firstGreaterOrEqual('d'), 'e'],
          [firstGreaterThan('c'), 'e'],
          [firstGreaterThan('d'), 'e'],
          [lastLessOrEqual('c'), 'c'],
          [lastLessOrEqual('d'), 'c'],
          [lastLessThan('c'), 'a'],
          [lastLessThan('d'), 'c'],
        ]);
        expect(actual).toEqual(expected);
      });

      it('getKey moves by positive and negative offsets', async () => {
        const { actual, expected } = await resolveAll(await withKeys(), [
          [firstGreaterOrEqual('a', 2), 'e'],
          [firstGreaterOrEqual('a', 3), 'g'],
          [firstGreaterThan('a', 1), 'e'],
          [firstGreaterOrEqual('e', -1), 'c'],
          [lastLessOrEqual('g', -1), 'e'],
          [lastLessThan('g', -2), 'a'],
          [lastLessThan('b', 1), 'c'],
        ]);
        expect(actual).toEqual(expected);
      });

      it("getKey clamps to '' before the first key and to '\\xff' after the last", async () => {
        const { actual, expected } = await resolveAll(await withKeys(), [
          [lastLessThan('a'), ''],
          [lastLessOrEqual('0'), ''],
          [lastLessOrEqual('g', -4), ''],
          [firstGreaterThan('g'), '\xff'],
          [firstGreaterOrEqual('a', 4), '\xff'],
          [lastLessOrEqual('a', 10), '\xff'],
        ]);
        expect(actual).toEqual(expected);
      });

      it('getKey sees the transaction’s own writes', async () => {
        const db = await withKeys();
        const tr = db.createTransaction();
        tr.set('d', 'pending');
        tr.clear('e');
        expect(printable(await tr.getKey(firstGreaterThan('c')))).toBe("'d'");
        expect(printable(await tr.getKey(firstGreaterThan('d')))).toBe("'g'");
        expect(printable(await tr.getKey(lastLessThan('g')))).toBe("'d'");
      });

      it('selectors resolve the same way as range ends, the end excluded', async () => {
        const db = await withKeys();
        const tr = db.createTransaction();
        const read = async (begin: Bytes | KeySelector, end: Bytes | KeySelector, options = {}) => keysOf(await tr.getRangeAll(begin, end, options));
        expect(await read(firstGreaterThan('a'), lastLessOrEqual('g'))).toEqual(['c', 'e']);
        expect(await read(firstGreaterOrEqual('b'), firstGreaterOrEqual('e', 1))).toEqual(['c', 'e']);
        expect(await read(lastLessThan('c'), firstGreaterThan('e'))).toEqual(['a', 'c', 'e']);
        expect(await read(lastLessThan('c'), firstGreaterThan('e'), { reverse: true, limit: 2 })).toEqual(['e', 'c']);
        expect(await read(lastLessThan('a'), firstGreaterOrEqual('a', 10))).toEqual(['a', 'c', 'e', 'g']);
        expect(await read(firstGreaterOrEqual('a', 10), KEYSPACE_END)).toEqual([]);
        expect(await read('', firstGreaterOrEqual('a', -5))).toEqual([]);
        expect(await read(firstGreaterThan('e'), firstGreaterOrEqual('c'))).toEqual([]);
      });
    });

    describe('versionstamps', () => {
      it('setVersionstampedKey writes the versionstamp at the 4-byte little-endian offset and drops the offset', async () => {
        const db = await open();
        const tr = db.createTransaction();
        const prefix = Buffer.from('log/');
        tr.setVersionstampedKey(withVersionstampOffset(Buffer.concat([prefix, PLACEHOLDER, Buffer.from('/x')]), prefix.length), 'entry');
        const versionstamp = tr.getVersionstamp();
        await tr.commit();
        const stamp = await versionstamp;
        expect(stamp).toHaveLength(10);
        expect(printablePairs(await db.getRangeAll('log/', 'log0'))).toEqual(
          printablePairs([{ key: Buffer.concat([prefix, stamp, Buffer.from('/x')]), value: Buffer.from('entry') }]),
        );
      });

      it('setVersionstampedValue does the same in the value', async () => {
        const db = await open();
        const tr = db.createTransaction();
        tr.setVersionstampedValue('k', withVersionstampOffset(Buffer.concat([Buffer.from('pre'), PLACEHOLDER, Buffer.from('post')]), 3));
        const versionstamp = tr.getVersionstamp();
        await tr.commit();
        expect(printable(await db.get('k'))).toBe(printable(Buffer.concat([Buffer.from('pre'), await versionstamp, Buffer.from('post')])));
      });

      it('is the 8-byte big-endian commit version followed by 2 bytes of batch order, for any writing transaction', async () => {
        const db = await open();
        const tr = db.createTransaction();
        tr.set('k', 'v');
        const versionstamp = tr.getVersionstamp();
        await tr.commit();
        const stamp = await versionstamp;
        expect(stamp).toHaveLength(10);
        expect(stamp.readBigUInt64BE(0)).toBe(tr.getCommittedVersion());
      });

      it('increases from each transaction to the next', async () => {
        const db = await open();
        const stamps: Buffer[] = [];
        for (let i = 0; i < 5; i++) {
          const tr = db.createTransaction();
          tr.set('k', String(i));
          const versionstamp = tr.getVersionstamp();
          await tr.commit();
          stamps.push(await versionstamp);
        }
        for (let i = 1; i < stamps.length; i++) expect(Buffer.compare(stamps[i - 1], stamps[i])).toBeLessThan(0);
      });

      it('is unique across concurrent transactions and ordered as their commit versions', async () => {
        const db = await open();
        const writers = 20;
        const results = await Promise.all(
          Array.from({ length: writers }, async (_, i) => {
            const tr = db.createTransaction();
            await tr.getReadVersion();
            tr.setVersionstampedKey(withVersionstampOffset(Buffer.concat([Buffer.from('log/'), PLACEHOLDER]), 4), String(i));
            const versionstamp = tr.getVersionstamp();
            await tr.commit();
            return { i, stamp: await versionstamp, version: tr.getCommittedVersion() };
          }),
        );
        expect(new Set(results.map((r) => r.stamp.toString('hex'))).size).toBe(writers);
        for (const r of results) expect(r.stamp.readBigUInt64BE(0)).toBe(r.version);
        const byStamp = [...results].sort((x, y) => Buffer.compare(x.stamp, y.stamp));
        for (let j = 1; j < byStamp.length; j++) expect(byStamp[j - 1].version <= byStamp[j].version).toBe(true);
        // The log, read in key order, is the writers in versionstamp order.
        const log = await db.getRangeAll('log/', 'log0');
        expect(log.map((kv) => kv.value.toString())).toEqual(byStamp.map((r) => String(r.i)));
      });

      it('rejects with no_commit_version (2021) for a transaction that committed without writes', async () => {
        const db = await open();
        const tr = db.createTransaction();
        await tr.get('k');
        const versionstamp = tr.getVersionstamp();
        const rejected = expectKvError(versionstamp, 'no_commit_version');
        await tr.commit();
        await rejected;
      });
    });

    describe("the metadata version (FDB's \\xff/metadataVersion)", () => {
      /** Bumps the metadata version in a transaction of its own; returns that commit's versionstamp. */
      const bump = async (db: Database): Promise<Buffer> => {
        const tr = db.createTransaction();
        tr.bumpMetadataVersion();
        const stamp = tr.getVersionstamp();
        await tr.commit();
        return stamp;
      };

      it('is the versionstamp of the last commit that bumped it, through the transaction and its snapshot()', async () => {
        const db = await open();
        const first = await bump(db);
        const tr = db.createTransaction();
        expect(printable(await tr.getMetadataVersion())).toBe(printable(first));
        expect(printable(await tr.snapshot().getMetadataVersion())).toBe(printable(first));
        const second = await bump(db);
        expect(Buffer.compare(first, second)).toBeLessThan(0);
        expect(printable(await db.transact((t) => t.getMetadataVersion()))).toBe(printable(second));
      });

      it('is read at the read version: a transaction that read before a bump keeps the value it read', async () => {
        const db = await open();
        const before = await bump(db);
        const tr = db.createTransaction();
        await tr.getReadVersion();
        await bump(db);
        expect(printable(await tr.snapshot().getMetadataVersion())).toBe(printable(before));
      });

      it('is not a user key: writes of user keys leave it, range reads and clears of the keyspace do not reach it', async () => {
        const db = await open();
        const stamp = await bump(db);
        await db.transact((tr) => {
          tr.set('k', 'v');
          tr.clearRange('', KEYSPACE_END);
        });
        expect(await db.getRangeAll('', KEYSPACE_END)).toEqual([]);
        expect(printable(await db.transact((tr) => tr.getMetadataVersion()))).toBe(printable(stamp));
      });

      it('conflicts a transaction that read it (not at snapshot) with a bump committed after its read version', async () => {
        const db = await open();
        await bump(db);
        const reader = db.createTransaction();
        await reader.getMetadataVersion();
        const snapshotReader = db.createTransaction();
        await snapshotReader.snapshot().getMetadataVersion();
        await bump(db);
        reader.set('written', 'by the reader');
        snapshotReader.set('written', 'by the snapshot reader');
        expect(await commitOutcome(reader)).toBe('not_committed');
        expect(await commitOutcome(snapshotReader)).toBe('committed');
      });

      it('is bumped blind: concurrent bumps both commit, and a read of a user key does not conflict with one', async () => {
        const db = await open();
        const a = db.createTransaction();
        const b = db.createTransaction();
        await a.get('k');
        await b.get('k');
        a.bumpMetadataVersion();
        b.bumpMetadataVersion();
        a.set('a', '1');
        expect(await commitOutcome(a)).toBe('committed');
        expect(await commitOutcome(b)).toBe('committed');
      });

      it('is unreadable (accessed_unreadable, 1036) in the transaction that bumped it, at snapshot too', async () => {
        const db = await open();
        const tr = db.createTransaction();
        await tr.getMetadataVersion();
        tr.bumpMetadataVersion();
        await expectKvError(tr.getMetadataVersion(), 'accessed_unreadable');
        await expectKvError(tr.snapshot().getMetadataVersion(), 'accessed_unreadable');
        await tr.commit();
      });

      it('is not changed by a transaction that does not bump it, nor by a bump that fails to commit', async () => {
        const db = await open();
        const stamp = await bump(db);
        await db.set('k', 'v');
        const loser = db.createTransaction();
        await loser.get('k');
        await db.set('k', 'w');
        loser.set('k', 'x');
        loser.bumpMetadataVersion();
        expect(await commitOutcome(loser)).toBe('not_committed');
        expect(printable(await db.transact((tr) => tr.getMetadataVersion()))).toBe(printable(stamp));
      });
    });

    describe('watches', () => {
      const FIRE_WITHIN_MS = 2000;
      const QUIET_MS = 50;

      async function watching(db: Database, key: string) {
        const tr = db.createTransaction();
        const watch = tr.watch(key);
        await tr.commit();
        return watch;
      }

      it('fires once another transaction changes the value, and not before', async () => {
        const db = await open();
        await db.set('w', 'one');
        const watch = await watching(db, 'w');
        expect((await settledWithin(watch.promise, QUIET_MS)).state).toBe('pending');
        await db.set('w', 'two');
        expect(await settledWithin(watch.promise, FIRE_WITHIN_MS)).toEqual({ state: 'fulfilled', value: true });
      });

      it('fires when the key is cleared', async () => {
        const db = await open();
        await db.set('w', 'one');
        const watch = await watching(db, 'w');
        await db.clear('w');
        expect(await settledWithin(watch.promise, FIRE_WITHIN_MS)).toEqual({ state: 'fulfilled', value: true });
      });

      it('fires when a missing key is created', async () => {
        const db = await open();
        const watch = await watching(db, 'w');
        await db.set('w', 'created');
        expect(await settledWithin(watch.promise, FIRE_WITHIN_MS)).toEqual({ state: 'fulfilled', value: true });
      });

      it('does not fire for writes to other keys', async () => {
        const db = await open();
        await db.set('w', 'one');
        const watch = await watching(db, 'w');
        await db.transact((tr) => {
          tr.set('w0', 'neighbour');
          tr.set('v', 'neighbour');
        });
        expect((await settledWithin(watch.promise, QUIET_MS)).state).toBe('pending');
        watch.cancel();
      });

      it('compares with the watching transaction’s own write: its own commit does not fire it, a later change does', async () => {
        const db = await open();
        await db.set('w', 'old');
        const tr = db.createTransaction();
        tr.set('w', 'mine');
        const watch = tr.watch('w');
        await tr.commit();
        expect((await settledWithin(watch.promise, QUIET_MS)).state).toBe('pending');
        await db.set('w', 'theirs');
        expect(await settledWithin(watch.promise, FIRE_WITHIN_MS)).toEqual({ state: 'fulfilled', value: true });
      });

      it('resolves false when cancelled, and cancelling again changes nothing', async () => {
        const db = await open();
        const watch = await watching(db, 'w');
        watch.cancel();
        watch.cancel();
        expect(await settledWithin(watch.promise, FIRE_WITHIN_MS)).toEqual({ state: 'fulfilled', value: false });
      });

      it(`allows ${Limits.maxWatches} outstanding watches and fails one more with too_many_watches (1032)`, async () => {
        const db = await open();
        const tr = db.createTransaction();
        const watches = Array.from({ length: Limits.maxWatches }, (_, i) => tr.watch(`w/${i}`));
        await tr.commit();
        const extra = db.createTransaction();
        await expectKvError(async () => {
          const watch = extra.watch('w/extra');
          await extra.commit();
          const outcome = await settledWithin(watch.promise, FIRE_WITHIN_MS);
          if (outcome.state === 'rejected') throw outcome.error;
          throw new Error(`the watch over the limit is ${outcome.state}`);
        }, 'too_many_watches');
        for (const watch of watches) watch.cancel();
        const afterCancel = await watching(db, 'w/again');
        await db.set('w/again', 'changed');
        expect(await settledWithin(afterCancel.promise, FIRE_WITHIN_MS)).toEqual({ state: 'fulfilled', value: true });
      });

      it('rejects with the error of a watching transaction that fails to commit', async () => {
        const db = await open();
        const tr = db.createTransaction();
        await tr.get('k');
        const watch = tr.watch('w');
        const settled = settledWithin(watch.promise, FIRE_WITHIN_MS);
        tr.set('k', 'mine');
        await db.set('k', 'theirs');
        await expectKvError(tr.commit(), 'not_committed');
        const outcome = await settled;
        expect(outcome.state).toBe('rejected');
        expect(outcome.state === 'rejected' && isKvError(outcome.error, 'not_committed')).toBe(true);
      });
    });

    describe('limits and errors', () => {
      /** Runs `mutate` with a marker write in one transaction, expecting `code`; then nothing may have landed. */
      async function expectRejectedWhole(db: Database, code: Parameters<typeof expectKvError>[1], mutate: (tr: Transaction) => void) {
        const tr = db.createTransaction();
        tr.set('marker', 'should not land');
        await expectKvError(async () => {
          mutate(tr);
          await tr.commit();
        }, code);
        expect(await db.get('marker')).toBeUndefined();
      }

      it(`accepts a key of exactly ${maxKeyBytes} bytes and rejects one byte more with key_too_large (2102)`, async () => {
        const db = await open();
        const largest = Buffer.alloc(maxKeyBytes, 'k');
        await db.set(largest, 'v');
        expect(await db.get(largest)).toEqual(Buffer.from('v'));
        const tooLarge = Buffer.alloc(maxKeyBytes + 1, 'k');
        await expectRejectedWhole(db, 'key_too_large', (tr) => tr.set(tooLarge, 'v'));
        await expectRejectedWhole(db, 'key_too_large', (tr) => tr.add(tooLarge, 1));
      });

      it('accepts a value of exactly 100,000 bytes and rejects one byte more with value_too_large (2103)', async () => {
        const db = await open();
        const largest = Buffer.alloc(Limits.maxValueBytes, 'v');
        await db.set('k', largest);
        expect((await db.get('k'))?.equals(largest)).toBe(true);
        await expectRejectedWhole(db, 'value_too_large', (tr) => tr.set('k2', Buffer.alloc(Limits.maxValueBytes + 1, 'v')));
        await expectRejectedWhole(db, 'value_too_large', (tr) => tr.appendIfFits('k3', Buffer.alloc(Limits.maxValueBytes + 1, 'v')));
      });

      it('commits 9,000,000 bytes in one transaction and rejects more than 10,000,000 with transaction_too_large (2101)', async () => {
        const db = await open();
        const value = Buffer.alloc(Limits.maxValueBytes, 'v');
        const keys = (n: number) => Array.from({ length: n }, (_, i) => `big/${String(i).padStart(3, '0')}`);
        await db.transact((tr) => keys(90).forEach((k) => tr.set(k, value)));
        expect(await db.getRangeAll('big/', 'big0', { limit: 1, reverse: true })).toHaveLength(1);
        await db.clearRange('big/', 'big0');
        await expectRejectedWhole(db, 'transaction_too_large', (tr) => keys(101).forEach((k) => tr.set(k, value)));
        expect(await db.getRangeAll('big/', 'big0')).toEqual([]);
      });

      it('counts conflict ranges toward the 10,000,000 bytes, not only mutations', async () => {
        const db = await open();
        const bound = (i: number, fill: string) => Buffer.concat([Buffer.from(`r/${String(i).padStart(4, '0')}/`), Buffer.alloc(9000, fill)]);
        // 600 disjoint read conflict ranges of two 9,008-byte keys each: about 10.8 MB.
        await expectRejectedWhole(db, 'transaction_too_large', (tr) => {
          for (let i = 0; i < 600; i++) tr.addReadConflictRange(bound(i, 'a'), bound(i, 'b'));
        });
      });

      it("rejects keys in the system keyspace ('\\xff'...) with key_outside_legal_range (2004)", async () => {
        const db = await open();
        const system = Buffer.concat([KEYSPACE_END, Buffer.from('/system')]);
        await expectRejectedWhole(db, 'key_outside_legal_range', (tr) => tr.set(system, 'v'));
        await expectRejectedWhole(db, 'key_outside_legal_range', (tr) => tr.clear(system));
        await expectRejectedWhole(db, 'key_outside_legal_range', (tr) => tr.add(system, 1));
        await expectKvError(db.createTransaction().get(system), 'key_outside_legal_range');
        await expectKvError(db.createTransaction().getRangeAll('a', Buffer.from([0xff, 0x00])), 'key_outside_legal_range');
        await expectKvError(
          db
            .createTransaction()
            .snapshot()
            .getRangeAll('a', Buffer.from([0xff, 0x00])),
          'key_outside_legal_range',
        );
        await expectKvError(
          db
            .createTransaction()
            .snapshot()
            .getRangeAll(system, Buffer.from([0xff, 0xff])),
          'key_outside_legal_range',
        );
      });

      it('reads a range between the bounds as they were when called, through the transaction and its snapshot()', async () => {
        const db = await open();
        await db.set('b', '1');
        await db.set('c', '2');
        const tr = db.createTransaction();
        for (const view of [tr, tr.snapshot()]) {
          const begin = Buffer.from('a');
          const end = Buffer.from('c');
          const read = view.getRangeAll(begin, end);
          begin.write('c');
          end.write('z');
          expect(keysOf(await read)).toEqual(['b']);
        }
      });

      it("allows '\\xff' itself as the end of a range read and a range clear", async () => {
        const db = await open();
        await db.set('z', 'v');
        expect(keysOf(await db.getRangeAll('', KEYSPACE_END))).toEqual(['z']);
        await db.clearRange('', KEYSPACE_END);
        expect(await db.getRangeAll('', KEYSPACE_END)).toEqual([]);
      });

      it('rejects a range clear or conflict range whose begin is after its end with inverted_range (2005)', async () => {
        const db = await open();
        await db.set('c', 'kept');
        await expectRejectedWhole(db, 'inverted_range', (tr) => tr.clearRange('d', 'a'));
        await expectRejectedWhole(db, 'inverted_range', (tr) => tr.addReadConflictRange('d', 'a'));
        await expectRejectedWhole(db, 'inverted_range', (tr) => tr.addWriteConflictRange('d', 'a'));
        expect(await db.get('c')).toEqual(Buffer.from('kept'));
      });

      it('returns no pairs, and no error, for a range read whose begin is after its end, as FDB does', async () => {
        const db = await open();
        await db.set('c', 'v');
        expect(await db.getRangeAll('d', 'a')).toEqual([]);
      });

      it('getApproximateSize grows with the writes made', async () => {
        const db = await open();
        const tr = db.createTransaction();
        const before = await tr.getApproximateSize();
        tr.set('k', Buffer.alloc(1000));
        expect(await tr.getApproximateSize()).toBeGreaterThanOrEqual(before + 1000);
      });

      // Without a clock to turn (a real cluster), these would take over 5 real seconds each: skipped.
      const withClock = factory.openWithClock ? describe : describe.skip;
      withClock(
        `transaction_too_old (1007), on a controlled clock${factory.openWithClock ? '' : ' (skipped: the engine has no controllable clock)'}`,
        () => {
          async function openAt(start: number) {
            const clock = { now: start };
            const db = track(await factory.openWithClock!(() => clock.now));
            return { db, clock };
          }

          it('rejects the commit of a transaction whose read version is more than 5 seconds old; nothing lands', async () => {
            const { db, clock } = await openAt(1_000_000);
            await db.set('k', 'v');
            const tr = db.createTransaction();
            await tr.get('k');
            tr.set('marker', 'should not land');
            clock.now += Limits.maxTransactionAgeMs + 1000;
            await expectKvError(tr.commit(), 'transaction_too_old');
            expect(await db.get('marker')).toBeUndefined();
          });

          it('commits a transaction whose read version is younger than 5 seconds', async () => {
            const { db, clock } = await openAt(1_000_000);
            const tr = db.createTransaction();
            await tr.get('k');
            tr.set('k', 'v');
            clock.now += Limits.maxTransactionAgeMs - 1000;
            expect(await commitOutcome(tr)).toBe('committed');
          });

          it('counts the age from the read version, taken at the first read, not from creating the transaction', async () => {
            const { db, clock } = await openAt(1_000_000);
            const tr = db.createTransaction();
            clock.now += 2 * Limits.maxTransactionAgeMs;
            await tr.get('k');
            tr.set('k', 'v');
            expect(await commitOutcome(tr)).toBe('committed');
          });

          it('is retried by transact with a fresh read version', async () => {
            const { db, clock } = await openAt(1_000_000);
            let attempts = 0;
            await db.transact(async (tr) => {
              attempts++;
              await tr.get('k');
              if (attempts === 1) clock.now += Limits.maxTransactionAgeMs + 1000;
              tr.set('k', String(attempts));
            });
            expect(attempts).toBe(2);
            expect(await db.get('k')).toEqual(Buffer.from('2'));
          });
        },
      );
    });

    describe('transaction lifecycle', () => {
      it('cancel makes later operations fail with transaction_cancelled (1025), and nothing lands', async () => {
        const db = await open();
        const tr = db.createTransaction();
        tr.set('k', 'v');
        tr.cancel();
        await expectKvError(() => tr.get('k'), 'transaction_cancelled');
        await expectKvError(() => tr.commit(), 'transaction_cancelled');
        expect(await db.get('k')).toBeUndefined();
      });

      it('reset discards the writes made so far', async () => {
        const db = await open();
        const tr = db.createTransaction();
        tr.set('dropped', 'v');
        tr.reset();
        tr.set('kept', 'v');
        await tr.commit();
        expect(keysOf(await db.getRangeAll('', KEYSPACE_END))).toEqual(['kept']);
      });

      it('reset also discards the read version and read conflicts', async () => {
        const db = await open();
        const tr = db.createTransaction();
        await tr.get('k');
        await db.set('k', 'theirs');
        tr.reset();
        expect(await tr.get('k')).toEqual(Buffer.from('theirs'));
        tr.set('k', 'mine');
        expect(await commitOutcome(tr)).toBe('committed');
      });
    });

    describe('the retry loop over this engine', () => {
      /** A transaction body that always loses: another transaction changes what it read before it commits. */
      function alwaysConflicting(db: Database, attempts: { n: number }) {
        return async (tr: Transaction) => {
          attempts.n++;
          await tr.get('contended');
          await db.set('contended', `theirs ${attempts.n}`);
          tr.set('contended', 'mine');
        };
      }

      it('gives up after maxRetries retries with the last error, not_committed', async () => {
        const db = await open();
        const attempts = { n: 0 };
        await expectKvError(db.transact(alwaysConflicting(db, attempts), { maxRetries: 2 }), 'not_committed');
        expect(attempts.n).toBe(3);
        expect(await db.get('contended')).toEqual(Buffer.from('theirs 3'));
      });

      it('gives up once timeoutMs has passed, with the last error', async () => {
        const db = await open();
        const attempts = { n: 0 };
        // Long enough for several attempts even on a loaded machine (one attempt took over 60 ms there).
        const timeoutMs = 400;
        const started = Date.now();
        await expectKvError(db.transact(alwaysConflicting(db, attempts), { timeoutMs }), 'not_committed');
        expect(Date.now() - started).toBeGreaterThanOrEqual(timeoutMs);
        expect(attempts.n).toBeGreaterThan(1);
      });

      it('does not retry an error that is not a KvError, and nothing lands', async () => {
        const db = await open();
        let attempts = 0;
        const bug = new TypeError('bug');
        await expect(
          db.transact((tr) => {
            attempts++;
            tr.set('k', 'v');
            throw bug;
          }),
        ).rejects.toBe(bug);
        expect(attempts).toBe(1);
        expect(await db.get('k')).toBeUndefined();
      });

      it('does not retry a non-retryable KvError', async () => {
        const db = await open();
        let attempts = 0;
        await expectKvError(
          db.transact((tr) => {
            attempts++;
            tr.set('k', Buffer.alloc(Limits.maxValueBytes + 1));
          }),
          'value_too_large',
        );
        expect(attempts).toBe(1);
      });

      it('joins a caller’s transaction with {tr}: no commit of its own, so its writes land with the caller’s', async () => {
        const db = await open();
        await db.transact(async (outer) => {
          const inner = await db.transact(
            (tr) => {
              tr.set('inner', 'v');
              return 'inner result';
            },
            { tr: outer },
          );
          expect(inner).toBe('inner result');
          expect(await outer.get('inner')).toEqual(Buffer.from('v'));
          expect(await db.get('inner')).toBeUndefined();
        });
        expect(await db.get('inner')).toEqual(Buffer.from('v'));
      });

      it('with {tr}, lets the caller’s failure discard the joined writes and passes errors through unretried', async () => {
        const db = await open();
        let innerAttempts = 0;
        const conflict = kvError('not_committed');
        await expect(
          db.transact(async (outer) => {
            await expect(
              db.transact(
                (tr) => {
                  innerAttempts++;
                  tr.set('inner', 'v');
                  throw conflict;
                },
                { tr: outer },
              ),
            ).rejects.toBe(conflict);
            throw new Error('caller gives up');
          }),
        ).rejects.toThrow('caller gives up');
        expect(innerAttempts).toBe(1);
        expect(await db.get('inner')).toBeUndefined();
      });

      // Engines that cannot inject faults (a real cluster) skip these: there, faults only happen by accident.
      const withFaults = factory.openWithFaults ? describe : describe.skip;
      withFaults(`under injected commit faults (seeded)${factory.openWithFaults ? '' : ' (skipped: the engine cannot inject faults)'}`, () => {
        const increments = 25;
        const rate = 0.4;

        async function openFaulty(faults: Omit<FaultInjectionOptions, 'seed'>, salt: number) {
          const seed = testSeed(salt);
          return { db: track(await factory.openWithFaults!({ seed, ...faults })), seed };
        }

        async function incrementSequentially(db: Database, body: (tr: Transaction, i: number) => Promise<void>) {
          let attempts = 0;
          for (let i = 0; i < increments; i++) {
            await db.transact(async (tr) => {
              attempts++;
              await body(tr, i);
            });
          }
          return attempts;
        }

        const readModifyWrite = async (tr: Transaction) => {
          tr.set('n', int64LE(readInt64LE(await tr.get('n')) + 1n));
        };

        it('ends exactly right with not_committed faults, which never apply', async () => {
          const { db, seed } = await openFaulty({ notCommitted: rate }, 2);
          const attempts = await incrementSequentially(db, readModifyWrite);
          expect({ seed, faultsHappened: attempts > increments }).toEqual({ seed, faultsHappened: true });
          expect({ seed, n: await counter(db, 'n') }).toEqual({ seed, n: BigInt(increments) });
        });

        it('ends exactly right with transaction_too_old faults, which never apply', async () => {
          const { db, seed } = await openFaulty({ tooOld: rate }, 3);
          const attempts = await incrementSequentially(db, readModifyWrite);
          expect({ seed, faultsHappened: attempts > increments }).toEqual({ seed, faultsHappened: true });
          expect({ seed, n: await counter(db, 'n') }).toEqual({ seed, n: BigInt(increments) });
        });

        it('counts every attempt when commits land and report commit_unknown_result: the retry runs the increment again', async () => {
          const { db, seed } = await openFaulty({ unknownResult: rate }, 4);
          const attempts = await incrementSequentially(db, readModifyWrite);
          expect({ seed, faultsHappened: attempts > increments }).toEqual({ seed, faultsHappened: true });
          // Every attempt's commit was applied, the ones that reported 1021 included.
          expect({ seed, n: await counter(db, 'n') }).toEqual({ seed, n: BigInt(attempts) });
        });

        it('ends exactly right with commit_unknown_result faults when each increment is idempotent (marked done by a unique key)', async () => {
          const { db, seed } = await openFaulty({ unknownResult: rate }, 5);
          let foundDone = 0;
          const attempts = await incrementSequentially(db, async (tr, i) => {
            const done = `done/${String(i).padStart(3, '0')}`;
            if (await tr.get(done)) {
              foundDone++;
              return;
            }
            tr.set(done, '');
            tr.add('n', 1);
          });
          // Each retry follows an attempt that landed, and finds its marker.
          expect({ seed, foundDone }).toEqual({ seed, foundDone: attempts - increments });
          expect({ seed, faultsHappened: foundDone > 0 }).toEqual({ seed, faultsHappened: true });
          expect({ seed, n: await counter(db, 'n') }).toEqual({ seed, n: BigInt(increments) });
        });

        it('ends exactly right with all three kinds of fault mixed, for idempotent increments', async () => {
          const { db, seed } = await openFaulty({ notCommitted: 0.15, unknownResult: 0.15, tooOld: 0.15 }, 6);
          await incrementSequentially(db, async (tr, i) => {
            const done = `done/${String(i).padStart(3, '0')}`;
            if (await tr.get(done)) return;
            tr.set(done, '');
            tr.add('n', 1);
          });
          expect({ seed, n: await counter(db, 'n') }).toEqual({ seed, n: BigInt(increments) });
        });
      });
    });
  });
}

/**
 * Runs rounds of: random committed data, then a transaction of random pending operations, checking
 * after each operation that `get`, `getKey` and range reads (both directions, with limits, through the
 * transaction and its snapshot view) agree with a {@link KeyspaceModel}; then that the commit leaves
 * exactly the model's data. Failures name the seed, the round and the operations so far.
 */
async function checkReadYourWritesAgainstModel(db: Database, rnd: Random, replay: string): Promise<void> {
  const rounds = 24;
  const fuzz = new KeyspaceFuzz(rnd, { minOffset: -2, selectorChance: 0.5, preferExisting: false });

  for (let round = 0; round < rounds; round++) {
    const log: string[] = [];
    const fail = (what: string, expected: unknown, actual: unknown): never => {
      throw new Error(
        `read-your-writes differs from the model, ${replay}, round ${round}: ${what}\n` +
          `  expected ${JSON.stringify(expected)}\n  actual   ${JSON.stringify(actual)}\n  operations: ${log.join('; ')}`,
      );
    };

    const committed = new KeyspaceModel();
    await db.transact((tr) => {
      tr.clearRange('', KEYSPACE_END);
      for (let i = rnd.int(15); i > 0; i--) {
        const key = fuzz.key();
        const value = fuzz.value();
        tr.set(key, value);
        committed.set(key, value);
      }
    });
    log.push(
      `committed ${committed
        .keys()
        .map((k) => `${printable(k)}=${printable(committed.get(k))}`)
        .join(' ')}`,
    );

    const tr = db.createTransaction();
    const model = committed.clone();

    const same = (what: string, expected: unknown, actual: unknown) => {
      if (JSON.stringify(expected) !== JSON.stringify(actual)) fail(what, expected, actual);
    };
    const checkReads = async (reads: number) => {
      for (let i = 0; i < reads; i++) {
        const view = rnd.chance(0.3) ? tr.snapshot() : tr;
        await fuzz.read(view, view === tr ? 'tr' : 'snapshot', model, same);
      }
    };

    for (let step = rnd.between(1, 14); step > 0; step--) {
      log.push(fuzz.write(tr, model));
      await checkReads(6);
    }

    const everything = printablePairs(model.range(firstGreaterOrEqual(''), firstGreaterOrEqual(KEYSPACE_END)));
    const seenByTr = printablePairs(await tr.getRangeAll('', KEYSPACE_END));
    if (JSON.stringify(seenByTr) !== JSON.stringify(everything)) fail(`tr.getRange('', '\\xff') before commit`, everything, seenByTr);
    await tr.commit();
    const afterCommit = printablePairs(await db.getRangeAll('', KEYSPACE_END));
    if (JSON.stringify(afterCommit) !== JSON.stringify(everything)) fail('the committed data', everything, afterCommit);
  }
}
