import type { Transaction } from '../kv/types';
import { pack, unpack } from '../tuple';
import { DocumentError } from './errors';
import { systemKeys, type Layout } from './layout';

/**
 * The minimal collection registry: collection names to the ids that prefix their documents' keys.
 *
 * `_default._default` is id 0 and has no entry. Any other collection gets an id from 8 up (1-7 are
 * reserved, as in Couchbase), stored at `<prefix> 0x00 tuple('collection', scope, name)` as
 * `tuple(id)`, with the last id given at `<prefix> 0x00 tuple('collection-id')`.
 *
 * A collection is created by the first write to it, inside that write's transaction (its own or the
 * caller's), so a write that fails or whose transaction aborts leaves no trace; reads of a collection
 * that does not exist find nothing and create nothing. Ids never change once given, so each registry
 * caches them once they are known to be committed.
 */

export const DEFAULT_SCOPE = '_default';
export const DEFAULT_COLLECTION = '_default';
const FIRST_ID = 8;
const MAX_ID = 0xffffffff;

const NAME = /^[A-Za-z0-9-][A-Za-z0-9_%-]{0,250}$/;

/**
 * Checks a scope or collection name: 1-251 characters of `A-Z a-z 0-9 _ - %`, not starting with `_`
 * or `%`, except `_default`.
 *
 * @throws DocumentError INVALID_ARGUMENT
 */
export function checkName(name: unknown, what: 'scope' | 'collection'): string {
  if (typeof name !== 'string' || (name !== '_default' && !NAME.test(name))) {
    throw new DocumentError(
      'INVALID_ARGUMENT',
      `invalid ${what} name ${JSON.stringify(name)}: 1-251 characters of A-Z a-z 0-9 _ - %, not starting with _ or % (except _default)`,
    );
  }
  return name;
}

/**
 * Parses `collection()`'s argument: absent for `_default._default`, `scope.collection`, or a
 * collection name in the default scope.
 *
 * @throws DocumentError INVALID_ARGUMENT
 */
export function parseCollectionName(name: string | undefined): { scope: string; name: string } {
  if (name === undefined) return { scope: DEFAULT_SCOPE, name: DEFAULT_COLLECTION };
  if (typeof name !== 'string') {
    throw new DocumentError('INVALID_ARGUMENT', `a collection name is a string, got ${typeof name}`);
  }
  const parts = name.split('.');
  if (parts.length > 2) {
    throw new DocumentError('INVALID_ARGUMENT', `invalid collection name ${JSON.stringify(name)}: at most one '.'`);
  }
  if (parts.length === 1) return { scope: DEFAULT_SCOPE, name: checkName(parts[0], 'collection') };
  return { scope: checkName(parts[0], 'scope'), name: checkName(parts[1], 'collection') };
}

/** Name keys of collections created by a transaction not known to have committed. */
const createdIn = new WeakMap<Transaction, Set<string>>();

/** A collection's id, and for one that does not exist yet, how to create it with that id. */
export interface PlannedCollection {
  readonly id: number;
  /** Writes the registry entry (in the transaction it was planned in); absent when it exists. */
  readonly create?: () => void;
}

export class CollectionRegistry {
  private readonly ids = new Map<string, number>();

  constructor(private readonly layout: Layout) {}

  /** The id of a collection when known without a read, else `undefined`. */
  cached(scope: string, name: string): number | undefined {
    if (scope === DEFAULT_SCOPE && name === DEFAULT_COLLECTION) return 0;
    return this.ids.get(`${scope}.${name}`);
  }

  /**
   * The id of a collection as `tr` sees it (one point read unless cached), `undefined` when it does
   * not exist. Ids read from committed entries are cached: they never change.
   */
  async find(tr: Transaction, scope: string, name: string): Promise<number | undefined> {
    const known = this.cached(scope, name);
    if (known !== undefined) return known;
    const nameKey = this.nameKey(scope, name);
    const value = await tr.get(nameKey);
    if (value === undefined) return undefined;
    const id = idOf(value);
    // An entry this transaction wrote is not committed yet: the commit caches it.
    if (!createdIn.get(tr)?.has(nameKey.toString('latin1'))) this.ids.set(`${scope}.${name}`, id);
    return id;
  }

  /**
   * The id of a collection for a write in `tr`: the existing one, or the next free id with `create`,
   * which the caller runs once the write is sure to go ahead. Concurrent creators read the name key
   * and the last id and write both, so all but one conflict; their retries find the winner's entry.
   * The new id is cached once `tr` commits.
   */
  async plan(tr: Transaction, scope: string, name: string): Promise<PlannedCollection> {
    const existing = await this.find(tr, scope, name);
    if (existing !== undefined) return { id: existing };
    const lastKey = this.layout.system.pack(systemKeys.lastCollectionId);
    const last = await tr.get(lastKey);
    const id = last === undefined ? FIRST_ID : idOf(last) + 1;
    if (id > MAX_ID) throw new DocumentError('OUT_OF_RANGE', 'no collection ids left');
    const create = () => {
      const nameKey = this.nameKey(scope, name);
      tr.set(lastKey, pack([id]));
      tr.set(nameKey, pack([id]));
      let created = createdIn.get(tr);
      if (created === undefined) {
        created = new Set();
        createdIn.set(tr, created);
      }
      created.add(nameKey.toString('latin1'));
      tr.getVersionstamp().then(
        () => this.ids.set(`${scope}.${name}`, id),
        () => undefined,
      );
    };
    return { id, create };
  }

  private nameKey(scope: string, name: string): Buffer {
    return this.layout.system.pack(systemKeys.collection(scope, name));
  }
}

function idOf(value: Buffer): number {
  const [id] = unpack(value);
  if (typeof id !== 'number') throw new Error('doclayer: corrupt collection registry entry');
  return id;
}
