import { RememberedReads } from '../../kv/client/remembered-reads';
import type { ReadTransaction } from '../../kv/contract/types';
import { childKey, type DocumentKeys } from '../keys/layout';
import { arrayBounds, probeChild, readSubtreeEntries, resolvePath } from '../values/tree';
import type { MutateInSpec, PathElement } from '../types';

/**
 * mutateIn's reads issued ahead: every spec's first reads, all at once, before the specs run in order.
 * mutateIn runs the specs on a stage that reads the transaction through the returned view, so each
 * read a spec makes on the document as the transaction holds it is answered from what was read
 * ahead (on a cluster, the specs of a call then cost one round trip of reads, not one each).
 *
 * What is read ahead never changes a result: a spec reads through its stage, which answers keys the
 * specs before it wrote (or cleared) from their writes, and asks the transaction only for the rest,
 * which the transaction (unwritten since) answers as it did ahead. A read the specs do not make (a
 * spec failed before it, or a spec before it rewrote its keys; or the next limit-1 read of a path
 * with indices, still in flight when the call has failed) answers no one and only adds read
 * conflicts; to keep those few, a spec whose path may be a prefix of an earlier spec's path, or have one as a prefix,
 * is not read ahead, and its reads are made in order as before.
 *
 * Read ahead per spec (each as the spec makes it, see `mutate-in.ts`): the entry of the parent (and,
 * for insert, of the key) for insert and upsert; the node's entry for replace, remove of a key and
 * increment/decrement; the array's first or last element for remove of `[0]`/`[-1]`, both for other
 * indices and for arrayInsert; the array's entry and last (first) element for arrayAppend
 * (arrayPrepend); the array's subtree for arrayAddUnique. An index in the path is resolved first (its
 * limit-1 reads), so such a spec's reads take a round trip per index, as they do in order. With
 * storeSemantics `'upsert'` or `'insert'`, the root's entry too. Reads made only on a miss (creating
 * parents, diagnosing a missing path) are not read ahead. With `cas`, the version key too, which
 * mutateIn's CAS check reads through the view before any spec runs.
 */

/** What read-ahead needs of a checked spec. */
export interface SpecToRead {
  readonly op: MutateInSpec['op'];
  readonly elements: readonly PathElement[];
  /** A path that did not parse: the spec fails without reading. */
  readonly pathError?: unknown;
}

/** The document's keys read ahead besides the specs': its root entry, its version key. */
export interface DocumentReads {
  readonly root: boolean;
  readonly version: boolean;
}

/**
 * Issues the first reads of `specs` (and the document's keys `also` names) on `tr`, and returns the
 * view that answers them. Use it only while `tr` is not written to.
 */
export function readAhead(tr: ReadTransaction, keys: DocumentKeys, specs: readonly SpecToRead[], also: DocumentReads): RememberedReads {
  const reads = new RememberedReads(tr);
  const issued: Promise<unknown>[] = [];
  if (also.version) issued.push(reads.get(keys.version));
  if (also.root) issued.push(reads.get(keys.root));
  specs.forEach((spec, i) => {
    if (spec.pathError !== undefined) return;
    if (specs.slice(0, i).some((earlier) => mayOverlap(earlier.elements, spec.elements))) return;
    issued.push(readFirst(reads, keys.root, spec));
  });
  // The specs take these answers (and their errors) when they read; nothing is left to reject unseen.
  for (const read of issued) read.catch(() => undefined);
  return reads;
}

/**
 * Whether one path may be the other or lead into it: every element they share is the same key, or an
 * index on both (indices may name the same element, or move it).
 */
function mayOverlap(a: readonly PathElement[], b: readonly PathElement[]): boolean {
  const shared = Math.min(a.length, b.length);
  for (let i = 0; i < shared; i++) {
    const [x, y] = [a[i], b[i]];
    if ((typeof x === 'string' || typeof y === 'string') && x !== y) return false;
  }
  return true;
}

/** The reads `spec` makes first on the document as `reads` holds it (see the file comment). */
async function readFirst(reads: ReadTransaction, root: Buffer, spec: SpecToRead): Promise<unknown> {
  const { op, elements } = spec;
  const n = elements.length;
  const last = elements[n - 1];
  switch (op) {
    case 'insert':
    case 'upsert': {
      if (n === 0) return reads.get(root);
      if (typeof last !== 'string') return undefined;
      const path = await resolvePath(reads, root, elements.slice(0, -1));
      if (path.length < n) return undefined;
      const parent = path[n - 1];
      return Promise.all([reads.get(parent), op === 'insert' ? reads.get(childKey(parent, last)) : undefined]);
    }
    case 'remove':
      if (n === 0) return reads.get(root);
      if (typeof last === 'number') {
        const path = await resolvePath(reads, root, elements.slice(0, -1));
        if (path.length < n) return undefined;
        return last === 0 || last === -1 ? probeChild(reads, path[n - 1], last === 0 ? 'first' : 'last') : arrayBounds(reads, path[n - 1]);
      }
      return readNode(reads, root, elements, (key) => reads.get(key));
    case 'replace':
    case 'increment':
    case 'decrement':
      return readNode(reads, root, elements, (key) => reads.get(key));
    case 'arrayAppend':
    case 'arrayPrepend':
      return readNode(reads, root, elements, (key) => Promise.all([reads.get(key), probeChild(reads, key, op === 'arrayAppend' ? 'last' : 'first')]));
    case 'arrayInsert': {
      const path = await resolvePath(reads, root, elements.slice(0, -1));
      return path.length < n ? undefined : arrayBounds(reads, path[n - 1]);
    }
    case 'arrayAddUnique':
      return readNode(reads, root, elements, (key) => readSubtreeEntries(reads, key));
  }
}

/** `read` of the node at `elements`, once its path is resolved; nothing when an index is not. */
async function readNode(
  reads: ReadTransaction,
  root: Buffer,
  elements: readonly PathElement[],
  read: (key: Buffer) => Promise<unknown>,
): Promise<unknown> {
  const path = await resolvePath(reads, root, elements);
  return path.length > elements.length ? read(path[elements.length]) : undefined;
}
