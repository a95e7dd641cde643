/**
 * The FoundationDB adapter's mapping onto node-foundationdb's API, checked against a recording fake
 * (test/kv/fdb-fake.ts). These tests say which package call each contract call becomes and how errors
 * come back; FDB's behaviour itself is checked by fdb.conformance.test.ts against a real cluster.
 */
import { Database } from '../../src/kv/contract/database';
import { ErrorCodes, KvError } from '../../src/kv/contract/errors';
import { FdbEngine, FdbMutationType, FdbUnavailableError, fromFoundationDB, openFoundationDB, type FdbKeySelector } from '../../src/kv/fdb';
import { firstGreaterThan, lastLessOrEqual, lastLessThan } from '../../src/kv/contract/key-selector';
import type { AtomicOp, Transaction } from '../../src/kv/contract/types';
import { FakeFdbDatabase, FakeFdbError, FakeFdbModule, type FakeFdbTransaction } from './fdb-fake';
import { expectKvError } from '../support/kv-assertions';

const b = (s: string): Buffer => Buffer.from(s, 'latin1');

function setup(): { db: FakeFdbDatabase; tr: Transaction; tn: FakeFdbTransaction } {
  const db = new FakeFdbDatabase();
  const tr = new FdbEngine(db).createTransaction();
  return { db, tr, tn: db.transactions[0] };
}

function selector(key: string, orEqual: boolean, offset: number): FdbKeySelector {
  return { key: b(key), orEqual, offset, _isKeySelector: true };
}

function foundationdbLoads(): boolean {
  try {
    require('foundationdb');
    return true;
  } catch {
    return false;
  }
}

function foundationdbInstalled(): boolean {
  try {
    require.resolve('foundationdb');
    return true;
  } catch {
    return false;
  }
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

describe('openFoundationDB', () => {
  const loads = foundationdbLoads();
  const unavailable = loads ? it.skip : it;
  unavailable(
    loads
      ? 'rejects with FdbUnavailableError naming libfdb_c when the foundationdb package cannot load ' +
          '(skipped: the foundationdb package and libfdb_c load on this machine)'
      : 'rejects with FdbUnavailableError naming libfdb_c when the foundationdb package cannot load',
    async () => {
      const err = await rejection(openFoundationDB());
      expect(err).toBeInstanceOf(FdbUnavailableError);
      const unavailableError = err as FdbUnavailableError;
      expect(unavailableError.code).toBe('FDB_UNAVAILABLE');
      expect(unavailableError.reason).toBe(foundationdbInstalled() ? 'native-library-not-loaded' : 'package-not-installed');
      expect(unavailableError.message).toContain('libfdb_c');
      expect(unavailableError.message).toContain('npm install foundationdb');
      expect(unavailableError.message).toContain('https://github.com/apple/foundationdb/releases');
      expect(unavailableError.cause).toHaveProperty('message');
    },
  );

  describe('with a stand-in for the foundationdb package', () => {
    afterEach(() => {
      jest.dontMock('foundationdb');
      jest.resetModules();
    });

    function mockPackage(factory: () => unknown): void {
      jest.resetModules();
      jest.doMock('foundationdb', factory, { virtual: true });
    }

    it('reports a native module that cannot load libfdb_c as native-library-not-loaded', async () => {
      mockPackage(() => {
        throw new Error('libfdb_c.so: cannot open shared object file: No such file or directory');
      });
      const err = await rejection(openFoundationDB());
      expect(err).toBeInstanceOf(FdbUnavailableError);
      expect((err as FdbUnavailableError).reason).toBe('native-library-not-loaded');
      expect((err as Error).message).toContain('libfdb_c.so: cannot open shared object file');
    });

    it('selects API version 710 by default, opens the cluster file and owns the connection', async () => {
      const fdb = new FakeFdbModule();
      mockPackage(() => fdb);
      const db = await openFoundationDB({ clusterFile: '/etc/foundationdb/test.cluster' });
      expect(db).toBeInstanceOf(Database);
      expect(db.engine.name).toBe('fdb');
      expect(fdb.apiVersions).toEqual([710]);
      expect(fdb.opened).toEqual(['/etc/foundationdb/test.cluster']);
      await db.close();
      await db.close();
      expect(fdb.db.closeCalls).toBe(1);
    });

    it('passes the requested API version to the package', async () => {
      const fdb = new FakeFdbModule();
      mockPackage(() => fdb);
      await openFoundationDB({ apiVersion: 720 });
      expect(fdb.apiVersions).toEqual([720]);
      expect(fdb.opened).toEqual([undefined]);
    });

    it('rejects API versions below 520 (2-byte versionstamp offsets) before loading the package', async () => {
      const fdb = new FakeFdbModule();
      mockPackage(() => fdb);
      const err = await rejection(openFoundationDB({ apiVersion: 510 }));
      expect(err).toBeInstanceOf(KvError);
      expect((err as KvError).code).toBe(ErrorCodes.api_version_not_supported);
      expect(fdb.apiVersions).toEqual([]);
    });

    it('maps api_version_not_supported from the client to a KvError naming libfdb_c', async () => {
      const fdb = new FakeFdbModule();
      fdb.setAPIVersionError = new FakeFdbError('API version not supported', 2203);
      mockPackage(() => fdb);
      const err = await rejection(openFoundationDB({ apiVersion: 720 }));
      expect(err).toBeInstanceOf(KvError);
      expect((err as KvError).code).toBe(2203);
      expect((err as KvError).message).toContain('libfdb_c');
      expect((err as KvError).cause).toBe(fdb.setAPIVersionError);
    });

    it('maps an FDB error of open to a KvError with its code', async () => {
      const fdb = new FakeFdbModule();
      fdb.openError = new FakeFdbError('No cluster file found in current directory or default location', 2104);
      mockPackage(() => fdb);
      const err = await rejection(openFoundationDB());
      expect(err).toBeInstanceOf(KvError);
      expect((err as KvError).code).toBe(2104);
    });
  });
});

describe('fromFoundationDB', () => {
  it('returns a Database on an fdb engine', () => {
    const db = fromFoundationDB(new FakeFdbDatabase());
    expect(db).toBeInstanceOf(Database);
    expect(db.engine.name).toBe('fdb');
  });

  it('installs identity key and value encoders so bytes pass through unchanged', () => {
    const fake = new FakeFdbDatabase();
    fromFoundationDB(fake);
    const bytes = b('\x00\xffkey');
    expect(fake.keyEncoding?.pack(bytes)).toBe(bytes);
    expect(fake.keyEncoding?.unpack(bytes)).toBe(bytes);
    expect(fake.valueEncoding?.pack(bytes)).toBe(bytes);
    expect(fake.valueEncoding?.unpack(bytes)).toBe(bytes);
  });

  it('rejects a database scoped to a subspace prefix', () => {
    expect(() => fromFoundationDB(new FakeFdbDatabase(b('app')))).toThrow(/getRoot\(\)/);
  });

  it('leaves the database open on close unless closeDatabase is set', async () => {
    const borrowed = new FakeFdbDatabase();
    await fromFoundationDB(borrowed).close();
    expect(borrowed.closeCalls).toBe(0);

    const owned = new FakeFdbDatabase();
    await fromFoundationDB(owned, { closeDatabase: true }).close();
    expect(owned.closeCalls).toBe(1);
  });

  it('creates one package transaction per contract transaction', () => {
    const fake = new FakeFdbDatabase();
    const db = fromFoundationDB(fake);
    db.createTransaction();
    db.createTransaction();
    expect(fake.transactions).toHaveLength(2);
  });
});

describe('FdbTransaction reads', () => {
  it('get passes the key as a Buffer (strings as UTF-8) and returns the value', async () => {
    const { tr, tn } = setup();
    tn.answers.get = async (key) => (key.equals(Buffer.from('é')) ? b('v') : undefined);
    expect(await tr.get('é')).toEqual(b('v'));
    expect(await tr.get(new Uint8Array([1, 2]))).toBeUndefined();
    expect(tn.calls.map((c) => c.args[0])).toEqual([Buffer.from('é'), Buffer.from([1, 2])]);
    expect(Buffer.isBuffer(tn.calls[1].args[0])).toBe(true);
  });

  it("getMetadataVersion reads FDB's \\xff/metadataVersion key (snapshot() at snapshot); bumpMetadataVersion is its one accepted write", async () => {
    const { tr, tn } = setup();
    const key = Buffer.from('\xff/metadataVersion', 'latin1');
    tn.answers.get = async (k) => (k.equals(key) ? b('stamp') : undefined);
    expect(await tr.getMetadataVersion()).toEqual(b('stamp'));
    expect(await tr.snapshot().getMetadataVersion()).toEqual(b('stamp'));
    tr.bumpMetadataVersion();
    expect(tn.calls.map((c) => [c.method, c.snapshot, ...c.args])).toEqual([
      ['get', false, key],
      ['get', true, key],
      ['atomicOp', false, FdbMutationType.setVersionstampedValue, key, Buffer.alloc(14)],
    ]);
  });

  it('snapshot() reads through the package snapshot view and plain reads do not', async () => {
    const { tr, tn } = setup();
    await tr.get('a');
    await tr.snapshot().get('a');
    await tr.snapshot().getRangeAll('a', 'b');
    await tr.snapshot().getKey(lastLessThan('a'));
    expect(tn.calls.map((c) => [c.method, c.snapshot])).toEqual([
      ['get', false],
      ['get', true],
      ['getRangeAll', true],
      ['getKey', true],
    ]);
  });

  it('getKey passes the selector as a node-foundationdb selector', async () => {
    const { tr, tn } = setup();
    tn.answers.getKey = async () => b('b');
    expect(await tr.getKey(firstGreaterThan('a', 2))).toEqual(b('b'));
    expect(tn.calls[0].args[0]).toEqual(selector('a', true, 3));
  });

  it('getKey returns the empty key where the package answers undefined', async () => {
    const { tr } = setup();
    const key = await tr.getKey(lastLessOrEqual(''));
    expect(Buffer.isBuffer(key)).toBe(true);
    expect(key).toHaveLength(0);
  });

  it('getRange takes bare keys as firstGreaterOrEqual and passes selectors, limit and reverse', async () => {
    const { tr, tn } = setup();
    for await (const pair of tr.getRange('a', lastLessThan('m', -1), { limit: 5, reverse: true, batchSize: 2 })) {
      expect(pair).toBeDefined();
    }
    expect(tn.calls[0]).toEqual({
      method: 'getRange',
      args: [selector('a', false, 1), selector('m', false, -1), { limit: 5, reverse: true }],
      snapshot: false,
    });
  });

  it('getRange defaults to no limit and forward order', async () => {
    const { tr, tn } = setup();
    await tr.getRangeAll(firstGreaterThan('a'), 'z');
    expect(tn.calls[0].args).toEqual([selector('a', true, 1), selector('z', false, 1), { limit: 0, reverse: false }]);
  });

  it('getRange yields {key, value} pairs and can be iterated again', async () => {
    const { tr, tn } = setup();
    tn.answers.range = () => [
      [b('a'), b('1')],
      [b('b'), b('2')],
    ];
    const range = tr.getRange('a', 'z');
    for (let round = 0; round < 2; round++) {
      const seen = [];
      for await (const pair of range) seen.push(pair);
      expect(seen).toEqual([
        { key: b('a'), value: b('1') },
        { key: b('b'), value: b('2') },
      ]);
    }
    expect(tn.calls.filter((c) => c.method === 'getRange')).toHaveLength(2);
  });

  it('getRangeAll returns {key, value} pairs', async () => {
    const { tr, tn } = setup();
    tn.answers.range = () => [[b('k'), b('v')]];
    expect(await tr.getRangeAll('a', 'z', { limit: 1 })).toEqual([{ key: b('k'), value: b('v') }]);
    expect(tn.calls[0].args[2]).toEqual({ limit: 1, reverse: false });
  });

  it('getReadVersion decodes the 8 big-endian bytes to a bigint', async () => {
    const { tr, tn } = setup();
    tn.answers.readVersion = async () => Buffer.from('0000000123456789', 'hex');
    expect(await tr.getReadVersion()).toBe(0x123456789n);
  });
});

describe('FdbTransaction.setReadVersion and disableReadYourWrites', () => {
  it('setReadVersion passes the version as 8 big-endian bytes; disableReadYourWrites sets option 51', () => {
    const { tr, tn } = setup();
    tr.disableReadYourWrites();
    tr.setReadVersion(0x0102030405060708n);
    expect(tn.calls).toEqual([
      { method: 'setOption', args: [51, undefined], snapshot: false },
      { method: 'setReadVersion', args: [Buffer.from([1, 2, 3, 4, 5, 6, 7, 8])], snapshot: false },
    ]);
  });

  it('checks what FDB reports only through a later operation: 2011, 2010 and 2000 are thrown at once', async () => {
    const { tr, tn } = setup();
    await expectKvError(() => tr.setReadVersion(0n), 'version_invalid');
    await tr.snapshot().get('k');
    await expectKvError(() => tr.setReadVersion(5n), 'read_version_already_set');
    await expectKvError(() => tr.disableReadYourWrites(), 'client_invalid_operation');
    tr.reset();
    tr.disableReadYourWrites();
    tr.setReadVersion(5n);
    expect(tn.calls.map((c) => c.method)).toEqual(['get', 'rawReset', 'setOption', 'setReadVersion']);
  });
});

describe('FdbTransaction writes', () => {
  it('set, clear and clearRange pass Buffers, clearRange always with both ends', () => {
    const { tr, tn } = setup();
    tr.set('k', 'v');
    tr.clear(new Uint8Array([7]));
    tr.clearRange('a', 'b');
    expect(tn.calls).toEqual([
      { method: 'set', args: [b('k'), b('v')], snapshot: false },
      { method: 'clear', args: [Buffer.from([7])], snapshot: false },
      { method: 'clearRange', args: [b('a'), b('b')], snapshot: false },
    ]);
  });

  const codes: Array<[AtomicOp, number]> = [
    ['add', 2],
    ['bitAnd', 6],
    ['bitOr', 7],
    ['bitXor', 8],
    ['appendIfFits', 9],
    ['max', 12],
    ['min', 13],
    ['byteMin', 16],
    ['byteMax', 17],
    ['compareAndClear', 20],
  ];

  it.each(codes)('atomicOp(%s) is package atomicOp with FDB mutation type %i', (op, code) => {
    const { tr, tn } = setup();
    tr.atomicOp(op, 'k', 'p');
    expect(tn.calls[0]).toEqual({ method: 'atomicOp', args: [code, b('k'), b('p')], snapshot: false });
  });

  it.each(codes.filter(([op]) => op !== 'add'))('%s(key, param) is atomicOp with mutation type %i', (op, code) => {
    const { tr, tn } = setup();
    tr[op as Exclude<AtomicOp, 'add'>].call(tr, 'k', b('\x01'));
    expect(tn.calls[0].args).toEqual([code, b('k'), b('\x01')]);
  });

  it('add encodes number and bigint deltas as 8-byte little-endian and passes bytes as they are', () => {
    const { tr, tn } = setup();
    tr.add('k', 1);
    tr.add('k', -2n);
    tr.add('k', b('\x05'));
    expect(tn.calls.map((c) => c.args)).toEqual([
      [FdbMutationType.add, b('k'), Buffer.from('0100000000000000', 'hex')],
      [FdbMutationType.add, b('k'), Buffer.from('feffffffffffffff', 'hex')],
      [FdbMutationType.add, b('k'), b('\x05')],
    ]);
  });

  it('setVersionstampedKey passes the key with its 4-byte offset unchanged as mutation 14', () => {
    const { tr, tn } = setup();
    const keyWithOffset = Buffer.concat([b('p'), Buffer.alloc(10), b('s'), Buffer.from([1, 0, 0, 0])]);
    tr.setVersionstampedKey(keyWithOffset, 'v');
    expect(tn.calls[0]).toEqual({ method: 'atomicOp', args: [14, keyWithOffset, b('v')], snapshot: false });
  });

  it('setVersionstampedValue passes the value with its 4-byte offset unchanged as mutation 15', () => {
    const { tr, tn } = setup();
    const valueWithOffset = Buffer.concat([Buffer.alloc(10), Buffer.from([0, 0, 0, 0])]);
    tr.setVersionstampedValue('k', valueWithOffset);
    expect(tn.calls[0]).toEqual({ method: 'atomicOp', args: [15, b('k'), valueWithOffset], snapshot: false });
  });

  it('getVersionstamp resolves the package promise to the 10-byte stamp', async () => {
    const { tr, tn } = setup();
    const stamp = tr.getVersionstamp();
    await tr.commit();
    expect(await stamp).toEqual(Buffer.from('00000000000003e80000', 'hex'));
    expect(tn.calls.map((c) => c.method)).toEqual(['getVersionstamp', 'rawCommit']);
  });

  it('conflict ranges and keys map to the package methods of the same names', () => {
    const { tr, tn } = setup();
    tr.addReadConflictRange('a', 'b');
    tr.addReadConflictKey('c');
    tr.addWriteConflictRange('d', 'e');
    tr.addWriteConflictKey('f');
    expect(tn.calls.map((c) => [c.method, ...c.args])).toEqual([
      ['addReadConflictRange', b('a'), b('b')],
      ['addReadConflictKey', b('c')],
      ['addWriteConflictRange', b('d'), b('e')],
      ['addWriteConflictKey', b('f')],
    ]);
  });

  it('commit, reset, cancel and getApproximateSize map to rawCommit, rawReset, rawCancel and getApproximateSize', async () => {
    const { tr, tn } = setup();
    tn.answers.approximateSize = async () => 321;
    expect(await tr.getApproximateSize()).toBe(321);
    await tr.commit();
    tr.reset();
    tr.cancel();
    expect(tn.calls.map((c) => c.method)).toEqual(['getApproximateSize', 'rawCommit', 'rawReset', 'rawCancel']);
  });

  it('getCommittedVersion decodes the package bytes, -1 for a read-only commit', () => {
    const { tr, tn } = setup();
    expect(tr.getCommittedVersion()).toBe(-1n);
    tn.answers.committedVersion = () => Buffer.from('00000000000003e8', 'hex');
    expect(tr.getCommittedVersion()).toBe(1000n);
  });
});

describe('FdbTransaction error mapping', () => {
  it('commit rejects an FDBError as a KvError with its code, name, retryable flag and cause', async () => {
    const { tr, tn } = setup();
    const fdbError = new FakeFdbError('Transaction not committed due to conflict with another transaction', 1020);
    tn.answers.commit = async () => {
      throw fdbError;
    };
    const err = await rejection(tr.commit());
    expect(err).toBeInstanceOf(KvError);
    expect(err).toMatchObject({ code: 1020, name: 'not_committed', retryable: true, maybeCommitted: false });
    expect((err as KvError).message).toContain('conflict with another transaction');
    expect((err as KvError).cause).toBe(fdbError);
  });

  it('commit_unknown_result (1021) maps to a KvError that may have committed', async () => {
    const { tr, tn } = setup();
    tn.answers.commit = async () => {
      throw new FakeFdbError('Transaction may or may not have committed', 1021);
    };
    expect(await rejection(tr.commit())).toMatchObject({ code: 1021, retryable: true, maybeCommitted: true });
  });

  it('read errors map to KvErrors: get, getKey, getRangeAll, getReadVersion, getApproximateSize', async () => {
    const { tr, tn } = setup();
    const tooOld = async (): Promise<never> => {
      throw new FakeFdbError('Transaction is too old to perform reads or be committed', 1007);
    };
    tn.answers.get = tooOld;
    tn.answers.getKey = tooOld;
    tn.answers.readVersion = tooOld;
    tn.answers.approximateSize = tooOld;
    tn.answers.rangeError = new FakeFdbError('Transaction is too old to perform reads or be committed', 1007);
    for (const read of [tr.get('k'), tr.getKey(lastLessThan('k')), tr.getRangeAll('a', 'b'), tr.getReadVersion(), tr.getApproximateSize()]) {
      expect(await rejection(read)).toMatchObject({ code: 1007, name: 'transaction_too_old', retryable: true });
    }
  });

  it('an error while iterating getRange becomes a KvError after the pairs already read', async () => {
    const { tr, tn } = setup();
    tn.answers.range = () => [[b('a'), b('1')]];
    tn.answers.rangeError = new FakeFdbError('Operation aborted because the transaction was cancelled', 1025);
    const seen: string[] = [];
    const err = await rejection(
      (async () => {
        for await (const { key } of tr.getRange('a', 'z')) seen.push(key.toString());
      })(),
    );
    expect(seen).toEqual(['a']);
    expect(err).toBeInstanceOf(KvError);
    expect((err as KvError).code).toBe(ErrorCodes.transaction_cancelled);
  });

  it('synchronous FDBErrors of writes become KvErrors', () => {
    const { tr, tn } = setup();
    tn.addReadConflictRange = () => {
      throw new FakeFdbError('Key outside legal range', 2004);
    };
    const system = Buffer.from([0xff, 0x01]);
    expect(() => tr.addReadConflictRange(system, Buffer.from([0xff, 0x02]))).toThrow(KvError);
    try {
      tr.addReadConflictRange(system, Buffer.from([0xff, 0x02]));
    } catch (err) {
      expect(err).toMatchObject({ code: 2004, name: 'key_outside_legal_range', retryable: false });
    }
  });

  it('errors that are not FDBErrors pass through unchanged', async () => {
    const { tr, tn } = setup();
    const typeError = new TypeError('Expected a Buffer');
    tn.answers.get = async () => {
      throw typeError;
    };
    expect(await rejection(tr.get('k'))).toBe(typeError);
  });

  it('getVersionstamp rejects with no_commit_version (2021) mapped to a KvError', async () => {
    const { tr, tn } = setup();
    tn.answers.versionstamp = async () => {
      throw new FakeFdbError('Transaction is read-only and therefore does not have a commit version', 2021);
    };
    const stamp = tr.getVersionstamp();
    await tr.commit();
    expect(await rejection(stamp)).toMatchObject({ code: ErrorCodes.no_commit_version });
  });

  it('a versionstamp promise nobody awaits does not become an unhandled rejection', async () => {
    const { tr, tn } = setup();
    tn.answers.versionstamp = async () => {
      throw new FakeFdbError('Transaction not committed due to conflict with another transaction', 1020);
    };
    const unhandled = jest.fn();
    process.on('unhandledRejection', unhandled);
    try {
      void tr.getVersionstamp();
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).not.toHaveBeenCalled();
    } finally {
      process.off('unhandledRejection', unhandled);
    }
  });
});

describe('FdbTransaction.onError', () => {
  it('hands the FDB code to rawOnError and resolves when FDB backs off and resets', async () => {
    const { tr, tn } = setup();
    tn.answers.onError = async () => undefined;
    await tr.onError(new KvError(1020));
    expect(tn.calls).toEqual([{ method: 'rawOnError', args: [1020], snapshot: false }]);
  });

  it('accepts the package FDBError as well as a KvError', async () => {
    const { tr, tn } = setup();
    tn.answers.onError = async () => undefined;
    await tr.onError(new FakeFdbError('Transaction is too old to perform reads or be committed', 1007));
    expect(tn.calls[0].args).toEqual([1007]);
  });

  it('rethrows the original error when FDB rejects with the same code', async () => {
    const { tr } = setup();
    const original = new KvError(2102, 'key too large');
    expect(await rejection(tr.onError(original))).toBe(original);
  });

  it('rejects with a KvError when FDB rejects with another code', async () => {
    const { tr, tn } = setup();
    tn.answers.onError = async () => {
      throw new FakeFdbError('Operation aborted because the transaction was cancelled', 1025);
    };
    expect(await rejection(tr.onError(new KvError(1020)))).toMatchObject({ code: 1025 });
  });

  it('rethrows an error without an FDB code and does not call rawOnError', async () => {
    const { tr, tn } = setup();
    const bug = new Error('bug in the transaction body');
    expect(await rejection(tr.onError(bug))).toBe(bug);
    expect(tn.calls).toEqual([]);
  });

  it('lets Database.transact retry a conflicting commit on the same package transaction', async () => {
    const fake = new FakeFdbDatabase();
    let commits = 0;
    fake.answers.commit = async () => {
      if (++commits === 1) throw new FakeFdbError('Transaction not committed due to conflict', 1020);
    };
    fake.answers.onError = async (code) => {
      if (code !== 1020) throw new FakeFdbError('not retryable', code);
    };
    const result = await fromFoundationDB(fake).transact((tr) => {
      tr.set('k', 'v');
      return 'done';
    });
    expect(result).toBe('done');
    expect(fake.transactions).toHaveLength(1);
    expect(fake.transactions[0].calls.map((c) => c.method)).toEqual(['set', 'rawCommit', 'rawOnError', 'set', 'rawCommit']);
  });
});

describe('FdbTransaction.watch', () => {
  it('asks the package for every error, with the key as a Buffer', () => {
    const { tr, tn } = setup();
    tr.watch('k');
    expect(tn.calls[0]).toEqual({ method: 'watch', args: [b('k'), { throwAllErrors: true }], snapshot: false });
  });

  it('resolves true when the package watch fires', async () => {
    const { tr, tn } = setup();
    const watch = tr.watch('k');
    tn.watches[0].fire(true);
    expect(await watch.promise).toBe(true);
  });

  it('cancel resolves false and cancels the package watch once', async () => {
    const { tr, tn } = setup();
    const watch = tr.watch('k');
    watch.cancel();
    watch.cancel();
    expect(await watch.promise).toBe(false);
    expect(tn.watches[0].cancelCalls).toBe(1);
  });

  it('stays false when the package watch fires after cancel', async () => {
    const { tr, tn } = setup();
    const watch = tr.watch('k');
    watch.cancel();
    tn.watches[0].fire(true);
    expect(await watch.promise).toBe(false);
  });

  it('resolves false when the package reports operation_cancelled (1101)', async () => {
    const { tr, tn } = setup();
    const watch = tr.watch('k');
    tn.watches[0].fail(new FakeFdbError('Asynchronous operation cancelled', 1101));
    expect(await watch.promise).toBe(false);
  });

  it('rejects with a KvError when the watching transaction fails to commit', async () => {
    const { tr, tn } = setup();
    const watch = tr.watch('k');
    tn.watches[0].fail(new FakeFdbError('Transaction not committed due to conflict', 1020));
    expect(await rejection(watch.promise)).toMatchObject({ code: 1020, name: 'not_committed' });
  });
});
