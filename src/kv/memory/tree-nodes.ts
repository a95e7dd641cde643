import { Buffer } from 'node:buffer';
import type BTree from 'sorted-btree';
import { compareBytes } from '../contract/bytes';

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
/** What the last {@link searchFrom} knew at its end (see {@link searchedShared}, {@link searchedSharedHi}). */
let endSharedLo = 0;
let endSharedHi = 0;

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
  endSharedLo = sharedLo;
  endSharedHi = sharedHi;
  return lo;
}

/**
 * The leading bytes the target of the last {@link searchFrom} shares with both keys bracketing the
 * position it returned: every key of the child there shares them too, so the search one level down
 * starts from them.
 */
export function searchedShared(): number {
  return endSharedLo < endSharedHi ? endSharedLo : endSharedHi;
}

/** The leading bytes the target of the last {@link searchFrom} shares with the key at the position it returned. */
export function searchedSharedHi(): number {
  return endSharedHi;
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
    const lo = searchFrom(keys, key, 0, keys.length, shared, shared);
    if (lo === keys.length) return undefined;
    if (node.children === undefined) {
      // The key at `lo` is the first at or after `key`: it is `key` if it shares all of it and no more.
      if (searchedSharedHi() !== key.length || keys[lo].length !== key.length) return undefined;
      heldAt = lo;
      return node;
    }
    shared = searchedShared();
    node = node.children[lo];
  }
}

/**
 * The last two leaves that in-place writes to one store's tree reached ({@link ownedLeafOf},
 * {@link putOwned}), where the next key is looked up first: the keys a commit writes are often in
 * one leaf (a queue's size, counters and version key), and the next commit on the same structure
 * writes the same leaves again (a list's version key and its last item). A key between a leaf's first
 * and last keys can only be in that leaf, and a leaf found on a path of the tree's own stays in the
 * tree and its own while the tree is written only in place (the writes here move no leaf out of it).
 * The store makes it {@link forget} them before every write through the tree's own methods (a delete
 * or a range clear may merge a leaf out of the tree) and never uses them for another tree (a commit
 * that finds readers writes to a clone).
 */
export class RecentLeaves {
  private tree: BTree<Buffer, Buffer> | undefined;
  private recent: TreeNode | undefined;
  private before: TreeNode | undefined;
  /**
   * The leaf {@link deleteOwned} last removed a key from, with the internal nodes on the path to it
   * (root first) and its place among its parent's children: the next pop's head item is most often
   * the next key of the same leaf. The path stays the tree's own as the leaf does (see above), and
   * in-place writes change no internal node's children.
   */
  private deleteTree: BTree<Buffer, Buffer> | undefined;
  private deleteLeaf: TreeNode | undefined;
  private deletePath: TreeNode[] = [];
  private deleteAt = 0;

  forget(): void {
    this.tree = this.recent = this.before = undefined;
    this.deleteTree = this.deleteLeaf = undefined;
  }

  /**
   * Removes `key` in place from the leaf the last in-place delete of `tree` used, if it holds `key`:
   * true when removed, false when `BTree.delete` must remove it (see {@link deleteOwned}); `undefined`
   * when that leaf does not hold `key`.
   */
  deleteFromRemembered(tree: BTree<Buffer, Buffer>, key: Buffer): boolean | undefined {
    const leaf = this.deleteLeaf;
    if (tree !== this.deleteTree || leaf === undefined) return undefined;
    const at = positionIn(leaf, key);
    if (at < 0) return undefined;
    return removeFromLeaf(tree, leaf, at, this.deletePath, this.deletePath.length, this.deleteAt);
  }

  /** Remembers the leaf an in-place delete of `tree` used, reached through `path[0..depth)`, as child `at` of the last. */
  rememberDelete(tree: BTree<Buffer, Buffer>, leaf: TreeNode, path: readonly TreeNode[], depth: number, at: number): void {
    if (leaf === this.deleteLeaf && tree === this.deleteTree) return;
    this.deleteTree = tree;
    this.deleteLeaf = leaf;
    const kept = this.deletePath;
    kept.length = depth;
    for (let d = 0; d < depth; d++) kept[d] = path[d];
    this.deleteAt = at;
  }

  /** The remembered leaf of `tree` that holds `key` (its position is then {@link leafIndex}), if any. */
  find(tree: BTree<Buffer, Buffer>, key: Buffer): TreeNode | undefined {
    if (tree !== this.tree) return undefined;
    const recent = this.recent;
    if (recent !== undefined && (heldAt = positionIn(recent, key)) >= 0) return recent;
    const before = this.before;
    if (before === undefined || (heldAt = positionIn(before, key)) < 0) return undefined;
    this.before = recent;
    this.recent = before;
    return before;
  }

  /** Remembers `leaf`, reached on a path of `tree`'s own. */
  remember(tree: BTree<Buffer, Buffer>, leaf: TreeNode): void {
    if (tree !== this.tree) {
      this.tree = tree;
      this.before = undefined;
    } else if (leaf === this.recent) {
      return;
    } else {
      this.before = this.recent;
    }
    this.recent = leaf;
  }
}

/**
 * Where `key` is in `leaf`, when it is stored there; -1 when it lies outside the leaf's keys or is not
 * stored. Two comparisons with the leaf's first and last keys, then a search between them from the
 * bytes they share with `key`.
 */
function positionIn(leaf: TreeNode, key: Buffer): number {
  const keys = leaf.keys;
  const n = keys.length;
  if (n === 0) return -1;
  const first = compareFrom(key, keys[0], 0);
  if (first <= 0) return first === 0 ? 0 : -1;
  const last = compareFrom(key, keys[n - 1], 0);
  if (last >= 0) return last === 0 ? n - 1 : -1;
  const at = searchFrom(keys, key, 1, n - 1, first - 1, -last - 1);
  return searchedSharedHi() === key.length && keys[at].length === key.length ? at : -1;
}

/**
 * The leaf holding `key` (its position there is then {@link leafIndex}), if `key` is stored and no
 * node on the path to it is shared with another tree: the leaf's values may then be replaced in place
 * without changing any other tree (what `BTree.set` does after copying the shared nodes on the path).
 * `undefined` otherwise. Looks in the leaves `recent` remembers first, and remembers the one found.
 */
export function ownedLeafOf(tree: BTree<Buffer, Buffer>, key: Buffer, recent?: RecentLeaves): TreeNode | undefined {
  const remembered = recent?.find(tree, key);
  if (remembered !== undefined) return remembered;
  const root = rootOf(tree);
  const leaf = root === undefined ? undefined : leafHolding(root, key, true);
  // A leaf made without values shares one empty array with every such leaf: never written here.
  if (leaf === undefined || leaf.values.length !== leaf.keys.length) return undefined;
  recent?.remember(tree, leaf);
  return leaf;
}

/**
 * The internal nodes on the path {@link replaceOwnedRange}, {@link deleteOwned} or {@link putOwned}
 * descended, and the child taken in each (by {@link replaceOwnedRange}).
 */
const pathNodes: TreeNode[] = [];
const pathAt: number[] = [];

/** An internal node's cached count of the pairs under it, as `sorted-btree` 2.x keeps it. */
interface SizedNode {
  _size: number;
}

/**
 * Removes `key` from `tree` in place, where `BTree.delete` would change nothing but the key's leaf and
 * its ancestors' cached sizes: the path to the key is the tree's own (no node on it shared with another
 * tree), the key is not its leaf's largest (which each ancestor keeps as the leaf's key), and the leaf
 * is not left for a merge (`BTree.delete` merges a leaf left at half the node size or less with a
 * neighbour when both fit in one node, and a neighbour at half or less with it). Then the key and its
 * value leave the leaf and each ancestor's cached size drops by one: one descent as
 * {@link leafHolding}'s, where `BTree.delete` goes through `editRange` (each level's range search, a
 * callback per pair, each ancestor's key and size recomputed). Returns true when `key` is gone
 * (including when it was never stored), false (having changed nothing) when `BTree.delete` should
 * remove it. A queue pop's removal of its head item is the case this is for: all but the last key of
 * each leaf go in place.
 */
export function deleteOwned(tree: BTree<Buffer, Buffer>, key: Buffer, recent?: RecentLeaves): boolean {
  const remembered = recent?.deleteFromRemembered(tree, key);
  if (remembered !== undefined) return remembered;
  const root = rootOf(tree);
  if (root === undefined) return false;
  let node = root;
  let depth = 0;
  let shared = 0;
  let taken = 0;
  for (;;) {
    const keys = node.keys;
    const lo = searchFrom(keys, key, 0, keys.length, shared, shared);
    // Past every key under this node: not stored.
    if (lo === keys.length) return true;
    if (node.children === undefined) {
      if (searchedSharedHi() !== key.length || keys[lo].length !== key.length) return true;
      if (!removeFromLeaf(tree, node, lo, pathNodes, depth, taken)) return false;
      recent?.rememberDelete(tree, node, pathNodes, depth, taken);
      return true;
    }
    if (node.isShared === true || typeof (node as unknown as Partial<SizedNode>)._size !== 'number') return false;
    pathNodes[depth++] = node;
    taken = lo;
    shared = searchedShared();
    node = node.children[lo];
  }
}

/**
 * {@link deleteOwned}'s removal of the key at `lo` of `leaf`, child `taken` of `path[depth - 1]` on a
 * path of the tree's own from the root (`path[0..depth)`): false, having changed nothing, where
 * `BTree.delete` must remove it (a shared leaf, the leaf's largest key, a leaf left for a merge).
 */
function removeFromLeaf(tree: BTree<Buffer, Buffer>, leaf: TreeNode, lo: number, path: readonly TreeNode[], depth: number, taken: number): boolean {
  const keys = leaf.keys;
  const values = leaf.values;
  const n = keys.length;
  if (leaf.isShared === true || lo === n - 1 || values.length !== n) return false;
  if (depth > 0 && n - 1 <= tree.maxNodeSize >> 1 && mayMerge(path[depth - 1].children!, taken, n - 1, tree.maxNodeSize)) return false;
  for (let i = lo + 1; i < n; i++) {
    keys[i - 1] = keys[i];
    values[i - 1] = values[i];
  }
  keys.pop();
  values.pop();
  for (let d = 0; d < depth; d++) (path[d] as unknown as SizedNode)._size--;
  return true;
}

/**
 * Whether `BTree.delete` would merge child `at` of `siblings`, left with `size` keys (at most half of
 * `max`), with a neighbour: with the next one if both fit in one node, with the one before if that is
 * at most half full too and both fit.
 */
function mayMerge(siblings: readonly TreeNode[], at: number, size: number, max: number): boolean {
  const after = siblings[at + 1];
  if (after !== undefined && after.keys.length + size <= max) return true;
  const before = at > 0 ? siblings[at - 1] : undefined;
  return before !== undefined && before.keys.length <= max >> 1 && before.keys.length + size <= max;
}

/** Per level of the path {@link putOwned} descended: whether `key` goes past every key under that node. */
const pathPast: boolean[] = [];

/**
 * Gives `key` the value `value` in place, where `BTree.set` would change nothing but the key's leaf and
 * its ancestors' keys and cached sizes: the path to where the key goes is the tree's own (no node on it
 * shared with another tree) and, when the key is not stored yet, its leaf has room for one more, or the
 * leaf before it has (the leaf then passes its first pair there, as `BTree.set` does; with neither,
 * `BTree.set` splits it). A stored key gets the value; a new one goes into the leaf, each ancestor's
 * cached size grows by one, and where it goes past every key under an ancestor (an append at the end
 * of the tree, such as a list push or a queue's versionstamped item in a store that ends with them)
 * that ancestor keeps it as its last child's key. One descent as {@link leafHolding}'s, where
 * `BTree.set` compares whole keys at each level and recomputes each ancestor's key and size. Returns
 * false, having changed nothing, when `BTree.set` should write it. The tree keeps `key` itself.
 */
export function putOwned(tree: BTree<Buffer, Buffer>, key: Buffer, value: Buffer, recent?: RecentLeaves): boolean {
  const remembered = recent?.find(tree, key);
  if (remembered !== undefined) {
    remembered.values[heldAt] = value;
    return true;
  }
  const root = rootOf(tree);
  if (root === undefined) return false;
  let node = root;
  let depth = 0;
  let shared = 0;
  // Once `key` is past every key under a node, it is past every key under the node's last child too:
  // below there it goes at the end of each node, with nothing to search or compare.
  let past = false;
  // The child taken in the last internal node.
  let taken = 0;
  for (;;) {
    if (node.isShared === true) return false;
    const keys = node.keys;
    let n = keys.length;
    let at = past ? n : searchFrom(keys, key, 0, n, shared, shared);
    if (node.children === undefined) {
      const values = node.values;
      if (values.length !== n) return false;
      if (at < n && searchedSharedHi() === key.length && keys[at].length === key.length) {
        values[at] = value;
        recent?.remember(tree, node);
        return true;
      }
      // A leaf made without values shares one empty array with every such leaf: never written here.
      if (n === 0) return false;
      if (n >= tree.maxNodeSize) {
        // Full: as `BTree.set` does before it splits a leaf, its first pair moves to the end of the
        // leaf before it (under the same parent) if that has room and the key goes after that pair.
        if (depth === 0 || at === 0 || !shiftLeft(pathNodes[depth - 1], taken, node, tree.maxNodeSize)) return false;
        n--;
        at--;
      }
      for (let i = n; i > at; i--) {
        keys[i] = keys[i - 1];
        values[i] = values[i - 1];
      }
      keys[at] = key;
      values[at] = value;
      for (let d = 0; d < depth; d++) {
        const ancestor = pathNodes[d];
        (ancestor as unknown as SizedNode)._size++;
        if (pathPast[d]) ancestor.keys[ancestor.keys.length - 1] = key;
      }
      recent?.remember(tree, node);
      return true;
    }
    if (typeof (node as unknown as Partial<SizedNode>)._size !== 'number' || n === 0) return false;
    // Past every key under this node: the key goes at the end of its last child, which it then ends.
    if (at === n) {
      at = n - 1;
      past = true;
    } else {
      shared = searchedShared();
    }
    pathNodes[depth] = node;
    pathPast[depth++] = past;
    taken = at;
    node = node.children[at];
  }
}

/**
 * Moves the first pair of `leaf`, child `at` of `parent`, to the end of the child before it, if that is
 * the tree's own and has room, and makes the moved key that child's key in `parent`; false, having
 * changed nothing, otherwise. Every ancestor's cached size stays: both leaves are under `parent`.
 */
function shiftLeft(parent: TreeNode, at: number, leaf: TreeNode, max: number): boolean {
  if (at === 0) return false;
  const left = parent.children![at - 1];
  const size = left.keys.length;
  if (left.isShared === true || size >= max || left.values.length !== size) return false;
  const { keys, values } = leaf;
  left.keys.push(keys[0]);
  left.values.push(values[0]);
  const n = keys.length;
  for (let i = 1; i < n; i++) {
    keys[i - 1] = keys[i];
    values[i - 1] = values[i];
  }
  keys.pop();
  values.pop();
  parent.keys[at - 1] = left.keys[size];
  return true;
}

/** Where {@link replaceOwnedRange} found its keys before it writes any value: runs of keys, one per leaf. */
const runLeaves: TreeNode[] = [];
const runAt: number[] = [];
const runFrom: number[] = [];
/** What {@link nextLeaf} returns for a leaf it may not write: one under a node shared with another tree. */
const SHARED: TreeNode = { keys: [], values: [] };

/**
 * Gives the sorted, unique `keys`, all inside `[begin, end)`, the `values` in place, if the keys the
 * tree stores in `[begin, end)` are exactly `keys` and no node on the paths to them is shared with
 * another tree; returns false, having changed nothing, otherwise. This is a range clear followed by
 * the sets of `keys`, as a document rewritten with the same shape does it: one descent (as
 * {@link leafHolding}'s) and a walk along the leaves, where the tree's own `editRange` compares every
 * key in full at each level and calls back for each pair.
 */
export function replaceOwnedRange(
  tree: BTree<Buffer, Buffer>,
  begin: Buffer,
  end: Buffer,
  keys: readonly Buffer[],
  values: readonly Buffer[],
): boolean {
  const root = rootOf(tree);
  if (root === undefined || keys.length === 0) return false;
  let node = root;
  let depth = 0;
  let shared = 0;
  let at: number;
  // Down to the first stored key at or after `begin`.
  for (;;) {
    if (node.isShared === true) return false;
    const nodeKeys = node.keys;
    const lo = searchFrom(nodeKeys, begin, 0, nodeKeys.length, shared, shared);
    if (lo === nodeKeys.length) return false;
    if (node.children === undefined) {
      at = lo;
      break;
    }
    pathNodes[depth] = node;
    pathAt[depth] = lo;
    depth++;
    shared = searchedShared();
    node = node.children[lo];
  }
  let leaf = node;
  // Keys inside the range share the bytes `begin` and `end` share: the stored keys are compared with
  // `keys` past those, and the last one found with `end` in full (so that all found are inside).
  const c = compareFrom(begin, end, 0);
  const inRange = c < 0 ? -c - 1 : 0;
  // The keys are found in runs, one per leaf: where each run starts in its leaf and in `keys`.
  let runs = 0;
  for (let found = 0; found < keys.length; found++) {
    if (found === 0 || at === leaf.keys.length) {
      while (at === leaf.keys.length) {
        const next = nextLeaf(depth, true);
        if (next === undefined || next === SHARED) return forget(runs, false);
        leaf = next;
        at = 0;
      }
      // A leaf made without values shares one empty array with every such leaf: never written here.
      if (leaf.values.length !== leaf.keys.length) return forget(runs, false);
      runLeaves[runs] = leaf;
      runAt[runs] = at;
      runFrom[runs++] = found;
    }
    if (!equalFrom(leaf.keys[at++], keys[found], inRange)) return forget(runs, false);
  }
  if (compareBytes(leaf.keys[at - 1], end) >= 0) return forget(runs, false);
  // No other stored key may lie in the range: the one after the last found must be at or after `end`.
  while (at === leaf.keys.length) {
    const next = nextLeaf(depth, false);
    if (next === undefined) break;
    leaf = next;
    at = 0;
  }
  if (at < leaf.keys.length && compareBytes(leaf.keys[at], end) < 0) return forget(runs, false);
  runFrom[runs] = keys.length;
  for (let r = 0; r < runs; r++) {
    const stored = runLeaves[r].values;
    let i = runAt[r];
    for (let k = runFrom[r]; k < runFrom[r + 1]; k++, i++) {
      // A value written again as it was keeps the stored Buffer: the new one then dies young, where
      // storing it would make the next scavenge copy it (most leaves of a rewritten document are
      // unchanged).
      const value = values[k];
      if (!equalFrom(stored[i], value, 0)) stored[i] = value;
    }
  }
  return forget(runs, true);
}

/**
 * Returns `result`, first letting go of the leaves {@link replaceOwnedRange} held when they were
 * many (a few are left to the next call, which overwrites them).
 */
function forget(runs: number, result: boolean): boolean {
  if (runs > 4) runLeaves.length = 0;
  return result;
}

/**
 * The leaf after the one {@link pathNodes} leads to (a `depth`-level path), moving the path there;
 * `undefined` after the last leaf; {@link SHARED} when `owned` and a node on the way is shared.
 */
function nextLeaf(depth: number, owned: boolean): TreeNode | undefined {
  let level = depth - 1;
  while (level >= 0 && pathAt[level] + 1 >= pathNodes[level].children!.length) level--;
  if (level < 0) return undefined;
  let node = pathNodes[level].children![++pathAt[level]];
  for (;;) {
    if (owned && node.isShared === true) return SHARED;
    if (node.children === undefined) return node;
    level++;
    pathNodes[level] = node;
    pathAt[level] = 0;
    node = node.children[0];
  }
}

/** Whether `a` and `b` hold the same bytes past their first `from` (compared from the end: keys of one range differ there). */
function equalFrom(a: Buffer, b: Buffer, from: number): boolean {
  const n = a.length;
  if (n !== b.length) return false;
  for (let i = n - 1; i >= from; i--) if (a[i] !== b[i]) return false;
  return true;
}
