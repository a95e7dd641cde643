import type { Collection } from '../collection';
import type { DocLayer } from '../open';
import { Subspace } from '../tuple';
import { KeyIndex } from './key-index';

/**
 * Where the context store keeps what, under its prefix (a string, default `'node-red'`):
 *
 * ```
 * (prefix, 'documents') ...          a doclayer document layer, default collection:
 *                                    one document per context root key, id `<scope> NUL <rootKey>`,
 *                                    content = the key's value (any JSON: number, string, array, object)
 * (prefix, 'keys') ...               the key index (see KeyIndex): which keys each scope has, in order
 * ```
 *
 * A scope is `global`, a flow id, or `<nodeId>:<flowId>`; a root key is the first part of a property
 * expression (`a` in `a.b[0]`). Because each root key is a document stored one key per leaf, `set`
 * of `a.b.c` writes only that subtree, and does not conflict with a concurrent write of `a.d`.
 */
export class ContextLayout {
  readonly index: KeyIndex;

  constructor(
    readonly documents: DocLayer,
    indexSubspace: Subspace,
  ) {
    this.index = new KeyIndex(indexSubspace);
  }

  /** The tuple prefixes of the document layer and of the index for a store prefix. */
  static prefixes(prefix: string): { documents: [string, string]; index: Subspace } {
    return { documents: [prefix, 'documents'], index: new Subspace([prefix, 'keys']) };
  }

  get collection(): Collection {
    return this.documents.collection();
  }

  /** The id of the document holding `rootKey` of `scope`. */
  docId(scope: string, rootKey: string): string {
    return `${scope}\u0000${rootKey}`;
  }
}
