import type { Transaction } from '../kv/contract/types';
import type { TupleItem } from '../tuple';
import { DocTransaction } from '../document/doc-transaction';
import { DocumentError } from '../document/errors';
import type { StructureAccess } from '../document/structure-port';
import { docIdElement } from '../document/keys/ids';
import type { DocumentKeys } from '../document/keys/layout';
import type { DocId, TransactionOption } from '../document/types';
import { writeVersion } from '../document/keys/version';
import { runCombined, type Merge } from './combiner';
import { inspectKind, writeKind, wrongKind, type KindCheck, type StructureKind } from '../document/keys/kind';

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
 * reads; see `kind.ts`): it conflicts only with the creation, `clear()` and removal of the structure
 * and with whole-document writes at its id. Where there is no structure, it also reads the expiry and
 * root entries (1 range read): a plain document there makes the operation WRONG_KIND, unless it has
 * expired (an expired document is missing, and a structure created in its place clears it).
 */
export abstract class Structure {
  /** The kind of document this handle reads and writes. */
  abstract readonly kind: StructureKind;
  /** @internal The id as its tuple element. */
  protected readonly element: TupleItem;

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
    await this.write(opts, async ({ tr, keys, existed }) => {
      if (!existed) return;
      tr.clearRange(keys.begin, keys.end);
      DocTransaction.of(tr).documentRemoved(keys);
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
      const [found, prefetched] = await this.checkKind(tr, keys, prefetch);
      return found.kind !== undefined ? fn(tr, keys, prefetched) : fn(tr, undefined, undefined);
    });
  }

  /**
   * Runs a write. The kind is checked first; `fn` calls `scope.create()` before it writes to a
   * structure that may not exist.
   *
   * @internal
   */
  protected write<T>(opts: TransactionOption | undefined, fn: (scope: StructureScope) => Promise<T>): Promise<T> {
    return this.writeWith(opts, undefined, (scope) => fn(scope));
  }

  /**
   * As {@link write}, with `prefetch` run together with the kind check, as for {@link readWith}, and
   * without `opts.tr`, `merge` to run with the same operation's concurrent calls (see combiner.ts).
   *
   * @internal
   */
  protected writeWith<T, P>(
    opts: TransactionOption | undefined,
    prefetch: ((tr: Transaction, keys: DocumentKeys) => Promise<P>) | undefined,
    fn: (scope: StructureScope, prefetched: P | undefined) => Promise<T>,
    merge?: Merge<unknown, T>,
  ): Promise<T> {
    const access = this.access;
    // Without the caller's transaction, concurrent writes to this structure share one (combiner.ts).
    return runCombined(
      access,
      this.element,
      opts?.tr,
      async (tr) => {
        const { keys, create: createCollection } = await access.keysToWrite(tr, this.element);
        const [found, prefetched] = await this.checkKind(tr, keys, prefetch);
        const existed = found.kind !== undefined;
        let exists = existed;
        const create = () => {
          if (exists) return;
          exists = true;
          createCollection?.();
          writeKind(tr, keys, this.kind, found.stale);
          this.initialize(tr, keys);
        };
        return fn({ tr, keys, existed, create }, existed ? prefetched : undefined);
      },
      merge,
    );
  }

  /**
   * What is at the structure's keys (WRONG_KIND if another kind of document), and `prefetch`'s result.
   */
  private async checkKind<P>(
    tr: Transaction,
    keys: DocumentKeys,
    prefetch: ((tr: Transaction, keys: DocumentKeys) => Promise<P>) | undefined,
  ): Promise<[KindCheck, P | undefined]> {
    const fetching = prefetch?.(tr, keys);
    // When the kind check fails, its error is the one to report.
    fetching?.catch(() => undefined);
    const found = await inspectKind(tr, keys, this.access.now());
    if (found.kind !== undefined && found.kind !== this.kind) throw wrongKind(found.kind, this.kind);
    return [found, await fetching];
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
