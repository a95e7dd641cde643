import { TupleError } from './error';
import type { Tuple, TupleItem, TupleRange } from './item';
import { packPrefixed, packPrefixedWithVersionstamp, rangePrefixed, unpackFrom } from './pack';

/**
 * A region of the key space: every key in it starts with `key`. Keys are built by packing tuples after
 * that prefix, and read back by unpacking what follows it.
 */
export class Subspace {
  /** The prefix every key of this subspace starts with. Treat as read-only. */
  readonly key: Buffer;

  /**
   * The subspace whose prefix is `rawPrefix` followed by the packing of `prefix`.
   *
   * @param prefix - tuple elements that name the subspace, e.g. `['users']`
   * @param rawPrefix - bytes to put before them, e.g. a directory's short prefix
   */
  constructor(prefix: Tuple = [], rawPrefix: Uint8Array = new Uint8Array(0)) {
    if (!(rawPrefix instanceof Uint8Array)) throw new TupleError('TUPLE_ENCODE', 'a raw prefix must be a Uint8Array');
    this.key = packPrefixed(rawPrefix, prefix);
  }

  /** The subspace of all keys starting with `prefix`, used as is (not a packed tuple). */
  static fromRaw(prefix: Uint8Array): Subspace {
    return new Subspace([], prefix);
  }

  /** The key for `tuple` in this subspace: the prefix followed by the packing of `tuple`. */
  pack(tuple: Tuple = []): Buffer {
    return packPrefixed(this.key, tuple);
  }

  /**
   * As the free function `packWithVersionstamp`, inside this subspace: the 4-byte offset at the end
   * counts from the start of the key, prefix included.
   */
  packWithVersionstamp(tuple: Tuple): Buffer {
    return packPrefixedWithVersionstamp(this.key, tuple);
  }

  /**
   * The tuple that `key` holds after the prefix.
   *
   * @throws TupleError `TUPLE_SUBSPACE` if `key` is not in this subspace, `TUPLE_DECODE` if what follows
   * the prefix is not a tuple.
   */
  unpack(key: Uint8Array): TupleItem[] {
    if (!this.contains(key)) throw new TupleError('TUPLE_SUBSPACE', 'key is not in this subspace');
    return unpackFrom(key, this.key.length);
  }

  /** The keys of all tuples in this subspace that extend `tuple` (by default, all tuples in it). */
  range(tuple: Tuple = []): TupleRange {
    return rangePrefixed(this.key, tuple);
  }

  /** Whether `key` starts with this subspace's prefix. */
  contains(key: Uint8Array): boolean {
    const prefix = this.key;
    if (!(key instanceof Uint8Array) || key.length < prefix.length) return false;
    for (let i = 0; i < prefix.length; i++) if (key[i] !== prefix[i]) return false;
    return true;
  }

  /** The subspace inside this one whose prefix adds the packing of `tuple`. */
  subspace(tuple: Tuple): Subspace {
    return new Subspace(tuple, this.key);
  }
}
