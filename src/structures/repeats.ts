/**
 * Repeats within a merged run of calls (a map key set twice in one batch, a set member added twice):
 * for each call, the index of the latest earlier call with an equal item, or -1; `undefined` when no
 * item repeats (the usual case), so that a run of distinct items allocates one array of indexes
 * (sorted once) rather than a hash set of n keys.
 */
export function earlierEquals<T>(items: readonly T[], compare: (a: T, b: T) => number): Int32Array | undefined {
  const order = items.map((_, i) => i).sort((a, b) => compare(items[a], items[b]) || a - b);
  let earlier: Int32Array | undefined;
  for (let j = 1; j < order.length; j++) {
    if (compare(items[order[j - 1]], items[order[j]]) !== 0) continue;
    earlier ??= new Int32Array(items.length).fill(-1);
    earlier[order[j]] = order[j - 1];
  }
  return earlier;
}

/**
 * The indexes of `items` in the order of `compare`, equal items in index order: a merged run's calls
 * in key order, the calls of a repeated item adjacent and in call order.
 */
export function keyOrder<T>(items: readonly T[], compare: (a: T, b: T) => number): number[] {
  return items.map((_, i) => i).sort((a, b) => compare(items[a], items[b]) || a - b);
}
