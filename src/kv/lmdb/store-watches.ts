import { Buffer } from 'node:buffer';
import { Limits } from '../contract/limits';
import { coalesceRanges } from '../client/range-set';
import { MAX_USER_KEY, type KeyRange } from '../contract/key-range';
import type { KeyWatch } from '../client/key-watch';
import { WatchRegistry } from '../engine-parts/watch-registry';
import { decodeConflictRecord } from './conflict-record';
import type { LmdbStore, StoreSnapshot } from './lmdb-store';

/** How often the store is checked for commits of other processes while watches are outstanding. */
const POLL_MS = 20;
/** Conflict records read per step while catching up. */
const CHUNK = 1024;
const WHOLE_KEYSPACE: KeyRange = { begin: Buffer.alloc(0), end: MAX_USER_KEY };

/**
 * Watches that fire on commits made by any process. The conflict log in the store already says which
 * keys every recent commit wrote, so a poll is cheap: it reads the store's last commit version (one
 * lookup, usually unchanged); when it changed, it reads the conflict records since the last poll and
 * compares only the watched keys inside their write ranges with their current values. If records were
 * pruned before a poll saw them (the process stalled for over 5 s), every watched key is compared.
 * A commit made by this engine that wrote a watched key triggers a poll at once; other commits are seen
 * within {@link POLL_MS}. A poll skips, without decoding them, the records of this engine's own commits
 * that wrote no watched key when they committed: a watch activated later compares the key's value
 * after them, so only other processes' records (and this engine's that wrote a watched key) are read.
 *
 * While watches are outstanding the poll timer keeps the process alive: close the engine, or cancel
 * the watches, to let it exit.
 */
export class StoreWatches {
  private readonly registry = new WatchRegistry(Limits.maxWatches);
  /** Registered watches, to know when none is left (settled ones are swept at each poll). */
  private readonly active = new Set<KeyWatch>();
  /** The store version the last poll (or the first activation) compared at. */
  private seen: bigint | undefined;
  /**
   * Versions of this engine's own commits, while watches are active, that wrote no watched key: a poll
   * need not look at their records. Emptied up to the version each poll reads to.
   */
  private readonly ownUnwatched = new Set<bigint>();
  private timer: NodeJS.Timeout | undefined;
  private pollSoon: NodeJS.Immediate | undefined;

  constructor(private readonly store: LmdbStore) {}

  /**
   * Starts the watches of a transaction that committed: each compares its value with the key's current
   * one (firing at once if it already differs) and is then checked at every poll. Fails them with
   * too_many_watches (1032) past {@link Limits.maxWatches}.
   */
  activate(watches: readonly KeyWatch[]): void {
    const pending = watches.filter((watch) => !watch.isSettled);
    if (pending.length === 0) return;
    this.withSnapshot((snapshot) => {
      this.seen ??= snapshot.lastVersion();
      for (const watch of pending) {
        this.registry.add(watch, snapshot.get(watch.key));
        if (!watch.isSettled) this.active.add(watch);
      }
    });
    if (this.active.size > 0 && !this.timer) {
      this.timer = setInterval(() => this.poll(), POLL_MS);
    }
  }

  /**
   * Checks soon, for a commit this process just made at `version` that wrote `ranges`, if a watch is on
   * a key in them (else the polls skip its record); other processes' commits meanwhile are seen by the
   * next timed poll, as always.
   */
  committed(version: bigint, ranges: readonly KeyRange[]): void {
    if (this.active.size === 0) return;
    if (!this.registry.watchesIn(ranges)) {
      this.ownUnwatched.add(version);
      return;
    }
    if (this.pollSoon) return;
    this.pollSoon = setImmediate(() => {
      this.pollSoon = undefined;
      this.poll();
    });
  }

  /** Resolves every watch `false` and stops polling. */
  close(): void {
    this.registry.cancelAll();
    this.active.clear();
    this.stop();
  }

  private poll(): void {
    for (const watch of this.active) if (watch.isSettled) this.active.delete(watch);
    if (this.active.size === 0) {
      this.stop();
      return;
    }
    this.withSnapshot((snapshot) => {
      const version = snapshot.lastVersion();
      const seen = this.seen;
      if (seen === undefined || version === seen) {
        this.seen = version;
        return;
      }
      const ranges = snapshot.horizon() > seen ? [WHOLE_KEYSPACE] : writtenSince(snapshot, seen, this.ownUnwatched);
      this.registry.notify([], ranges, (key) => snapshot.get(key));
      this.seen = version;
      for (const own of this.ownUnwatched) if (own <= version) this.ownUnwatched.delete(own);
    });
  }

  private stop(): void {
    if (this.timer) clearInterval(this.timer);
    if (this.pollSoon) clearImmediate(this.pollSoon);
    this.timer = undefined;
    this.pollSoon = undefined;
    this.seen = undefined;
    this.ownUnwatched.clear();
  }

  private withSnapshot(fn: (snapshot: StoreSnapshot) => void): void {
    const snapshot = this.store.snapshot();
    try {
      fn(snapshot);
    } finally {
      snapshot.release();
    }
  }
}

/** The write ranges of every commit after version `after` but those at the versions `skipped`, coalesced. */
function writtenSince(snapshot: StoreSnapshot, after: bigint, skipped: ReadonlySet<bigint>): KeyRange[] {
  const ranges: KeyRange[] = [];
  let from = after;
  for (;;) {
    const entries = snapshot.conflictRecords(from, CHUNK);
    for (const entry of entries) if (!skipped.has(entry.version)) ranges.push(...decodeConflictRecord(entry.record).ranges);
    if (entries.length < CHUNK) return coalesceRanges(ranges);
    from = entries[entries.length - 1].version;
  }
}
