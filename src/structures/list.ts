import type { KeyValue, ReadTransaction, Transaction } from '../kv/contract/types';
import { corruptData, DocumentError } from '../document/errors';
import { flatten, unflatten } from '../document/values/flatten';
import { keyAfter } from '../kv/contract/bytes';
import { childKey, decodePosition, descendantsBegin, elementEnd, isIntegerElement, subtreeEnd, type DocumentKeys } from '../document/keys/layout';
import { ARRAY_VALUE, hasEntriesBelow } from '../document/values/leaf';
import {
  arrayBounds,
  clearSubtree,
  elementEntries,
  insertIntoArray,
  probeChild,
  type ChildProbe,
  readSubtree,
  readSubtreeEntries,
  removeFromArray,
  writeEntries,
  writeEncodedEntries,
  type Bounds,
  type HeldSide,
} from '../document/values/tree';
import type { JsonValue, TransactionOption } from '../document/types';
import { readChildren, streamChildren } from './children';
import { checkElementValue } from './element-value';
import { jsonEqual } from './json-equal';
import { Structure, type IterateOptions, type StructureScope, type StructureWriteOptions } from './structure';
import { bodyKey } from './structure-keys';
import type { MergedOperation, Settled } from './combiner';

/**
 * A list of JSON values: an array document below the structure's body (`<body>` holds an array
 * marker; element `i` is flattened at `<body> tuple(first + i)`, one key per leaf), with the array
 * machinery of `src/document/tree.ts`: positions are contiguous and `first` moves, so push and
 * unshift write only the new element and pop and shift clear only the old one; insert and removeAt in
 * the middle move the shorter side by one position (near an end, the side toward it when the read
 * from that end holds only that one). The length is not stored: it is `last − first + 1`, from two
 * limit-1 range reads. The JSON form (`collection.get`) is the array.
 *
 * Indexes are integers; a negative index counts from the end (`-1` is the last element). An index
 * that names no element is OUT_OF_RANGE, and nothing is written.
 *
 * Concurrency: a limit-1 read of the first (last) element conflicts with writes at that end of the
 * list and below (above) it. So concurrent pushes conflict with each other (each retries; they all
 * land), as do unshifts; a push and an unshift of a list with elements do not; get(i) and set(i) of an
 * element in the middle conflict only with writes of that element and with changes at the end they
 * count from. Near an end they read the elements on the way to it in the same read (at snapshot), and
 * conflict no more for that. (For a conflict-free append of many producers, use a queue.)
 */
/** The merge key of concurrent pushes (see combiner.ts). */
const PUSH = {};
/** The outcome of a merged push (shared: the combiner only reads it). */
const PUSHED: Settled<void> = { ok: true, value: undefined };

export class DocList<T = JsonValue> extends Structure {
  readonly kind = 'list' as const;

  /**
   * The element at `index`. Reads, with the kind key: the first keys of the list, or the last for a
   * negative index (see {@link elementAt}: 1 key, or up to 8 for an index within 8 of the end);
   * then, unless those held the whole element (a scalar, or at the end, any value of one key), 1
   * range read of the element. Conflicts with writes of the element and with changes at the end the
   * index counts from, not with writes of the elements read on the way.
   *
   * @throws DocumentError OUT_OF_RANGE, INVALID_ARGUMENT (index), WRONG_KIND.
   */
  async get(index: number, opts: TransactionOption = {}): Promise<T> {
    checkIndex(index);
    return this.readWith(
      opts,
      (tr, keys) => readElement(tr, bodyKey(keys), index),
      async (_tr, _keys, element) => {
        if (element === undefined || element.entries.length === 0) throw outOfRange(index);
        return unflatten(element.entries, 0, element.entries.length, element.key.length) as T;
      },
    );
  }

  /**
   * Replaces the element at `index`. Reads, with the kind key: the keys from the end the index counts
   * from, as {@link get} does; then, unless those held the element's entry, that entry (1 point read).
   * Writes: a range clear of the old element if it has keys below its entry (a container, a long
   * string; a short scalar is overwritten), the new one's entries, the version key. Conflicts with
   * writes of that element's entry, and with changes at the end the index counts from.
   *
   * @throws DocumentError OUT_OF_RANGE, INVALID_ARGUMENT (index), INVALID_VALUE, VALUE_TOO_DEEP,
   *   KEY_TOO_LARGE, WRONG_KIND; nothing is written when any is thrown.
   */
  async set(index: number, value: T, opts: TransactionOption = {}): Promise<void> {
    checkIndex(index);
    checkElementValue(value, 'the value');
    await this.writeWith(
      opts,
      (tr, keys) => elementAt(tr, bodyKey(keys), index),
      async ({ tr, keys }, element) => {
        // `element` is undefined when the list does not exist or is empty.
        const old = element === undefined ? undefined : await headOf(tr, element);
        if (element === undefined || old === undefined) throw outOfRange(index);
        const entries = flatten(value, element.key, this.access.kv.maxKeyBytes);
        if (hasEntriesBelow(old)) clearSubtree(tr, element.key);
        writeEntries(tr, entries);
        this.changed(tr, keys);
      },
    );
  }

  /**
   * Removes the element at `index`; the elements after it move down one index. Reads, with the kind
   * key: the keys from the end the index counts from (1, or up to 8 for an index within 8 of it, as
   * {@link get} reads them) and a limit-1 range read of the other end (the bounds); then, unless those
   * held the side that moves (see {@link heldSide}), 1 range read of the shorter side. Writes: a range
   * clear of the element; in the middle, that side rewritten one position over; the version key.
   * Conflicts with: changes at either end (the bounds), and writes of the elements it moves, not with
   * writes of other elements read on the way.
   *
   * @throws DocumentError OUT_OF_RANGE, INVALID_ARGUMENT (index), WRONG_KIND.
   */
  async removeAt(index: number, opts: TransactionOption = {}): Promise<void> {
    checkIndex(index);
    await this.writeWith(
      opts,
      (tr, keys) => readFromEnd(tr, bodyKey(keys), index < 0, readLimit(index)),
      async ({ tr, keys, existed }, read) => {
        if (!existed || read === undefined) throw outOfRange(index);
        const { bounds } = read;
        const length = lengthOf(bounds);
        const at = index < 0 ? length + index : index;
        if (bounds === undefined || at < 0 || at >= length) throw outOfRange(index, length);
        const body = bodyKey(keys);
        const held = heldSide(body, read, bounds, at, at + 1, at < length - 1 - at);
        await removeFromArray(tr, body, bounds, at, this.access.kv.maxKeyBytes, held);
        this.changed(tr, keys);
      },
    );
  }

  /**
   * Adds `value` at the end. Creates the list if it does not exist. Reads: the kind key, 1 limit-1
   * range read (the last element). Writes: the element's entries, the version key. Conflicts with
   * concurrent push, pop, and anything that writes the last element.
   *
   * @throws DocumentError INVALID_VALUE, VALUE_TOO_DEEP, KEY_TOO_LARGE, WRONG_KIND.
   */
  push(value: T, opts?: StructureWriteOptions): Promise<void> {
    // Not async: it returns the write's own promise (as upsert does); what throws before is a rejection.
    try {
      checkElementValue(value, 'the value');
      if (opts?.tr !== undefined || opts?.expiry !== undefined)
        return this.writeWith(opts, probeLast, (scope, last) => this.pushed(scope, last, [value]));
      return this.writeMerged(this.pushes, value);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** {@link push}'s writes of `values` (the merged calls'), after the element `last` (see {@link probeLast}). */
  private pushed({ tr, keys, create }: StructureScope, last: ChildProbe | undefined, values: readonly T[]): void {
    const at = last?.kind === 'position' ? last.position + 1 : 0;
    const entries = elementEntries(bodyKey(keys), at, values as readonly JsonValue[], this.access.kv.maxKeyBytes);
    create();
    writeEncodedEntries(tr, entries);
    this.changed(tr, keys);
  }

  /** Concurrent pushes merged (see {@link pushAll}), or one alone; one object per handle. */
  private readonly pushes: MergedOperation<T, void> = {
    operation: PUSH,
    runMany: (tr, values) => this.pushAll(tr, values),
    alone: (value) => this.attempt<void, ChildProbe>(probeLast, (scope, last) => this.pushed(scope, last, [value])),
  };

  /**
   * Concurrent pushes merged (structures/combiner.ts): one read of the last element, the values at the
   * positions after it in call order, as pushes one after another would place them. A value that
   * cannot be written fails the merged step, and each push then runs alone.
   */
  private pushAll(tr: Transaction, values: readonly T[]): Promise<Settled<void>[]> {
    return this.writeWith({ tr }, probeLast, (scope, last) => {
      this.pushed(scope, last, values);
      return values.map(() => PUSHED);
    });
  }

  /** Couchbase's name for {@link push}. */
  append(value: T, opts: StructureWriteOptions = {}): Promise<void> {
    return this.push(value, opts);
  }

  /**
   * Adds `value` at the start (index 0), moving nothing: it takes the position before the first.
   * Creates the list if it does not exist. Reads: the kind key, 1 limit-1 range read (the first
   * element). Writes: the element's entries, the version key. Conflicts with concurrent unshift,
   * shift, and anything that writes the first element.
   *
   * @throws DocumentError INVALID_VALUE, VALUE_TOO_DEEP, KEY_TOO_LARGE, WRONG_KIND.
   */
  async unshift(value: T, opts: StructureWriteOptions = {}): Promise<void> {
    checkElementValue(value, 'the value');
    await this.writeWith(
      opts,
      (tr, keys) => probeChild(tr, bodyKey(keys), 'first'),
      async ({ tr, keys, create }, first) => {
        const body = bodyKey(keys);
        const entries = elementEntries(body, (first?.kind === 'position' ? first.position : 0) - 1, [value], this.access.kv.maxKeyBytes);
        create();
        writeEntries(tr, entries);
        this.changed(tr, keys);
      },
    );
  }

  /** Couchbase's name for {@link unshift}. */
  prepend(value: T, opts: StructureWriteOptions = {}): Promise<void> {
    return this.unshift(value, opts);
  }

  /**
   * Inserts `value` before the element at `index` (`index` = length appends; a negative index counts
   * from the end). Creates the list if it does not exist (index 0). Reads, with the kind key: the keys
   * from the end the index counts from and the other end, as {@link removeAt} reads them; then, unless
   * those held the side that moves, 1 range read of the shorter side. Writes: the element's entries;
   * in the middle, that side rewritten one position over; the version key. Conflicts as
   * {@link removeAt}.
   *
   * @throws DocumentError OUT_OF_RANGE, INVALID_ARGUMENT (index), INVALID_VALUE, VALUE_TOO_DEEP,
   *   KEY_TOO_LARGE, WRONG_KIND; nothing is written when any is thrown.
   */
  async insert(index: number, value: T, opts: StructureWriteOptions = {}): Promise<void> {
    checkIndex(index);
    checkElementValue(value, 'the value');
    await this.writeWith(
      opts,
      (tr, keys) => readFromEnd(tr, bodyKey(keys), index < 0, readLimit(index)),
      async ({ tr, keys, create }, read) => {
        const body = bodyKey(keys);
        const bounds = read?.bounds;
        const length = lengthOf(bounds);
        const at = index < 0 ? length + index : index;
        if (at < 0 || at > length) throw outOfRange(index, length);
        const held = read === undefined || bounds === undefined ? undefined : heldSide(body, read, bounds, at, at, at <= length - at);
        const toStart = held?.toStart ?? at <= length - at;
        // Flattened once here for its checks (KEY_TOO_LARGE depends on the position), before any write.
        flatten(value, childKey(body, bounds === undefined ? 0 : bounds.first + at - (toStart ? 1 : 0)), this.access.kv.maxKeyBytes);
        create();
        await insertIntoArray(tr, body, bounds, at, [value], this.access.kv.maxKeyBytes, held);
        this.changed(tr, keys);
      },
    );
  }

  /**
   * Removes and returns the last element, or `undefined` when the list is empty. Reads: the kind key
   * and 1 limit-1 range read (the last key), together; then, when the element has more than that one
   * key (a container with elements, a long string), 1 range read of it. Writes: a clear of it (a
   * range clear when it has more than one key), the version key. Conflicts with concurrent push and
   * pop, and with writes of the last element.
   *
   * @throws DocumentError WRONG_KIND.
   */
  async pop(opts: TransactionOption = {}): Promise<T | undefined> {
    return this.takeEnd('last', opts);
  }

  /**
   * Removes and returns the first element; as {@link pop}, at the other end: with the kind key, a
   * limit-1 read of the first key, whose value says whether the element has keys below it (then, 1
   * range read of it).
   */
  async shift(opts: TransactionOption = {}): Promise<T | undefined> {
    return this.takeEnd('first', opts);
  }

  /**
   * The number of elements. Reads: the kind key, 2 limit-1 range reads (first and last), which in a
   * writing transaction conflict with changes at either end.
   *
   * @throws DocumentError WRONG_KIND.
   */
  async size(opts: TransactionOption = {}): Promise<number> {
    return this.readWith(
      opts,
      (tr, keys) => boundsOf(tr, bodyKey(keys)),
      async (_tr, _keys, bounds) => lengthOf(bounds),
    );
  }

  /**
   * The index of the first element equal to `value` (by value and type, deep: see `jsonEqual`) at or
   * after `fromIndex` (negative: from the end), or -1. Reads: the kind key and 2 limit-1 range reads
   * (the bounds), together; then 1 range read of the elements from `fromIndex` to the match: O(n).
   *
   * @throws DocumentError INVALID_ARGUMENT (fromIndex), INVALID_VALUE, WRONG_KIND.
   */
  async indexOf(value: T, fromIndex = 0, opts: TransactionOption = {}): Promise<number> {
    checkIndex(fromIndex, 'fromIndex');
    checkElementValue(value, 'the value');
    return this.readWith(
      opts,
      (tr, keys) => boundsOf(tr, bodyKey(keys)),
      async (tr, keys, bounds) => {
        if (keys === undefined) return -1;
        const body = bodyKey(keys);
        const length = lengthOf(bounds);
        const from = fromIndex < 0 ? Math.max(0, length + fromIndex) : fromIndex;
        if (bounds === undefined || from >= length) return -1;
        let index = from;
        for await (const child of streamChildren(tr, body.length, childKey(body, bounds.first + from), subtreeEnd(body))) {
          if (jsonEqual(unflatten(child.entries, 0, child.entries.length, child.key.length), value)) return index;
          index++;
        }
        return -1;
      },
    );
  }

  /** Whether some element equals `value`; as {@link indexOf}. */
  async includes(value: T, opts: TransactionOption = {}): Promise<boolean> {
    return (await this.indexOf(value, 0, opts)) >= 0;
  }

  /**
   * The elements from `start` to `end` (exclusive), as `Array.prototype.slice` takes them: negative
   * counts from the end, out-of-range bounds are clamped. Reads, with the kind key: the keys from one
   * end and the other end's key (see {@link sliceAt}: up to 8 keys from the start when `0 <= end <= 8`,
   * or from the end when `-8 <= start < 0`, else 1); then, unless those held every element of the
   * slice (scalars, one key each), 1 range read of the elements. Conflicts with changes at either end
   * and writes of the elements returned, as the bounds and the range read record them, not with writes
   * of the elements read on the way.
   *
   * @throws DocumentError INVALID_ARGUMENT (start, end), WRONG_KIND.
   */
  async slice(start = 0, end?: number, opts: TransactionOption = {}): Promise<T[]> {
    checkIndex(start, 'start');
    if (end !== undefined) checkIndex(end, 'end');
    return this.readWith(
      opts,
      (tr, keys) => sliceAt(tr, bodyKey(keys), start, end),
      async (tr, keys, slice) => {
        if (keys === undefined || slice === undefined) return [];
        const { bounds, from, to, entries } = slice;
        if (entries !== undefined) return entries.map((entry) => unflatten([entry], 0, 1, entry.key.length) as T);
        if (bounds === undefined || from >= to) return [];
        const body = bodyKey(keys);
        const page = await readChildren(tr, body.length, childKey(body, bounds.first + from), childKey(body, bounds.first + to), Infinity);
        return page.children.map((child) => unflatten(child.entries, 0, child.entries.length, child.key.length) as T);
      },
    );
  }

  /**
   * The whole list. Reads: the kind key, 1 range read of the list.
   *
   * @throws DocumentError WRONG_KIND.
   */
  async toArray(opts: TransactionOption = {}): Promise<T[]> {
    return this.readWith(
      opts,
      (tr, keys) => readSubtree(tr, bodyKey(keys)),
      async (_tr, _keys, list) => (list ?? []) as T[],
    );
  }

  /**
   * The elements in order, page by page (`pageSize` elements per range read, each page in a
   * transaction of its own unless `tr` is given; elements that move between pages, by unshift, shift,
   * insert or removeAt, may be skipped or seen twice).
   *
   * @throws DocumentError INVALID_ARGUMENT (pageSize), WRONG_KIND.
   */
  iterate(opts: IterateOptions = {}): AsyncGenerator<T, void, undefined> {
    return this.pages(opts, async (tr, keys, cursor, pageSize) => {
      const body = bodyKey(keys);
      const page = await readChildren(tr, body.length, cursor ?? descendantsBegin(body), subtreeEnd(body), pageSize);
      return { items: page.children.map((child) => unflatten(child.entries, 0, child.entries.length, child.key.length) as T), next: page.next };
    });
  }

  [Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    return this.iterate();
  }

  protected override initialize(tr: Transaction, keys: DocumentKeys): void {
    tr.set(bodyKey(keys), ARRAY_VALUE);
  }

  private takeEnd(which: 'first' | 'last', opts: TransactionOption): Promise<T | undefined> {
    return this.writeWith(
      opts,
      (tr, keys) => readElement(tr, bodyKey(keys), which === 'last' ? -1 : 0),
      async ({ tr, keys }, end) => {
        if (end === undefined || end.entries.length === 0) return undefined;
        if (end.entries.length > 1) clearSubtree(tr, end.key);
        else tr.clear(end.key);
        this.changed(tr, keys);
        return unflatten(end.entries, 0, end.entries.length, end.key.length) as T;
      },
    );
  }
}

/** The bounds of the list below `body`, `undefined` when it is empty. */
async function boundsOf(tr: ReadTransaction, body: Buffer): Promise<Bounds | undefined> {
  const bounds = await arrayBounds(tr, body);
  if (bounds === 'other') throw corruptData('structure data: a list body with non-element children');
  return bounds === 'empty' ? undefined : bounds;
}

function lengthOf(bounds: Bounds | undefined): number {
  return bounds === undefined ? 0 : bounds.last - bounds.first + 1;
}

/**
 * How far from an end of the list the read that finds an element's key also reads the elements on the
 * way, so that an index up to 8 from the end (0..7, -1..-8) of single-key elements needs no read
 * after it (for an insert or removeAt there, none of the elements it moves toward that end): at most
 * 7 elements more than the one wanted, each one key (under 100 kB). Further in, the read takes the
 * end's key alone.
 */
const NEAR_END = 8;

/** How many keys a read from the end `index` counts from takes: `|index|` (`index + 1` for index ≥ 0) up to {@link NEAR_END}, else 1. */
function readLimit(index: number): number {
  const reach = index < 0 ? -index : index + 1;
  return reach <= NEAR_END ? reach : 1;
}

/** Element `index` of a list as {@link elementAt} finds it. */
interface ElementAt {
  /** Its key, `<body> tuple(position)`. */
  readonly key: Buffer;
  /** Its entry at `key`: `null` when the read proved there is none, `undefined` when it did not reach it. */
  readonly head: KeyValue | null | undefined;
  /** Its entries when the read has them all (`[]` when there is none). */
  readonly entries: KeyValue[] | undefined;
}

/**
 * Finds element `index` by 1 range read from the end it counts from (reverse for a negative index)
 * over the list's element keys: `|index|` keys (`index + 1` for index ≥ 0) when that is at most
 * {@link NEAR_END}, else 1. It reaches the element when every key before it is a whole element of one
 * key. `undefined` when the list has no elements (or no array positions).
 *
 * The read is at snapshot, and records as its read conflict only what a limit-1 read of the end
 * records (the end's key and the keys beyond it): the result depends on where the list starts (ends)
 * and on the element, not on the elements between. The caller records the element's own conflict
 * ({@link readElement}, {@link headOf}).
 */
async function elementAt(tr: Transaction, body: Buffer, index: number): Promise<ElementAt | undefined> {
  const reverse = index < 0;
  const reach = reverse ? -index : index + 1;
  const limit = readLimit(index);
  const found = await tr.snapshot().getRangeAll(descendantsBegin(body), subtreeEnd(body), { limit, reverse });
  const at = body.length;
  const bound = found[0]?.key;
  addEndConflict(tr, body, bound, reverse);
  if (bound === undefined || !isIntegerElement(bound, at)) return undefined;
  const boundPosition = decodePosition(bound, at);
  const step = reverse ? -1 : 1;
  const key = childKey(body, boundPosition + step * (reach - 1));
  const single = (i: number) => isEntryOf(found[i].key, at, boundPosition + step * i);
  if (limit < reach || !found.every((_, i) => single(i))) return { key, head: undefined, entries: undefined };
  if (found.length < limit) return { key, head: null, entries: [] };
  const head = found[limit - 1];
  // Read in reverse, keys below the element would have come before its entry.
  return { key, head, entries: reverse || !hasEntriesBelow(head.value) ? [head] : undefined };
}

/** A slice of a list as {@link sliceAt} finds it: the list's bounds, and the slice's indexes clamped as `Array.prototype.slice` clamps them. */
interface Slice {
  /** The list's bounds, `undefined` when it has no elements. */
  readonly bounds: Bounds | undefined;
  /** The first index of the slice, and the index after its last. */
  readonly from: number;
  readonly to: number;
  /** The slice's elements, one entry each, when the read from the nearer end held them all (`[]` when it is empty). */
  readonly entries: KeyValue[] | undefined;
}

/**
 * The bounds of `slice(start, end)` by 1 range read from the end it lies near, issued with a limit-1
 * read of the other end. The slice lies within the first `end` elements when `end >= 0`, and within
 * the last `-start` when `start < 0`: the read takes that many keys from that end (the fewer of the
 * two) when that is at most {@link NEAR_END}, else 1. It holds the slice when every key up to the
 * slice's far bound is a whole element of one key.
 *
 * The read is at snapshot, and records as read conflicts what the reads it replaces recorded: the
 * limit-1 read of its end (the end's key and the keys beyond it) and, when it holds the slice, the
 * range read of the elements returned. The other end's read records its own; so the conflicts are
 * those of the bounds and the range read, whichever way the slice is read.
 */
async function sliceAt(tr: Transaction, body: Buffer, start: number, end: number | undefined): Promise<Slice> {
  const fromStart = end !== undefined && end >= 0 ? end : Infinity;
  const fromEnd = start < 0 ? -start : Infinity;
  const reverse = fromEnd < fromStart;
  const reach = Math.min(fromStart, fromEnd);
  const limit = reach >= 1 && reach <= NEAR_END ? reach : 1;
  const { bounds, found } = await readFromEnd(tr, body, reverse, limit);
  if (bounds === undefined) return { bounds: undefined, from: 0, to: 0, entries: [] };
  const at = body.length;
  const nearPosition = reverse ? bounds.last : bounds.first;
  const length = lengthOf(bounds);
  const clamp = (i: number) => (i < 0 ? Math.max(0, length + i) : Math.min(i, length));
  const from = clamp(start);
  const to = end === undefined ? length : clamp(end);
  if (from >= to) return { bounds, from, to, entries: [] };
  // found[k] is element `first + k` (reading forward) or `last − k` (in reverse) when it is that element's entry.
  const step = reverse ? -1 : 1;
  const single = (k: number) => k < found.length && isEntryOf(found[k].key, at, nearPosition + step * k);
  // Reading forward, keys below an element come after its entry: the next key, or the read's end, proves there are none.
  const whole = (k: number) =>
    single(k) && (reverse || !hasEntriesBelow(found[k].value) || (k + 1 < found.length ? single(k + 1) : found.length < limit));
  const [nearest, farthest] = reverse ? [length - to, length - from] : [from, to];
  for (let k = nearest; k < farthest; k++) if (!whole(k)) return { bounds, from, to, entries: undefined };
  tr.addReadConflictRange(childKey(body, bounds.first + from), childKey(body, bounds.first + to));
  const entries = found.slice(nearest, farthest);
  return { bounds, from, to, entries: reverse ? entries.reverse() : entries };
}

/** A list's bounds and the keys read from one of its ends, as {@link readFromEnd} finds them. */
interface EndRead {
  /** The list's bounds, `undefined` when it has no elements. */
  readonly bounds: Bounds | undefined;
  /** Whether the keys were read from the last one down. */
  readonly reverse: boolean;
  /** The keys read, in the order read: the first `limit` from that end, or all when fewer. */
  readonly found: KeyValue[];
  readonly limit: number;
}

/**
 * The list's bounds, by 1 range read of up to `limit` keys from its first (last, `reverse`) key,
 * issued with a limit-1 read of the other end. The read of up to `limit` keys is at snapshot, and
 * records as its read conflict what a limit-1 read of its end records ({@link addEndConflict}): a
 * caller that uses the keys beyond the first records their conflict itself. The other end's read
 * records its own. So the conflicts are those of the two limit-1 reads of the bounds.
 *
 * @throws DocumentError CORRUPT_DATA when the body has children that are not elements.
 */
async function readFromEnd(tr: Transaction, body: Buffer, reverse: boolean, limit: number): Promise<EndRead> {
  const [found, other] = await Promise.all([
    tr.snapshot().getRangeAll(descendantsBegin(body), subtreeEnd(body), { limit, reverse }),
    probeChild(tr, body, reverse ? 'first' : 'last'),
  ]);
  const at = body.length;
  const near = found[0]?.key;
  addEndConflict(tr, body, near, reverse);
  if ((near !== undefined && !isIntegerElement(near, at)) || other.kind === 'other') {
    throw corruptData('structure data: a list body with non-element children');
  }
  if (near === undefined || other.kind !== 'position') return { bounds: undefined, reverse, found, limit };
  const nearPosition = decodePosition(near, at);
  const bounds = reverse ? { first: other.position, last: nearPosition } : { first: nearPosition, last: other.position };
  return { bounds, reverse, found, limit };
}

/**
 * The side of an index that an insert or removal in a list with `bounds` can move with the keys `read`
 * holds, and its entries: the elements before the index (positions `first .. first + before − 1`), or
 * those from `first + after` to the last (an insert moves the elements from the index on, a removal
 * those after it). The side the array machinery would choose (`shorterToStart`: the shorter one) when
 * `read` holds it, else the other when it does (the read holds at most {@link NEAR_END} keys, so that
 * side is short too), else `undefined`: the shorter side is read after the bounds.
 */
function heldSide(
  body: Buffer,
  read: EndRead,
  { first, last }: Bounds,
  before: number,
  after: number,
  shorterToStart: boolean,
): HeldSide | undefined {
  for (const toStart of [shorterToStart, !shorterToStart]) {
    const entries = toStart ? entriesHeld(body, read, first, first + before) : entriesHeld(body, read, first + after, last + 1);
    if (entries !== undefined) return { toStart, entries };
  }
  return undefined;
}

/**
 * The entries of the elements at positions `from .. to − 1` in key order when `read` has every key
 * of them, which a range read would have returned; else `undefined`. It has them all when it read
 * fewer keys than its limit (the whole list), or when its last key is at or past the range's far
 * bound (forward: element `to` or beyond; in reverse: element `from`'s entry or before).
 */
function entriesHeld(body: Buffer, read: EndRead, from: number, to: number): KeyValue[] | undefined {
  if (from >= to) return [];
  const { found, limit, reverse } = read;
  const whole = found.length < limit;
  // Each element has a key: a read cut short by its limit holds at most that many.
  if (!whole && to - from > found.length) return undefined;
  const begin = childKey(body, from);
  const end = childKey(body, to);
  if (!whole) {
    const lastRead = found[found.length - 1].key;
    if (reverse ? lastRead.compare(begin) > 0 : lastRead.compare(end) < 0) return undefined;
  }
  const inside = found.filter(({ key }) => key.compare(begin) >= 0 && key.compare(end) < 0);
  return reverse ? inside.reverse() : inside;
}

/**
 * Records the read conflict of a limit-1 read of the list's first (last, `reverse`) key, which was
 * `bound` (`undefined`: none): that key and the keys before (after) it, the whole list when empty.
 */
function addEndConflict(tr: Transaction, body: Buffer, bound: Buffer | undefined, reverse: boolean): void {
  const begin = descendantsBegin(body);
  const end = subtreeEnd(body);
  if (bound === undefined) tr.addReadConflictRange(begin, end);
  else if (reverse) tr.addReadConflictRange(bound, end);
  else tr.addReadConflictRange(begin, keyAfter(bound));
}

/** Whether `key`, below a list body `at` bytes long, is the entry of the element at `position` (not a key below it). */
function isEntryOf(key: Buffer, at: number, position: number): boolean {
  return isIntegerElement(key, at) && elementEnd(key, at) === key.length && decodePosition(key, at) === position;
}

/**
 * Element `index`'s key and entries (`[]` when there is none), `undefined` when the list has no
 * elements: {@link elementAt}, then 1 range read of the element unless that had it all. Conflicts with
 * writes of the element (its subtree) and with changes at the end the index counts from.
 */
async function readElement(tr: Transaction, body: Buffer, index: number): Promise<{ key: Buffer; entries: KeyValue[] } | undefined> {
  const element = await elementAt(tr, body, index);
  if (element === undefined) return undefined;
  const { key, entries } = element;
  if (entries === undefined) return { key, entries: await readSubtreeEntries(tr, key) };
  tr.addReadConflictRange(key, subtreeEnd(key));
  return { key, entries };
}

/** The value of the element's entry (1 point read unless {@link elementAt} had it), conflicting with writes of it. */
async function headOf(tr: Transaction, element: ElementAt): Promise<Buffer | undefined> {
  if (element.head === undefined) return tr.get(element.key);
  tr.addReadConflictKey(element.key);
  return element.head?.value;
}

function checkIndex(index: unknown, what = 'index'): asserts index is number {
  if (typeof index !== 'number' || !Number.isSafeInteger(index)) {
    throw new DocumentError('INVALID_ARGUMENT', `${what} is an integer, got ${typeof index === 'number' ? index : typeof index}`);
  }
}

function outOfRange(index: number, length?: number): DocumentError {
  return new DocumentError(
    'OUT_OF_RANGE',
    length === undefined ? `no element at index ${index}` : `index ${index} is out of range for a list of ${length} elements`,
  );
}

/** The JSON form: the array below the body. */
export function listJsonForm(entries: readonly KeyValue[], keys: DocumentKeys): JsonValue {
  const body = bodyKey(keys);
  const start = entries.findIndex(({ key }) => key.equals(body));
  if (start < 0) return [];
  return unflatten(entries, start, entries.length, body.length);
}

/** The prefetch of a push: the list's last element (1 limit-1 range read), read with the kind check. */
function probeLast(tr: Transaction, keys: DocumentKeys): Promise<ChildProbe> {
  return probeChild(tr, bodyKey(keys), 'last');
}
