import { Database } from '../../src/kv/contract/database';
import { kvError } from '../../src/kv/contract/errors';
import { ScriptedEngine } from '../support/scripted-engine';

/**
 * The retry loop on its own, over a scripted engine whose commits fail on cue; `engine.log` is the
 * sequence of calls the loop made. How real engines and the loop work together (conflicts, injected
 * faults, backoff) is covered by the conformance suite.
 */
describe('Database.transact', () => {
  function setup(script: ConstructorParameters<typeof ScriptedEngine>[0] = []) {
    const engine = new ScriptedEngine(script);
    return { engine, db: new Database(engine) };
  }

  it('runs fn once and commits once when nothing fails, returning what fn returned', async () => {
    const { engine, db } = setup();
    const result = await db.transact(async (tr) => {
      engine.log.push('fn');
      tr.set('k', 'v');
      return 42;
    });
    expect(result).toBe(42);
    expect(engine.log).toEqual(['fn', 'commit -> ok']);
    expect(await db.get('k')).toEqual(Buffer.from('v'));
  });

  it('accepts a synchronous fn', async () => {
    const { engine, db } = setup();
    expect(await db.transact((tr) => (tr.set('k', 'v'), 'done'))).toBe('done');
    expect(engine.log).toEqual(['commit -> ok']);
  });

  it('runs the whole of fn again after a retryable commit error, on the same transaction reset by onError', async () => {
    const { engine, db } = setup([kvError('not_committed'), kvError('not_committed')]);
    let attempts = 0;
    const result = await db.transact(async (tr) => {
      attempts++;
      engine.log.push(`fn #${attempts}`);
      tr.set('k', String(attempts));
      return attempts;
    });
    expect(result).toBe(3);
    expect(engine.log).toEqual([
      'fn #1',
      'commit -> not_committed',
      'onError(not_committed) -> retry',
      'reset',
      'fn #2',
      'commit -> not_committed',
      'onError(not_committed) -> retry',
      'reset',
      'fn #3',
      'commit -> ok',
    ]);
    expect(engine.transactions).toHaveLength(1);
    expect(await db.get('k')).toEqual(Buffer.from('3'));
  });

  it('retries commit_unknown_result as well, so fn must be safe to run again after an attempt that may have landed', async () => {
    const { engine, db } = setup([kvError('commit_unknown_result')]);
    await db.transact(() => {
      engine.log.push('fn');
    });
    expect(engine.log).toEqual(['fn', 'commit -> commit_unknown_result', 'onError(commit_unknown_result) -> retry', 'reset', 'fn', 'commit -> ok']);
  });

  it('retries a retryable error thrown by fn itself, before any commit', async () => {
    const { engine, db } = setup();
    let attempts = 0;
    await db.transact(() => {
      attempts++;
      engine.log.push(`fn #${attempts}`);
      if (attempts === 1) throw kvError('transaction_too_old');
    });
    expect(engine.log).toEqual(['fn #1', 'onError(transaction_too_old) -> retry', 'reset', 'fn #2', 'commit -> ok']);
  });

  it('throws a non-retryable KvError after one attempt and cancels the transaction', async () => {
    const tooLarge = kvError('value_too_large');
    const { engine, db } = setup([tooLarge]);
    await expect(db.transact(() => void engine.log.push('fn'))).rejects.toBe(tooLarge);
    expect(engine.log).toEqual(['fn', 'commit -> value_too_large', 'onError(value_too_large) -> rethrow', 'cancel']);
  });

  it('does not hand errors other than KvError to onError, and never retries them', async () => {
    const { engine, db } = setup();
    const bug = new TypeError('a bug in fn');
    await expect(
      db.transact((tr) => {
        engine.log.push('fn');
        tr.set('k', 'v');
        throw bug;
      }),
    ).rejects.toBe(bug);
    expect(engine.log).toEqual(['fn', 'cancel']);
    expect(await db.get('k')).toBeUndefined();
  });

  it('does not retry an error other than KvError thrown by commit', async () => {
    const broken = new RangeError('engine bug');
    const { engine, db } = setup([broken]);
    await expect(db.transact(() => void engine.log.push('fn'))).rejects.toBe(broken);
    expect(engine.log).toEqual(['fn', 'commit -> RangeError', 'cancel']);
  });

  describe('maxRetries', () => {
    const failures = (n: number) => Array.from({ length: n }, (_, i) => kvError('not_committed', `attempt ${i + 1}`));

    it('allows that many retries, then throws the error of the last attempt and cancels', async () => {
      const script = failures(5);
      const { engine, db } = setup(script);
      let attempts = 0;
      await expect(db.transact(() => void attempts++, { maxRetries: 2 })).rejects.toBe(script[2]);
      expect(attempts).toBe(3);
      expect(engine.log.filter((e) => e.startsWith('commit'))).toHaveLength(3);
      expect(engine.log[engine.log.length - 1]).toBe('cancel');
    });

    it('makes a single attempt when 0', async () => {
      const script = failures(1);
      const { db } = setup(script);
      let attempts = 0;
      await expect(db.transact(() => void attempts++, { maxRetries: 0 })).rejects.toBe(script[0]);
      expect(attempts).toBe(1);
    });

    it('returns normally when an attempt within the limit commits', async () => {
      const { db } = setup(failures(2));
      let attempts = 0;
      await expect(db.transact(() => ++attempts, { maxRetries: 2 })).resolves.toBe(3);
    });
  });

  describe('timeoutMs', () => {
    let clock: number;
    beforeEach(() => {
      clock = 1_000_000;
      jest.spyOn(Date, 'now').mockImplementation(() => clock);
    });
    afterEach(() => jest.restoreAllMocks());

    it('starts no new attempt once timeoutMs has passed since the first one, and throws the last error', async () => {
      const script = Array.from({ length: 10 }, (_, i) => kvError('not_committed', `attempt ${i + 1}`));
      const { engine, db } = setup(script);
      const attemptMs = 10;
      const timeoutMs = 35;
      let attempts = 0;
      const run = db.transact(
        () => {
          attempts++;
          clock += attemptMs;
        },
        { timeoutMs },
      );
      // After attempt k, k * 10 ms have passed; the loop stops after the first k with k * 10 >= 35.
      const expectedAttempts = Math.ceil(timeoutMs / attemptMs);
      await expect(run).rejects.toBe(script[expectedAttempts - 1]);
      expect(attempts).toBe(expectedAttempts);
      expect(engine.log[engine.log.length - 1]).toBe('cancel');
    });

    it('starts no new attempt when the backoff itself runs past the deadline', async () => {
      const script = [kvError('not_committed', 'first'), kvError('not_committed', 'second')];
      const { engine, db } = setup(script);
      let attempts = 0;
      const run = db.transact(
        (tr) => {
          attempts++;
          if (attempts === 1) {
            const onError = tr.onError.bind(tr);
            jest.spyOn(tr, 'onError').mockImplementation(async (err) => {
              clock += 50; // a backoff longer than the time left
              return onError(err);
            });
          }
        },
        { timeoutMs: 20 },
      );
      await expect(run).rejects.toBe(script[0]);
      expect(attempts).toBe(1);
      expect(engine.log[engine.log.length - 1]).toBe('cancel');
    });

    it('does not cut short an attempt that commits, however long it took', async () => {
      const { db } = setup();
      await expect(
        db.transact(
          () => {
            clock += 60_000;
            return 'slow but fine';
          },
          { timeoutMs: 10 },
        ),
      ).resolves.toBe('slow but fine');
    });
  });

  describe('joining a transaction with opts.tr', () => {
    it('runs fn once in the given transaction, without committing, creating a transaction or retrying', async () => {
      const { engine, db } = setup();
      const outer = db.createTransaction();
      const result = await db.transact(
        (tr) => {
          expect(tr).toBe(outer);
          tr.set('k', 'v');
          return 'inner';
        },
        { tr: outer },
      );
      expect(result).toBe('inner');
      expect(engine.log).toEqual([]);
      expect(engine.transactions).toHaveLength(1);
      expect(await db.get('k')).toBeUndefined();
      await outer.commit();
      expect(await db.get('k')).toEqual(Buffer.from('v'));
    });

    it('passes even a retryable error straight to the caller, leaving the transaction to its owner', async () => {
      const { engine, db } = setup();
      const outer = db.createTransaction();
      const conflict = kvError('not_committed');
      let attempts = 0;
      await expect(
        db.transact(
          () => {
            attempts++;
            throw conflict;
          },
          { tr: outer },
        ),
      ).rejects.toBe(conflict);
      expect(attempts).toBe(1);
      expect(engine.log).toEqual([]);
      expect(engine.transactions[0].cancelled).toBe(false);
    });
  });

  describe('one-shot conveniences', () => {
    it('run set, clear and get each in its own transaction through the retry loop', async () => {
      const { engine, db } = setup([kvError('not_committed'), kvError('not_committed'), kvError('not_committed')]);
      await db.set('k', 'v');
      expect(await db.get('k')).toEqual(Buffer.from('v'));
      await db.clear('k');
      expect(await db.get('k')).toBeUndefined();
      expect(engine.log.filter((e) => e.startsWith('onError'))).toHaveLength(3);
      expect(engine.transactions).toHaveLength(4);
    });
  });
});
