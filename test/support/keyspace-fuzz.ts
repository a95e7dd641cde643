import { firstGreaterOrEqual } from '../../src/kv/contract/key-selector';
import type { AtomicOp, KeySelector, KeyValue, ReadTransaction, Transaction } from '../../src/kv/contract/types';
import { atomicCases } from './atomic-cases';
import type { KeyspaceModel } from './keyspace-model';
import { printable, printablePairs } from './printable';
import type { Random } from './random';

/** Reports a difference between the model and the transaction (when `expected` and `actual` differ). */
export type Same = (what: string, expected: unknown, actual: unknown) => void;

export interface KeyspaceFuzzOptions {
  /** The lowest selector offset drawn (the highest is 3). */
  minOffset: number;
  /** How often a range bound is a selector rather than a key. */
  selectorChance: number;
  /** Whether half of the writes go to a key the model holds, so that they hide and change stored data. */
  preferExisting: boolean;
}

const ATOMIC_OPS = Object.keys(atomicCases) as AtomicOp[];

/**
 * Random reads and writes over a small keyspace, checked against a {@link KeyspaceModel}: the
 * read-your-writes tests of the conformance suite and of `StagedTransaction` draw from it. The
 * alphabet is small, so that keys collide, nest (a, a\x00, ab) and sit at the edges of the keyspace.
 */
export class KeyspaceFuzz {
  private static readonly alphabet = [0x00, 0x61, 0x62, 0xfe];

  constructor(
    private readonly rnd: Random,
    private readonly options: KeyspaceFuzzOptions,
  ) {}

  key(): Buffer {
    return Buffer.from(Array.from({ length: this.rnd.pick([1, 2, 2, 3]) }, () => this.rnd.pick(KeyspaceFuzz.alphabet)));
  }

  value(): Buffer {
    return this.rnd.bytes(this.rnd.int(4));
  }

  selector(): KeySelector {
    const rnd = this.rnd;
    return { key: rnd.chance(0.1) ? Buffer.alloc(0) : this.key(), orEqual: rnd.chance(0.5), offset: rnd.between(this.options.minOffset, 3) };
  }

  bound(isEnd: boolean): Buffer | KeySelector {
    if (this.rnd.chance(this.options.selectorChance)) return this.selector();
    if (this.rnd.chance(0.15)) return isEnd ? Buffer.from([0xff]) : Buffer.alloc(0);
    return this.key();
  }

  /** A random write, made on `tr` and on `model`; returns its description. */
  write(tr: Transaction, model: KeyspaceModel): string {
    const rnd = this.rnd;
    const kind = rnd.pick(['set', 'set', 'clear', 'clearRange', 'atomic', 'atomic', 'atomic'] as const);
    const existing = this.options.preferExisting ? model.keys() : [];
    const key = existing.length > 0 && rnd.chance(0.5) ? rnd.pick(existing) : this.key();
    if (kind === 'set') {
      const value = this.value();
      tr.set(key, value);
      model.set(key, value);
      return `set ${printable(key)}=${printable(value)}`;
    }
    if (kind === 'clear') {
      tr.clear(key);
      model.clear(key);
      return `clear ${printable(key)}`;
    }
    if (kind === 'clearRange') {
      const [begin, end] = [key, this.key()].sort((x, y) => Buffer.compare(x, y));
      tr.clearRange(begin, end);
      model.clearRange(begin, end);
      return `clearRange ${printable(begin)}..${printable(end)}`;
    }
    const op = rnd.pick(ATOMIC_OPS);
    const current = model.get(key);
    const param = op === 'compareAndClear' && current !== undefined && rnd.chance(0.5) ? current : rnd.bytes(rnd.between(1, 4));
    tr.atomicOp(op, key, param);
    model.atomicOp(op, key, param);
    return `${op} ${printable(key)} ${printable(param)}`;
  }

  /**
   * One random read through `view` (named `viewName` in reports), compared with `model`: a point read,
   * a key selector, or a range read (a quarter of them streamed in batches of 1 to 3 pairs).
   */
  async read(view: ReadTransaction, viewName: string, model: KeyspaceModel, same: Same): Promise<void> {
    const rnd = this.rnd;
    const what = rnd.int(4);
    if (what === 0) {
      const keys = model.keys();
      const key = rnd.chance(0.5) && keys.length > 0 ? rnd.pick(keys) : this.key();
      same(`${viewName}.get(${printable(key)})`, printable(model.get(key)), printable(await view.get(key)));
    } else if (what === 1) {
      const selector = this.selector();
      same(`${viewName}.getKey(${show(selector)})`, printable(model.resolve(selector)), printable(await view.getKey(selector)));
    } else {
      const begin = this.bound(false);
      const end = this.bound(true);
      const options = { limit: rnd.pick([0, 0, 1, 2, 3, 5]), reverse: rnd.chance(0.5) };
      const expected = printablePairs(model.range(asSelector(begin), asSelector(end), options));
      let pairs: KeyValue[];
      if (rnd.chance(0.25)) {
        pairs = [];
        for await (const kv of view.getRange(begin, end, { ...options, batchSize: rnd.between(1, 3) })) pairs.push(kv);
      } else {
        pairs = await view.getRangeAll(begin, end, options);
      }
      same(`${viewName}.getRange(${show(begin)}, ${show(end)}, ${JSON.stringify(options)})`, expected, printablePairs(pairs));
    }
  }
}

function show(x: Buffer | KeySelector): string {
  return Buffer.isBuffer(x) ? printable(x) : `{${printable(Buffer.from(x.key))}, ${x.orEqual}, ${x.offset}}`;
}

function asSelector(x: Buffer | KeySelector): KeySelector {
  return Buffer.isBuffer(x) ? firstGreaterOrEqual(x) : x;
}
