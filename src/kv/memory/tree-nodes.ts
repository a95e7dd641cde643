import type BTree from 'sorted-btree';

/*
 * `sorted-btree`'s nodes as the memory engine reads them directly (see {@link TreeNode}): a descent
 * with a binary search per level that compares only the bytes past those a key shares with the keys
 * bracketing it, cheaper than the tree's own methods for the short-prefixed keys of one store.
 */

/**
 * A node of `sorted-btree` 2.x as its own code lays it out: a leaf holds sorted `keys` and their
 * `values`; an internal node holds `children` and, in `keys`, each child's largest key (its key i is
 * never below the largest key under child i, so a search by it finds the child a key belongs to).
 */
export interface TreeNode {
  readonly keys: Buffer[];
  readonly values: Buffer[];
  readonly children?: TreeNode[];
  /**
   * Set on a node that other trees may hold too (a clone's root, a cloned node's children, the
   * subtrees a union reuses): the tree copies such a node before it changes anything under it.
   */
  readonly isShared?: boolean;
}

/** The root of `tree` if its nodes are laid out as {@link TreeNode} says, else `undefined`. */
export function rootOf(tree: BTree<Buffer, Buffer>): TreeNode | undefined {
  const root = (tree as unknown as { _root?: Partial<TreeNode> })._root;
  if (root === undefined || !Array.isArray(root.keys)) return undefined;
  if (root.children === undefined ? !Array.isArray(root.values) : !Array.isArray(root.children)) return undefined;
  return root as TreeNode;
}

/**
 * `a` against `b` where their first `from` bytes are known to be equal: 0 when equal, else the sign
 * of `a - b` times 1 + the number of leading bytes they share (a lower bound of it past 128 bytes).
 */
export function compareFrom(a: Uint8Array, b: Uint8Array, from: number): number {
  const n = a.length < b.length ? a.length : b.length;
  if (n - from > 128) {
    const c = Buffer.compare(a, b);
    return c === 0 ? 0 : c < 0 ? -(from + 1) : from + 1;
  }
  for (let i = from; i < n; i++) {
    const x = a[i];
    const y = b[i];
    if (x !== y) return x < y ? -(i + 1) : i + 1;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -(n + 1) : n + 1;
}
/**
 * The first position in `keys[lo..hi]` whose key is at or after `target`, where the keys there lie
 * between two keys that share `sharedLo` and `sharedHi` leading bytes with `target` (`hi` when none
 * before it is).
 */
export function searchFrom(keys: readonly Buffer[], target: Buffer, lo: number, hi: number, sharedLo: number, sharedHi: number): number {
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const c = compareFrom(keys[mid], target, sharedLo < sharedHi ? sharedLo : sharedHi);
    if (c < 0) {
      lo = mid + 1;
      sharedLo = -c - 1;
    } else {
      hi = mid;
      sharedHi = c === 0 ? target.length : c - 1;
    }
  }
  return lo;
}

/** The position in the leaf {@link leafHolding} last returned (read it right after the call). */
let heldAt = 0;

/** Where in its leaf the key {@link leafHolding} last found is. */
export function leafIndex(): number {
  return heldAt;
}

/**
 * The leaf holding `key` (its position there is then {@link leafIndex}): one descent with a binary
 * search per level that compares only the bytes past those `key` shares with the keys bracketing it.
 * `undefined` when `key` is not stored or, with `ownedOnly`, when a node on the path to it is shared
 * with another tree.
 */
export function leafHolding(root: TreeNode, key: Buffer, ownedOnly: boolean): TreeNode | undefined {
  let node = root;
  let shared = 0;
  for (;;) {
    if (ownedOnly && node.isShared === true) return undefined;
    const keys = node.keys;
    let lo = 0;
    let hi = keys.length;
    let sharedLo = shared;
    let sharedHi = shared;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const c = compareFrom(keys[mid], key, sharedLo < sharedHi ? sharedLo : sharedHi);
      if (c < 0) {
        lo = mid + 1;
        sharedLo = -c - 1;
      } else {
        hi = mid;
        sharedHi = c === 0 ? key.length : c - 1;
      }
    }
    if (lo === keys.length) return undefined;
    if (node.children === undefined) {
      // The key at `lo` is the first at or after `key`, and shares `sharedHi` bytes with it.
      if (sharedHi !== key.length || keys[lo].length !== key.length) return undefined;
      heldAt = lo;
      return node;
    }
    shared = sharedLo < sharedHi ? sharedLo : sharedHi;
    node = node.children[lo];
  }
}

/**
 * The leaf holding `key` and its position there, if `key` is stored and no node on the path to it is
 * shared with another tree: the leaf's values may then be replaced in place without changing any
 * other tree (what `BTree.set` does after copying the shared nodes on the path). `undefined` otherwise.
 */
export function ownedLeafOf(tree: BTree<Buffer, Buffer>, key: Buffer): { readonly leaf: TreeNode; readonly index: number } | undefined {
  const root = rootOf(tree);
  const leaf = root === undefined ? undefined : leafHolding(root, key, true);
  // A leaf made without values shares one empty array with every such leaf: never written here.
  if (leaf === undefined || leaf.values.length !== leaf.keys.length) return undefined;
  return { leaf, index: heldAt };
}
