import { DocTransaction, METADATA_VERSION_BUMPED } from '../../document/doc-transaction';
import type { Transaction } from '../../kv/contract/types';

/**
 * Queue settings known by their absence at a metadata version, per database (shared by every queue
 * handle over it), so that a queue without a rate limit or without events costs its operations no
 * read of those settings: the pattern of `collection/lock-flags.ts`.
 *
 * A setting comes into being only by a write that also bumps the database's metadata version
 * (FoundationDB's `\xff/metadataVersion`, sent with the read version: no round trip) in the same
 * commit: a first `setRateLimit` (rate-limit.ts), `configure({ events: true })` on a queue whose events
 * are off (events.ts). So "no limit" or "events off" read at version V holds as long as the version
 * is V, and an operation that trusted it conflicts with such a concurrent write (its read of the
 * metadata version against the bump) and retries, then reads the setting. After its own bump a
 * transaction cannot read the metadata version (1036, `METADATA_VERSION_BUMPED`): it reads the setting.
 */

/** The queue has no rate limit. */
export const NO_RATE_LIMIT = 1;
/** The queue's events are off (no settings key, or `events: false`). */
export const EVENTS_OFF = 2;
export type KnownSetting = typeof NO_RATE_LIMIT | typeof EVENTS_OFF;
const ALL = NO_RATE_LIMIT | EVENTS_OFF;

/** A transaction's metadata version, as `DocTransaction.metadataVersion` gives it. */
export type MetadataVersion = Buffer | undefined | typeof METADATA_VERSION_BUMPED;

/** At most this many queues are remembered per database; beyond, the set starts again. */
const MAX_REMEMBERED = 10_000;

const BY_DATABASE = new WeakMap<object, KnownSettings>();

export class KnownSettings {
  /** The metadata version the settings below were known at. */
  private version: Buffer | undefined;
  /** By queue (`DocumentKeys.identity`): the settings known absent, a mask of `KnownSetting`s. */
  private readonly queues = new Map<string, number>();

  private constructor() {}

  /** The settings known of the queues of `database` (what it is known by: its `Database`). */
  static of(database: object): KnownSettings {
    let known = BY_DATABASE.get(database);
    if (known === undefined) {
      known = new KnownSettings();
      BY_DATABASE.set(database, known);
    }
    return known;
  }

  /** The metadata version `tr` reads at (no round trip on a cluster; read once per attempt by every layer). */
  static version(tr: Transaction): Promise<MetadataVersion> {
    return DocTransaction.of(tr).metadataVersion();
  }

  /**
   * Starts reading `tr`'s metadata version (once per attempt, whoever asks first) without waiting, so
   * that {@link hasNow} can answer once the reads issued after it are in.
   */
  static prefetch(tr: Transaction): void {
    KnownSettings.version(tr).catch(() => undefined);
  }

  /**
   * Whether `setting` is known absent from queue `identity` at the metadata version `tr` has already
   * read in this attempt, without waiting: `false` when the version is not read yet (ask {@link has}).
   */
  hasNow(tr: Transaction, identity: string, setting: KnownSetting): boolean {
    const settled = DocTransaction.of(tr).metadataVersionSettled;
    return settled !== undefined && this.has(settled.version, identity, setting);
  }

  /**
   * Whether `setting` was absent from queue `identity` at the latest metadata version known here (any
   * transaction's): a guess at what {@link hasNow} will say once `tr`'s version is read, for work that
   * is only started early when the setting may be there (and done later otherwise), never a truth.
   */
  likely(identity: string, setting: KnownSetting): boolean {
    return ((this.queues.get(identity) ?? 0) & setting) !== 0;
  }

  /** Whether `setting` is known absent from queue `identity` at `version`. */
  has(version: MetadataVersion, identity: string, setting: KnownSetting): boolean {
    if (version === METADATA_VERSION_BUMPED) return false;
    this.moveTo(version);
    return ((this.queues.get(identity) ?? 0) & setting) !== 0;
  }

  /**
   * Remembers that `setting` is absent from queue `identity` as read at `version`: only if no other
   * version was cached meanwhile, so that what is kept is the truth at the version it is kept for.
   */
  learn(version: MetadataVersion, identity: string, setting: KnownSetting): void {
    if (version === METADATA_VERSION_BUMPED || !sameVersion(version, this.version)) return;
    this.add(identity, setting);
  }

  /**
   * Remembers that the queue `tr` creates has none of the settings at the metadata version `tr` reads
   * at: it did not exist then (a stale expired one is cleared by the creation), and a setting can only
   * come by a bump. Reads the metadata version at snapshot (no conflict; no round trip on a cluster),
   * after the fact: nothing waits for it.
   */
  created(tr: Transaction, identity: string): void {
    tr.snapshot()
      .getMetadataVersion()
      .then((version) => {
        this.moveTo(version);
        this.add(identity, ALL);
      })
      // Unreadable after this transaction's own bump, or the transaction ended: nothing remembered.
      .catch(() => undefined);
  }

  /** Forgets that `setting` is absent from queue `identity` (a transaction that bumped the version sets it). */
  forget(identity: string, setting: KnownSetting): void {
    const mask = this.queues.get(identity);
    if (mask === undefined) return;
    if ((mask & ~setting) === 0) this.queues.delete(identity);
    else this.queues.set(identity, mask & ~setting);
  }

  private moveTo(version: Buffer | undefined): void {
    if (sameVersion(version, this.version)) return;
    this.version = version;
    this.queues.clear();
  }

  private add(identity: string, setting: number): void {
    const mask = this.queues.get(identity);
    if (mask === undefined && this.queues.size >= MAX_REMEMBERED) this.queues.clear();
    this.queues.set(identity, (mask ?? 0) | setting);
  }
}

function sameVersion(a: Buffer | undefined, b: Buffer | undefined): boolean {
  if (a === b) return true;
  return a === undefined || b === undefined ? false : a.equals(b);
}
