import type { AtomicOp, KeySelector, KeyValue } from '../../src/kv/contract/types';
import { applyAtomicOp } from './atomic-model';

/**
 * A plain-JS model of an FDB keyspace, deliberately naive (a Map plus a sort per query) so that it is
 * obviously right: the oracle that randomized conformance tests compare an engine's reads against.
 * Keys are held as lowercase hex, whose string order equals the unsigned bytewise order of the keys.
 */
export class KeyspaceModel {
  private readonly entries = new Map<string, Buffer>();

  clone(): KeyspaceModel {
    const copy = new KeyspaceModel();
    for (const [hex, value] of this.entries) copy.entries.set(hex, value);
    return copy;
  }

  get(key: Buffer): Buffer | undefined {
    return this.entries.get(key.toString('hex'));
  }

  set(key: Buffer, value: Buffer): void {
    this.entries.set(key.toString('hex'), value);
  }

  clear(key: Buffer): void {
    this.entries.delete(key.toString('hex'));
  }

  clearRange(begin: Buffer, end: Buffer): void {
    for (const key of this.keys()) {
      if (Buffer.compare(key, begin) >= 0 && Buffer.compare(key, end) < 0) this.clear(key);
    }
  }

  atomicOp(op: AtomicOp, key: Buffer, param: Buffer): void {
    const next = applyAtomicOp(op, this.get(key), param);
    if (next === undefined) this.clear(key);
    else this.set(key, next);
  }

  /** All keys, ascending. */
  keys(): Buffer[] {
    return [...this.entries.keys()].sort().map((hex) => Buffer.from(hex, 'hex'));
  }

  /**
   * FDB's key selector resolution: start from the last key `<` (or `<=`, when `orEqual`) the selector's
   * key, move `offset` keys forward (backward when negative); before the first key is `''`, past the
   * last is `'\xff'`.
   */
  resolve(selector: KeySelector): Buffer {
    const anchor = Buffer.from(selector.key);
    const keys = this.keys();
    const atOrBefore = keys.filter((k) => {
      const c = Buffer.compare(k, anchor);
      return c < 0 || (selector.orEqual && c === 0);
    }).length;
    const index = atOrBefore - 1 + selector.offset;
    if (index < 0) return Buffer.alloc(0);
    if (index >= keys.length) return Buffer.from([0xff]);
    return keys[index];
  }

  /** Pairs in `[resolve(begin), resolve(end))`, ascending or descending, at most `limit` (0: all). */
  range(begin: KeySelector, end: KeySelector, options: { limit?: number; reverse?: boolean } = {}): KeyValue[] {
    const from = this.resolve(begin);
    const to = this.resolve(end);
    let keys = this.keys().filter((k) => Buffer.compare(k, from) >= 0 && Buffer.compare(k, to) < 0);
    if (options.reverse) keys = keys.reverse();
    if (options.limit) keys = keys.slice(0, options.limit);
    return keys.map((key) => ({ key, value: this.get(key)! }));
  }
}
