import { Buffer } from 'node:buffer';
import type { KeyValue, ReadTransaction, Transaction } from '../kv/contract/types';
import { DocumentError } from '../document/errors';
import { concat } from '../document/keys/layout';
import { pack } from '../tuple/pack';
import { decodeInt64, encodeInt64 } from './int64';

/**
 * A ranked skip list kept in keys (the idea of FoundationDB's RankedSet recipe and fdb-record-layer's
 * `RankedSet`): the rank of an entry, and the entry at a rank, in O(log n) keys read instead of a scan.
 * It orders opaque byte strings (a sorted set's `(score, member)` suffixes, `sorted-set.ts`).
 *
 * ```
 * <prefix> tuple(0) <entry>        level 0: every entry, empty value (the sorted set's score index)
 * <prefix> tuple(l)                level l = 1..5: the head, int64 LE count of the entries before the
 *                                  first node of the level (absent: 0)
 * <prefix> tuple(l) <entry>        a node of level l: int64 LE count of the entries from it (itself
 *                                  included) up to the next node of the level
 * ```
 *
 * An entry is a node of levels 1..h, its height h, drawn from a hash of its member (`heightOf`): 1 in
 * 16 entries reach level 1, 1 in 256 level 2, and so on, so a level's nodes are ~16 entries apart and
 * a walk reads ~16 keys per level. The counts of a level add up to the number of entries.
 *
 * Concurrency: inserting or removing an entry that is no node of a level adds ±1 to the count of its
 * predecessor there by atomic add, which reads nothing, so such writes by different transactions never
 * conflict on a count. Finding the predecessor is a snapshot read, guarded by two read conflicts that
 * say exactly what the write relies on: no node appeared or vanished between the predecessor and the
 * entry (a range that excludes the predecessor's own key, which others only add to), and the
 * predecessor itself was not removed (its level-0 key, which only its removal or move writes).
 * Inserting or removing a node reads the counts it splits or merges, so it conflicts with concurrent
 * changes inside the spans it changes, and is retried.
 */

/** Levels above level 0. */
export const TOP_LEVEL = 5;
/** log2 of the fan-out: a node of level l is a node of level l + 1 one time in 2^FAN_BITS. */
const FAN_BITS = 4;
const FAN_MASK = (1 << FAN_BITS) - 1;
/** Keys per range read when walking a level forward from a node to find a rank. */
const WALK_PAGE = 32;
/**
 * A walk starts at the lowest level expected to hold at most this many nodes in all: read from its
 * head in one range read, it stands where a walk from the top would, in fewer round trips.
 */
const START_NODES = 32;

const EMPTY = Buffer.alloc(0);
const PLUS_ONE = encodeInt64(1n);
const MINUS_ONE = encodeInt64(-1n);

/** The height of an entry whose member packs to `memberBytes`: deterministic, so every process agrees. */
export function heightOf(memberBytes: Uint8Array): number {
  // FNV-1a, then murmur3's finalizer so the low bits (which choose the height) are well mixed.
  let hash = 0x811c9dc5;
  for (const byte of memberBytes) hash = Math.imul(hash ^ byte, 0x01000193);
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  hash ^= hash >>> 16;
  let height = 0;
  while (height < TOP_LEVEL && (hash & FAN_MASK) === 0) {
    height++;
    hash >>>= FAN_BITS;
  }
  return height;
}

/** The node an operation stands on at a level: an entry, or the level's head (`undefined`). */
type Position = Buffer | undefined;

/** One stored node of a level, decoded. */
interface Node {
  readonly entry: Position;
  readonly count: number;
}

/** The skip list under one prefix. Stateless: a handle on keys. */
export class RankIndex {
  private readonly levels: Buffer[];

  constructor(prefix: Buffer) {
    this.levels = Array.from({ length: TOP_LEVEL + 1 }, (_, level) => Buffer.concat([prefix, pack([level])]));
  }

  /** The prefix of level `level`: its head's key. */
  levelPrefix(level: number): Buffer {
    return this.levels[level];
  }

  /** The key of `entry` at `level`. */
  key(level: number, entry: Uint8Array): Buffer {
    return Buffer.concat([this.levels[level], entry]);
  }

  /** The key of a position (a node, or the head) at `level`. */
  private positionKey(level: number, at: Position): Buffer {
    return at === undefined ? this.levels[level] : this.key(level, at);
  }

  /** The end of level `level`'s keys. */
  levelEnd(level: number): Buffer {
    return concat(this.levels[level], 0xff);
  }

  /** The entry a key of `level` holds. */
  entryOf(level: number, key: Buffer): Buffer {
    return key.subarray(this.levels[level].length);
  }

  /** The length of the longest key `entry` has: its key in the top level. */
  longestKey(entry: Uint8Array): number {
    return this.levels[TOP_LEVEL].length + entry.length;
  }

  /**
   * Adds `entry` (not present) of height `height`.
   *
   * Reads: per level 1..5, the predecessor (1 snapshot range read, limit 1, all levels at once); per
   * level the entry is a node of, its predecessor's count (P) and the counts between them (R, ~16
   * keys). Writes: its level-0 key; per level it is a node of, its count and its predecessor's; per
   * other level an atomic +1 to its predecessor's count.
   */
  async insert(tr: Transaction, entry: Buffer, height: number): Promise<void> {
    const preds = await this.predecessors(tr, entry);
    const counts = height === 0 ? [] : await this.splitCounts(tr, entry, preds, height);
    tr.set(this.key(0, entry), EMPTY);
    for (let level = 1; level <= TOP_LEVEL; level++) {
      const predKey = this.positionKey(level, preds[level]);
      if (level <= height) {
        const { before, after } = counts[level - 1];
        tr.set(predKey, encodeInt64(BigInt(before)));
        tr.set(this.key(level, entry), encodeInt64(BigInt(after)));
      } else {
        tr.add(predKey, PLUS_ONE);
      }
    }
  }

  /**
   * Removes `entry` (present) of height `height`.
   *
   * Reads: the predecessors as {@link insert}; per level the entry is a node of, its count (P).
   * Writes: a clear of its level-0 key; per level it is a node of, a clear of its node and an atomic
   * add of its count less one to its predecessor's; per other level an atomic -1 to its predecessor's.
   */
  async remove(tr: Transaction, entry: Buffer, height: number): Promise<void> {
    const [preds, nodeCounts] = await Promise.all([
      this.predecessors(tr, entry),
      Promise.all(Array.from({ length: height }, (_, i) => tr.get(this.key(i + 1, entry)))),
    ]);
    tr.clear(this.key(0, entry));
    for (let level = 1; level <= TOP_LEVEL; level++) {
      const predKey = this.positionKey(level, preds[level]);
      if (level <= height) {
        const count = countOf(nodeCounts[level - 1]);
        tr.clear(this.key(level, entry));
        if (count !== 1) tr.add(predKey, encodeInt64(BigInt(count - 1)));
      } else {
        tr.add(predKey, MINUS_ONE);
      }
    }
  }

  /**
   * Removes the entries `removed` and adds the entries `added`, all of height 0 and distinct: such
   * entries change no level above 0 but by the counts they add to, so the predecessors of all of them
   * are read at once (and atomic adds to a shared predecessor add up).
   *
   * Reads: per entry, its predecessors (5 snapshot limit-1 range reads), all issued together. Writes:
   * per entry, its level-0 key and 5 atomic adds.
   */
  async moveFlat(tr: Transaction, removed: readonly Buffer[], added: readonly Buffer[]): Promise<void> {
    const preds = await Promise.all([...removed, ...added].map((entry) => this.predecessors(tr, entry)));
    removed.forEach((entry, i) => {
      tr.clear(this.key(0, entry));
      for (let level = 1; level <= TOP_LEVEL; level++) tr.add(this.positionKey(level, preds[i][level]), MINUS_ONE);
    });
    added.forEach((entry, i) => {
      tr.set(this.key(0, entry), EMPTY);
      for (let level = 1; level <= TOP_LEVEL; level++) tr.add(this.positionKey(level, preds[removed.length + i][level]), PLUS_ONE);
    });
  }

  /**
   * The number of entries below `bound` (any key suffix, not necessarily an entry), in a set of about
   * `size` entries (only the cost depends on it). Reads: per level from {@link startLevel} down, the
   * nodes from where the walk stands up to `bound` (1 range read each, ~16 keys, up to ~32 on the first).
   */
  async rankOf(tr: ReadTransaction, bound: Uint8Array, size: number): Promise<number> {
    let at: Position;
    let rank = 0;
    for (let level = startLevel(size); level >= 1; level--) {
      const nodes = this.nodesOf(level, at, await tr.getRangeAll(this.positionKey(level, at), this.key(level, bound)));
      for (let i = 0; i < nodes.length - 1; i++) rank += nodes[i].count;
      if (nodes.length > 0) at = nodes[nodes.length - 1].entry;
    }
    const begin = at === undefined ? this.levels[0] : this.key(0, at);
    return rank + (await tr.getRangeAll(begin, this.key(0, bound))).length;
  }

  /**
   * The entry at rank `rank` (0: the first), or `undefined` past the end, in a set of about `size`
   * entries (as {@link rankOf}). Reads: per level from {@link startLevel} down, the nodes from where the walk stands until the one whose span holds the rank (range reads of
   * up to 32 keys, ~16 keys each), then the entries of that span up to the rank (1 range read).
   */
  async select(tr: ReadTransaction, rank: number, size: number): Promise<Buffer | undefined> {
    if (rank < 0) return undefined;
    let at: Position;
    let start = 0;
    for (let level = startLevel(size); level >= 1; level--) {
      const found = await this.walk(tr, level, at, start, rank);
      if (found === undefined) return undefined;
      [at, start] = found;
    }
    const begin = at === undefined ? this.levels[0] : this.key(0, at);
    const pairs = await tr.getRangeAll(begin, this.levelEnd(0), { limit: rank - start + 1 });
    return pairs.length === rank - start + 1 ? this.entryOf(0, pairs[pairs.length - 1].key) : undefined;
  }

  /**
   * Checks the counts against the entries, for `doclayer check`: the problems found (none when the
   * counts are right) among `pairs`, the keys of the index in key order (others are ignored).
   */
  problems(pairs: readonly KeyValue[]): string[] {
    const inLevel = (level: number) => {
      const prefix = this.levels[level];
      return pairs.filter(({ key }) => key.length >= prefix.length && key.compare(prefix, 0, prefix.length, 0, prefix.length) === 0);
    };
    const entries = inLevel(0)
      .filter(({ key }) => key.length > this.levels[0].length)
      .map(({ key }) => this.entryOf(0, key));
    const problems: string[] = [];
    for (let level = 1; level <= TOP_LEVEL; level++) {
      const nodes = this.nodesOf(level, undefined, inLevel(level));
      let i = 0;
      for (let n = 0; n < nodes.length; n++) {
        const next = nodes[n + 1]?.entry;
        let span = 0;
        while (i < entries.length && (next === undefined || Buffer.compare(entries[i], next) < 0)) {
          i++;
          span++;
        }
        if (span !== nodes[n].count) {
          problems.push(`its rank index counts ${nodes[n].count} entries after a node of level ${level} where there are ${span}`);
          return problems;
        }
        if (next !== undefined && (i >= entries.length || !entries[i].equals(next))) {
          problems.push(`its rank index has a node of level ${level} for an entry that is not there`);
          return problems;
        }
      }
    }
    return problems;
  }

  /** The predecessor of `entry` at each level (index 1..5), found by snapshot reads and guarded (see above). */
  private async predecessors(tr: Transaction, entry: Buffer): Promise<Position[]> {
    const snapshot = tr.snapshot();
    const found = await Promise.all(
      Array.from({ length: TOP_LEVEL }, (_, i) => snapshot.getRangeAll(this.levels[i + 1], this.key(i + 1, entry), { reverse: true, limit: 1 })),
    );
    const preds: Position[] = [undefined];
    for (let level = 1; level <= TOP_LEVEL; level++) {
      const [pair] = found[level - 1];
      const pred = pair === undefined || pair.key.length === this.levels[level].length ? undefined : this.entryOf(level, pair.key);
      preds.push(pred);
      tr.addReadConflictRange(concat(this.positionKey(level, pred), 0x00), this.key(level, entry));
      if (pred !== undefined) tr.addReadConflictKey(this.key(0, pred));
    }
    return preds;
  }

  /**
   * For each level 1..height, how the count of the predecessor's span splits at `entry`: `before` it
   * (the predecessor's new count) and from it (the entry's count, itself included).
   */
  private async splitCounts(
    tr: Transaction,
    entry: Buffer,
    preds: readonly Position[],
    height: number,
  ): Promise<{ before: number; after: number }[]> {
    const reads = Array.from({ length: height }, (_, i) => {
      const level = i + 1;
      const pred = preds[level];
      const below = level - 1;
      // The nodes of the level below from this level's predecessor to the level below's predecessor
      // (level 0: the entries from the predecessor up to `entry`).
      const end = below === 0 ? this.key(0, entry) : this.positionKey(below, preds[below]);
      const begin = below === 0 && pred === undefined ? this.levels[0] : this.positionKey(below, pred);
      return Promise.all([tr.get(this.positionKey(level, pred)), tr.getRangeAll(begin, end)]);
    });
    const read = await Promise.all(reads);
    const out: { before: number; after: number }[] = [];
    let before = 0;
    for (let level = 1; level <= height; level++) {
      const [predCount, between] = read[level - 1];
      before += level === 1 ? between.length : this.nodesOf(level - 1, preds[level], between).reduce((sum, node) => sum + node.count, 0);
      out.push({ before, after: countOf(predCount) - before + 1 });
    }
    return out;
  }

  /**
   * Walks level `level` forward from `at` (whose span starts at rank `start`) to the node whose span
   * holds `rank`: that node and its start, or `undefined` when the level ends first.
   */
  private async walk(tr: ReadTransaction, level: number, at: Position, start: number, rank: number): Promise<[Position, number] | undefined> {
    let begin = this.positionKey(level, at);
    let first = true;
    for (;;) {
      const pairs = await tr.getRangeAll(begin, this.levelEnd(level), { limit: WALK_PAGE });
      const nodes = first ? this.nodesOf(level, at, pairs) : pairs.map((pair) => this.nodeOf(level, pair));
      first = false;
      for (const node of nodes) {
        if (start + node.count > rank) return [node.entry, start];
        start += node.count;
      }
      if (pairs.length < WALK_PAGE) return undefined;
      begin = concat(pairs[pairs.length - 1].key, 0x00);
    }
  }

  /** The nodes of a range read of `level` that starts at `at`'s key: a missing head counts 0. */
  private nodesOf(level: number, at: Position, pairs: readonly KeyValue[]): Node[] {
    const nodes = pairs.map((pair) => this.nodeOf(level, pair));
    if (at === undefined && (nodes.length === 0 || nodes[0].entry !== undefined)) nodes.unshift({ entry: undefined, count: 0 });
    return nodes;
  }

  private nodeOf(level: number, pair: KeyValue): Node {
    const head = pair.key.length === this.levels[level].length;
    return { entry: head ? undefined : this.entryOf(level, pair.key), count: countOf(pair.value) };
  }
}

/**
 * The level a walk starts at in a set of about `size` entries: the lowest expected to hold at most
 * {@link START_NODES} nodes (level l holds ~size / 16^l). Starting lower than the top is exact: a
 * level's head and nodes tile all the entries, whatever the levels above hold.
 */
function startLevel(size: number): number {
  let level = 1;
  while (level < TOP_LEVEL && size / 2 ** (FAN_BITS * level) > START_NODES) level++;
  return level;
}

function countOf(value: Buffer | undefined): number {
  const count = Number(decodeInt64(value));
  if (count < 0) throw new DocumentError('CORRUPT_DATA', `corrupt sorted set: a rank count is ${count}`);
  return count;
}
