import type { Database } from '../../kv/contract/database';
import type { Transaction } from '../../kv/contract/types';
import { approximateSizeNow, transactSettlingReadsNow } from '../../kv/client/hand-over';
import { lastingCombinerFor, type Combiner, type Merge, type RunTransaction, type Settled } from '../combiner';
import { ContextSlot, DocTransaction } from '../doc-transaction';
import { isDocumentError } from '../errors';
import { casOf } from '../keys/version';
import type { MutationResult } from '../types';

/**
 * Running document writes and reads without a caller's transaction: combined with the concurrent
 * calls on the same collection (`../combiner.ts`: a lone call starts at once in a transaction of its
 * own; calls made while one runs share the next transaction, each with its own outcome in a serial
 * order). Writes run one after another in the shared transaction; reads share a read-only one and
 * are issued together.
 *
 * A write batch keeps what each caller would see alone:
 * - its commit's versionstamp is the CAS of every document it wrote, so it writes each document at
 *   most once: a call on a document written earlier in the batch ends the batch and goes into the
 *   next (else two callers would hold one CAS for two versions);
 * - a write that fails with a DocumentError before it wrote anything (DOCUMENT_EXISTS,
 *   DOCUMENT_NOT_FOUND, CAS_MISMATCH, DOCUMENT_LOCKED, UNIQUE_VIOLATION, a limit...) fails alone in
 *   the batch, which goes on; any other failure (or a DocumentError after the call wrote, as when an
 *   insert first deleted an expired document) fails the shared attempt, and every call of the batch
 *   then runs alone;
 * - once the transaction holds {@link BATCH_BYTES}, the batch ends (the next call goes into the next
 *   one), so that the largest document a single write may hold still fits FDB's 10 MB. The memory
 *   and LMDB engines' transactions know their size at once (`approximateSizeNow`): it is checked
 *   before every call. Elsewhere asking it costs a turn of the event loop (every KV operation settles
 *   on a later turn), so it is asked after the first call and then only when the calls so far, at
 *   the rate they wrote, could reach the budget, or {@link SIZE_CHECK_CALLS} calls after the last
 *   check: calls that write a few kB each share a batch of 32 with 4 checks instead of 31. A large
 *   write among small ones can therefore go past the budget by what those unchecked calls write; a
 *   batch that goes past FDB's 10 MB fails with transaction_too_large, and its calls then run alone,
 *   as after any failure.
 */

/** The bytes (as `getApproximateSize` counts them) after which a write batch takes no more calls. */
export const BATCH_BYTES = 500_000;

/** Calls of a write batch run at most between two checks of its size. */
export const SIZE_CHECK_CALLS = 8;

/** Where calls of one collection meet: one combiner for its writes and one for its reads. */
export interface CombineKey {
  /** The collection, as `scope.collection`. */
  readonly collection: string;
  /** Its combiners, shared by every handle of it in the layer (kept for the layer's life: found once, not per call). */
  readonly writes: Combiner;
  readonly reads: Combiner;
}

/** The {@link CombineKey} of `collection` (`scope.collection`) among `owner`'s (the layer's collection registry), running transactions on `kv`. */
export function combineKeyOf(owner: object, collection: string, kv: Database): CombineKey {
  // The bodies are this layer's operations alone: their reads settle at once, and each call takes one
  // turn of the event loop, its commit's.
  const run: RunTransaction = (body) => transactSettlingReadsNow(kv, body);
  return { collection, writes: lastingCombinerFor(owner, `w ${collection}`, run), reads: lastingCombinerFor(owner, `r ${collection}`, run) };
}

/**
 * Runs a document write in the caller's transaction (the cas is then `undefined`: the caller commits)
 * or, combined as above, in one of its own with retries whose versionstamp is the cas, unless `fn`
 * says the document is gone (a removed document has no version). `document` names the document the
 * write changes (its packed id), to keep it to one write per batch.
 */
export async function runWrite(
  kv: Database,
  tr: Transaction | undefined,
  fn: (tr: Transaction) => Promise<void | 'removed'>,
  combine?: CombineKey,
  document?: string,
): Promise<MutationResult> {
  if (tr !== undefined) {
    await kv.transact(fn, { tr });
    return { cas: undefined };
  }
  const write = new WriteCall(document ?? '', fn);
  const ran =
    combine === undefined || document === undefined
      ? await transactSettlingReadsNow(kv, write.alone)
      : await combine.writes.submit(write.alone, write as Merge<unknown, Ran>);
  return { cas: ran.outcome === 'removed' ? undefined : casOf(await ran.versionstamp) };
}

/**
 * Runs a read in the caller's transaction or, combined as above, in a read-only transaction shared
 * with the concurrent reads of the collection, all issued together.
 */
export function runRead<T>(kv: Database, tr: Transaction | undefined, fn: (tr: Transaction) => Promise<T>, combine: CombineKey): Promise<T> {
  if (tr !== undefined) return kv.transact(fn, { tr });
  return combine.reads.submit(fn, new ReadCall(fn) as Merge<unknown, T>);
}

/**
 * Records that `tr` was written by the current call in a way its document context does not record
 * (a write that deletes an expired document first): a DocumentError after it fails the shared attempt.
 */
export function writtenUntracked(tr: Transaction): void {
  DocTransaction.of(tr).local(UNTRACKED).writes++;
}

/** What a write returned, and the versionstamp of the transaction it ran in (its cas once committed). */
interface Ran {
  readonly outcome: void | 'removed';
  readonly versionstamp: Promise<Buffer>;
}

type Read<T> = (tr: Transaction) => Promise<T>;

/** The operation every write of a collection merges under, and every read. */
const WRITES = { name: 'document writes' };
const READS = { name: 'document reads' };

/** A write without a caller's transaction: its merge into a batch (it is its own `arg`), or its run alone. */
class WriteCall implements Merge<WriteCall, Ran> {
  constructor(
    /** The written document, as the combining key names it. */
    readonly document: string,
    readonly fn: (tr: Transaction) => Promise<void | 'removed'>,
  ) {}

  get operation(): object {
    return WRITES;
  }

  get arg(): WriteCall {
    return this;
  }

  runMany(tr: Transaction, calls: WriteCall[]): Promise<Settled<Ran>[]> {
    return runWrites(tr, calls);
  }

  /** The write in a transaction of its own. */
  readonly alone = (tr: Transaction): Promise<Ran> => ranIn(tr, this.fn);
}

/** A read without a caller's transaction, merged into a batch of reads (its `arg` is the read). */
class ReadCall<T> implements Merge<Read<T>, T> {
  constructor(readonly arg: Read<T>) {}

  get operation(): object {
    return READS;
  }

  runMany(tr: Transaction, reads: Read<T>[]): Promise<Settled<T>[]> {
    return runReads(tr, reads);
  }
}

/** The versionstamp of an attempt, asked for once (before commit, as `getVersionstamp` requires). */
const VERSIONSTAMP = new ContextSlot('versionstamp', (context) => {
  const versionstamp = context.tr.getVersionstamp();
  // Attempts that fail reject theirs; only the committed attempt's is awaited.
  versionstamp.catch(() => undefined);
  return versionstamp;
});

/** Writes of the current attempt that no document change records (see {@link writtenUntracked}). */
const UNTRACKED = new ContextSlot('untracked writes', () => ({ writes: 0 }));

async function ranIn(tr: Transaction, fn: (tr: Transaction) => Promise<void | 'removed'>): Promise<Ran> {
  const versionstamp = DocTransaction.of(tr).local(VERSIONSTAMP);
  return { outcome: await fn(tr), versionstamp };
}

/** The writes of a batch, one after another; see the module comment for where a batch ends. */
async function runWrites(tr: Transaction, calls: WriteCall[]): Promise<Settled<Ran>[]> {
  const context = DocTransaction.of(tr);
  const untracked = context.local(UNTRACKED);
  const versionstamp = context.local(VERSIONSTAMP);
  const documents = new Set<string>();
  const outcomes: Settled<Ran>[] = [];
  // The size at the last check, and the calls run then.
  let size = 0;
  let checked = 0;
  for (const call of calls) {
    const ran = outcomes.length;
    if (ran > 0) {
      if (documents.has(call.document)) break;
      // The memory and LMDB engines' transactions know their size at once: checked before every call.
      const known = approximateSizeNow(tr);
      if (known !== undefined) {
        if (known >= BATCH_BYTES) break;
      } else {
        // Twice the bytes per call so far, for each call since the last check.
        const reach = size + ((ran - checked) * 2 * size) / Math.max(checked, 1);
        if (checked === 0 || reach >= BATCH_BYTES || ran - checked >= SIZE_CHECK_CALLS) {
          size = await tr.getApproximateSize();
          checked = ran;
          if (size >= BATCH_BYTES) break;
        }
      }
    }
    documents.add(call.document);
    const changes = context.changes.length;
    const writes = untracked.writes;
    try {
      // What ranIn gives, without an async frame of its own per call.
      outcomes.push({ ok: true, value: { outcome: await call.fn(tr), versionstamp } });
    } catch (error) {
      const wrote = context.changes.length !== changes || untracked.writes !== writes;
      if (wrote || !isDocumentError(error)) throw error;
      outcomes.push({ ok: false, error });
    }
  }
  return outcomes;
}

/**
 * The reads of a batch, issued together. A read writes nothing, so a DocumentError is its own
 * outcome; any other failure (a retryable conflict or timeout) fails the attempt.
 */
async function runReads<T>(tr: Transaction, calls: Read<T>[]): Promise<Settled<T>[]> {
  // A context for the batch, so that what every read does once per attempt (the manifest's read
  // conflict) is done once.
  DocTransaction.of(tr);
  const settled = await Promise.allSettled(calls.map((fn) => fn(tr)));
  return settled.map((result) => {
    if (result.status === 'fulfilled') return { ok: true, value: result.value };
    if (!isDocumentError(result.reason)) throw result.reason;
    return { ok: false, error: result.reason };
  });
}
