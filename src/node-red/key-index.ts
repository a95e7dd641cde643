import type { ReadTransaction, Transaction } from '../kv/contract/types';
import { pack, packWithVersionstamp, unpack, Versionstamp, type Subspace } from '../tuple';

/**
 * The root keys of each scope, in the order they were created: what `keys(scope)` lists (the memory
 * store lists a scope's keys in insertion order) and how `delete` and `clean` find a scope's
 * documents without reading them.
 *
 * ```
 * (k, scope, rootKey)          -> (versionstamp)   the key exists; when it was created
 * (o, scope, versionstamp)     -> (rootKey)        creation order
 * ```
 *
 * Both entries are written in the transaction that creates the key's document and cleared in the one
 * that removes it. The versionstamp is the creating commit's, with a user version ordering the keys
 * one transaction creates, so the order is the commit order across every process sharing the store.
 * Writes to an existing key read its `k` entry (a point read) and write nothing here, so they do not
 * conflict with each other through the index.
 */
export class KeyIndex {
  private readonly keys: Subspace;
  private readonly order: Subspace;

  constructor(subspace: Subspace) {
    this.keys = subspace.subspace(['k']);
    this.order = subspace.subspace(['o']);
  }

  /** The versionstamp the key was created with, or `undefined` when it is not indexed. One point read. */
  async created(tr: ReadTransaction, scope: string, rootKey: string): Promise<Versionstamp | undefined> {
    const value = await tr.get(this.keys.pack([scope, rootKey]));
    return value === undefined ? undefined : (unpack(value)[0] as Versionstamp);
  }

  /** Indexes a new key; `userVersion` orders keys created by one transaction. */
  add(tr: Transaction, scope: string, rootKey: string, userVersion: number): void {
    const stamp = Versionstamp.incomplete(userVersion);
    tr.setVersionstampedValue(this.keys.pack([scope, rootKey]), packWithVersionstamp([stamp]));
    tr.setVersionstampedKey(this.order.packWithVersionstamp([scope, stamp]), pack([rootKey]));
  }

  /** Removes a key's entries, given the versionstamp {@link created} returned. */
  remove(tr: Transaction, scope: string, rootKey: string, created: Versionstamp): void {
    tr.clear(this.keys.pack([scope, rootKey]));
    tr.clear(this.order.pack([scope, created]));
  }

  /** The scope's root keys in creation order. One range read. */
  async inOrder(tr: ReadTransaction, scope: string): Promise<string[]> {
    const { begin, end } = this.order.range([scope]);
    const entries = await tr.getRangeAll(begin, end);
    return entries.map((entry) => unpack(entry.value)[0] as string);
  }

  /** Up to `limit` of the scope's keys with their versionstamps, in key order. One range read. */
  async some(tr: ReadTransaction, scope: string, limit: number): Promise<{ rootKey: string; created: Versionstamp }[]> {
    const { begin, end } = this.keys.range([scope]);
    const entries = await tr.getRangeAll(begin, end, { limit });
    return entries.map((entry) => ({
      rootKey: this.keys.unpack(entry.key)[1] as string,
      created: unpack(entry.value)[0] as Versionstamp,
    }));
  }

  /** Every scope that has a key, in scope order: one limit-1 range read per scope. */
  async scopes(tr: ReadTransaction): Promise<string[]> {
    const scopes: string[] = [];
    let { begin } = this.keys.range();
    const { end } = this.keys.range();
    for (;;) {
      const [first] = await tr.getRangeAll(begin, end, { limit: 1 });
      if (first === undefined) return scopes;
      const scope = this.keys.unpack(first.key)[0] as string;
      scopes.push(scope);
      begin = this.keys.range([scope]).end;
    }
  }
}
