/**
 * The shim as node-foundationdb's native module, called directly the way the package's JavaScript calls
 * the addon: FDB's C-client behaviour over the engines (batches and the `more` flag, deferred errors,
 * onError, options, timeouts, watches, API versions).
 */
import type {
  NativeDatabase as PackageNativeDatabase,
  NativeModule as PackageNativeModule,
  NativeTransaction as PackageNativeTransaction,
} from 'foundationdb/dist/lib/native';
import { FdbShim, type FdbShimModule, type NativeTransaction } from '../../src/fdb-shim';
import { MemoryEngine } from '../../src/kv/memory/memory-engine';
import { foundationdb } from '../support/fdb-shim';

const { FDBError, StreamingMode, MutationType, TransactionOptionCode, DatabaseOptionCode, ErrorPredicate } = foundationdb();

const b = (s: string): Buffer => Buffer.from(s, 'latin1');

function nativeModule(apiVersion = 720): FdbShimModule {
  const native = new FdbShim().createNativeModule();
  // What node-foundationdb's native.js does right after loading the addon.
  native.FDBError = FDBError;
  native.setAPIVersion(apiVersion);
  return native;
}

function transaction(apiVersion?: number): NativeTransaction {
  return nativeModule(apiVersion).createDatabase().createTransaction();
}

/** The FDB error code `promise` rejects with (failing the test if it fulfils or the error has none). */
async function codeOf(promise: Promise<unknown> | undefined): Promise<number> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(FDBError);
    return (err as InstanceType<typeof FDBError>).code;
  }
  throw new Error('expected an FDBError');
}

function thrownCode(action: () => unknown): number {
  try {
    action();
  } catch (err) {
    expect(err).toBeInstanceOf(FDBError);
    return (err as InstanceType<typeof FDBError>).code;
  }
  throw new Error('expected an FDBError');
}

async function committed(tn: NativeTransaction): Promise<void> {
  await tn.commit();
}

/** `getRange` over `[begin, end)` as plain keys (firstGreaterOrEqual selectors). */
function rangeOf(
  tn: NativeTransaction,
  begin: string,
  end: string,
  options: { limit?: number; targetBytes?: number; mode?: number; iteration?: number; reverse?: boolean } = {},
) {
  return tn.getRange(
    begin,
    false,
    1,
    end,
    false,
    1,
    options.limit ?? 0,
    options.targetBytes ?? 0,
    options.mode ?? StreamingMode.Iterator,
    options.iteration ?? 1,
    false,
    options.reverse ?? false,
  );
}

async function filled(n: number): Promise<NativeTransaction> {
  const tn = transaction();
  for (let i = 0; i < n; i++) tn.set(`k${i}`, `v${i}`);
  await committed(tn);
  tn.reset();
  return tn;
}

describe('the shim as NativeModule', () => {
  it("has the package's declared native interface (compile-time check)", () => {
    const native = nativeModule();
    // getAddressesForKey is declared `string[]` by the package, but the addon returns a promise.
    const asPackageModule: Omit<PackageNativeModule, 'createDatabase'> = native;
    const asPackageDatabase: Omit<PackageNativeDatabase, 'createTransaction'> = native.createDatabase();
    const asPackageTransaction: Omit<PackageNativeTransaction, 'getAddressesForKey'> = native.createDatabase().createTransaction();
    expect([asPackageModule, asPackageDatabase, asPackageTransaction].every(Boolean)).toBe(true);
  });

  it('selects one API version, from 500 to 720, before opening a database', () => {
    const native = new FdbShim().createNativeModule();
    native.FDBError = FDBError;
    expect(thrownCode(() => native.createDatabase())).toBe(2200);
    expect(thrownCode(() => native.setAPIVersion(730))).toBe(2203);
    expect(thrownCode(() => native.setAPIVersionImpl(710, 700))).toBe(2202);
    native.setAPIVersion(710);
    native.setAPIVersion(710);
    expect(thrownCode(() => native.setAPIVersion(700))).toBe(2201);
    expect(native.createDatabase('any.cluster').createTransaction()).toBeDefined();
  });

  it("answers errorPredicate from doclayer's classification of FDB's codes", () => {
    const native = nativeModule();
    const predicates = (code: number) =>
      [ErrorPredicate.Retryable, ErrorPredicate.MaybeCommitted, ErrorPredicate.RetryableNotCommitted].map((test) =>
        native.errorPredicate(test, code),
      );
    expect(predicates(1020)).toEqual([true, false, true]);
    expect(predicates(1021)).toEqual([true, true, false]);
    expect(predicates(1007)).toEqual([true, false, true]);
    expect(predicates(2102)).toEqual([false, false, false]);
    expect(native.errorPredicate(12345, 1020)).toBe(false);
  });

  it('makes its errors with the FDBError class the package hands it, and a stand-in before that', () => {
    const native = new FdbShim().createNativeModule();
    let err: unknown;
    try {
      native.createDatabase();
    } catch (thrown) {
      err = thrown;
    }
    expect(err).not.toBeInstanceOf(FDBError);
    expect(err).toMatchObject({ code: 2200, message: 'API version is not set' });
  });
});

describe('NativeTransaction.getRange', () => {
  it('returns `limit` rows with `more` while the range holds more, and all of it without', async () => {
    const tn = await filled(5);
    expect(await rangeOf(tn, 'k', 'l', { limit: 3, mode: StreamingMode.Exact })).toEqual({
      results: [
        [b('k0'), b('v0')],
        [b('k1'), b('v1')],
        [b('k2'), b('v2')],
      ],
      more: true,
    });
    const all = await rangeOf(tn, 'k', 'l', { limit: 10, mode: StreamingMode.Exact });
    expect([all.results.length, all.more]).toEqual([5, false]);
    const reversed = await rangeOf(tn, 'k', 'l', { limit: 2, mode: StreamingMode.Exact, reverse: true });
    expect(reversed.results.map(([k]) => k.toString())).toEqual(['k4', 'k3']);
  });

  it('stops a batch at the pair that meets the byte target, returning at least one pair', async () => {
    const tn = await filled(5);
    const one = await rangeOf(tn, 'k', 'l', { targetBytes: 1, mode: StreamingMode.WantAll });
    expect([one.results.length, one.more]).toEqual([1, true]);
    // Each pair is 4 bytes: the third reaches 10.
    const three = await rangeOf(tn, 'k', 'l', { targetBytes: 10, mode: StreamingMode.Serial });
    expect([three.results.length, three.more]).toEqual([3, true]);
  });

  it('resolves selectors with offsets at both ends', async () => {
    const tn = await filled(8);
    // From three past the last key <= k2 (k5) to the last key <= k6 (k6), exclusive.
    const result = await tn.getRange('k2', true, 3, 'k6', true, 0, 0, 0, StreamingMode.WantAll, 1, false, false);
    expect(result.results.map(([k]) => k.toString())).toEqual(['k5']);
    // From two past the last key <= k2 (k4) to the first key > k6 (k7), exclusive.
    const shifted = await tn.getRange('k2', true, 2, 'k6', true, 1, 0, 0, StreamingMode.WantAll, 1, false, false);
    expect(shifted.results.map(([k]) => k.toString())).toEqual(['k4', 'k5', 'k6']);
    expect(await tn.getKey('k0', false, 0, false)).toEqual(Buffer.alloc(0));
  });

  it('rejects invalid limits and modes as fdb_c does', async () => {
    const tn = await filled(1);
    expect(await codeOf(rangeOf(tn, 'a', 'z', { limit: -1 }))).toBe(2012);
    expect(await codeOf(rangeOf(tn, 'a', 'z', { mode: StreamingMode.Exact }))).toBe(2210);
    expect(await codeOf(rangeOf(tn, 'a', 'z', { mode: 9 }))).toBe(2000);
    expect(await codeOf(rangeOf(tn, 'a', 'z', { iteration: 0 }))).toBe(2000);
  });
});

describe('NativeTransaction errors and retries', () => {
  it('defers a mutation error to the next read and the commit, as FDB does', async () => {
    const tn = transaction();
    const stamp = codeOf(tn.getVersionstamp());
    expect(() => tn.set(Buffer.alloc(10_001), 'v')).not.toThrow();
    expect(await codeOf(tn.get('anything', false))).toBe(2102);
    expect(await codeOf(tn.commit())).toBe(2102);
    expect(await stamp).toBe(2102);
  });

  it('throws a TypeError at once for an argument that is not bytes, as the addon does', () => {
    const tn = transaction();
    expect(() => tn.set(42 as never, 'v')).toThrow(TypeError);
    expect(() => tn.setOption(TransactionOptionCode.Timeout, 'ten')).toThrow(TypeError);
  });

  it('onError backs off and resets for a retryable code, discarding the attempt', async () => {
    const tn = transaction();
    tn.set('k', 'v');
    await tn.onError(1020);
    expect(await tn.get('k', false)).toBeUndefined();
    await committed(tn);
    expect(tn.getCommittedVersion()).toEqual(Buffer.alloc(8, 0xff));
  });

  it('onError rethrows a code that is not retryable and leaves the transaction cancelled until reset', async () => {
    const tn = transaction();
    expect(await codeOf(tn.onError(2102))).toBe(2102);
    expect(await codeOf(tn.get('k', false))).toBe(1025);
    tn.reset();
    expect(await tn.get('k', false)).toBeUndefined();
  });

  it('before API version 610, onError resets a transaction after rethrowing', async () => {
    const tn = transaction(600);
    expect(await codeOf(tn.onError(2102))).toBe(2102);
    expect(await tn.get('k', false)).toBeUndefined();
  });

  it('onError rethrows once retry_limit retries are used up, counting across onError but not reset', async () => {
    const tn = transaction();
    tn.setOption(TransactionOptionCode.RetryLimit, 1);
    tn.setOption(TransactionOptionCode.MaxRetryDelay, 0);
    await tn.onError(1020);
    expect(await codeOf(tn.onError(1020))).toBe(1020);
    tn.reset();
    // reset restores the database's defaults: no retry limit.
    await tn.onError(1020);
    await tn.onError(1020);
  });

  it('cancel fails pending and later operations with transaction_cancelled (1025)', async () => {
    const tn = transaction();
    tn.set('k', 'v');
    const stamp = codeOf(tn.getVersionstamp());
    tn.cancel();
    expect(await stamp).toBe(1025);
    expect(await codeOf(tn.commit())).toBe(1025);
  });

  it('setReadVersion: reads are at that version; an invalid or future one fails the next read, as FDB defers it', async () => {
    const db = nativeModule().createDatabase();
    const writer = db.createTransaction();
    writer.set('k', 'v1');
    await writer.commit();
    const first = db.createTransaction();
    expect(await first.get('k', false)).toEqual(b('v1'));
    const version = await first.getReadVersion();
    const second = db.createTransaction();
    second.set('k', 'v2');
    await second.commit();

    const tn = db.createTransaction();
    tn.setReadVersion(version);
    expect(await tn.getReadVersion()).toEqual(version);
    expect(await tn.get('k', false)).toEqual(b('v1'));
    expect(() => tn.setReadVersion(Buffer.alloc(4))).toThrow(TypeError);

    const invalid = db.createTransaction();
    invalid.setReadVersion(Buffer.alloc(8));
    expect(await codeOf(invalid.get('k', false))).toBe(2011);
    const future = db.createTransaction();
    const ahead = Buffer.alloc(8);
    ahead.writeBigInt64BE(version.readBigInt64BE(0) + 10n ** 12n);
    future.setReadVersion(ahead);
    expect(await codeOf(future.get('k', false))).toBe(1009);
  });
});

describe('NativeTransaction options', () => {
  it("read_your_writes_disable: reads do not see the transaction's writes; set after a read or write, it fails the next read with 2000", async () => {
    const tn = transaction();
    tn.setOption(TransactionOptionCode.ReadYourWritesDisable, null);
    tn.set('k', 'v');
    expect(await tn.get('k', false)).toBeUndefined();
    await tn.commit();

    const late = transaction();
    late.set('k', 'v');
    late.setOption(TransactionOptionCode.ReadYourWritesDisable, null);
    expect(await codeOf(late.get('k', false))).toBe(2000);
  });

  it('times out: pending and later operations fail with transaction_timed_out (1031) until reset', async () => {
    const tn = transaction();
    tn.setOption(TransactionOptionCode.Timeout, 20);
    tn.set('k', 'v');
    const stamp = codeOf(tn.getVersionstamp());
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(await stamp).toBe(1031);
    expect(await codeOf(tn.get('k', false))).toBe(1031);
    expect(await codeOf(tn.onError(1020))).toBe(1031);
    tn.reset();
    tn.set('k', 'v');
    await committed(tn);
  });

  it('counts the timeout from the start of the transaction, and 0 disables it', async () => {
    const tn = transaction();
    await new Promise((resolve) => setTimeout(resolve, 30));
    tn.setOption(TransactionOptionCode.Timeout, 10);
    expect(await codeOf(tn.get('k', false))).toBe(1031);
    tn.reset();
    tn.setOption(TransactionOptionCode.Timeout, 10);
    tn.setOption(TransactionOptionCode.Timeout, 0);
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(await tn.get('k', false)).toBeUndefined();
  });

  it('enforces size_limit at commit, failing the versionstamp with it', async () => {
    const tn = transaction();
    tn.setOption(TransactionOptionCode.SizeLimit, 100);
    tn.set('k', Buffer.alloc(200));
    const stamp = codeOf(tn.getVersionstamp());
    expect(await codeOf(tn.commit())).toBe(2101);
    expect(await stamp).toBe(2101);
  });

  it('takes transaction defaults from the database options, and validates option values', () => {
    const db = nativeModule().createDatabase();
    db.setOption(DatabaseOptionCode.TransactionRetryLimit, 0);
    const tn = db.createTransaction();
    expect(thrownCode(() => tn.setOption(TransactionOptionCode.Timeout, -1))).toBe(2006);
    expect(thrownCode(() => tn.setOption(TransactionOptionCode.SizeLimit, 10))).toBe(2006);
    expect(thrownCode(() => db.setOption(DatabaseOptionCode.TransactionRetryLimit, -2))).toBe(2006);
    expect(() => tn.setOption(99_999, null)).not.toThrow();
    return expect(codeOf(tn.onError(1020))).resolves.toBe(1020);
  });
});

describe('NativeTransaction watches, versions and versionstamps', () => {
  it('reports a cancelled watch as false when ignoring standard errors, and otherwise as operation_cancelled (1101)', async () => {
    const tn = transaction();
    const lenient = tn.watch('k', true);
    const strict = tn.watch('k', false);
    await committed(tn);
    lenient.cancel();
    strict.cancel();
    await expect(lenient.promise).resolves.toBe(false);
    expect(await codeOf(strict.promise)).toBe(1101);
  });

  it('returns versions as 8 big-endian bytes: -1 committed for a read-only transaction', async () => {
    const tn = transaction();
    const readVersion = await tn.getReadVersion();
    await committed(tn);
    expect(tn.getCommittedVersion()).toEqual(Buffer.alloc(8, 0xff));
    tn.reset();
    tn.set('k', 'v');
    await committed(tn);
    expect(tn.getCommittedVersion().readBigInt64BE(0)).toBeGreaterThan(readVersion.readBigInt64BE(0));
  });

  it('before API version 520, reads 2-byte key offsets and versionstamps at the start of values', async () => {
    const engine = new MemoryEngine();
    const native = new FdbShim({ engine }).createNativeModule();
    native.FDBError = FDBError;
    native.setAPIVersion(510);
    const tn = native.createDatabase().createTransaction();
    const keyWithOffset = Buffer.concat([b('log/'), Buffer.alloc(10), Buffer.from([4, 0])]);
    tn.atomicOp(MutationType.SetVersionstampedKey, keyWithOffset, 'entry');
    tn.atomicOp(MutationType.SetVersionstampedValue, 'latest', Buffer.concat([Buffer.alloc(10), b('!')]));
    const stamp = tn.getVersionstamp();
    await committed(tn);
    const versionstamp = await stamp;
    const reader = engine.createTransaction();
    expect(await reader.get(Buffer.concat([b('log/'), versionstamp]))).toEqual(b('entry'));
    expect(await reader.get('latest')).toEqual(Buffer.concat([versionstamp, b('!')]));
  });

  it('supports the callback form of the addon', async () => {
    const tn = transaction();
    tn.set('k', 'v');
    const value = await new Promise((resolve, reject) => tn.get('k', false, (err, v) => (err ? reject(err) : resolve(v))));
    expect(value).toEqual(b('v'));
    await new Promise<void>((resolve, reject) => tn.commit((err) => (err ? reject(err) : resolve())));
  });

  it('estimates range sizes and split points from the data, and reports one local address per key', async () => {
    const tn = transaction();
    for (let i = 0; i < 10; i++) tn.set(`k${i}`, Buffer.alloc(98));
    await committed(tn);
    tn.reset();
    expect(await tn.getEstimatedRangeSizeBytes('k', 'l')).toBe(1000);
    const points = await tn.getRangeSplitPoints('k', 'l', 300);
    expect(points.map(String)).toEqual(['k', 'k3', 'k6', 'k9', 'l']);
    expect(await tn.getAddressesForKey('k1')).toEqual(['127.0.0.1:4500']);
  });
});
