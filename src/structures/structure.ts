import type { Transaction } from '../kv/contract/types';
import type { TupleItem } from '../tuple';
import { DocTransaction } from '../document/doc-transaction';
import { DocumentError } from '../document/errors';
import type { StructureAccess } from '../document/structure-port';
import { docIdElement } from '../document/keys/ids';
import type { DocumentKeys } from '../document/keys/layout';
import type { DocId, Expiry, TransactionOption } from '../document/types';
import { writeVersion } from '../document/keys/version';
import { effectiveExpiry, requestedExpiry } from '../document/collection/expiry';
import type { StructureWriteTarget } from '../document/structure-port';
import { runCombined, runMerged, structureKey, type Merge, type MergedOperation } from './combiner';
import { encodeKind, inspectKind, kindKey, writeKind, wrongKind, type KindCheck, type StructureKind } from '../document/keys/kind';

/** Options of iteration: a transaction to read in (every page in it), and the page size. */
export interface IterateOptions extends TransactionOption {
  /**
   * Elements per range read (default 100). Without `tr` each page is read in a transaction of its
   * own, so a long iteration never meets the 5-second transaction limit, but pages may reflect
   * different moments; pass `tr` for one consistent view.
   */
  pageSize?: number;
}

const DEFAULT_PAGE_SIZE = 100;

/** Options of a write that may create its structure. */
export interface StructureWriteOptions extends TransactionOption {
  /**
   * The expiry of the structure when this write creates it (seconds from now, or a Date; 0: none),
   * capped by the collection's maxTTL as a document's. A write to an existing structure keeps the
   * expiry it has: change it with `touch`. See docs/structures.md, "Expiry".
   */
  expiry?: Expiry;
}

/** A page of items and the cursor of the next page, if there may be one. */
export interface Page<T> {
  readonly items: T[];
  readonly next: Buffer | undefined;
}

/** What an operation of a structure sees of it. */
export interface StructureScope {
  readonly tr: Transaction;
  readonly keys: DocumentKeys;
  /** Whether the structure existed before this operation. */
  readonly existed: boolean;
  /** The structure's expiry (ms) when it existed and has one. */
  readonly expiresAt: number | undefined;
  /** Where the write goes: the collection's id and maxTTL. */
  readonly target: StructureWriteTarget;
  /**
   * Creates the structure if it did not exist (its kind, root entry and any body marker, and its
   * collection if that is new): call it just before the first write, after every check that can
   * fail, so that a failing operation writes nothing. Idempotent.
   */
  readonly create: () => void;
}

/**
 * The base of every structure handle: a document id in a collection and its kind. Making a handle
 * touches nothing; each operation runs in the caller's transaction (`{ tr }`: no commit, no retry) or
 * in one of its own, retried on conflicts.
 *
 * Every operation reads the kind key (1 point read, issued together with the operation's own first
 * reads; see `kind.ts`): it conflicts only with the creation, `clear()`, removal and expiry changes of
 * the structure and with whole-document writes at its id. The kind value holds the structure's expiry
 * too, so an expired structure reads as missing (empty) with no other read, and the next write creates
 * a fresh one in its place. Where there is no structure, an operation also reads the expiry and root
 * entries (1 range read): a plain document there makes the operation WRONG_KIND, unless it has expired
 * (an expired document is missing, and a structure created in its place clears it).
 */
export abstract class Structure {
  /** The kind of document this handle reads and writes. */
  abstract readonly kind: StructureKind;
  /** @internal The id as its tuple element. */
  protected readonly element: TupleItem;
  /** The structure's key among its collection's combiners (combiner.ts), made on first use. */
  private combineKey: string | undefined;

  /**
   * @internal Use the collection's factory (`collection.set(id)` ...).
   * @throws DocumentError INVALID_ARGUMENT for an invalid id.
   */
  constructor(
    /** @internal How this handle reaches its collection. */
    protected readonly access: StructureAccess,
    readonly id: DocId,
  ) {
    this.element = docIdElement(id);
  }

  /**
   * Removes the structure: its document and every key it has (Couchbase's `clear()`). A cleared
   * structure reads as empty, as a missing one does.
   *
   * Reads: the kind key. Writes: 1 range clear of the document, so it conflicts with every operation
   * on the structure that reads (all of them read the kind key).
   *
   * @throws DocumentError WRONG_KIND.
   */
  async clear(opts: TransactionOption = {}): Promise<void> {
    await this.write(opts, async ({ tr, keys, existed, expiresAt, target }) => {
      if (!existed) return;
      tr.clearRange(keys.begin, keys.end);
      if (expiresAt !== undefined) this.access.expiry.forget(tr, target.collectionId, this.element, expiresAt);
      DocTransaction.of(tr).documentRemoved(keys);
    });
  }

  /**
   * Gives the structure a new expiry, as `collection.touch` gives a document one: `expiry` seconds from
   * now or a Date, `0` for none, capped by the collection's maxTTL (so in a collection with one, `0`
   * means maxTTL from now). A missing (or expired) structure stays missing: `false`, nothing written.
   *
   * Reads: the kind key. Writes (when it exists): the kind key (which holds the expiry, so it conflicts
   * with every concurrent operation on the structure, all of which read it), the expiry key, its index
   * entry (the old one cleared), the version key.
   *
   * @returns whether the structure exists.
   * @throws DocumentError INVALID_ARGUMENT (expiry), KEY_TOO_LARGE (an id too long for an expiry index
   *   entry), WRONG_KIND.
   */
  async touch(expiry: Expiry, opts: TransactionOption = {}): Promise<boolean> {
    const requested = requestedExpiry(expiry, this.access.now());
    return this.write(opts, async ({ tr, keys, existed, expiresAt: before, target }) => {
      if (!existed) return false;
      const after = effectiveExpiry(target.maxTTL, requested, this.access.now());
      if (after !== before) {
        if (after !== undefined) this.access.expiry.assertFits(after, target.collectionId, this.element, this.access.kv.maxKeyBytes);
        tr.set(kindKey(keys), encodeKind(this.kind, after));
        this.access.expiry.replace(tr, keys, target.collectionId, this.element, before, after);
      }
      writeVersion(tr, keys, []);
      return true;
    });
  }

  /**
   * Removes the structure's expiry (Redis's PERSIST): {@link touch} with `0`, so in a collection with a
   * maxTTL it expires maxTTL from now instead.
   *
   * @returns whether the structure exists.
   * @throws DocumentError WRONG_KIND.
   */
  persist(opts: TransactionOption = {}): Promise<boolean> {
    return this.touch(0, opts);
  }

  /**
   * When the structure expires: `undefined` when it has no expiry or does not exist.
   *
   * Reads: the kind key only (1 point read), which holds the expiry.
   *
   * @throws DocumentError WRONG_KIND.
   */
  async expiry(opts: TransactionOption = {}): Promise<Date | undefined> {
    return this.access.run(opts.tr, async (tr) => {
      const keys = await this.access.keysToRead(tr, this.element);
      if (keys === undefined) return undefined;
      const found = this.checkedKind(await inspectKind(tr, keys, this.access.now()));
      return found.kind === undefined || found.expiresAt === undefined ? undefined : new Date(found.expiresAt);
    });
  }

  /**
   * Runs a read: `fn` gets the document's keys, or `undefined` when the structure does not exist (a
   * missing structure reads as an empty one). The kind is checked first.
   *
   * @internal
   */
  protected read<T>(opts: TransactionOption | undefined, fn: (tr: Transaction, keys: DocumentKeys | undefined) => Promise<T>): Promise<T> {
    return this.readWith(opts, undefined, (tr, keys) => fn(tr, keys));
  }

  /**
   * As {@link read}, with `prefetch` run together with the kind check (its reads issued at once,
   * saving a round trip); `fn` gets its result (`undefined` when the structure does not exist).
   *
   * @internal
   */
  protected readWith<T, P>(
    opts: TransactionOption | undefined,
    prefetch: ((tr: Transaction, keys: DocumentKeys) => Promise<P>) | undefined,
    fn: (tr: Transaction, keys: DocumentKeys | undefined, prefetched: P | undefined) => Promise<T>,
  ): Promise<T> {
    const access = this.access;
    return access.run(opts?.tr, async (tr) => {
      const keys = await access.keysToRead(tr, this.element);
      if (keys === undefined) return fn(tr, undefined, undefined);
      const inspecting = inspectKind(tr, keys, access.now());
      const fetching = startPrefetch(tr, keys, prefetch, inspecting);
      const found = this.checkedKind(await inspecting);
      const prefetched = fetching === undefined ? undefined : await fetching;
      return found.kind !== undefined ? fn(tr, keys, prefetched) : fn(tr, undefined, undefined);
    });
  }

  /**
   * Runs a write. The kind is checked first; `fn` calls `scope.create()` before it writes to a
   * structure that may not exist. `fn` returns its result, or a promise of it when it reads further
   * (the hot writes read nothing after their prefetch, and return at once: no promise of their own).
   *
   * @internal
   */
  protected write<T>(opts: StructureWriteOptions | undefined, fn: (scope: StructureScope) => Promise<T> | T): Promise<T> {
    return this.writeWith(opts, undefined, (scope) => fn(scope));
  }

  /**
   * As {@link write}, with `prefetch` run together with the kind check, as for {@link readWith}, and
   * without `opts.tr`, `merge` to run with the same operation's concurrent calls (see combiner.ts).
   *
   * A structure this write creates gets `opts.expiry` (capped by the collection's maxTTL, which also
   * applies without one): its kind value holds it, and its expiry key and index entry are written
   * (2 keys more). One created in place of an expired one also clears that one's index entry.
   *
   * @internal
   * @throws DocumentError INVALID_ARGUMENT (expiry), before anything runs.
   */
  protected writeWith<T, P>(
    opts: StructureWriteOptions | undefined,
    prefetch: ((tr: Transaction, keys: DocumentKeys) => Promise<P>) | undefined,
    fn: (scope: StructureScope, prefetched: P | undefined) => Promise<T> | T,
    merge?: Merge<unknown, T>,
  ): Promise<T> {
    const requested = opts?.expiry === undefined ? undefined : requestedExpiry(opts.expiry, this.access.now());
    // Without the caller's transaction, concurrent writes to this structure share one (combiner.ts).
    return runCombined(
      this.access,
      this.combinerKey(),
      opts?.tr,
      (tr) => this.attemptWrite(tr, requested, prefetch, fn),
      // A merged step creates the structure for several calls, with no one call's expiry.
      requested === undefined ? merge : undefined,
    );
  }

  /**
   * A write made without the caller's transaction and without an expiry, whose concurrent calls merge
   * (combiner.ts): as {@link writeWith} with no options and `operation`'s merge, except that its body
   * (`operation.alone(arg)`, made with {@link attempt}) is made only when the call runs alone, and
   * then runs directly in the transaction the combiner starts for it, rather than joining that
   * transaction through the collection's runner. A call that queues and is merged makes only `arg`.
   *
   * @internal
   */
  protected writeMerged<A, T>(operation: MergedOperation<A, T>, arg: A): Promise<T> {
    return runMerged(this.access, this.combinerKey(), operation, arg);
  }

  /**
   * The body of a write with no expiry, as {@link writeWith} runs it, for a transaction the caller
   * gives: how a {@link writeMerged} call runs alone.
   *
   * @internal
   */
  protected attempt<T, P>(
    prefetch: ((tr: Transaction, keys: DocumentKeys) => Promise<P>) | undefined,
    fn: (scope: StructureScope, prefetched: P | undefined) => Promise<T> | T,
  ): (tr: Transaction) => Promise<T> {
    return (tr) => this.attemptWrite(tr, undefined, prefetch, fn);
  }

  /**
   * One attempt of a write in `tr`: the document's keys (and its collection, planned if new), the kind
   * check with `prefetch`, then `fn` with the scope; a structure it creates gets the expiry
   * `requested` (ms, `undefined` for none) as {@link writeWith} says.
   */
  private async attemptWrite<T, P>(
    tr: Transaction,
    requested: number | undefined,
    prefetch: ((tr: Transaction, keys: DocumentKeys) => Promise<P>) | undefined,
    fn: (scope: StructureScope, prefetched: P | undefined) => Promise<T> | T,
  ): Promise<T> {
    const access = this.access;
    const writing = access.keysToWrite(tr, this.element);
    const target = writing instanceof Promise ? await writing : writing;
    const keys = target.keys;
    const now = access.now();
    // Read before yielding: keysToWrite's collection lookup relies on this read for its read version.
    const inspecting = inspectKind(tr, keys, now);
    const fetching = startPrefetch(tr, keys, prefetch, inspecting);
    const found = this.checkedKind(await inspecting);
    const prefetched = fetching === undefined ? undefined : await fetching;
    const existed = found.kind !== undefined;
    let exists = existed;
    const create = () => {
      if (exists) return;
      const expiresAt = effectiveExpiry(target.maxTTL, requested, now);
      if (expiresAt !== undefined) access.expiry.assertFits(expiresAt, target.collectionId, this.element, access.kv.maxKeyBytes);
      exists = true;
      target.create?.();
      writeKind(tr, keys, this.kind, found.stale, expiresAt);
      if (found.stale && found.expiresAt !== undefined) access.expiry.forget(tr, target.collectionId, this.element, found.expiresAt);
      if (expiresAt !== undefined) access.expiry.set(tr, keys, target.collectionId, this.element, expiresAt);
      this.initialize(tr, keys);
    };
    const expiresAt = existed ? found.expiresAt : undefined;
    return fn({ tr, keys, existed, expiresAt, target, create }, existed ? prefetched : undefined);
  }

  private combinerKey(): string {
    return (this.combineKey ??= structureKey(this.element));
  }

  /**
   * What {@link inspectKind} found at the structure's keys, unless it is another kind of document.
   * An operation reads the kind key first (`inspectKind`, then its prefetch, see {@link startPrefetch}):
   * it sorts before the structure's body, so a transaction's read conflicts come in key order and need
   * no sort at commit (coalesceRanges checks the order).
   *
   * @throws DocumentError WRONG_KIND.
   */
  private checkedKind(found: KindCheck): KindCheck {
    if (found.kind !== undefined && found.kind !== this.kind) throw wrongKind(found.kind, this.kind);
    return found;
  }

  /**
   * Iterates pages: `readPage` reads the page starting at `cursor` (`undefined`: the first), each in
   * a read of its own (the kind checked each time) unless `opts.tr` is given.
   *
   * @internal
   * @throws DocumentError INVALID_ARGUMENT for a bad page size, WRONG_KIND.
   */
  protected async *pages<T>(
    opts: IterateOptions | undefined,
    readPage: (tr: Transaction, keys: DocumentKeys, cursor: Buffer | undefined, pageSize: number) => Promise<Page<T>>,
  ): AsyncGenerator<T, void, undefined> {
    const pageSize = opts?.pageSize ?? DEFAULT_PAGE_SIZE;
    if (!Number.isSafeInteger(pageSize) || pageSize < 1) {
      throw new DocumentError('INVALID_ARGUMENT', `pageSize is a positive integer, got ${String(pageSize)}`);
    }
    let cursor: Buffer | undefined;
    for (;;) {
      const from = cursor;
      const page = await this.read(opts, async (tr, keys) =>
        keys === undefined ? { items: [], next: undefined } : readPage(tr, keys, from, pageSize),
      );
      yield* page.items;
      if (page.next === undefined) return;
      cursor = page.next;
    }
  }

  /** Writes what a new structure of this kind starts with besides its kind and root (a body marker). */
  protected initialize(_tr: Transaction, _keys: DocumentKeys): void {}

  /**
   * Records a change of the structure: sets its version key (a blind versionstamped write, as every
   * document write does, so `collection.get` reports a new cas) and marks the document written in `tr`.
   *
   * @internal
   */
  protected changed(tr: Transaction, keys: DocumentKeys): void {
    writeVersion(tr, keys);
  }
}

/**
 * Starts `prefetch` (if any) while the kind check `inspecting` runs, its reads issued after the kind
 * key's. The caller awaits `inspecting` first: when the kind check fails, its error is the one to
 * report, so a failure of the prefetch is marked handled here (it still rejects for the caller that
 * awaits it). When `prefetch` throws at once, the kind check's failure is marked handled instead.
 */
function startPrefetch<P>(
  tr: Transaction,
  keys: DocumentKeys,
  prefetch: ((tr: Transaction, keys: DocumentKeys) => Promise<P>) | undefined,
  inspecting: Promise<KindCheck>,
): Promise<P> | undefined {
  if (prefetch === undefined) return undefined;
  let fetching: Promise<P>;
  try {
    fetching = prefetch(tr, keys);
  } catch (error) {
    inspecting.catch(ignore);
    throw error;
  }
  fetching.catch(ignore);
  return fetching;
}

function ignore(): undefined {
  return undefined;
}
