import BTree from 'sorted-btree';
import { compareBytes } from '../contract/bytes';
import { kvError } from '../contract/errors';
import { type KeyWatch, sameValue } from '../client/key-watch';
import type { KeyRange } from '../contract/key-range';

/**
 * The watches of committed transactions, by key. After each commit the keys it wrote are compared with
 * each watch's value, and the watches whose key now holds a different value fire.
 */
export class WatchRegistry {
  private readonly byKey = new BTree<Buffer, Set<KeyWatch>>(undefined, compareBytes);
  private count = 0;

  constructor(private readonly limit: number) {}

  /**
   * Activates `watch`, whose key currently holds `current`. It fires at once if `current` already
   * differs from the watched value, and fails with too_many_watches (1032) when the limit is reached.
   */
  add(watch: KeyWatch, current: Buffer | undefined): void {
    if (watch.isSettled) return;
    if (!sameValue(watch.value, current)) {
      watch.trigger();
      return;
    }
    if (this.count >= this.limit) {
      watch.fail(kvError('too_many_watches', `at most ${this.limit} watches may be outstanding`));
      return;
    }
    let watches = this.byKey.get(watch.key);
    if (!watches) {
      watches = new Set();
      this.byKey.set(watch.key, watches);
    }
    watches.add(watch);
    this.count++;
    watch.onSettle = () => this.remove(watch);
  }

  /** Fires the watches on `keys` and in `ranges` whose value differs from what `read` returns now. */
  notify(keys: readonly Buffer[], ranges: readonly KeyRange[], read: (key: Buffer) => Buffer | undefined): void {
    if (this.count === 0) return;
    for (const key of keys) this.check(key, read);
    // Watched keys are few: step from one to the next (a range with none costs one lookup). A watch
    // that fires leaves the registry, which `nextHigherKey` of its key still steps past.
    for (const range of ranges) {
      let key = this.byKey.has(range.begin) ? range.begin : this.byKey.nextHigherKey(range.begin);
      while (key !== undefined && compareBytes(key, range.end) < 0) {
        this.check(key, read);
        key = this.byKey.nextHigherKey(key);
      }
    }
  }

  /** Whether a watch is outstanding on a key inside one of `ranges`. */
  watchesIn(ranges: readonly KeyRange[]): boolean {
    if (this.count === 0) return false;
    for (const range of ranges) {
      if (this.byKey.has(range.begin)) return true;
      const next = this.byKey.nextHigherKey(range.begin);
      if (next !== undefined && compareBytes(next, range.end) < 0) return true;
    }
    return false;
  }

  /** Cancels every watch: their promises resolve `false`. */
  cancelAll(): void {
    const all: KeyWatch[] = [];
    this.byKey.forEach((watches) => {
      all.push(...watches);
    });
    for (const watch of all) watch.cancel();
  }

  private check(key: Buffer, read: (key: Buffer) => Buffer | undefined): void {
    const watches = this.byKey.get(key);
    if (!watches) return;
    const value = read(key);
    for (const watch of [...watches]) {
      if (!sameValue(watch.value, value)) watch.trigger();
    }
  }

  private remove(watch: KeyWatch): void {
    const watches = this.byKey.get(watch.key);
    if (!watches?.delete(watch)) return;
    this.count--;
    if (watches.size === 0) this.byKey.delete(watch.key);
  }
}
