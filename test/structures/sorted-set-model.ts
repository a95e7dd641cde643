import type { ScoredMember } from '../../src/structures/sorted-set';
import { heightOf } from '../../src/structures/rank-index';
import { pack } from '../../src/tuple';

/**
 * The reference model of the sorted-set tests: a plain array of `[member, score]` pairs kept sorted as
 * Redis sorts a sorted set (by score, then by member bytes), and members chosen for their height in
 * the rank index, so that a small set still has nodes on every level.
 */
export class SortedArray {
  private pairs: ScoredMember[] = [];

  get size(): number {
    return this.pairs.length;
  }

  all(): ScoredMember[] {
    return [...this.pairs];
  }

  score(member: string): number | undefined {
    return this.pairs.find(([m]) => m === member)?.[1];
  }

  /** Sets a score; returns whether the member was new. */
  set(member: string, score: number): boolean {
    const isNew = this.remove(member) === undefined;
    this.pairs.push([member, score]);
    this.pairs.sort(order);
    return isNew;
  }

  /** Removes a member; returns its score. */
  remove(member: string): number | undefined {
    const at = this.pairs.findIndex(([m]) => m === member);
    if (at < 0) return undefined;
    return this.pairs.splice(at, 1)[0][1];
  }

  rank(member: string): number | undefined {
    const at = this.pairs.findIndex(([m]) => m === member);
    return at < 0 ? undefined : at;
  }

  /** ZRANGE start stop: inclusive, negative from the end, clamped. */
  range(start: number, stop: number, reverse: boolean): ScoredMember[] {
    const ordered = reverse ? [...this.pairs].reverse() : this.pairs;
    const n = ordered.length;
    const first = Math.max(0, start < 0 ? start + n : start);
    const last = Math.min(n - 1, stop < 0 ? stop + n : stop);
    return first > last ? [] : ordered.slice(first, last + 1);
  }

  byScore(
    min: number,
    max: number,
    o: { minExclusive?: boolean; maxExclusive?: boolean; offset?: number; limit?: number; reverse?: boolean },
  ): ScoredMember[] {
    const inside = this.pairs.filter(([, s]) => (o.minExclusive === true ? s > min : s >= min) && (o.maxExclusive === true ? s < max : s <= max));
    const ordered = o.reverse === true ? inside.reverse() : inside;
    const from = o.offset ?? 0;
    return ordered.slice(from, o.limit === undefined ? undefined : from + o.limit);
  }

  byPrefix(prefix: string, limit: number | undefined, reverse: boolean): ScoredMember[] {
    const found = this.pairs.filter(([m]) => m.startsWith(prefix)).sort(([a], [b]) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    const ordered = reverse ? found.reverse() : found;
    return ordered.slice(0, limit);
  }

  pop(count: number, highest: boolean): ScoredMember[] {
    const taken = highest ? this.pairs.splice(Math.max(0, this.pairs.length - count)).reverse() : this.pairs.splice(0, count);
    return taken;
  }

  clear(): void {
    this.pairs = [];
  }
}

function order(a: ScoredMember, b: ScoredMember): number {
  return a[1] - b[1] || Buffer.compare(Buffer.from(a[0]), Buffer.from(b[0]));
}

/** The height of a member in the rank index. */
export function memberHeight(member: string): number {
  return heightOf(pack([member]));
}

/**
 * A member of height 5, the top level: found once by {@link membersOfHeight}'s search (a million
 * hashes, seconds on a loaded machine), kept here; the tests check its height.
 */
export const TOP_MEMBER = 'h5-1262660';

const talls = new Map<number, string[]>();

/** `count` members of height exactly `height`, named `<stem><n>` (found by search; the same each run). */
export function membersOfHeight(height: number, count: number, stem = `h${height}-`): string[] {
  const key = height * 1000 + count;
  const known = talls.get(key);
  if (known !== undefined && stem === `h${height}-`) return known;
  const found: string[] = [];
  for (let n = 0; found.length < count; n++) {
    const member = `${stem}${n}`;
    if (memberHeight(member) === height) found.push(member);
  }
  if (stem === `h${height}-`) talls.set(key, found);
  return found;
}
