/**
 * A hand-written fake of the part of node-foundationdb the FDB adapter calls. It records every call
 * and answers with scripted results, so tests can check how the adapter maps the contract onto the
 * package's API. It has none of FDB's semantics: tests against it check mapping, never behaviour.
 */
import type { FdbDatabaseLike, FdbKeySelector, FdbModuleLike, FdbRangeOptions, FdbTransactionLike, FdbTransformer, FdbWatch } from '../../src/kv/fdb';

/** Mimics node-foundationdb's `FDBError`: `new FDBError(description, code)`. */
export class FakeFdbError extends Error {
  constructor(
    description: string,
    readonly code: number,
  ) {
    super(description);
  }
}

export interface FakeCall {
  method: string;
  args: unknown[];
  /** True when made through `snapshot()`. */
  snapshot: boolean;
}

/** A watch whose outcome the test decides. */
export class FakeWatch implements FdbWatch {
  readonly promise: Promise<boolean>;
  cancelCalls = 0;
  fire!: (fired: boolean) => void;
  fail!: (err: unknown) => void;

  constructor(
    readonly key: Buffer,
    readonly options: { throwAllErrors?: boolean } | undefined,
  ) {
    this.promise = new Promise<boolean>((resolve, reject) => {
      this.fire = resolve;
      this.fail = reject;
    });
    this.promise.catch(() => undefined);
  }

  cancel(): void {
    this.cancelCalls++;
  }
}

/** What the fake's reads and commit answer; tests replace entries before calling the adapter. */
export interface FakeAnswers {
  get: (key: Buffer) => Promise<Buffer | undefined>;
  getKey: (selector: FdbKeySelector) => Promise<Buffer | undefined>;
  /** The pairs `getRange` and `getRangeAll` return, whatever the selectors. */
  range: () => Array<[Buffer, Buffer]>;
  /** Thrown by `getRange`'s iterator after the pairs, when set. */
  rangeError?: Error;
  readVersion: () => Promise<Buffer>;
  commit: () => Promise<void>;
  committedVersion: () => Buffer;
  versionstamp: () => Promise<Buffer>;
  onError: (code: number) => Promise<void>;
  approximateSize: () => Promise<number>;
}

function version(n: bigint): Buffer {
  const out = Buffer.alloc(8);
  out.writeBigInt64BE(n);
  return out;
}

export function defaultAnswers(): FakeAnswers {
  return {
    get: async () => undefined,
    getKey: async () => undefined,
    range: () => [],
    readVersion: async () => version(1000n),
    commit: async () => undefined,
    committedVersion: () => version(-1n),
    versionstamp: async () => Buffer.from('00000000000003e80000', 'hex'),
    onError: async (code) => {
      throw new FakeFdbError('not retryable', code);
    },
    approximateSize: async () => 0,
  };
}

export class FakeFdbTransaction implements FdbTransactionLike {
  readonly watches: FakeWatch[];

  constructor(
    readonly calls: FakeCall[] = [],
    readonly answers: FakeAnswers = defaultAnswers(),
    readonly isSnapshot = false,
    watches: FakeWatch[] = [],
  ) {
    this.watches = watches;
  }

  private record(method: string, ...args: unknown[]): void {
    this.calls.push({ method, args, snapshot: this.isSnapshot });
  }

  snapshot(): FakeFdbTransaction {
    return new FakeFdbTransaction(this.calls, this.answers, true, this.watches);
  }

  get(key: Buffer): Promise<Buffer | undefined> {
    this.record('get', key);
    return this.answers.get(key);
  }

  getKey(selector: FdbKeySelector): Promise<Buffer | undefined> {
    this.record('getKey', selector);
    return this.answers.getKey(selector);
  }

  getRange(begin: FdbKeySelector, end: FdbKeySelector, options?: FdbRangeOptions): AsyncIterable<[Buffer, Buffer]> {
    this.record('getRange', begin, end, options);
    const pairs = this.answers.range();
    const error = this.answers.rangeError;
    return (async function* () {
      yield* pairs;
      if (error !== undefined) throw error;
    })();
  }

  async getRangeAll(begin: FdbKeySelector, end: FdbKeySelector, options?: FdbRangeOptions): Promise<Array<[Buffer, Buffer]>> {
    this.record('getRangeAll', begin, end, options);
    if (this.answers.rangeError !== undefined) throw this.answers.rangeError;
    return this.answers.range();
  }

  getReadVersion(): Promise<Buffer> {
    this.record('getReadVersion');
    return this.answers.readVersion();
  }

  setReadVersion(version: Buffer): void {
    this.record('setReadVersion', version);
  }

  setOption(code: number, param?: number | string | Buffer | null): void {
    this.record('setOption', code, param);
  }

  set(key: Buffer, value: Buffer): void {
    this.record('set', key, value);
  }

  clear(key: Buffer): void {
    this.record('clear', key);
  }

  clearRange(begin: Buffer, end: Buffer): void {
    this.record('clearRange', begin, end);
  }

  atomicOp(opType: number, key: Buffer, param: Buffer): void {
    this.record('atomicOp', opType, key, param);
  }

  getVersionstamp(): { promise: Promise<Buffer> } {
    this.record('getVersionstamp');
    return { promise: this.answers.versionstamp() };
  }

  watch(key: Buffer, options?: { throwAllErrors?: boolean }): FakeWatch {
    this.record('watch', key, options);
    const watch = new FakeWatch(key, options);
    this.watches.push(watch);
    return watch;
  }

  addReadConflictRange(begin: Buffer, end: Buffer): void {
    this.record('addReadConflictRange', begin, end);
  }

  addReadConflictKey(key: Buffer): void {
    this.record('addReadConflictKey', key);
  }

  addWriteConflictRange(begin: Buffer, end: Buffer): void {
    this.record('addWriteConflictRange', begin, end);
  }

  addWriteConflictKey(key: Buffer): void {
    this.record('addWriteConflictKey', key);
  }

  getApproximateSize(): Promise<number> {
    this.record('getApproximateSize');
    return this.answers.approximateSize();
  }

  rawCommit(): Promise<void> {
    this.record('rawCommit');
    return this.answers.commit();
  }

  getCommittedVersion(): Buffer {
    this.record('getCommittedVersion');
    return this.answers.committedVersion();
  }

  rawOnError(code: number): Promise<void> {
    this.record('rawOnError', code);
    return this.answers.onError(code);
  }

  rawReset(): void {
    this.record('rawReset');
  }

  rawCancel(): void {
    this.record('rawCancel');
  }
}

/** A fake `Database`: remembers its prefix and encoders, and the transactions it created. */
export class FakeFdbDatabase implements FdbDatabaseLike {
  readonly transactions: FakeFdbTransaction[] = [];
  keyEncoding: FdbTransformer | undefined;
  valueEncoding: FdbTransformer | undefined;
  closeCalls = 0;

  constructor(
    readonly prefix: Buffer = Buffer.alloc(0),
    readonly answers: FakeAnswers = defaultAnswers(),
  ) {}

  rawCreateTransaction(): FakeFdbTransaction {
    const tn = new FakeFdbTransaction([], this.answers);
    this.transactions.push(tn);
    return tn;
  }

  getPrefix(): Buffer {
    return this.prefix;
  }

  withKeyEncoding(keyXf: FdbTransformer): FakeFdbDatabase {
    this.keyEncoding = keyXf;
    return this;
  }

  withValueEncoding(valueXf: FdbTransformer): FakeFdbDatabase {
    this.valueEncoding = valueXf;
    return this;
  }

  close(): void {
    this.closeCalls++;
  }
}

/** A fake of the package's module exports, for `openFoundationDB`. */
export class FakeFdbModule implements FdbModuleLike {
  readonly apiVersions: number[] = [];
  readonly opened: Array<string | undefined> = [];
  readonly db = new FakeFdbDatabase();
  setAPIVersionError: Error | undefined;
  openError: Error | undefined;

  setAPIVersion(apiVersion: number): void {
    this.apiVersions.push(apiVersion);
    if (this.setAPIVersionError !== undefined) throw this.setAPIVersionError;
  }

  open(clusterFile?: string): FakeFdbDatabase {
    this.opened.push(clusterFile);
    if (this.openError !== undefined) throw this.openError;
    return this.db;
  }
}
