/**
 * Running a plan, one page per transaction. Every page resumes from a {@link Position} alone (no state
 * kept between pages), so a query can stop after any page and continue in a later transaction or
 * process without repeating or skipping a document that did not change in between:
 *
 * - scan: documents in id order after the last id examined;
 * - index union: intervals in plan order, each in index order after the last entry consumed; a
 *   document is returned at the first interval (and, for a `[*]` index, the first entry in it) that
 *   holds one of its entries, which the query recomputes from the document it read;
 * - ordered index: the main interval in index order merged with its array-section intervals (read
 *   whole and sorted), after the last returned order key;
 * - in-memory sort: one pass over the scan or union per page, keeping the `want` smallest order keys
 *   after the last returned one (a bounded top-k).
 *
 * Round trips of an index page: the intervals' range reads are issued together, then the documents
 * of the entries read are read together (2 sequential round trips); a covered plan reads no
 * documents at all (index scans skip the entries of expired documents). Each interval is read one
 * entry past the page, so the page that takes a query's last entries ends it: no further transaction
 * only to find nothing more.
 */
import type { Transaction } from '../kv/contract/types';
import { DocumentError } from '../document/errors';
import type { Cas, DocId, GetResult, JsonValue, ScanItem } from '../document/types';
import { compareValues, type CompiledFilter, type IndexValue } from '../filter';
import { entryTuples, fieldValues, queryPathOf } from './index-fields';
import type { IndexAccess, IndexEntry } from '../index/index';
import { inInterval } from './intervals';
import { compareOrderKeys, orderKeyOf, type OrderKey, type SortField } from './order-key';
import type { IndexPlan, Plan } from './planner';
import { documentFrom, project } from './projection';
import type { Position } from './token';

/** Most documents an in-memory sort holds at once; a page of a sorted, unindexed query is at most this. */
export const TOP_K_CAP = 10_000;

/** Most array-section entries an ordered plan merges in memory per page. */
export const ARRAY_SECTION_CAP = 10_000;

/** Most index entries or documents one page examines: keeps a transaction far inside FDB's 5 s. */
export const PAGE_BUDGET = 5_000;

/** One result. */
export interface FindItem<T = JsonValue> {
  readonly id: DocId;
  readonly content: T;
  /** Absent for results a covering plan built from index entries. */
  readonly cas?: Cas;
  readonly expiresAt?: Date;
}

/** What the query reads documents and indexes through (the Collection provides it). */
export interface QuerySource {
  /** Runs `fn` in `tr`, or in a transaction of its own (retried) without one. */
  transact<T>(tr: Transaction | undefined, fn: (tr: Transaction) => Promise<T>): Promise<T>;
  /** Whole documents, reads issued together; `undefined` for a missing or expired one. */
  getMany(tr: Transaction, ids: readonly DocId[]): Promise<(GetResult | undefined)[]>;
  /** Documents in id order from `start` (inclusive), at most `limit`. */
  scan(tr: Transaction, start: DocId | undefined, limit: number): Promise<ScanItem[]>;
  readonly indexes: IndexAccess | undefined;
}

export interface PreparedQuery {
  readonly filter: CompiledFilter;
  readonly plan: Plan;
  readonly sort: readonly SortField[];
  readonly projection: readonly string[] | undefined;
}

/** Counts for `explain`. */
export interface QueryStats {
  keysRead: number;
  documentsRead: number;
  returned: number;
  transactions: number;
}

export interface PageResult {
  readonly items: FindItem[];
  /** Where the next page starts; `undefined` when the query is done. */
  readonly position: Position | undefined;
}

export function newStats(): QueryStats {
  return { keysRead: 0, documentsRead: 0, returned: 0, transactions: 0 };
}

/**
 * One page of at most `want` results after `position`, in `tr`. It may hold fewer (even none) and a
 * position when it reached {@link PAGE_BUDGET}; in-memory sorted queries run whole passes and must be
 * driven by {@link sortedPage} instead.
 */
export async function runPage(
  source: QuerySource,
  tr: Transaction,
  query: PreparedQuery,
  position: Position | undefined,
  want: number,
  stats: QueryStats,
): Promise<PageResult> {
  const plan = query.plan;
  if (plan.kind === 'scan') return scanPage(source, tr, query, position, want, stats);
  if (plan.ordered) return orderedPage(source, tr, query, plan, position, want, stats);
  return unionPage(source, tr, query, plan, position, want, stats);
}

// ---- full scan

async function scanPage(
  source: QuerySource,
  tr: Transaction,
  query: PreparedQuery,
  position: Position | undefined,
  want: number,
  stats: QueryStats,
): Promise<PageResult> {
  const items: FindItem[] = [];
  let lastId = position?.lastId;
  let examined = 0;
  while (items.length < want && examined < PAGE_BUDGET) {
    // `start` is inclusive: one more than wanted, for the last id examined.
    const batch = Math.min(Math.max(want - items.length, 100), PAGE_BUDGET - examined) + 1;
    const got = await source.scan(tr, lastId, batch);
    const docs = lastId !== undefined && got.length > 0 && got[0].id === lastId ? got.slice(1) : got;
    stats.documentsRead += docs.length;
    for (const doc of docs) {
      examined++;
      lastId = doc.id;
      if (query.filter.matches(doc.content)) items.push(resultOf(doc.id, doc, query.projection));
      if (items.length === want) return { items, position: { plan: 'scan', lastId } };
    }
    if (got.length < batch) return { items, position: undefined };
  }
  return { items, position: { plan: 'scan', lastId } };
}

// ---- index union

interface Candidate {
  readonly entry: IndexEntry;
  readonly interval: number;
}

async function unionPage(
  source: QuerySource,
  tr: Transaction,
  query: PreparedQuery,
  plan: IndexPlan,
  position: Position | undefined,
  want: number,
  stats: QueryStats,
): Promise<PageResult> {
  const indexes = indexAccess(source);
  const items: FindItem[] = [];
  let k = position?.interval ?? 0;
  let after = position?.cursor;
  let examined = 0;
  while (k < plan.intervals.length && items.length < want && examined < PAGE_BUDGET) {
    const limit = Math.min(want - items.length, PAGE_BUDGET - examined);
    // The intervals from k on are read together; each gives at most `limit` entries for this round,
    // and is read one entry further: that entry only shows whether more follow, so a page that takes
    // the union's last entries knows it is the last (no further transaction finds nothing).
    const reads = plan.intervals.map((_planned, j) =>
      j < k ? Promise.resolve([]) : readEntries(indexes, tr, plan, j, j === k ? after : undefined, limit + 1),
    );
    const batches = await Promise.all(reads);
    for (const b of batches) stats.keysRead += b.length;
    const candidates: Candidate[] = [];
    let full = false;
    for (let j = k; j < batches.length && !full; j++) {
      const batch = batches[j];
      // More entries follow in a full interval: they, and later intervals, wait for the next round.
      full = batch.length > limit;
      const taken = full ? limit : batch.length;
      for (let e = 0; e < taken; e++) candidates.push({ entry: batch[e], interval: j });
    }
    const resolved = await resolveCandidates(source, tr, query, plan, candidates, stats);
    let c = 0;
    for (; c < candidates.length && items.length < want && examined < PAGE_BUDGET; c++) {
      examined++;
      k = candidates[c].interval;
      const found = resolved[c];
      if (found !== undefined) items.push(found.item);
    }
    // The page resumes after the last entry examined (its cursor is made for it alone).
    if (c > 0) after = candidates[c - 1].entry.cursor;
    // No interval has more entries and every candidate was consumed: the union is done.
    if (!full && c === candidates.length) k = plan.intervals.length;
  }
  if (k >= plan.intervals.length) return { items, position: undefined };
  return { items, position: { plan: plan.index.name, interval: k, cursor: after } };
}

function readEntries(
  indexes: IndexAccess,
  tr: Transaction,
  plan: IndexPlan,
  j: number,
  after: Buffer | undefined,
  limit: number,
): Promise<IndexEntry[]> {
  if (limit <= 0) return Promise.resolve([]);
  return indexes.read(tr, plan.index.name, plan.intervals[j].interval, { reverse: plan.reverse, after, limit });
}

/**
 * The result each candidate entry gives (`undefined`: none, because the document does not match, no
 * longer exists, or is returned at another entry). Documents are read together, in one round trip.
 */
async function resolveCandidates(
  source: QuerySource,
  tr: Transaction,
  query: PreparedQuery,
  plan: IndexPlan,
  candidates: readonly Candidate[],
  stats: QueryStats,
): Promise<(Resolved | undefined)[]> {
  const covered = candidates.map((c) => (plan.covering ? coveredDocument(plan, c.entry) : undefined));
  const toRead = candidates.filter((_c, i) => covered[i] === undefined).map((c) => c.entry.id);
  const docs = toRead.length === 0 ? [] : await source.getMany(tr, toRead);
  stats.documentsRead += toRead.length;
  const out: (Resolved | undefined)[] = [];
  let r = 0;
  for (let i = 0; i < candidates.length; i++) {
    const { entry, interval } = candidates[i];
    const synthetic = covered[i];
    if (synthetic !== undefined) {
      const first = plan.intervals.findIndex((p) => inInterval(entry.values, p.interval));
      if (first === interval && query.filter.matches(synthetic)) {
        out.push({ item: { id: entry.id, content: project(synthetic, query.projection ?? []) }, document: synthetic });
      } else {
        out.push(undefined);
      }
      continue;
    }
    const doc = docs[r++];
    if (doc === undefined || !firstOccurrence(plan, entry, interval, doc.content) || !query.filter.matches(doc.content)) {
      out.push(undefined);
      continue;
    }
    out.push({ item: resultOf(entry.id, doc, query.projection), document: doc.content });
  }
  return out;
}

/** A result and the document (or the part a covering plan rebuilt) it came from. */
interface Resolved {
  readonly item: FindItem;
  readonly document: JsonValue;
}

/**
 * The partial document a covering plan reads from an entry: its field and `include` values at their
 * paths. `undefined` when the entry cannot stand for the document: an array stored at a path of
 * several components may have been met on the way (a plain path stops at the first array), so the
 * document is read instead.
 */
function coveredDocument(plan: IndexPlan, entry: IndexEntry): JsonValue | undefined {
  const values = new Map<string, IndexValue>();
  plan.fields.forEach((f, i) => {
    const path = queryPathOf(f);
    if (path !== undefined) values.set(path, entry.values[i]);
  });
  for (const [path, value] of entry.included) values.set(path, value);
  for (const [path, value] of values) if (Array.isArray(value) && path.includes('.')) return undefined;
  return documentFrom(values);
}

/**
 * Whether the entry is where the plan returns this document: no earlier interval holds one of its
 * entries, and (several entries per document) none comes before it in this interval.
 */
function firstOccurrence(plan: IndexPlan, entry: IndexEntry, interval: number, doc: JsonValue): boolean {
  const tuples = plan.multikey ? entryTuples(plan.fields, doc) : [entry.values];
  for (let j = 0; j < interval; j++) {
    if (tuples.some((t) => inInterval(t, plan.intervals[j].interval))) return false;
  }
  if (!plan.multikey) return true;
  const here = plan.intervals[interval].interval;
  return !tuples.some((t) => inInterval(t, here) && compareTuples(plan, t, entry.values) < 0);
}

/** Entries' values in the order the plan scans them. */
function compareTuples(plan: IndexPlan, a: readonly IndexValue[], b: readonly IndexValue[]): number {
  for (let i = 0; i < a.length; i++) {
    const c = compareValues(a[i], b[i]);
    if (c !== 0) return c * (plan.index.fields[i].order === 'desc' ? -1 : 1) * (plan.reverse ? -1 : 1);
  }
  return 0;
}

// ---- ordered index plans

interface Keyed {
  readonly key: OrderKey;
  readonly item: FindItem;
}

async function orderedPage(
  source: QuerySource,
  tr: Transaction,
  query: PreparedQuery,
  plan: IndexPlan,
  position: Position | undefined,
  want: number,
  stats: QueryStats,
): Promise<PageResult> {
  const indexes = indexAccess(source);
  const mainIndex = plan.intervals.findIndex((p) => p.role === 'range');
  const sideIndexes = plan.intervals.map((p, j) => (p.role === 'array-section' ? j : -1)).filter((j) => j >= 0);
  const directions = plan.orderKey.map((k) => k.direction);
  const idDirection = plan.reverse ? -1 : 1;
  const cmp = (a: OrderKey, b: OrderKey): number => compareOrderKeys(a, b, directions, idDirection);
  const last: OrderKey | undefined = position?.lastId === undefined ? undefined : { values: position.lastValues ?? [], id: position.lastId };
  const afterLast = (key: OrderKey): boolean => last === undefined || cmp(key, last) > 0;
  const limit = Math.min(want + 1, PAGE_BUDGET);

  const [mainEntries, ...sideBatches] = await Promise.all([
    readEntries(indexes, tr, plan, mainIndex, position?.cursor, limit),
    ...sideIndexes.map((j) => readEntries(indexes, tr, plan, j, undefined, ARRAY_SECTION_CAP + 1)),
  ]);
  stats.keysRead += mainEntries.length + sideBatches.reduce((n, b) => n + b.length, 0);
  if (sideBatches.some((b) => b.length > ARRAY_SECTION_CAP)) {
    throw new DocumentError(
      'INVALID_QUERY',
      `more than ${ARRAY_SECTION_CAP} documents hold arrays at the fields of index "${plan.index.name}" this sorted query uses; sort without this index (hint another, or allowScan)`,
    );
  }
  const mainMore = mainEntries.length === limit;
  const main = mainMore ? mainEntries.slice(0, limit - 1) : mainEntries;
  const sideCandidates: Candidate[] = sideBatches.flatMap((b, n) => b.map((entry) => ({ entry, interval: sideIndexes[n] })));
  const [mainItems, sideItems] = await Promise.all([
    resolveCandidates(
      source,
      tr,
      query,
      plan,
      main.map((entry) => ({ entry, interval: mainIndex })),
      stats,
    ),
    resolveCandidates(source, tr, query, plan, sideCandidates, stats),
  ]);
  const seen = new Set<DocId>();
  const side: Keyed[] = [];
  sideCandidates.forEach((c, n) => {
    const found = sideItems[n];
    if (found === undefined || seen.has(c.entry.id)) return;
    seen.add(c.entry.id);
    const key: OrderKey = { values: plan.orderKey.map((k) => fieldValues(found.document, plan.fields[k.field])[0]), id: c.entry.id };
    if (afterLast(key)) side.push({ key, item: found.item });
  });
  side.sort((a, b) => cmp(a.key, b.key));

  const items: FindItem[] = [];
  // The last main entry passed: the page resumes after it (its cursor is made for it alone).
  let passed: IndexEntry | undefined;
  let lastKey = last;
  let m = 0;
  let s = 0;
  while (items.length < want) {
    const entry = main[m];
    if (entry === undefined && mainMore) break;
    const mainKey = entry === undefined ? undefined : { values: plan.orderKey.map((k) => entry.values[k.field]), id: entry.id };
    if (entry !== undefined && (mainItems[m] === undefined || !afterLast(mainKey as OrderKey))) {
      passed = entry;
      m++;
      continue;
    }
    const sideNext = side[s];
    if (mainKey === undefined && sideNext === undefined) break;
    if (sideNext !== undefined && (mainKey === undefined || cmp(sideNext.key, mainKey) < 0)) {
      items.push(sideNext.item);
      lastKey = sideNext.key;
      s++;
    } else {
      items.push((mainItems[m] as Resolved).item);
      lastKey = mainKey;
      passed = entry;
      m++;
    }
  }
  const done = !mainMore && m >= main.length && s >= side.length;
  if (done) return { items, position: undefined };
  return {
    items,
    position: { plan: plan.index.name, cursor: passed?.cursor ?? position?.cursor, lastValues: lastKey?.values, lastId: lastKey?.id },
  };
}

// ---- in-memory sort

/**
 * One page of a query sorted in memory: a whole pass over the plan's stream (in transactions of
 * {@link PAGE_BUDGET} examined entries, or all in `tr`), keeping the `want` (at most
 * {@link TOP_K_CAP}) smallest order keys after the last returned one.
 */
export async function sortedPage(
  source: QuerySource,
  tr: Transaction | undefined,
  query: PreparedQuery,
  position: Position | undefined,
  want: number,
  stats: QueryStats,
): Promise<PageResult> {
  const k = Math.min(want, TOP_K_CAP);
  const directions = query.sort.map((s) => s.direction);
  const cmp = (a: OrderKey, b: OrderKey): number => compareOrderKeys(a, b, directions, 1);
  const last: OrderKey | undefined = position?.lastId === undefined ? undefined : { values: position.lastValues ?? [], id: position.lastId };
  let best: Keyed[] = [];
  let overflow = false;
  const keep = (): void => {
    best.sort((a, b) => cmp(a.key, b.key));
    if (best.length > k) {
      overflow = true;
      best = best.slice(0, k);
    }
  };
  // The stream's items need their sort values, which a projection may drop: project after sorting.
  const unprojected: PreparedQuery = { ...query, projection: projectionWithSort(query) };
  let at: Position | undefined;
  do {
    const page = await source.transact(tr, (t) => {
      stats.transactions++;
      return runPage(source, t, unprojected, at, PAGE_BUDGET, stats);
    });
    for (const item of page.items) {
      const key = orderKeyOf(query.sort, item.id, item.content);
      if (last === undefined || cmp(key, last) > 0) best.push({ key, item });
    }
    if (best.length > 2 * k) keep();
    at = page.position;
  } while (at !== undefined);
  keep();
  const items = best.map((b) => (query.projection === undefined ? b.item : { ...b.item, content: project(b.item.content, query.projection) }));
  if (!overflow) return { items, position: undefined };
  const end = best[best.length - 1].key;
  return { items, position: { plan: query.plan.kind === 'scan' ? 'scan' : query.plan.index.name, lastValues: end.values, lastId: end.id } };
}

function projectionWithSort(query: PreparedQuery): readonly string[] | undefined {
  if (query.projection === undefined) return undefined;
  return [...query.projection, ...query.sort.map((s) => s.path)];
}

// ---- shared

function resultOf(id: DocId, doc: GetResult | ScanItem, projection: readonly string[] | undefined): FindItem {
  const content = projection === undefined ? doc.content : project(doc.content, projection);
  const item: FindItem = { id, content, cas: doc.cas };
  return doc.expiresAt === undefined ? item : { ...item, expiresAt: doc.expiresAt };
}

function indexAccess(source: QuerySource): IndexAccess {
  if (source.indexes === undefined) throw new DocumentError('NO_INDEX', 'this collection has no index access');
  return source.indexes;
}
