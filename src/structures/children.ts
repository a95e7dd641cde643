import type { KeyValue, ReadTransaction } from '../kv/contract/types';
import { elementEnd } from '../document/keys/layout';
import { corruptData } from '../document/errors';

/**
 * The children of a container node (a structure's body), read in pages: each child is the entries of
 * one element below the container (a map key's value, a list element, a set member, a text chunk),
 * never split between pages.
 */

/** One child: its own key (the container's key plus one element) and its entries, the first at that key. */
export interface Child {
  readonly key: Buffer;
  readonly entries: KeyValue[];
}

export interface ChildrenPage {
  readonly children: Child[];
  /** Where the next page starts (the first key of the next child), when there may be one. */
  readonly next: Buffer | undefined;
}

/**
 * Up to `want` children of the container whose key is `parentLength` bytes long, from the range
 * `[begin, end)` of its descendants: one range read, streamed and stopped at the first key of the
 * child after the last one wanted (with `single`, children of one entry each: one read of `want + 1`
 * keys). `want` Infinity reads them all.
 */
export async function readChildren(
  tr: ReadTransaction,
  parentLength: number,
  begin: Uint8Array,
  end: Uint8Array,
  want: number,
  single = false,
): Promise<ChildrenPage> {
  const children: Child[] = [];
  if (single) {
    const limit = want === Infinity ? undefined : want + 1;
    const pairs = await tr.getRangeAll(begin, end, limit === undefined ? undefined : { limit });
    const n = Math.min(pairs.length, want);
    for (let i = 0; i < n; i++) children.push({ key: pairs[i].key, entries: [pairs[i]] });
    return { children, next: pairs.length > want ? pairs[want].key : undefined };
  }
  let current: Child | undefined;
  let stop = 0;
  for await (const pair of tr.getRange(begin, end)) {
    const key = pair.key;
    if (current !== undefined && isInside(key, current.key, parentLength, stop)) {
      current.entries.push(pair);
      continue;
    }
    if (children.length === want) return { children, next: key };
    stop = childEnd(key, parentLength);
    current = { key: stop === key.length ? key : key.subarray(0, stop), entries: [pair] };
    children.push(current);
  }
  return { children, next: undefined };
}

/**
 * Every child of the container whose key is `parentLength` bytes long in `[begin, end)`, streamed: one
 * range read, consumed as far as the caller iterates.
 */
export async function* streamChildren(
  tr: ReadTransaction,
  parentLength: number,
  begin: Uint8Array,
  end: Uint8Array,
): AsyncGenerator<Child, void, undefined> {
  let current: Child | undefined;
  let stop = 0;
  for await (const pair of tr.getRange(begin, end)) {
    const key = pair.key;
    if (current !== undefined && isInside(key, current.key, parentLength, stop)) {
      current.entries.push(pair);
      continue;
    }
    if (current !== undefined) yield current;
    stop = childEnd(key, parentLength);
    current = { key: stop === key.length ? key : key.subarray(0, stop), entries: [pair] };
  }
  if (current !== undefined) yield current;
}

/**
 * Whether `key` is a descendant of the child `child` (whose element ends at `stop`). A sibling that
 * merely extends the child's bytes (a string with an escaped NUL) continues with 0xff (see layout.ts).
 */
function isInside(key: Buffer, child: Buffer, parentLength: number, stop: number): boolean {
  return key.length > stop && key[stop] !== 0xff && key.compare(child, parentLength, stop, parentLength, stop) === 0;
}

function childEnd(key: Buffer, parentLength: number): number {
  const stop = elementEnd(key, parentLength);
  if (stop < 0) throw corruptData('structure data: a key without a valid element');
  return stop;
}
