import { addHandedOver } from '../kv/client/hand-over';
import type { KeyValue, Transaction } from '../kv/contract/types';
import type { MergedOperation, Settled } from './combiner';
import { DocumentError } from '../document/errors';
import type { DocumentKeys } from '../document/keys/layout';
import type { JsonValue, TransactionOption } from '../document/types';
import { decodeInt64, encodeInt64, int64Json, INT64_MAX, INT64_MIN, SAFE_MAX, SAFE_MIN, toInt64 } from './int64';
import { Structure, type StructureScope, type StructureWriteOptions } from './structure';
import { bodyKey } from './structure-keys';

/**
 * A 64-bit signed integer counter, stored as 8 little-endian bytes at `<body>` so that {@link add} is
 * FoundationDB's atomic add: blind, it reads nothing and never conflicts with other adds. A missing
 * counter is 0. The JSON form (`collection.get`) is the number (a bigint beyond ±(2^53−1)).
 *
 * Numbers: amounts and values are safe integers or bigints within int64 (DELTA_INVALID /
 * INVALID_VALUE otherwise, never rounded). {@link add} wraps around at int64 as FDB's add does;
 * {@link incr} and {@link decr}, which read, refuse to go outside the safe-integer range
 * (NUMBER_TOO_BIG, nothing written), so the numbers they return are exact; {@link getBigInt} reads
 * the whole int64 range.
 */
/** The merge key of concurrent increments (see combiner.ts). */
const INCREMENT = {};
/** The merge key of concurrent blind adds. */
const ADD = {};
/** The outcome of a merged blind add (shared: the combiner only reads it). */
const ADDED: Settled<void> = { ok: true, value: undefined };

export class DocCounter extends Structure {
  readonly kind = 'counter' as const;

  /**
   * Adds `by` (negative to subtract), returning nothing: blind. Creates the counter if it does not
   * exist.
   *
   * Reads: the kind key only (written only at creation and removal). Writes: an atomic add to the
   * value, the version key (blind). Conflicts with: nothing but clear() and removal; concurrent adds,
   * incr and decr all commit without retrying (except the creation of a new counter by two writers at
   * once: one of them retries, once).
   *
   * @throws DocumentError DELTA_INVALID, WRONG_KIND.
   */
  add(by: number | bigint, opts?: StructureWriteOptions): Promise<void> {
    // Not async: it returns the write's own promise; what throws before is a rejection.
    try {
      const delta = toInt64(by, 'DELTA_INVALID', 'the amount');
      if (opts?.tr !== undefined || opts?.expiry !== undefined) return this.write(opts, (scope) => this.added(scope, delta));
      return this.writeMerged(this.adds, delta);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** {@link add}'s writes of `delta` (the sum of the merged calls'). */
  private added({ tr, keys, create }: StructureScope, delta: bigint): void {
    create();
    addHandedOver(tr, bodyKey(keys), encodeInt64(delta));
    this.changed(tr, keys);
  }

  /** Concurrent adds merged (see {@link addAll}), or one alone; one object per handle. */
  private readonly adds: MergedOperation<bigint, void> = {
    operation: ADD,
    runMany: (tr, deltas) => this.addAll(tr, deltas),
    alone: (delta) => this.attempt(undefined, (scope) => this.added(scope, delta)),
  };

  /**
   * Concurrent adds merged (structures/combiner.ts): one atomic add of the sum (wrapping at int64 as
   * the adds one after another would) and one version write. Reads nothing but the kind key.
   */
  private addAll(tr: Transaction, deltas: readonly bigint[]): Promise<Settled<void>[]> {
    return this.write({ tr }, (scope) => {
      this.added(
        scope,
        deltas.reduce((sum, d) => sum + d, 0n),
      );
      return deltas.map(() => ADDED);
    });
  }

  /**
   * Adds `by` (default 1) and returns the new value. Serializable: it reads the value (so two
   * concurrent incr never return the same value), which makes it conflict with every concurrent add,
   * incr, decr and set of the counter; the retry loop (or the caller's) resolves it. A missing counter
   * starts at 0.
   *
   * Reads: the kind key, the value. Writes: an atomic add to the value, the version key.
   *
   * @throws DocumentError DELTA_INVALID, NUMBER_TOO_BIG (the result is outside ±(2^53−1); nothing is
   *   written), WRONG_KIND.
   */
  incr(by: number | bigint = 1, opts?: StructureWriteOptions): Promise<number> {
    // Not async: it returns the write's own promise; what throws before is a rejection.
    try {
      return this.increment(toInt64(by, 'DELTA_INVALID', 'the amount'), opts);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** Subtracts `by` (default 1) and returns the new value; as {@link incr}. */
  decr(by: number | bigint = 1, opts?: StructureWriteOptions): Promise<number> {
    try {
      return this.increment(-toInt64(by, 'DELTA_INVALID', 'the amount'), opts);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /**
   * The value (0 for a missing counter). Reads: the kind key, the value (in a writing transaction,
   * conflicts with every concurrent change).
   *
   * @throws DocumentError NUMBER_TOO_BIG beyond ±(2^53−1) (use {@link getBigInt}), WRONG_KIND.
   */
  async get(opts: TransactionOption = {}): Promise<number> {
    return safe(await this.getBigInt(opts));
  }

  /** The value as a bigint: the whole int64 range. As {@link get}. */
  async getBigInt(opts: TransactionOption = {}): Promise<bigint> {
    return this.readWith(opts, readValue, async (_tr, _keys, value) => decodeInt64(value));
  }

  /**
   * Sets the value, blindly. Reads: the kind key. Writes: the value, the version key. Conflicts with
   * concurrent incr, decr (which read the value), not with add.
   *
   * @throws DocumentError INVALID_VALUE (not a safe integer or an int64 bigint), WRONG_KIND.
   */
  set(value: number | bigint, opts?: StructureWriteOptions): Promise<void> {
    // Not async: it returns the write's own promise; what throws before is a rejection.
    try {
      const n = toInt64(value, 'INVALID_VALUE', 'a counter value');
      return this.write(opts, ({ tr, keys, create }) => {
        create();
        tr.set(bodyKey(keys), encodeInt64(n));
        this.changed(tr, keys);
      });
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** Sets the value to 0 (the counter stays); as {@link set}. */
  reset(opts?: StructureWriteOptions): Promise<void> {
    return this.set(0, opts);
  }

  private increment(delta: bigint, opts: StructureWriteOptions | undefined): Promise<number> {
    if (opts?.tr !== undefined || opts?.expiry !== undefined) {
      return this.writeWith<number, Buffer | undefined>(opts, readValue, (scope, value) => this.incremented(scope, value, delta));
    }
    return this.writeMerged(this.increments, delta);
  }

  /** Concurrent increments merged (see {@link incrementAll}), or one alone; one object per handle. */
  private readonly increments: MergedOperation<bigint, number> = {
    operation: INCREMENT,
    runMany: (tr, deltas) => this.incrementAll(tr, deltas),
    alone: (delta) => this.attempt<number, Buffer | undefined>(readValue, (scope, value) => this.incremented(scope, value, delta)),
  };

  /** {@link incr} or {@link decr} of one amount, not merged: the new value, given the stored `value`. */
  private incremented({ tr, keys, create }: StructureScope, value: Buffer | undefined, delta: bigint): number {
    const result = safe(decodeInt64(value) + delta);
    create();
    addHandedOver(tr, bodyKey(keys), encodeInt64(delta));
    this.changed(tr, keys);
    return result;
  }

  /**
   * Concurrent increments merged (structures/combiner.ts): one read of the value and one add of the
   * sum; each delta's result is the running sum, and a delta whose result would leave ±(2^53−1) fails
   * alone (NUMBER_TOO_BIG) and adds nothing, as one increment after another would.
   */
  private incrementAll(tr: Transaction, deltas: readonly bigint[]): Promise<Settled<number>[]> {
    return this.writeWith({ tr }, readValue, ({ tr: t, keys, create }, value) => {
      const start = decodeInt64(value);
      let current = start;
      let applied = false;
      const outcomes = deltas.map((delta): Settled<number> => {
        try {
          const result = safe(current + delta);
          current += delta;
          applied = true;
          return { ok: true, value: result };
        } catch (error) {
          return { ok: false, error };
        }
      });
      if (applied) {
        create();
        addHandedOver(t, bodyKey(keys), encodeInt64(current - start));
        this.changed(t, keys);
      }
      return outcomes;
    });
  }
}

/** The prefetch of the counter's value, read with the kind check. */
function readValue(tr: Transaction, keys: DocumentKeys): Promise<Buffer | undefined> {
  return tr.get(bodyKey(keys));
}

function safe(n: bigint): number {
  if (n < SAFE_MIN || n > SAFE_MAX) {
    const where = n < INT64_MIN || n > INT64_MAX ? 'outside int64' : 'outside ±(2^53−1)';
    throw new DocumentError('NUMBER_TOO_BIG', `the counter's value ${n} is ${where}; getBigInt() reads it exactly`);
  }
  return Number(n);
}

/** The JSON form: the value. */
export function counterJsonForm(entries: readonly KeyValue[], keys: DocumentKeys): JsonValue {
  const body = bodyKey(keys);
  const entry = entries.find(({ key }) => key.equals(body));
  return int64Json(decodeInt64(entry?.value));
}
