/**
 * `find`, `findOne`, `count` and `explain` over a {@link QuerySource}: filter checking, planning, and
 * the cursor that pages through a plan, one transaction per page unless the caller passes `tr`.
 */
import type { Transaction } from '../kv/contract/types';
import { DocumentError } from '../document/errors';
import type { JsonValue } from '../document/types';
import { compileFilter } from '../filter';
import {
  newStats,
  runPage,
  sortedPage,
  TOP_K_CAP,
  type FindItem,
  type PageResult,
  type PreparedQuery,
  type QuerySource,
  type QueryStats,
} from './execute';
import type { IndexDescription } from '../index/index';
import { choosePlan, suggestIndexFields, type IndexPlan, type Plan } from './planner';
import { parseSort, type SortSpec } from './order-key';
import { parseProjection } from './projection';
import { decodeToken, encodeToken, queryFingerprint, type Position } from './token';

/** Results per page (and per transaction) when neither `limit` nor `pageSize` says otherwise. */
export const DEFAULT_PAGE_SIZE = 100;

export interface FindOptions {
  /** Join the caller's transaction: the query sees its writes, and every page runs in it. */
  readonly tr?: Transaction;
  /** Result order: `{ total: -1, name: 1 }` or `[['total', -1], ['name', 1]]`. Ties are broken by id. */
  readonly sort?: SortSpec;
  /** Most results this call returns (a page, for `page()`). */
  readonly limit?: number;
  /** Paths to return (`['name', 'address.city']` or `{ name: 1 }`); the whole document without. */
  readonly projection?: readonly string[] | { readonly [path: string]: 1 | true };
  /** A continuation token from an earlier page of the same query: continue after it. */
  readonly after?: string;
  /** Use this index. */
  readonly hint?: string;
  /** Fail (NO_INDEX) unless an index serves the filter and gives the sort without sorting in memory. */
  readonly requireIndex?: boolean;
  /** Without an index that serves the filter, scan the whole collection instead of failing. */
  readonly allowScan?: boolean;
  /** Results read per transaction when iterating (default 100). */
  readonly pageSize?: number;
}

export interface CountOptions {
  readonly tr?: Transaction;
  readonly hint?: string;
  readonly allowScan?: boolean;
  readonly requireIndex?: boolean;
}

/** One page of results and, unless the query is done, the token that continues it. */
export interface FindPage<T = JsonValue> {
  readonly items: FindItem<T>[];
  readonly after?: string;
}

/** What `explain` reports: the plan chosen and what running it read. */
export interface Explanation {
  readonly plan: 'index' | 'scan';
  readonly index?: string;
  /** The intervals scanned, in value order, as readable text. */
  readonly intervals?: readonly string[];
  /** The index order gives the sort (no in-memory sort). */
  readonly ordered: boolean;
  readonly reverse: boolean;
  /** Results are sorted in memory (bounded top-k). */
  readonly inMemorySort: boolean;
  /** Results come from index entries alone. */
  readonly covering: boolean;
  readonly keysRead: number;
  readonly documentsRead: number;
  readonly returned: number;
  readonly transactions: number;
}

/**
 * A query's results: iterate it (`for await`), or take them with {@link FindCursor.toArray} or page by
 * page with {@link FindCursor.page}.
 */
export class FindCursor<T = JsonValue> implements AsyncIterable<FindItem<T>> {
  /** Counts of what the cursor has read so far. */
  readonly stats: QueryStats = newStats();
  private prepared: Prepared | undefined;

  /** @internal Use `collection.find()`. */
  constructor(
    private readonly source: QuerySource,
    private readonly filter: unknown,
    private readonly options: FindOptions,
  ) {
    checkFindOptions(options);
  }

  /** The plan this cursor runs (planned on first use). */
  async plan(): Promise<Plan> {
    this.prepared ??= await this.source.transact(this.options.tr, (tr) => this.prepareIn(tr));
    return this.prepared.query.plan;
  }

  async *[Symbol.asyncIterator](): AsyncIterator<FindItem<T>> {
    for await (const items of this.pages()) for (const item of items) yield item;
  }

  /** All results (up to `limit`). */
  async toArray(): Promise<FindItem<T>[]> {
    const out: FindItem<T>[] = [];
    // Page by page: no promise per result.
    for await (const items of this.pages()) for (const item of items) out.push(item);
    return out;
  }

  /** The results page by page (one transaction each unless `tr`), up to `limit`. */
  private async *pages(): AsyncIterable<FindItem<T>[]> {
    let remaining = this.options.limit ?? Infinity;
    if (remaining === 0) return;
    const pageSize = this.options.pageSize ?? DEFAULT_PAGE_SIZE;
    // A sorted-in-memory page is a whole pass over the plan: iterating takes the largest pages allowed.
    const want = (query: PreparedQuery): number => Math.min(remaining, inMemorySort(query) ? TOP_K_CAP : pageSize);
    const first = await this.firstPage(want);
    const prepared = first.prepared;
    let page = first.page;
    for (;;) {
      yield page.items as FindItem<T>[];
      remaining -= page.items.length;
      if (remaining <= 0 || page.position === undefined) return;
      page = await this.nextPage(prepared.query, page.position, want(prepared.query));
    }
  }

  /**
   * Up to `limit` (default 100) results and the token of the next page (absent when there is none).
   * Pages resume in any later transaction; a document that did not change is neither repeated nor
   * skipped.
   */
  async page(): Promise<FindPage<T>> {
    const want = this.options.limit ?? DEFAULT_PAGE_SIZE;
    const first = await this.firstPage(() => want);
    const prepared = first.prepared;
    let page = first.page;
    const items: FindItem<T>[] = [...(page.items as FindItem<T>[])];
    while (items.length < want && page.position !== undefined) {
      page = await this.nextPage(prepared.query, page.position, want - items.length);
      items.push(...(page.items as FindItem<T>[]));
    }
    return page.position === undefined ? { items } : { items, after: encodeToken(fingerprintOf(prepared), page.position) };
  }

  /**
   * The first page, planned in the transaction that reads it: the index list is read with the page's
   * other first reads, not in a transaction of its own.
   */
  private async firstPage(wantFor: (query: PreparedQuery) => number): Promise<{ prepared: Prepared; page: PageResult }> {
    let want = 0;
    const first = await this.source.transact(this.options.tr, async (tr) => {
      const prepared = this.prepared ?? (await this.prepareIn(tr));
      want = wantFor(prepared.query);
      if (want === 0 || inMemorySort(prepared.query)) return { prepared, page: undefined };
      this.stats.transactions++;
      return { prepared, page: await runPage(this.source, tr, prepared.query, prepared.start, want, this.stats) };
    });
    this.prepared = first.prepared;
    if (first.page !== undefined) {
      this.stats.returned += first.page.items.length;
      return { prepared: first.prepared, page: first.page };
    }
    if (want === 0) return { prepared: first.prepared, page: { items: [], position: first.prepared.start } };
    return { prepared: first.prepared, page: await this.nextPage(first.prepared.query, first.prepared.start, want) };
  }

  private async nextPage(query: PreparedQuery, position: Position | undefined, want: number): Promise<PageResult> {
    const page = inMemorySort(query)
      ? await sortedPage(this.source, this.options.tr, query, position, want, this.stats)
      : await this.source.transact(this.options.tr, (tr) => {
          this.stats.transactions++;
          return runPage(this.source, tr, query, position, want, this.stats);
        });
    this.stats.returned += page.items.length;
    return page;
  }

  private async prepareIn(tr: Transaction): Promise<Prepared> {
    const indexes = this.source.indexes === undefined ? [] : await this.source.indexes.list(tr);
    const query = prepareQuery(this.filter, this.options, indexes);
    const prepared: Prepared = { query, options: this.options, fingerprint: undefined, start: undefined };
    const start = this.options.after === undefined ? undefined : decodeToken(this.options.after, fingerprintOf(prepared));
    if (start !== undefined && start.plan !== planName(query.plan)) {
      throw new DocumentError(
        'INVALID_QUERY',
        `the continuation token was made by plan "${start.plan}", and this query now plans "${planName(query.plan)}" (an index was created or dropped): start again without after`,
      );
    }
    prepared.start = start;
    return prepared;
  }
}

interface Prepared {
  readonly query: PreparedQuery;
  readonly options: FindOptions;
  /** Made when a token is read or written (most queries never page by token). */
  fingerprint: string | undefined;
  start: Position | undefined;
}

/** What a continuation token of the prepared query carries: made once, on first use. */
function fingerprintOf(prepared: Prepared): string {
  const { query, options } = prepared;
  prepared.fingerprint ??= queryFingerprint([query.filter.source, options.sort ?? null, query.projection ?? null, options.hint ?? null]);
  return prepared.fingerprint;
}

/** Checks the filter and options and plans the query on `indexes`. */
export function prepareQuery(filter: unknown, options: FindOptions & CountOptions, indexes: readonly IndexDescription[]): PreparedQuery {
  const compiled = compileFilter(filter);
  const sort = parseSort(options.sort);
  const projection = parseProjection(options.projection);
  const request = { filter: compiled.root, sort, projection, hint: options.hint };
  const indexPlan = choosePlan(request, indexes);
  let plan: Plan;
  if (indexPlan !== undefined) {
    plan = indexPlan;
  } else if (options.allowScan === true && options.requireIndex !== true) {
    plan = { kind: 'scan' };
  } else {
    const fields = suggestIndexFields(request);
    throw new DocumentError(
      'NO_INDEX',
      fields === undefined
        ? 'no index can serve this filter (it has no equality, range or prefix condition an index reads); pass allowScan: true to scan the collection'
        : `no ready index serves this query; an index on ${JSON.stringify(fields)} would (createIndex('by_${fields.join('_').replace(/[^A-Za-z0-9_]/g, '_')}', { fields: ${JSON.stringify(fields)} })), or pass allowScan: true to scan the collection`,
    );
  }
  const query: PreparedQuery = { filter: compiled, plan, sort, projection };
  if (options.requireIndex === true && inMemorySort(query)) {
    throw new DocumentError(
      'NO_INDEX',
      `requireIndex: the plan on index "${(plan as IndexPlan).index.name}" does not give the sort ${JSON.stringify(sort.map((s) => [s.path, s.direction]))}; it would be sorted in memory`,
    );
  }
  return query;
}

export function inMemorySort(query: PreparedQuery): boolean {
  return query.sort.length > 0 && (query.plan.kind === 'scan' || !query.plan.ordered);
}

function planName(plan: Plan): string {
  return plan.kind === 'scan' ? 'scan' : plan.index.name;
}

function checkFindOptions(options: FindOptions): void {
  if (typeof options !== 'object' || options === null) throw new DocumentError('INVALID_QUERY', 'find options are an object');
  for (const [name, value] of [
    ['limit', options.limit],
    ['pageSize', options.pageSize],
  ] as const) {
    if (value !== undefined && (!Number.isSafeInteger(value) || value < (name === 'limit' ? 0 : 1))) {
      throw new DocumentError('INVALID_QUERY', `${name} is a ${name === 'limit' ? 'non-negative' : 'positive'} integer, got ${String(value)}`);
    }
  }
}

/** The first result, or `undefined`. */
export async function findOne<T = JsonValue>(source: QuerySource, filter: unknown, options: FindOptions = {}): Promise<FindItem<T> | undefined> {
  const items = await new FindCursor<T>(source, filter, { ...options, limit: 1, pageSize: 1 }).toArray();
  return items[0];
}

/** How many documents match (read through the same plans as `find`; covered when the index suffices). */
export async function count(source: QuerySource, filter: unknown, options: CountOptions = {}): Promise<number> {
  // An empty projection: an index holding the filter's paths covers the count (no document read).
  const cursor = new FindCursor(source, filter, { ...options, projection: [], pageSize: 1000 });
  let n = 0;
  for await (const _item of cursor) n++;
  return n;
}

/** Runs the query as `find` would (up to `limit`) and reports the plan and what it read. */
export async function explain(source: QuerySource, filter: unknown, options: FindOptions = {}): Promise<Explanation> {
  const cursor = new FindCursor(source, filter, options);
  const plan = await cursor.plan();
  await cursor.toArray();
  const stats = cursor.stats;
  const sorted = options.sort !== undefined && parseSort(options.sort).length > 0;
  if (plan.kind === 'scan') {
    return { plan: 'scan', ordered: false, reverse: false, inMemorySort: sorted, covering: false, ...stats };
  }
  return {
    plan: 'index',
    index: plan.index.name,
    intervals: plan.intervals.map((p) => describeInterval(plan, p.interval, p.role)),
    ordered: plan.ordered,
    reverse: plan.reverse,
    inMemorySort: sorted && !plan.ordered,
    covering: plan.covering,
    ...stats,
  };
}

function describeInterval(plan: IndexPlan, interval: IndexPlan['intervals'][number]['interval'], role: string): string {
  const parts = interval.equal.map((v, i) => `${plan.index.fields[i].path} = ${show(v)}`);
  const k = interval.equal.length;
  if (k < plan.index.fields.length && (interval.lower !== undefined || interval.upper !== undefined)) {
    const lower =
      interval.lower === undefined
        ? '('
        : 'value' in interval.lower
          ? `${interval.lower.inclusive ? '[' : '('}${show(interval.lower.value)}`
          : 'typeStart' in interval.lower
            ? `[start of ${interval.lower.typeStart}`
            : `(end of ${interval.lower.typeEnd}`;
    const upper =
      interval.upper === undefined
        ? ')'
        : 'value' in interval.upper
          ? `${show(interval.upper.value)}${interval.upper.inclusive ? ']' : ')'}`
          : 'typeEnd' in interval.upper
            ? `end of ${interval.upper.typeEnd}]`
            : `start of ${interval.upper.typeStart})`;
    parts.push(`${plan.index.fields[k].path} in ${lower}, ${upper}`);
  }
  return `${parts.length === 0 ? 'all entries' : parts.join(', ')}${role === 'array-section' ? ' (array values)' : ''}`;
}

function show(v: unknown): string {
  if (typeof v === 'symbol') return 'missing';
  return JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? `${x}n` : x));
}
