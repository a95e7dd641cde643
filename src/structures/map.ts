import { Buffer } from 'node:buffer';
import type { KeyValue, Transaction } from '../kv/contract/types';
import { DocumentError } from '../document/errors';
import { flatten, unflatten, type Entries } from '../document/values/flatten';
import { childKey, decodeStringElement, descendantsBegin, META_SIZE, subtreeEnd, type DocumentKeys } from '../document/keys/layout';
import { counterValue, encodeScalar, hasEntriesBelow, kindOf, OBJECT_VALUE } from '../document/values/leaf';
import { loneSurrogateIndex } from '../document/values/path';
import { clearSubtree, readSubtree, writeEntries } from '../document/values/tree';
import type { JsonValue, TransactionOption } from '../document/types';
import { readChildren, type Child } from './children';
import { keyOrder } from './repeats';
import { compareBytes } from '../kv/contract/bytes';
import { checkElementValue } from './element-value';
import { decodeInt64, encodeInt64, INT64_MAX, INT64_MIN, SAFE_MAX, SAFE_MIN, toInt64 } from './int64';
import type { MergedOperation, Settled } from './combiner';
import { Structure, type IterateOptions, type StructureScope } from './structure';
import { bodyKey } from './structure-keys';
import type { StructureWriteOptions } from './structure';

const EMPTY = Buffer.alloc(0);
const ONE = Buffer.from([1, 0, 0, 0, 0, 0, 0, 0]);
/** The merge key of concurrent sets (see combiner.ts). */
const SET = {};
/** The outcome of a merged set that wrote its value (shared: the combiner only reads it). */
const DONE: Settled<void> = { ok: true, value: undefined };

/** A set's arguments, for a merged run. */
interface MapSet<V> {
  readonly key: string;
  readonly value: V;
}

const MINUS_ONE = Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);

/**
 * A map from strings to JSON values: an object document below the structure's body (`<body>` holds an
 * object marker, each value is flattened at `<body> tuple(key)`, one key per leaf), with its number of
 * keys in the metadata key `'s'` kept by atomic add. The JSON form (`collection.get`) is the object.
 * Keys come back in stored order (by UTF-8 bytes).
 *
 * Concurrency: every operation on one key reads only that key's entry (or its subtree) and the kind
 * key; sizes change by atomic add. Operations on different keys never conflict.
 */
export class DocMap<V = JsonValue> extends Structure {
  readonly kind = 'map' as const;

  /**
   * The value at `key`, or `undefined`. Reads: the kind key, 1 range read of the value's subtree.
   *
   * @throws DocumentError INVALID_ARGUMENT (key), WRONG_KIND.
   */
  async get(key: string, opts: TransactionOption = {}): Promise<V | undefined> {
    checkKey(key);
    return this.readWith(
      opts,
      (tr, keys) => readSubtree(tr, childKey(bodyKey(keys), key)),
      async (_tr, _keys, value) => value as V | undefined,
    );
  }

  /**
   * Sets `key` to `value`. Creates the map if it does not exist.
   *
   * Reads: the kind key, the key's entry (is it new?). Writes: a range clear of the old value if it
   * has keys below its entry (an object, an array, a long string; a short scalar is overwritten), the
   * value's entries (one per leaf), an atomic add to the size if the key is new, the version key.
   * Conflicts with: concurrent set, delete or increment of the same key; clear() and removal.
   *
   * @throws DocumentError INVALID_ARGUMENT (key), INVALID_VALUE, VALUE_TOO_DEEP, KEY_TOO_LARGE,
   *   DOCUMENT_TOO_LARGE, WRONG_KIND; nothing is written when any is thrown.
   */
  set(key: string, value: V, opts?: StructureWriteOptions): Promise<void> {
    // Not async: it returns the write's own promise; what throws before is a rejection.
    try {
      checkKey(key);
      checkElementValue(value, 'the value');
      if (opts?.tr !== undefined || opts?.expiry !== undefined) {
        const [read, setAt] = this.setSteps(key, value);
        return this.writeWith<void, Buffer | undefined>(opts, read, setAt);
      }
      return this.writeMerged(this.sets, { key, value });
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** The prefetch and the step of {@link set} of one key, not merged. */
  private setSteps(
    key: string,
    value: V,
  ): [(tr: Transaction, keys: DocumentKeys) => Promise<Buffer | undefined>, (scope: StructureScope, old: Buffer | undefined) => void] {
    // The entry's key, packed once per attempt by the prefetch, which runs before the write's step.
    let at: Buffer = EMPTY;
    return [(tr, keys) => tr.get((at = childKey(bodyKey(keys), key))), (scope, old) => this.setAt(scope, at, value, old)];
  }

  /** {@link set} of one key, not merged: writes `value` at the entry `at`, which held `old`. */
  private setAt({ tr, keys, create }: StructureScope, at: Buffer, value: V, old: Buffer | undefined): void {
    const entries = flatten(value as JsonValue, at, this.access.kv.maxKeyBytes);
    create();
    if (old === undefined) tr.add(keys.meta(META_SIZE), ONE);
    else if (hasEntriesBelow(old)) clearSubtree(tr, at);
    writeEntries(tr, entries);
    this.changed(tr, keys);
  }

  /** Concurrent sets merged (see {@link setAll}), or one alone; one object per handle. */
  private readonly sets: MergedOperation<MapSet<V>, void> = {
    operation: SET,
    runMany: (tr, sets) => this.setAll(tr, sets),
    alone: ({ key, value }) => this.attempt<void, Buffer | undefined>(...this.setSteps(key, value)),
  };

  /**
   * Concurrent sets merged (structures/combiner.ts): the keys' entries read together, each value
   * written after the values of earlier calls with the same key (a key set twice in the batch holds
   * the later value, and is new only for the first call), the size added once and the version written
   * once. A value that cannot be written (too large a key, say) fails its call alone and writes nothing.
   *
   * The calls are read and written in key order, after the size and the version (which sort before
   * the body): the transaction's read conflicts and written keys then come sorted, and its commit does
   * not sort them again.
   */
  private setAll(tr: Transaction, sets: readonly MapSet<V>[]): Promise<Settled<void>[]> {
    // The entries' keys and the calls in their order, made once for the reads and the writes.
    let entries: Buffer[] = [];
    let order: number[] = [];
    let entriesFor: DocumentKeys | undefined;
    const entriesOf = (keys: DocumentKeys): Buffer[] => {
      if (entriesFor !== keys) {
        const body = bodyKey(keys);
        entries = sets.map(({ key }) => childKey(body, key));
        order = keyOrder(entries, compareBytes);
        entriesFor = keys;
      }
      return entries;
    };
    return this.writeWith(
      { tr },
      (t, keys) => {
        const at = entriesOf(keys);
        return Promise.all(order.map((i) => t.get(at[i])));
      },
      ({ tr: t, keys, create }, found) => {
        const at = entriesOf(keys);
        const outcomes = new Array<Settled<void>>(sets.length);
        // Per position in key order: the value's entries (none when its call failed), and whether the
        // entry's subtree is cleared before they are written.
        const values = new Array<Entries | undefined>(order.length);
        const clears = new Uint8Array(order.length);
        let added = 0;
        let written = false;
        // Whether the key of the previous position holds a value written in this batch (the calls of a
        // repeated key are adjacent, in call order).
        let held = false;
        for (let j = 0; j < order.length; j++) {
          const i = order[j];
          const entry = at[i];
          const before: boolean = held && compareBytes(at[order[j - 1]], entry) === 0;
          held = before;
          try {
            values[j] = flatten(sets[i].value as JsonValue, entry, this.access.kv.maxKeyBytes);
          } catch (error) {
            outcomes[i] = { ok: false, error };
            continue;
          }
          const old = found?.[j];
          if (old === undefined && !before) added++;
          // A value written earlier in the batch may have entries below even if the stored one has none.
          else if (before || (old !== undefined && hasEntriesBelow(old))) clears[j] = 1;
          held = true;
          written = true;
          outcomes[i] = DONE;
        }
        if (!written) return outcomes;
        create();
        if (added > 0) t.add(keys.meta(META_SIZE), encodeInt64(BigInt(added)));
        this.changed(t, keys);
        for (let j = 0; j < order.length; j++) {
          const flattened = values[j];
          if (flattened === undefined) continue;
          if (clears[j] === 1) clearSubtree(t, at[order[j]]);
          writeEntries(t, flattened);
        }
        return outcomes;
      },
    );
  }

  /**
   * Removes `key`; returns whether it was there.
   *
   * Reads: the kind key, the key's entry. Writes, if it was there: a clear of its value (a range clear
   * if it has keys below its entry, else a point clear), an atomic add to the size, the version key.
   * Conflicts as {@link set}.
   *
   * @throws DocumentError INVALID_ARGUMENT (key), WRONG_KIND.
   */
  async delete(key: string, opts: TransactionOption = {}): Promise<boolean> {
    checkKey(key);
    const entryOf = (keys: DocumentKeys) => childKey(bodyKey(keys), key);
    return this.writeWith(
      opts,
      (tr, keys) => tr.get(entryOf(keys)),
      async ({ tr, keys }, old) => {
        if (old === undefined) return false;
        const at = entryOf(keys);
        if (hasEntriesBelow(old)) clearSubtree(tr, at);
        else tr.clear(at);
        tr.add(keys.meta(META_SIZE), MINUS_ONE);
        this.changed(tr, keys);
        return true;
      },
    );
  }

  /**
   * Whether `key` is in the map. Reads: the kind key, the key's entry.
   *
   * @throws DocumentError INVALID_ARGUMENT (key), WRONG_KIND.
   */
  async has(key: string, opts: TransactionOption = {}): Promise<boolean> {
    checkKey(key);
    return this.readWith(
      opts,
      (tr, keys) => tr.get(childKey(bodyKey(keys), key)),
      async (_tr, _keys, found) => found !== undefined,
    );
  }

  /**
   * The number of keys. Reads: the kind key, the size key (in a writing transaction, conflicts with
   * every concurrent set of a new key and delete).
   *
   * @throws DocumentError WRONG_KIND.
   */
  async size(opts: TransactionOption = {}): Promise<number> {
    return this.readWith(
      opts,
      (tr, keys) => tr.get(keys.meta(META_SIZE)),
      async (_tr, _keys, size) => Number(decodeInt64(size)),
    );
  }

  /**
   * Adds `by` (default 1) to the integer at `key` and returns the result; a missing key is created
   * with `by`. Atomic: it reads the key's entry, so it conflicts only with concurrent writes of the
   * same key.
   *
   * Reads: the kind key, the key's entry. Writes: the entry, the size if new, the version key.
   *
   * @throws DocumentError DELTA_INVALID (by), PATH_MISMATCH (the value is not an integer; a double, even
   *   integral, is not), VALUE_CANNOT_INSERT (the result is outside int64), NUMBER_TOO_BIG (outside
   *   ±(2^53−1), which a number cannot hold exactly), KEY_TOO_LARGE, WRONG_KIND; nothing is written when any is thrown.
   */
  async increment(key: string, by: number | bigint = 1, opts: StructureWriteOptions = {}): Promise<number> {
    checkKey(key);
    const delta = toInt64(by, 'DELTA_INVALID', 'the amount');
    const entryOf = (keys: DocumentKeys) => childKey(bodyKey(keys), key);
    return this.writeWith(
      opts,
      (tr, keys) => tr.get(entryOf(keys)),
      async ({ tr, keys, create }, old) => {
        const at = entryOf(keys);
        if (at.length > this.access.kv.maxKeyBytes) {
          throw new DocumentError(
            'KEY_TOO_LARGE',
            `the entry's key would be ${at.length} bytes, over the engine's limit of ${this.access.kv.maxKeyBytes}`,
          );
        }
        let current = 0n;
        if (old !== undefined) {
          const stored = kindOf(old) === 'scalar' ? counterValue(old) : undefined;
          if (stored === undefined) throw new DocumentError('PATH_MISMATCH', `the value at ${JSON.stringify(key)} is not an integer`);
          current = stored;
        }
        const next = current + delta;
        if (next < INT64_MIN || next > INT64_MAX) throw new DocumentError('VALUE_CANNOT_INSERT', `${current} + ${delta} is outside int64`);
        if (next < SAFE_MIN || next > SAFE_MAX) {
          throw new DocumentError('NUMBER_TOO_BIG', `${current} + ${delta} is outside ±(2^53−1)`);
        }
        create();
        if (old === undefined) tr.add(keys.meta(META_SIZE), ONE);
        tr.set(at, encodeScalar(Number(next)));
        this.changed(tr, keys);
        return Number(next);
      },
    );
  }

  /**
   * All keys in stored order (by UTF-8 bytes). Reads: the kind key, 1 range read of the whole map.
   *
   * @throws DocumentError WRONG_KIND.
   */
  async keys(opts: TransactionOption = {}): Promise<string[]> {
    return (await this.entries(opts)).map(([key]) => key);
  }

  /** All values, in the order of {@link keys}; as {@link keys}. */
  async values(opts: TransactionOption = {}): Promise<V[]> {
    return (await this.entries(opts)).map(([, value]) => value);
  }

  /** All `[key, value]` pairs, in the order of {@link keys}; as {@link keys}. */
  async entries(opts: TransactionOption = {}): Promise<[string, V][]> {
    // The body is read with the kind check (its result unused if there is no map).
    return this.readWith(
      opts,
      (tr, keys) => {
        const body = bodyKey(keys);
        return readChildren(tr, body.length, descendantsBegin(body), subtreeEnd(body), Infinity);
      },
      async (_tr, keys, page) => {
        if (keys === undefined || page === undefined) return [];
        const bodyLength = bodyKey(keys).length;
        return page.children.map((child) => entryOf<V>(child, bodyLength));
      },
    );
  }

  /**
   * The `[key, value]` pairs in stored order, page by page (`pageSize` keys per range read, each page
   * in a transaction of its own unless `tr` is given).
   *
   * @throws DocumentError INVALID_ARGUMENT (pageSize), WRONG_KIND.
   */
  iterate(opts: IterateOptions = {}): AsyncGenerator<[string, V], void, undefined> {
    return this.pages(opts, async (tr, keys, cursor, pageSize) => {
      const body = bodyKey(keys);
      const page = await readChildren(tr, body.length, cursor ?? descendantsBegin(body), subtreeEnd(body), pageSize);
      return { items: page.children.map((child) => entryOf<V>(child, body.length)), next: page.next };
    });
  }

  [Symbol.asyncIterator](): AsyncGenerator<[string, V], void, undefined> {
    return this.iterate();
  }

  protected override initialize(tr: Transaction, keys: DocumentKeys): void {
    tr.set(bodyKey(keys), OBJECT_VALUE);
  }
}

function checkKey(key: unknown): asserts key is string {
  if (typeof key !== 'string') throw new DocumentError('INVALID_ARGUMENT', `a map key is a string, got ${typeof key}`);
  const at = loneSurrogateIndex(key);
  if (at >= 0) throw new DocumentError('INVALID_ARGUMENT', `a map key cannot hold a lone surrogate (at index ${at})`);
}

function entryOf<V>(child: Child, bodyLength: number): [string, V] {
  const key = decodeStringElement(child.key, bodyLength, child.key.length);
  return [key, unflatten(child.entries, 0, child.entries.length, child.key.length) as V];
}

/** The JSON form: the object below the body. */
export function mapJsonForm(entries: readonly KeyValue[], keys: DocumentKeys): JsonValue {
  const body = bodyKey(keys);
  const start = entries.findIndex(({ key }) => key.equals(body));
  if (start < 0) return {};
  return unflatten(entries, start, entries.length, body.length);
}
