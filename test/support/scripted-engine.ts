import { toBuffer } from '../../src/kv/contract/bytes';
import { KvError } from '../../src/kv/contract/errors';
import type { AtomicOp, Bytes, Engine, KeySelector, KeyValue, RangeOptions, ReadTransaction, Transaction, Watch } from '../../src/kv/contract/types';

/** What the next commit does: succeed, or fail with this error. */
export type CommitOutcome = 'ok' | Error;

/**
 * A fake engine whose commits follow a script, for testing `Database`'s retry loop on its own: it
 * records every commit, `onError`, `reset` and `cancel` in `log`, so a test states the exact sequence
 * the loop must produce. Only point reads and writes work (enough for the conveniences); everything
 * else throws. `onError` retries retryable `KvError`s at once, without the real engines' backoff.
 */
export class ScriptedEngine implements Engine {
  readonly name = 'scripted';
  readonly log: string[] = [];
  readonly transactions: ScriptedTransaction[] = [];
  readonly store = new Map<string, Buffer>();
  private readonly script: CommitOutcome[];

  /** Commits consume `script` in order; once it runs out, they succeed. */
  constructor(script: CommitOutcome[] = []) {
    this.script = [...script];
  }

  createTransaction(): ScriptedTransaction {
    const tr = new ScriptedTransaction(this);
    this.transactions.push(tr);
    return tr;
  }

  async close(): Promise<void> {}

  /** @internal */
  nextOutcome(): CommitOutcome {
    return this.script.shift() ?? 'ok';
  }
}

function describeOutcome(outcome: unknown): string {
  if (outcome === 'ok') return 'ok';
  if (outcome instanceof KvError) return outcome.name;
  return outcome instanceof Error ? `${outcome.constructor.name}` : String(outcome);
}

function unsupported(what: string): never {
  throw new Error(`ScriptedEngine: ${what} is not supported`);
}

export class ScriptedTransaction implements Transaction {
  private writes = new Map<string, Buffer | undefined>();
  private committedVersion = -1n;
  cancelled = false;
  attempt = 0;

  constructor(private readonly engine: ScriptedEngine) {}

  async get(key: Bytes): Promise<Buffer | undefined> {
    if (this.cancelled) throw new KvError(1025);
    const hex = toBuffer(key).toString('hex');
    return this.writes.has(hex) ? this.writes.get(hex) : this.engine.store.get(hex);
  }

  set(key: Bytes, value: Bytes): void {
    this.writes.set(toBuffer(key).toString('hex'), Buffer.from(toBuffer(value)));
  }

  clear(key: Bytes): void {
    this.writes.set(toBuffer(key).toString('hex'), undefined);
  }

  async commit(): Promise<void> {
    const outcome = this.cancelled ? new KvError(1025) : this.engine.nextOutcome();
    this.engine.log.push(`commit -> ${describeOutcome(outcome)}`);
    if (outcome !== 'ok') throw outcome;
    for (const [hex, value] of this.writes) {
      if (value === undefined) this.engine.store.delete(hex);
      else this.engine.store.set(hex, value);
    }
    this.committedVersion = 1n;
  }

  async onError(err: unknown): Promise<void> {
    if (err instanceof KvError && err.retryable) {
      this.engine.log.push(`onError(${err.name}) -> retry`);
      this.reset();
      return;
    }
    this.engine.log.push(`onError(${describeOutcome(err)}) -> rethrow`);
    throw err;
  }

  reset(): void {
    this.engine.log.push('reset');
    this.attempt++;
    this.writes = new Map();
    this.committedVersion = -1n;
  }

  cancel(): void {
    this.engine.log.push('cancel');
    this.cancelled = true;
  }

  getCommittedVersion(): bigint {
    return this.committedVersion;
  }

  getKey(_selector: KeySelector): Promise<Buffer> {
    return unsupported('getKey');
  }
  getRange(_begin: Bytes | KeySelector, _end: Bytes | KeySelector, _options?: RangeOptions): AsyncIterable<KeyValue> {
    return unsupported('getRange');
  }
  getRangeAll(_begin: Bytes | KeySelector, _end: Bytes | KeySelector, _options?: RangeOptions): Promise<KeyValue[]> {
    return unsupported('getRangeAll');
  }
  getReadVersion(): Promise<bigint> {
    return unsupported('getReadVersion');
  }

  getMetadataVersion(): Promise<Buffer | undefined> {
    return unsupported('getMetadataVersion');
  }

  bumpMetadataVersion(): void {
    unsupported('bumpMetadataVersion');
  }
  setReadVersion(): void {
    unsupported('setReadVersion');
  }
  disableReadYourWrites(): void {
    unsupported('disableReadYourWrites');
  }
  snapshot(): ReadTransaction {
    return unsupported('snapshot');
  }
  clearRange(_begin: Bytes, _end: Bytes): void {
    unsupported('clearRange');
  }
  atomicOp(_op: AtomicOp, _key: Bytes, _param: Bytes): void {
    unsupported('atomicOp');
  }
  add(_key: Bytes, _delta: number | bigint | Bytes): void {
    unsupported('add');
  }
  max(_key: Bytes, _param: Bytes): void {
    unsupported('max');
  }
  min(_key: Bytes, _param: Bytes): void {
    unsupported('min');
  }
  bitAnd(_key: Bytes, _param: Bytes): void {
    unsupported('bitAnd');
  }
  bitOr(_key: Bytes, _param: Bytes): void {
    unsupported('bitOr');
  }
  bitXor(_key: Bytes, _param: Bytes): void {
    unsupported('bitXor');
  }
  byteMin(_key: Bytes, _param: Bytes): void {
    unsupported('byteMin');
  }
  byteMax(_key: Bytes, _param: Bytes): void {
    unsupported('byteMax');
  }
  appendIfFits(_key: Bytes, _param: Bytes): void {
    unsupported('appendIfFits');
  }
  compareAndClear(_key: Bytes, _param: Bytes): void {
    unsupported('compareAndClear');
  }
  setVersionstampedKey(_keyWithOffset: Bytes, _value: Bytes): void {
    unsupported('setVersionstampedKey');
  }
  setVersionstampedValue(_key: Bytes, _valueWithOffset: Bytes): void {
    unsupported('setVersionstampedValue');
  }
  getVersionstamp(): Promise<Buffer> {
    return unsupported('getVersionstamp');
  }
  watch(_key: Bytes): Watch {
    return unsupported('watch');
  }
  addReadConflictRange(_begin: Bytes, _end: Bytes): void {
    unsupported('addReadConflictRange');
  }
  addReadConflictKey(_key: Bytes): void {
    unsupported('addReadConflictKey');
  }
  addWriteConflictRange(_begin: Bytes, _end: Bytes): void {
    unsupported('addWriteConflictRange');
  }
  addWriteConflictKey(_key: Bytes): void {
    unsupported('addWriteConflictKey');
  }
  getApproximateSize(): Promise<number> {
    return unsupported('getApproximateSize');
  }
}
