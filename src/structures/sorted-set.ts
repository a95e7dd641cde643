import { Buffer } from 'node:buffer';
import type { KeyValue, ReadTransaction, Transaction } from '../kv/contract/types';
import { decodeItem, Reader } from '../tuple/codec';
import { Double } from '../tuple/float';
import { pack } from '../tuple/pack';
import { strinc } from '../tuple/strinc';
import { DocumentError } from '../document/errors';
import { concat, META_SIZE, type DocumentKeys } from '../document/keys/layout';
import { loneSurrogateIndex } from '../document/values/path';
import type { JsonValue, TransactionOption } from '../document/types';
import { decodeInt64, encodeInt64 } from './int64';
import { heightOf, RankIndex } from './rank-index';
import { Structure, type IterateOptions, type StructureWriteOptions } from './structure';
import type { Settled } from './combiner';
import { bodyKey } from './structure-keys';

/** A member and its score, as ranges return them (and as the JSON form lists them). */
export type ScoredMember = [member: string, score: number];

/** Options of {@link DocSortedSet.add}. */
export interface SortedSetAddOptions extends StructureWriteOptions {
  /** `'new'`: only add a new member, never change a score (Redis NX); `'existing'`: only update (XX). */
  only?: 'new' | 'existing';
}

/** Bounds of a score range: `min` and `max` included unless said otherwise (±Infinity: unbounded). */
export interface ScoreBounds {
  /** Leave out members scoring exactly `min` (Redis `(min`). */
  minExclusive?: boolean;
  /** Leave out members scoring exactly `max` (Redis `(max`). */
  maxExclusive?: boolean;
}

/** Options of {@link DocSortedSet.rangeByScore}. */
export interface ScoreRangeOptions extends ScoreBounds, TransactionOption {
  /** Members to skip first (found by rank: O(log n) keys read, not `offset` keys). Default 0. */
  offset?: number;
  /** At most this many members. Default: all. */
  limit?: number;
  /** Highest score first (the range is still given as `min`, `max`). */
  reverse?: boolean;
}

/** Options of {@link DocSortedSet.range}. */
export interface RankRangeOptions extends TransactionOption {
  /** Ranks count from the highest score (Redis ZREVRANGE). */
  reverse?: boolean;
}

/** Options of {@link DocSortedSet.rank}. */
export interface RankOptions extends TransactionOption {
  /** The rank from the highest score (Redis ZREVRANK). */
  reverse?: boolean;
}

/** Options of {@link DocSortedSet.rangeByPrefix}. */
export interface PrefixRangeOptions extends TransactionOption {
  limit?: number;
  /** Members in descending order. */
  reverse?: boolean;
}

/** Options of {@link DocSortedSet.iterate}: a score range (default all) read page by page. */
export interface SortedSetIterateOptions extends IterateOptions, ScoreBounds {
  /** Default -Infinity. */
  min?: number;
  /** Default Infinity. */
  max?: number;
  /** Highest score first. */
  reverse?: boolean;
}

const EMPTY = Buffer.alloc(0);
const PLUS_ONE = encodeInt64(1n);
const MINUS_ONE = encodeInt64(-1n);
/** `<body> tuple(0) tuple(member)`: a member's key, its score (a packed double) as value. */
const MEMBERS = pack([0]);
/** `<body> tuple(1) ...`: the rank index (rank-index.ts), whose level 0 is the score index. */
const INDEX = pack([1]);

/**
 * A set of string members, each with a finite number score, ordered by score and then by member
 * (UTF-8 bytes, as Redis orders equal scores): Redis's sorted set (ZADD, ZRANK, ZRANGE,
 * ZRANGEBYSCORE, ZPOPMIN ...). The JSON form (`collection.get`) is the array of `[member, score]`
 * pairs in that order.
 *
 * Keys, below the body (docs/structures.md, "Sorted set"):
 *
 * ```
 * <body> tuple(0, member)                       the member's score, a tuple double (9 bytes)
 * <body> tuple(1, 0) tuple(double score, member)  the score index: empty value, in rank order
 * <body> tuple(1, l) ...                        levels 1..5 of the rank index (rank-index.ts)
 * <docPrefix> 0x00 's'                          the size, int64 LE, by atomic add
 * ```
 *
 * Concurrency: adding, updating or removing different members does not conflict, except that one of
 * them is a node of the rank index (1 member in 16, chosen by a hash of the member) whose span holds
 * the other's position: counts are atomic adds, never a read-modify-write of one hot key. Operations
 * on one member conflict with each other when one changes it. Pops read the lowest (highest) entries,
 * so concurrent pops conflict, and retry (or are combined, without `tr`).
 */
export class DocSortedSet extends Structure {
  readonly kind = 'sortedset' as const;

  /**
   * Sets `member`'s score, adding it if new; returns whether it was new. With `only: 'new'` an existing
   * member is left alone, with `only: 'existing'` a new member is not added (false, nothing written).
   * Creates the sorted set if it does not exist.
   *
   * Reads: the kind key, the member's key; when its score changes, the rank index's predecessors of
   * the old and new entry (snapshot, 5 + 5 limit-1 range reads) and, for a node, the counts it splits
   * or merges. Writes: the member's key, its score-index entry (old one cleared), ±1 by atomic add to
   * 5 counts of the rank index (or a node's counts), the size by atomic add if new, the version key.
   *
   * @throws DocumentError INVALID_VALUE (a member that is not a string or holds a lone surrogate, a
   *   score that is not a finite number), INVALID_ARGUMENT (`only`), KEY_TOO_LARGE, WRONG_KIND;
   *   nothing is written when any is thrown.
   */
  async add(member: string, score: number, opts: SortedSetAddOptions = {}): Promise<boolean> {
    const m = this.checkedMember(member);
    const s = checkScore(score);
    const only = opts.only;
    if (only !== undefined && only !== 'new' && only !== 'existing') {
      throw new DocumentError('INVALID_ARGUMENT', `only is 'new' or 'existing', got ${String(only)}`);
    }
    const call: AddCall = { m, score: s, only };
    return this.writeWith(
      opts,
      (tr, keys) => tr.get(this.memberKey(keys, m.bytes)),
      async (scope, found) => {
        if (found === undefined ? only === 'existing' : only === 'new') return false;
        await this.place(scope.tr, scope.keys, m, found, s, scope.create);
        return found === undefined;
      },
      // A call that would give a new sorted set an expiry runs on its own (merged calls share one creation).
      opts.tr === undefined && opts.expiry === undefined
        ? { operation: ADD, arg: call, runMany: (tr, calls) => this.addAll(tr, calls as AddCall[]) }
        : undefined,
    );
  }

  /**
   * Concurrent adds merged (structures/combiner.ts), in order: each run of calls on distinct members
   * that are no nodes of the rank index (15 in 16 members are not) runs as one group
   * ({@link addFlat}); a node's add, or a member's second add, runs alone between groups, so the
   * results are those of the calls one after another. A call that fails (KEY_TOO_LARGE) fails alone.
   */
  private async addAll(tr: Transaction, calls: readonly AddCall[]): Promise<Settled<boolean>[]> {
    const outcomes: Settled<boolean>[] = [];
    let group: AddCall[] = [];
    let members = new Set<string>();
    const flush = async () => {
      if (group.length > 0) outcomes.push(...(await this.addFlat(tr, group)));
      group = [];
      members = new Set();
    };
    for (const call of calls) {
      const id = call.m.bytes.toString('latin1');
      if (call.m.height > 0 || members.has(id)) await flush();
      if (call.m.height > 0) {
        outcomes.push(...(await this.addOneByOne(tr, [call])));
        continue;
      }
      members.add(id);
      group.push(call);
    }
    await flush();
    return outcomes;
  }

  /**
   * Adds of distinct members that are no nodes of the rank index, as one: their keys read together,
   * then the predecessors of every entry together (such entries change only level 0 and the counts
   * they add to, by atomic adds, which add up).
   */
  private addFlat(tr: Transaction, calls: readonly AddCall[]): Promise<Settled<boolean>[]> {
    return this.writeWith(
      { tr },
      (t, keys) => Promise.all(calls.map((c) => t.get(this.memberKey(keys, c.m.bytes)))),
      async ({ tr: t, keys, create }, found) => {
        const index = indexOf(keys);
        const max = this.access.kv.maxKeyBytes;
        const moves: { call: AddCall; old: Buffer | undefined; scoreBytes: Buffer; entry: Buffer }[] = [];
        const outcomes = calls.map((call, i): Settled<boolean> => {
          const old = found?.[i];
          if (old === undefined ? call.only === 'existing' : call.only === 'new') return { ok: true, value: false };
          const scoreBytes = packScore(call.score);
          if (old !== undefined && old.equals(scoreBytes)) return { ok: true, value: false };
          const entry = Buffer.concat([scoreBytes, call.m.bytes]);
          if (index.longestKey(entry) > max) return { ok: false, error: keysTooLarge(index.longestKey(entry), max) };
          moves.push({ call, old: old === undefined ? undefined : entryOf(old, call.m.bytes), scoreBytes, entry });
          return { ok: true, value: old === undefined };
        });
        if (moves.length === 0) return outcomes;
        create();
        await index.moveFlat(
          t,
          moves.flatMap(({ old }) => (old === undefined ? [] : [old])),
          moves.map(({ entry }) => entry),
        );
        let added = 0;
        for (const { call, old, scoreBytes } of moves) {
          t.set(this.memberKey(keys, call.m.bytes), scoreBytes);
          if (old === undefined) added++;
        }
        if (added > 0) t.add(keys.meta(META_SIZE), encodeInt64(BigInt(added)));
        this.changed(t, keys);
        return outcomes;
      },
    );
  }

  /** Adds one after another in `tr`, each failing alone. */
  private async addOneByOne(tr: Transaction, calls: readonly AddCall[]): Promise<Settled<boolean>[]> {
    const outcomes: Settled<boolean>[] = [];
    for (const { m, score, only } of calls) {
      try {
        outcomes.push({ ok: true, value: await this.add(m.member, score, { tr, ...(only === undefined ? {} : { only }) }) });
      } catch (error) {
        outcomes.push({ ok: false, error });
      }
    }
    return outcomes;
  }

  /**
   * Adds `by` to `member`'s score (a missing member starts at 0 and is added) and returns the new
   * score. Reads and writes as {@link add}.
   *
   * @throws DocumentError DELTA_INVALID (`by` not a finite number), INVALID_VALUE (the member, or a
   *   result that is not finite), KEY_TOO_LARGE, WRONG_KIND; nothing is written when any is thrown.
   */
  async increment(member: string, by: number, opts: StructureWriteOptions = {}): Promise<number> {
    const m = this.checkedMember(member);
    if (typeof by !== 'number' || !Number.isFinite(by)) throw new DocumentError('DELTA_INVALID', `the amount is a finite number, got ${String(by)}`);
    return this.writeWith(
      opts,
      (tr, keys) => tr.get(this.memberKey(keys, m.bytes)),
      async (scope, found) => {
        const current = found === undefined ? 0 : decodeScore(found);
        const next = current + by;
        if (!Number.isFinite(next)) throw new DocumentError('INVALID_VALUE', `the score ${current} + ${by} is not finite`);
        await this.place(scope.tr, scope.keys, m, found, next === 0 ? 0 : next, scope.create);
        return next === 0 ? 0 : next;
      },
    );
  }

  /**
   * Removes `member`; returns whether it was there. The sorted set stays (empty) when its last member
   * goes.
   *
   * Reads: the kind key, the member's key, and if there, the rank index's predecessors (5 snapshot
   * limit-1 range reads; a node also reads its counts). Writes, if it was there: clears of the member's
   * key and score-index entry, ∓ counts of the rank index by atomic add, the size, the version key.
   *
   * @throws DocumentError INVALID_VALUE, KEY_TOO_LARGE, WRONG_KIND.
   */
  async remove(member: string, opts: TransactionOption = {}): Promise<boolean> {
    const m = this.checkedMember(member);
    return this.writeWith(
      opts,
      (tr, keys) => tr.get(this.memberKey(keys, m.bytes)),
      async ({ tr, keys }, found) => {
        if (found === undefined) return false;
        await indexOf(keys).remove(tr, entryOf(found, m.bytes), m.height);
        tr.clear(this.memberKey(keys, m.bytes));
        tr.add(keys.meta(META_SIZE), MINUS_ONE);
        this.changed(tr, keys);
        return true;
      },
    );
  }

  /**
   * `member`'s score, or `undefined` when it is not a member. Reads: the kind key, the member's key.
   *
   * @throws DocumentError INVALID_VALUE, KEY_TOO_LARGE, WRONG_KIND.
   */
  async score(member: string, opts: TransactionOption = {}): Promise<number | undefined> {
    const m = this.checkedMember(member);
    return this.readWith(
      opts,
      (tr, keys) => tr.get(this.memberKey(keys, m.bytes)),
      async (_tr, _keys, found) => (found === undefined ? undefined : decodeScore(found)),
    );
  }

  /**
   * `member`'s rank, 0 for the lowest score (with `reverse`, for the highest), or `undefined` when it
   * is not a member.
   *
   * Reads: the kind key, the member's key and the size (at snapshot unless `reverse`: it only chooses
   * where the walk starts), then the rank index down from the lowest level expected to hold at most 32
   * nodes: 1 range read per level, ~16 keys each (2 reads up to ~500 members, 3 up to ~8,000, 4 up to
   * ~130,000, ... 6 at most): O(log n) keys, not a scan.
   *
   * @throws DocumentError INVALID_VALUE, KEY_TOO_LARGE, WRONG_KIND.
   */
  async rank(member: string, opts: RankOptions = {}): Promise<number | undefined> {
    const m = this.checkedMember(member);
    return this.readWith(
      opts,
      (tr, keys) => Promise.all([tr.get(this.memberKey(keys, m.bytes)), (opts.reverse === true ? tr : tr.snapshot()).get(keys.meta(META_SIZE))]),
      async (tr, keys, found) => {
        if (keys === undefined || found?.[0] === undefined) return undefined;
        const size = Number(decodeInt64(found[1]));
        const rank = await indexOf(keys).rankOf(tr, entryOf(found[0], m.bytes), size);
        return opts.reverse === true ? size - 1 - rank : rank;
      },
    );
  }

  /**
   * The members of ranks `start` to `stop`, both included, as Redis's ZRANGE: negative ranks count
   * from the end (-1: the last), out-of-range ranks are clamped, and an empty range is `[]`. With
   * `reverse`, ranks count from the highest score and the members come highest first (ZREVRANGE).
   *
   * Reads: the kind key, the size, the rank index down to `start` (as {@link rank}), then the members
   * (1 range read of the score index, `stop - start + 1` keys).
   *
   * @throws DocumentError INVALID_ARGUMENT (not safe integers), WRONG_KIND.
   */
  async range(start: number, stop: number, opts: RankRangeOptions = {}): Promise<ScoredMember[]> {
    checkInteger(start, 'start');
    checkInteger(stop, 'stop');
    return this.readWith(
      opts,
      (tr, keys) => tr.get(keys.meta(META_SIZE)),
      async (tr, keys, sizeValue) => {
        if (keys === undefined) return [];
        const size = Number(decodeInt64(sizeValue));
        const first = Math.max(0, start < 0 ? start + size : start);
        const last = Math.min(size - 1, stop < 0 ? stop + size : stop);
        if (first > last) return [];
        const from = opts.reverse === true ? size - 1 - last : first;
        const found = await readFromRank(tr, indexOf(keys), from, last - first + 1, size);
        return opts.reverse === true ? found.reverse() : found;
      },
    );
  }

  /**
   * The members whose scores are within `min` and `max` (both included unless `minExclusive` /
   * `maxExclusive`; -Infinity and Infinity leave a side open), lowest first (with `reverse`, highest
   * first), after skipping `offset` and at most `limit` of them: ZRANGEBYSCORE with LIMIT.
   *
   * Reads: the kind key, then 1 range read of the score index (up to `limit` keys); with an offset,
   * first the rank index (as {@link rank}, twice), so skipping costs O(log n) keys, not `offset`.
   *
   * @throws DocumentError INVALID_ARGUMENT (a bound that is NaN or not a number; an offset or limit
   *   that is not a non-negative safe integer), WRONG_KIND.
   */
  async rangeByScore(min: number, max: number, opts: ScoreRangeOptions = {}): Promise<ScoredMember[]> {
    const bounds = scoreBounds(min, max, opts);
    const offset = opts.offset ?? 0;
    const limit = opts.limit ?? Infinity;
    checkCount(offset, 'offset');
    if (limit !== Infinity) checkCount(limit, 'limit');
    return this.readWith(
      opts,
      (tr, keys) => (offset > 0 ? sizeAtSnapshot(tr, keys) : Promise.resolve(0)),
      async (tr, keys, size) => {
        if (keys === undefined || bounds === undefined || limit === 0) return [];
        const index = indexOf(keys);
        let begin = index.key(0, bounds.begin);
        let end = index.key(0, bounds.end);
        if (offset > 0) {
          const rank = await index.rankOf(tr, opts.reverse === true ? bounds.end : bounds.begin, size ?? 0);
          const at = await index.select(tr, opts.reverse === true ? rank - 1 - offset : rank + offset, size ?? 0);
          if (at === undefined) return [];
          if (opts.reverse === true) end = concat(index.key(0, at), 0x00);
          else begin = index.key(0, at);
          if (Buffer.compare(begin, end) >= 0) return [];
        }
        const pairs = await tr.getRangeAll(begin, end, { reverse: opts.reverse === true, ...(limit === Infinity ? {} : { limit }) });
        return pairs.map(({ key }) => scoredMember(index.entryOf(0, key)));
      },
    );
  }

  /**
   * The members that start with `prefix` (by UTF-16 code units, as `startsWith`), in member order
   * (UTF-8 bytes; with `reverse`, descending), at most `limit`: 1 range read of the members' keys.
   * An empty prefix lists every member.
   *
   * @throws DocumentError INVALID_VALUE (prefix), INVALID_ARGUMENT (limit), WRONG_KIND.
   */
  async rangeByPrefix(prefix: string, opts: PrefixRangeOptions = {}): Promise<ScoredMember[]> {
    checkMember(prefix);
    const limit = opts.limit ?? Infinity;
    if (limit !== Infinity) checkCount(limit, 'limit');
    // A string element is 0x02, its escaped UTF-8 bytes, 0x00: every member that starts with the
    // prefix starts with the encoding without its terminator.
    const encoded = pack([prefix]);
    const stem = encoded.subarray(0, encoded.length - 1);
    return this.read(opts, async (tr, keys) => {
      if (keys === undefined || limit === 0) return [];
      const members = membersPrefix(keys);
      const pairs = await tr.getRangeAll(Buffer.concat([members, stem]), strinc(Buffer.concat([members, stem])), {
        reverse: opts.reverse === true,
        ...(limit === Infinity ? {} : { limit }),
      });
      return pairs.map(({ key, value }): ScoredMember => [decodeMember(key, members.length), decodeScore(value)]);
    });
  }

  /**
   * Removes and returns the `count` (default 1) members of lowest score, lowest first (ZPOPMIN); fewer
   * when the set has fewer.
   *
   * Reads: the kind key, the first `count` score-index entries (1 range read), and per member popped
   * what {@link remove} reads of the rank index. Writes: as {@link remove}, per member. Concurrent pops
   * conflict (they read the same entries).
   *
   * @throws DocumentError INVALID_ARGUMENT (count: a safe integer from 0 to 1,000), WRONG_KIND.
   */
  async popMin(count = 1, opts: TransactionOption = {}): Promise<ScoredMember[]> {
    return this.pop(count, false, opts);
  }

  /** Removes and returns the `count` members of highest score, highest first (ZPOPMAX); as {@link popMin}. */
  async popMax(count = 1, opts: TransactionOption = {}): Promise<ScoredMember[]> {
    return this.pop(count, true, opts);
  }

  /**
   * The number of members whose scores are within the bounds (as {@link rangeByScore}): ZCOUNT.
   * Reads: the kind key, the rank index at both bounds (as {@link rank}, twice at once): O(log n) keys.
   *
   * @throws DocumentError INVALID_ARGUMENT (bounds), WRONG_KIND.
   */
  async count(min: number, max: number, opts: ScoreBounds & TransactionOption = {}): Promise<number> {
    const bounds = scoreBounds(min, max, opts);
    return this.readWith(opts, sizeAtSnapshot, async (tr, keys, size) => {
      if (keys === undefined || bounds === undefined) return 0;
      const index = indexOf(keys);
      const [below, upTo] = await Promise.all([index.rankOf(tr, bounds.begin, size ?? 0), index.rankOf(tr, bounds.end, size ?? 0)]);
      return upTo - below;
    });
  }

  /**
   * The number of members. Reads: the kind key, the size key (in a writing transaction, conflicts with
   * every concurrent add of a new member and remove).
   *
   * @throws DocumentError WRONG_KIND.
   */
  async size(opts: TransactionOption = {}): Promise<number> {
    return this.readWith(
      opts,
      (tr, keys) => tr.get(keys.meta(META_SIZE)),
      async (_tr, _keys, size) => Number(decodeInt64(size)),
    );
  }

  /**
   * The members within a score range (default all), lowest first (with `reverse`, highest first),
   * page by page: `pageSize` score-index keys per range read, each page in a transaction of its own
   * unless `tr` is given.
   *
   * @throws DocumentError INVALID_ARGUMENT (bounds, pageSize), WRONG_KIND.
   */
  iterate(opts: SortedSetIterateOptions = {}): AsyncGenerator<ScoredMember, void, undefined> {
    const bounds = scoreBounds(opts.min ?? -Infinity, opts.max ?? Infinity, opts);
    const reverse = opts.reverse === true;
    return this.pages(opts, async (tr, keys, cursor, pageSize) => {
      if (bounds === undefined) return { items: [], next: undefined };
      const index = indexOf(keys);
      const begin = !reverse && cursor !== undefined ? cursor : index.key(0, bounds.begin);
      const end = reverse && cursor !== undefined ? cursor : index.key(0, bounds.end);
      const pairs = await tr.getRangeAll(begin, end, { limit: pageSize, reverse });
      const last = pairs[pairs.length - 1]?.key;
      const next = pairs.length < pageSize || last === undefined ? undefined : reverse ? last : concat(last, 0x00);
      return { items: pairs.map(({ key }) => scoredMember(index.entryOf(0, key))), next };
    });
  }

  [Symbol.asyncIterator](): AsyncGenerator<ScoredMember, void, undefined> {
    return this.iterate();
  }

  /**
   * Gives `member` the score `score`: adds it when `found` (its stored score) is undefined, moves its
   * entry when the score changes, writes nothing when it does not.
   */
  private async place(
    tr: Transaction,
    keys: DocumentKeys,
    m: CheckedMember,
    found: Buffer | undefined,
    score: number,
    create: () => void,
  ): Promise<void> {
    const scoreBytes = packScore(score);
    if (found !== undefined && found.equals(scoreBytes)) return;
    const index = indexOf(keys);
    const entry = Buffer.concat([scoreBytes, m.bytes]);
    const longest = index.longestKey(entry);
    if (longest > this.access.kv.maxKeyBytes) throw keysTooLarge(longest, this.access.kv.maxKeyBytes);
    create();
    if (found !== undefined) await index.remove(tr, entryOf(found, m.bytes), m.height);
    await index.insert(tr, entry, m.height);
    tr.set(this.memberKey(keys, m.bytes), scoreBytes);
    if (found === undefined) tr.add(keys.meta(META_SIZE), PLUS_ONE);
    this.changed(tr, keys);
  }

  private pop(count: number, highest: boolean, opts: TransactionOption): Promise<ScoredMember[]> {
    checkCount(count, 'count');
    if (count > MAX_POP)
      throw new DocumentError('INVALID_ARGUMENT', `a pop takes at most ${MAX_POP} members (a transaction stays small and short), got ${count}`);
    return this.writeWith(
      opts,
      async (tr, keys) =>
        count === 0 ? [] : tr.getRangeAll(indexOf(keys).key(0, EMPTY), indexOf(keys).levelEnd(0), { limit: count, reverse: highest }),
      async ({ tr, keys }, pairs) => {
        if (pairs === undefined || pairs.length === 0) return [];
        const index = indexOf(keys);
        const popped: ScoredMember[] = [];
        for (const { key } of pairs) {
          const entry = index.entryOf(0, key);
          const memberBytes = entry.subarray(SCORE_BYTES);
          // One after another: each removal reads the index as the previous one left it.
          await index.remove(tr, entry, heightOf(memberBytes));
          tr.clear(this.memberKey(keys, memberBytes));
          popped.push(scoredMember(entry));
        }
        tr.add(keys.meta(META_SIZE), encodeInt64(BigInt(-popped.length)));
        this.changed(tr, keys);
        return popped;
      },
    );
  }

  /**
   * The key of a member whose packed string is `memberBytes`.
   *
   * @throws DocumentError KEY_TOO_LARGE over the engine's key limit (its index keys are longer, and
   *   checked before a write).
   */
  private memberKey(keys: DocumentKeys, memberBytes: Uint8Array): Buffer {
    const key = Buffer.concat([bodyKey(keys), MEMBERS, memberBytes]);
    if (key.length > this.access.kv.maxKeyBytes) {
      throw new DocumentError(
        'KEY_TOO_LARGE',
        `the member's key would be ${key.length} bytes, over the engine's limit of ${this.access.kv.maxKeyBytes}`,
      );
    }
    return key;
  }

  /** @throws DocumentError INVALID_VALUE. */
  private checkedMember(member: unknown): CheckedMember {
    checkMember(member);
    const bytes = pack([member]);
    return { member, bytes, height: heightOf(bytes) };
  }
}

/** A member as the keys hold it: its packed tuple string, and its height in the rank index. */
interface CheckedMember {
  readonly member: string;
  readonly bytes: Buffer;
  readonly height: number;
}

/** The merge key of concurrent adds (see combiner.ts), and what each brings. */
const ADD = {};
interface AddCall {
  readonly m: CheckedMember;
  readonly score: number;
  readonly only: 'new' | 'existing' | undefined;
}

function keysTooLarge(longest: number, max: number): DocumentError {
  return new DocumentError('KEY_TOO_LARGE', `the member's keys would be up to ${longest} bytes, over the engine's limit of ${max}`);
}

/**
 * The most members one pop removes: each removal writes ~8 keys and reads the rank index, and a
 * FoundationDB transaction must stay under 10 MB and 5 seconds.
 */
const MAX_POP = 1000;

/** The bytes of a packed double: type code and 8 bytes. */
const SCORE_BYTES = 9;

function checkMember(member: unknown): asserts member is string {
  if (typeof member !== 'string') throw new DocumentError('INVALID_VALUE', `a sorted set member is a string, got ${typeof member}`);
  const at = loneSurrogateIndex(member);
  if (at >= 0) throw new DocumentError('INVALID_VALUE', `a sorted set member cannot hold a lone surrogate (at index ${at})`);
}

/** @throws DocumentError INVALID_VALUE unless a finite number; -0 is 0. */
function checkScore(score: unknown): number {
  if (typeof score !== 'number' || !Number.isFinite(score)) {
    throw new DocumentError('INVALID_VALUE', `a score is a finite number, got ${typeof score === 'number' ? score : typeof score}`);
  }
  return score === 0 ? 0 : score;
}

function checkInteger(n: unknown, what: string): asserts n is number {
  if (typeof n !== 'number' || !Number.isSafeInteger(n)) throw new DocumentError('INVALID_ARGUMENT', `${what} is a safe integer, got ${String(n)}`);
}

function checkCount(n: unknown, what: string): asserts n is number {
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) {
    throw new DocumentError('INVALID_ARGUMENT', `${what} is a non-negative safe integer, got ${String(n)}`);
  }
}

/**
 * The score-index suffixes bounding a score range, `[begin, end)`, or `undefined` when it is empty.
 * Every entry of score s starts with s's 9 bytes, so `s + 0xff` is past them all.
 *
 * @throws DocumentError INVALID_ARGUMENT for a bound that is not a number, or NaN.
 */
function scoreBounds(min: number, max: number, opts: ScoreBounds): { begin: Buffer; end: Buffer } | undefined {
  for (const [bound, what] of [
    [min, 'min'],
    [max, 'max'],
  ] as const) {
    if (typeof bound !== 'number' || Number.isNaN(bound)) throw new DocumentError('INVALID_ARGUMENT', `${what} is a number, got ${String(bound)}`);
  }
  const begin = opts.minExclusive === true ? concat(packScore(min), 0xff) : packScore(min);
  const end = opts.maxExclusive === true ? packScore(max) : concat(packScore(max), 0xff);
  return Buffer.compare(begin, end) < 0 ? { begin, end } : undefined;
}

function packScore(score: number): Buffer {
  return pack([new Double(score === 0 ? 0 : score)]);
}

function decodeScore(value: Buffer, at = 0): number {
  const item = decodeItem(new Reader(value, at));
  if (item instanceof Double) return item.value;
  if (typeof item !== 'number') throw new DocumentError('CORRUPT_DATA', 'corrupt sorted set: a score is not a double');
  return item;
}

function decodeMember(key: Buffer, at: number): string {
  const item = decodeItem(new Reader(key, at));
  if (typeof item !== 'string') throw new DocumentError('CORRUPT_DATA', 'corrupt sorted set: a member is not a string');
  return item;
}

/** The member and score of a score-index entry. */
function scoredMember(entry: Buffer): ScoredMember {
  return [decodeMember(entry, SCORE_BYTES), decodeScore(entry)];
}

/** The score-index entry of a member whose stored score is `scoreBytes`. */
function entryOf(scoreBytes: Buffer, memberBytes: Buffer): Buffer {
  return Buffer.concat([scoreBytes, memberBytes]);
}

function membersPrefix(keys: DocumentKeys): Buffer {
  return Buffer.concat([bodyKey(keys), MEMBERS]);
}

/** The size, read at snapshot: where it only chooses where a walk of the rank index starts, it adds no conflict. */
async function sizeAtSnapshot(tr: Transaction, keys: DocumentKeys): Promise<number> {
  return Number(decodeInt64(await tr.snapshot().get(keys.meta(META_SIZE))));
}

function indexOf(keys: DocumentKeys): RankIndex {
  return new RankIndex(Buffer.concat([bodyKey(keys), INDEX]));
}

/** `count` members from rank `rank` on: the rank index down to it, then 1 range read. */
async function readFromRank(tr: ReadTransaction, index: RankIndex, rank: number, count: number, size: number): Promise<ScoredMember[]> {
  const at = await index.select(tr, rank, size);
  if (at === undefined) return [];
  const pairs = await tr.getRangeAll(index.key(0, at), index.levelEnd(0), { limit: count });
  return pairs.map(({ key }) => scoredMember(index.entryOf(0, key)));
}

/**
 * Where a sorted set's rank index disagrees with its score index, for `doclayer check`: `entries` are
 * the document's, in key order.
 */
export function sortedSetIndexProblems(entries: readonly KeyValue[], keys: DocumentKeys): string[] {
  const index = indexOf(keys);
  const members = membersPrefix(keys);
  const level0 = index.levelPrefix(0);
  const scores = new Map<string, Buffer>();
  for (const { key, value } of entries) if (isBelow(key, members)) scores.set(key.subarray(members.length).toString('latin1'), value);
  let indexed = 0;
  for (const { key } of entries) {
    if (!isBelow(key, level0)) continue;
    const entry = index.entryOf(0, key);
    const score = scores.get(entry.subarray(SCORE_BYTES).toString('latin1'));
    if (score === undefined || !score.equals(entry.subarray(0, SCORE_BYTES))) return ['its score index has an entry its member keys do not match'];
    indexed++;
  }
  if (indexed !== scores.size) return [`it has ${scores.size} member keys but ${indexed} score-index entries`];
  return index.problems(entries);
}

function isBelow(key: Buffer, prefix: Buffer): boolean {
  return key.length > prefix.length && key.compare(prefix, 0, prefix.length, 0, prefix.length) === 0;
}

/** The JSON form: the `[member, score]` pairs, lowest score first. */
export function sortedSetJsonForm(entries: readonly KeyValue[], keys: DocumentKeys): JsonValue {
  const index = indexOf(keys);
  const level0 = index.levelPrefix(0);
  const out: JsonValue[] = [];
  for (const { key } of entries) if (isBelow(key, level0)) out.push(scoredMember(index.entryOf(0, key)));
  return out;
}
