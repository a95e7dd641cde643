import { Buffer } from 'node:buffer';
import { corruptData, DocumentError } from '../../document/errors';
import { concat, META_PUSHED, META_SIZE, META_TOKENS, type DocumentKeys } from '../../document/keys/layout';
import { Uuid, Versionstamp, type TupleItem } from '../../tuple';
import { packPrefixed, packPrefixedWithVersionstamp, unpackFrom } from '../../tuple/pack';
import { bodyKey } from '../structure-keys';
import { MAX_PRIORITY } from './priority';
import type { ReceiptSlot } from './tokens';

/**
 * Every key of one queue's document (see docs/queue.md):
 *
 * ```
 * <docPrefix> 0x00 'k'                          kind 'queue' (kind.ts)
 * <docPrefix> 0x00 's'                          size: items not yet consumed, int64 LE by atomic add
 * <docPrefix> 0x00 'p'                          pushed: a versionstamped value every push sets (watched)
 * <docPrefix> 0x00 't' <tuple(bucket, token)>   idempotency tokens and receipts, by minute bucket
 * <docPrefix> 0x01                              root entry: the structure marker
 * <docPrefix> 0x01 0x00 <tuple(0, vs)>          ready items of priority 0, in commit order (vs: the push's versionstamp)
 * <docPrefix> 0x01 0x00 <tuple(0, -p, vs)>      ready items of priority p > 0: tuple integers sort before
 *                                               versionstamps, and -p puts higher priorities first
 * <docPrefix> 0x01 0x00 <tuple(1, at, uniq)>    scheduled items: visible from `at` (ms); delayed pushes
 *                                               (uniq: a versionstamp), leased items (at: the deadline,
 *                                               uniq: the lease id) and nacked items (uniq: the lease id)
 * ```
 */

const READY_AREA = 0;
const SCHEDULED_AREA = 1;
const VERSIONSTAMP_CODE = 0x33;

/** A key parsed back into its area and position. */
export type ItemPosition = { readonly area: 'ready' } | { readonly area: 'scheduled'; readonly at: number; readonly uniq: Uuid | Versionstamp };

export class QueueKeys {
  /** `<body> tuple(0)`: the prefix of ready items. */
  readonly ready: Buffer;
  readonly readyEnd: Buffer;
  /** `<body> tuple(1)`: the prefix of scheduled items. */
  readonly scheduled: Buffer;
  readonly scheduledEnd: Buffer;
  readonly size: Buffer;
  readonly pushed: Buffer;
  /** The prefix of tokens; a token key is `tokens ++ tuple(bucket, token)`. */
  readonly tokens: Buffer;
  private readonly bodyLength: number;
  /** The key bases of the priorities seen lately (a few: most queues use a handful of priorities). */
  private readonly priorityBases = new Map<number, Buffer>();
  /** The longest key of the queue without a dedupe id, once computed. */
  private longestKey: number | undefined;
  /** `priorityStart(0)`. */
  private readonly readyStart: Buffer;
  /**
   * The last priority-0 bound and visibility bound computed, for the next take (one per take and
   * transaction, usually at the same read version or millisecond as the last; keys are never mutated).
   */
  private lastBound: { readonly readVersion: bigint; readonly key: Buffer } | undefined;
  private lastScheduledAfter: { readonly at: number; readonly key: Buffer } | undefined;
  /** By receipt slot index: the slot's key in the bucket it was last made for (see {@link receipt}). */
  private readonly receiptKeys: ({ readonly bucket: number; readonly key: Buffer } | undefined)[] = [];

  constructor(readonly doc: DocumentKeys) {
    const body = bodyKey(doc);
    this.bodyLength = body.length;
    this.ready = packPrefixed(body, [READY_AREA]);
    this.readyEnd = concat(this.ready, 0xff);
    this.scheduled = packPrefixed(body, [SCHEDULED_AREA]);
    this.scheduledEnd = concat(this.scheduled, 0xff);
    this.size = doc.meta(META_SIZE);
    this.pushed = doc.meta(META_PUSHED);
    this.tokens = doc.meta(META_TOKENS);
    this.readyStart = concat(this.ready, VERSIONSTAMP_CODE);
  }

  /** A ready item's key with an incomplete versionstamp, for `setVersionstampedKey`. */
  readyTemplate(userVersion: number, priority = 0): Buffer {
    // What `packPrefixedWithVersionstamp(base, [Versionstamp.incomplete(userVersion)])` writes, built
    // in place (one per pushed item): the base, the versionstamp's code, ten 0xff placeholder bytes,
    // the user version (2 bytes big-endian), and the placeholder's offset (4 bytes little-endian).
    if (!Number.isInteger(userVersion) || userVersion < 0 || userVersion > 0xffff) {
      return packPrefixedWithVersionstamp(this.priorityBase(priority), [Versionstamp.incomplete(userVersion)]);
    }
    const base = this.priorityBase(priority);
    const at = base.length + 1;
    const out = Buffer.allocUnsafe(at + 16);
    base.copy(out, 0);
    out[base.length] = VERSIONSTAMP_CODE;
    out.fill(0xff, at, at + 10);
    out.writeUInt16BE(userVersion, at + 10);
    out.writeUInt32LE(at, at + 12);
    return out;
  }

  /**
   * The first ready key of `priority` a commit after read version `readVersion` can write: every item
   * of that priority committed at or before that version sorts below it. Reads of the ready area stop
   * there in each priority, so they never reach the keys this transaction's own pushes will take
   * (unreadable until commit) and never conflict with pushes that commit later.
   */
  readyBound(readVersion: bigint, priority = 0): Buffer {
    if (priority === 0 && this.lastBound?.readVersion === readVersion) return this.lastBound.key;
    // A versionstamp is the commit version (8 bytes big-endian) and the batch order (2 bytes); then
    // the 2-byte user version.
    const base = this.priorityBase(priority);
    const out = Buffer.alloc(base.length + 13);
    base.copy(out, 0);
    out[base.length] = VERSIONSTAMP_CODE;
    out.writeBigUInt64BE(readVersion + 1n, base.length + 1);
    if (priority === 0) this.lastBound = { readVersion, key: out };
    return out;
  }

  /** The first key of the ready items of `priority` (their keys are this plus a versionstamp). */
  priorityStart(priority: number): Buffer {
    return priority === 0 ? this.readyStart : this.priorityBase(priority);
  }

  /** The end of the ready items of `priority`. */
  priorityEnd(priority: number): Buffer {
    return priority === 0 ? this.readyEnd : concat(this.priorityBase(priority), 0xff);
  }

  /**
   * The ranges of the ready area a transaction can read, in key order (priority, highest first, then
   * commit order): everything up to the priority-0 bound, less `[readyBound(p), priorityEnd(p))` for
   * each priority `p > 0` it pushed to, where its own pushes lie (unreadable until commit).
   */
  readyRanges(readVersion: bigint, ownPriorities: Iterable<number> | undefined): [Buffer, Buffer][] {
    const out: [Buffer, Buffer][] = [];
    let from = this.ready;
    const own = ownPriorities === undefined ? [] : [...ownPriorities].filter((p) => p > 0).sort((a, b) => b - a);
    for (const p of own) {
      out.push([from, this.readyBound(readVersion, p)]);
      from = this.priorityEnd(p);
    }
    out.push([from, this.readyBound(readVersion)]);
    return out;
  }

  /** The priority of a ready item's key. */
  priorityOf(key: Buffer): number {
    if (key[this.ready.length] === VERSIONSTAMP_CODE) return 0;
    const [negated] = unpackFrom(key, this.ready.length);
    if (typeof negated !== 'number' || negated >= 0) throw corruptData(`queue data: an item key ${key.toString('hex')}`);
    return -negated;
  }

  /** The prefix of the ready keys of `priority` before their versionstamp. */
  private priorityBase(priority: number): Buffer {
    if (priority === 0) return this.ready;
    let base = this.priorityBases.get(priority);
    if (base === undefined) {
      base = packPrefixed(this.ready, [-priority]);
      if (this.priorityBases.size < 64) this.priorityBases.set(priority, base);
    }
    return base;
  }

  scheduledKey(at: number, uniq: Uuid | Versionstamp): Buffer {
    return packPrefixed(this.scheduled, [at, uniq]);
  }

  /** A scheduled key with an incomplete versionstamp, for a delayed push. */
  scheduledTemplate(at: number, userVersion: number): Buffer {
    return packPrefixedWithVersionstamp(this.scheduled, [at, Versionstamp.incomplete(userVersion)]);
  }

  /** The first scheduled key not visible at `at`: `[scheduled, scheduledAfter(at))` holds the items visible at `at`. */
  scheduledAfter(at: number): Buffer {
    if (this.lastScheduledAfter?.at === at) return this.lastScheduledAfter.key;
    const key = packPrefixed(this.scheduled, [at + 1]);
    this.lastScheduledAfter = { at, key };
    return key;
  }

  /** The area and position of an item key. */
  position(key: Buffer): ItemPosition {
    const [area, at, uniq] = unpackFrom(key, this.bodyLength);
    if (area === READY_AREA) return { area: 'ready' };
    if (area === SCHEDULED_AREA && typeof at === 'number' && (uniq instanceof Uuid || uniq instanceof Versionstamp)) {
      return { area: 'scheduled', at, uniq };
    }
    throw corruptData(`queue data: an item key ${key.toString('hex')}`);
  }

  isReady(key: Buffer): boolean {
    return key.length > this.ready.length && key.compare(this.ready, 0, this.ready.length, 0, this.ready.length) === 0;
  }

  isScheduled(key: Buffer): boolean {
    return key.length > this.scheduled.length && key.compare(this.scheduled, 0, this.scheduled.length, 0, this.scheduled.length) === 0;
  }

  /**
   * Checks that every key the queue may write fits the engine's key limit: its longest are a
   * scheduled item's (a delayed push, a lease: a time and a 16-byte id) and a token (a bucket and a
   * 16-byte token, or the push's `dedupeId`). The document id is checked against the document's own
   * keys, which are shorter.
   *
   * @throws DocumentError KEY_TOO_LARGE.
   */
  assertFits(maxKeyBytes: number, dedupeId?: string): void {
    const latest = Number.MAX_SAFE_INTEGER;
    this.longestKey ??= Math.max(
      this.scheduledKey(latest, new Uuid(Buffer.alloc(16))).length,
      this.readyBound(0n, MAX_PRIORITY).length,
      this.token(Math.floor(latest / 60_000), Buffer.alloc(16)).length,
    );
    const longest = Math.max(this.longestKey, dedupeId === undefined ? 0 : this.token(Math.floor(latest / 60_000), dedupeId).length);
    if (longest > maxKeyBytes) {
      const what = dedupeId === undefined ? 'the queue id' : 'the queue id and dedupeId';
      throw new DocumentError('KEY_TOO_LARGE', `${what} make the queue's keys up to ${longest} bytes, over the engine's limit of ${maxKeyBytes}`);
    }
  }

  token(bucket: number, token: TupleItem): Buffer {
    return packPrefixed(this.tokens, [bucket, token]);
  }

  /**
   * `token(slot.bucket, slot.token)`, kept per slot (by its index) for its bucket: a process's receipt
   * slots are reused call after call, so most calls find their key made. Never modified: writes may
   * hand it over.
   */
  receipt(slot: ReceiptSlot): Buffer {
    const kept = this.receiptKeys[slot.index];
    if (kept !== undefined && kept.bucket === slot.bucket) return kept.key;
    const key = this.token(slot.bucket, slot.token);
    this.receiptKeys[slot.index] = { bucket: slot.bucket, key };
    return key;
  }

  /** `[tokens, tokensBefore(bucket))` holds the tokens of buckets before `bucket`. */
  tokensBefore(bucket: number): Buffer {
    return packPrefixed(this.tokens, [bucket]);
  }
}
