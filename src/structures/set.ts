import { Buffer } from 'node:buffer';
import type { KeyValue, Transaction } from '../kv/contract/types';
import type { TupleItem } from '../tuple';
import { decodeItem, Reader } from '../tuple/codec';
import { packPrefixed } from '../tuple/pack';
import { DocumentError } from '../document/errors';
import { descendantsBegin, META_SIZE, subtreeEnd, type DocumentKeys } from '../document/keys/layout';
import { fromTuple } from '../document/values/leaf';
import { loneSurrogateIndex } from '../document/values/path';
import type { JsonValue, TransactionOption } from '../document/types';
import { readChildren } from './children';
import { decodeInt64 } from './int64';
import { Structure, type IterateOptions, type StructureScope, type StructureWriteOptions } from './structure';
import { bodyKey } from './structure-keys';
import type { MergedOperation, Settled } from './combiner';
import { earlierEquals } from './repeats';
import { compareBytes } from '../kv/contract/bytes';

/** What a set holds: JSON primitives. */
export type SetMember = string | number | bigint | boolean | null;

const EMPTY = Buffer.alloc(0);
const ONE = Buffer.from([1, 0, 0, 0, 0, 0, 0, 0]);
/** The merge key of concurrent adds (see combiner.ts). */
const ADD = {};
const MINUS_ONE = Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);
/** The outcomes of merged adds (shared: the combiner only reads them). */
const NEW: Settled<boolean> = { ok: true, value: true };
const NOT_NEW: Settled<boolean> = { ok: true, value: false };

/**
 * A set of JSON primitives stored one key per member, `<body> tuple(member)` with an empty value, and
 * its size in the metadata key `'s'` kept by atomic add. Members are compared by value and type, as
 * tuple elements: `1` and `"1"` differ, `1` and `1.0` are the same number, an integer number and a
 * bigint of equal value are the same member, `-0` is `0`. The JSON form (`collection.get`) is the
 * array of members in key order: `null`, strings (by UTF-8 bytes), integers, other numbers, `false`,
 * `true`.
 *
 * Concurrency: add, delete and has of one member read only that member's key (and the kind key,
 * written only at creation and removal); the size is changed by atomic add, which reads nothing. So
 * operations on different members never conflict, and two on the same member conflict only when one
 * of them changes it.
 */
export class DocSet<M extends SetMember = SetMember> extends Structure {
  readonly kind = 'set' as const;

  /**
   * Adds `member`; returns whether it was new. Creates the set if it does not exist.
   *
   * Reads: the kind key, the member's key. Writes, if the member is new: the member's key, an atomic
   * add to the size, the version key (blind). Conflicts with: a concurrent add or delete of the same
   * member that changes it; clear() and removal.
   *
   * @throws DocumentError INVALID_VALUE (not a primitive, a lone surrogate, a non-finite number),
   *   KEY_TOO_LARGE, WRONG_KIND.
   */
  add(member: M, opts?: StructureWriteOptions): Promise<boolean> {
    // Not async: it returns the write's own promise; what throws before is a rejection.
    try {
      const element = memberElement(member);
      if (opts?.tr !== undefined || opts?.expiry !== undefined) {
        const [read, addAt] = this.addSteps(element);
        return this.writeWith<boolean, Buffer | undefined>(opts, read, addAt);
      }
      return this.writeMerged(this.adds, element);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** The prefetch and the step of {@link add} of one member, not merged. */
  private addSteps(
    element: TupleItem,
  ): [(tr: Transaction, keys: DocumentKeys) => Promise<Buffer | undefined>, (scope: StructureScope, found: Buffer | undefined) => boolean] {
    // The member's key, packed once per attempt by the prefetch, which runs before the write's step.
    let at: Buffer = EMPTY;
    return [(tr, keys) => tr.get((at = memberKey(keys, element, this.access.kv.maxKeyBytes))), (scope, found) => this.addAt(scope, at, found)];
  }

  /** {@link add} of one member, not merged: adds the member's key `at`, unless it was `found`. */
  private addAt({ tr, keys, create }: StructureScope, at: Buffer, found: Buffer | undefined): boolean {
    if (found !== undefined) return false;
    create();
    tr.set(at, EMPTY);
    tr.add(keys.meta(META_SIZE), ONE);
    this.changed(tr, keys);
    return true;
  }

  /** Concurrent adds merged (see {@link addAll}), or one alone; one object per handle. */
  private readonly adds: MergedOperation<TupleItem, boolean> = {
    operation: ADD,
    runMany: (tr, elements) => this.addAll(tr, elements),
    alone: (element) => this.attempt<boolean, Buffer | undefined>(...this.addSteps(element)),
  };

  /**
   * Concurrent adds merged (structures/combiner.ts): the members' keys read together, each new member
   * written once and the size added once. A member added twice in the batch is new only for the
   * first call, as adds one after another would report.
   */
  private addAll(tr: Transaction, elements: readonly TupleItem[]): Promise<Settled<boolean>[]> {
    const max = this.access.kv.maxKeyBytes;
    // The members' keys, made once for the reads and the writes.
    let memberKeys: Buffer[] = [];
    let keysFor: DocumentKeys | undefined;
    const keysOf = (keys: DocumentKeys): Buffer[] => {
      if (keysFor !== keys) {
        const body = bodyKey(keys);
        memberKeys = elements.map((element) => memberKeyIn(body, element, max));
        keysFor = keys;
      }
      return memberKeys;
    };
    return this.writeWith(
      { tr },
      (t, keys) => Promise.all(keysOf(keys).map((key) => t.get(key))),
      ({ tr: t, keys, create }, found) => {
        let added = 0;
        const at = keysOf(keys);
        // A member added twice in the batch is new only the first time (the store did not hold it).
        const earlier = earlierEquals(at, compareBytes);
        const outcomes = at.map((key, i): Settled<boolean> => {
          if (found?.[i] !== undefined || (earlier !== undefined && earlier[i] >= 0)) return NOT_NEW;
          create();
          t.set(key, EMPTY);
          added++;
          return NEW;
        });
        if (added > 0) {
          t.add(keys.meta(META_SIZE), added);
          this.changed(t, keys);
        }
        return outcomes;
      },
    );
  }

  /**
   * Removes `member`; returns whether it was there. The set stays (empty) when its last member goes.
   *
   * Reads: the kind key, the member's key. Writes, if it was there: a clear of the member's key, an
   * atomic add to the size, the version key. Conflicts as {@link add}.
   *
   * @throws DocumentError INVALID_VALUE, KEY_TOO_LARGE, WRONG_KIND.
   */
  async delete(member: M, opts: TransactionOption = {}): Promise<boolean> {
    const element = memberElement(member);
    return this.writeWith(
      opts,
      (tr, keys) => tr.get(memberKey(keys, element, this.access.kv.maxKeyBytes)),
      async ({ tr, keys }, found) => {
        if (found === undefined) return false;
        tr.clear(memberKey(keys, element, this.access.kv.maxKeyBytes));
        tr.add(keys.meta(META_SIZE), MINUS_ONE);
        this.changed(tr, keys);
        return true;
      },
    );
  }

  /**
   * Whether `member` is in the set. Reads: the kind key, the member's key (conflicts, in a writing
   * transaction, with a concurrent add or delete of that member).
   *
   * @throws DocumentError INVALID_VALUE, KEY_TOO_LARGE, WRONG_KIND.
   */
  async has(member: M, opts: TransactionOption = {}): Promise<boolean> {
    const element = memberElement(member);
    return this.readWith(
      opts,
      (tr, keys) => tr.get(memberKey(keys, element, this.access.kv.maxKeyBytes)),
      async (_tr, _keys, found) => found !== undefined,
    );
  }

  /**
   * The number of members. Reads: the kind key, the size key (in a writing transaction, conflicts
   * with every concurrent add or delete that changes the set).
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
   * All members, in key order, read together: the kind key, 1 range read of the members.
   *
   * @throws DocumentError WRONG_KIND.
   */
  async values(opts: TransactionOption = {}): Promise<M[]> {
    return this.readWith(
      opts,
      (tr, keys) => tr.getRangeAll(descendantsBegin(bodyKey(keys)), subtreeEnd(bodyKey(keys))),
      async (_tr, keys, pairs) =>
        keys === undefined || pairs === undefined ? [] : pairs.map((pair) => decodeMember(pair.key, bodyKey(keys).length) as M),
    );
  }

  /**
   * The members in key order, page by page (`pageSize` keys per range read, each page in a transaction
   * of its own unless `tr` is given).
   *
   * @throws DocumentError INVALID_ARGUMENT (pageSize), WRONG_KIND.
   */
  iterate(opts: IterateOptions = {}): AsyncGenerator<M, void, undefined> {
    return this.pages(opts, async (tr, keys, cursor, pageSize) => {
      const body = bodyKey(keys);
      const page = await readChildren(tr, body.length, cursor ?? descendantsBegin(body), subtreeEnd(body), pageSize, true);
      return { items: page.children.map((child) => decodeMember(child.key, body.length) as M), next: page.next };
    });
  }

  [Symbol.asyncIterator](): AsyncGenerator<M, void, undefined> {
    return this.iterate();
  }
}

/**
 * The tuple element of a member.
 *
 * @throws DocumentError INVALID_VALUE for anything but a JSON primitive (or bigint).
 */
export function memberElement(member: unknown): TupleItem {
  switch (typeof member) {
    case 'string': {
      const at = loneSurrogateIndex(member);
      if (at >= 0) throw new DocumentError('INVALID_VALUE', `a set member cannot hold a lone surrogate (at index ${at})`);
      return member;
    }
    case 'number':
      if (!Number.isFinite(member)) throw new DocumentError('INVALID_VALUE', `a set member cannot be ${member}`);
      return member === 0 ? 0 : member;
    case 'bigint':
    case 'boolean':
      return member;
    case 'object':
      if (member === null) return null;
      break;
    case 'undefined':
    case 'symbol':
    case 'function':
      break;
  }
  throw new DocumentError(
    'INVALID_VALUE',
    `set members are strings, numbers, bigints, booleans or null, got ${Array.isArray(member) ? 'an array' : typeof member}`,
  );
}

/** @throws DocumentError KEY_TOO_LARGE over the engine's key limit, `maxKeyBytes`. */
function memberKey(keys: DocumentKeys, element: TupleItem, maxKeyBytes: number): Buffer {
  return memberKeyIn(bodyKey(keys), element, maxKeyBytes);
}

/** As {@link memberKey}, given the set's body key. */
function memberKeyIn(body: Buffer, element: TupleItem, maxKeyBytes: number): Buffer {
  const key = packPrefixed(body, [element]);
  if (key.length > maxKeyBytes) {
    throw new DocumentError('KEY_TOO_LARGE', `the set member's key would be ${key.length} bytes, over the engine's limit of ${maxKeyBytes}`);
  }
  return key;
}

function decodeMember(key: Buffer, at: number): SetMember {
  return fromTuple(decodeItem(new Reader(key, at))) as SetMember;
}

/** The JSON form: the members in key order. */
export function setJsonForm(entries: readonly KeyValue[], keys: DocumentKeys): JsonValue {
  const body = bodyKey(keys);
  const out: JsonValue[] = [];
  for (const { key } of entries) {
    if (key.length > body.length && key.compare(body, 0, body.length, 0, body.length) === 0) out.push(decodeMember(key, body.length));
  }
  return out;
}
