/**
 * The query planner: picks, among a collection's ready indexes, the one that reads the fewest keys for
 * a filter, and the intervals to scan on it. Rules (docs/queries.md):
 *
 * - An index serves a filter through its leading fields: an equality prefix (`$eq`, `$in`, `null`
 *   also covering MISSING) and then one range (`$gt`/`$gte`/`$lt`/`$lte`/`$prefix`) on the next field.
 *   Several comparisons on one single-valued field intersect; on a `[*]` field they cannot (each may
 *   hold for another element), so one is used and the rest filter.
 * - `$in` and a top-level `$or` (each branch served by the same index) scan a union of intervals; a
 *   document found in several is returned once.
 * - A plain-path field also stores arrays (its value, or an array met on the way) in its array
 *   section, where MongoDB's semantics may still match by element: every field the plan constrains
 *   adds an interval over its array section, and every document found is checked against the whole
 *   filter.
 * - `sort` comes from the index when the sort paths are the fields after the equality prefix with
 *   all directions equal to the index's (or all opposite: the scan runs backwards) over one interval;
 *   otherwise the results are sorted in memory (bounded top-k).
 * - A plan covers the query (no document read) when the index is single-valued and every path the
 *   filter, the projection and an in-memory sort read lies under an index field or `include` path.
 * - A partial index (`where`) is used only when each condition of its `where` is a condition of the
 *   filter.
 */
import { DocumentError } from '../document/errors';
import { compileFilter, type FilterNode, type ValueTest } from '../filter';
import type { IndexDescription, IndexInterval } from '../index/index';
import { isMultikey, parseIndexPath, queryPathOf, STAR, type IndexPathElement } from './index-fields';
import { ARRAY_SECTION, intersect, pointOf, rangesOf, type FieldRange } from './intervals';
import type { SortField } from './order-key';

/** Most intervals one plan scans (the product of `$in` lists, plus array sections). */
export const MAX_INTERVALS = 1000;

export interface PlannedInterval {
  readonly interval: IndexInterval;
  /** `range`: from the filter's conditions; `array-section`: a constrained field's array values. */
  readonly role: 'range' | 'array-section';
}

export interface ScanPlan {
  readonly kind: 'scan';
}

export interface IndexPlan {
  readonly kind: 'index';
  readonly index: IndexDescription;
  readonly fields: readonly (readonly IndexPathElement[])[];
  /** Read in this order; a document is returned at the first interval that holds one of its entries. */
  readonly intervals: readonly PlannedInterval[];
  /** Fields fixed by equality in every `range` interval. */
  readonly equalCount: number;
  /** Fields the plan constrains (equality prefix plus the range field). */
  readonly constrained: number;
  /** The index order gives the requested sort (read by merging, see execute.ts). */
  readonly ordered: boolean;
  /**
   * Ordered plans: the order key of a result, as index fields and directions: the sort fields, then
   * the fields after the equality prefix that are not sort fields. Main-interval entries come in this
   * order; array-section documents are merged into it.
   */
  readonly orderKey: readonly { readonly field: number; readonly direction: 1 | -1 }[];
  readonly reverse: boolean;
  /** No document is read: results come from index entries. */
  readonly covering: boolean;
  /** Some field is `[*]`: a document may have several entries. */
  readonly multikey: boolean;
}

export type Plan = ScanPlan | IndexPlan;

export interface PlanRequest {
  readonly filter: FilterNode;
  readonly sort: readonly SortField[];
  /** Paths the caller wants back (`undefined`: whole documents). */
  readonly projection: readonly string[] | undefined;
  readonly hint?: string;
}

/**
 * The best plan on `indexes` (ready ones only are considered), or `undefined` when no index serves
 * the filter. With `hint`, that index is used (scanned whole when the filter constrains none of its
 * fields).
 *
 * @throws DocumentError INVALID_QUERY when `hint` names no ready index or a partial index whose
 *   `where` the filter does not imply.
 */
export function choosePlan(request: PlanRequest, indexes: readonly IndexDescription[]): IndexPlan | undefined {
  const ready = indexes.filter((i) => i.state === 'ready');
  if (request.hint !== undefined) {
    const index = ready.find((i) => i.name === request.hint);
    if (index === undefined) {
      const known = indexes.find((i) => i.name === request.hint);
      throw new DocumentError(
        'INVALID_QUERY',
        known === undefined ? `hint: no index named "${request.hint}"` : `hint: index "${request.hint}" is still building`,
      );
    }
    if (!whereImplied(index, request.filter)) {
      throw new DocumentError('INVALID_QUERY', `hint: index "${index.name}" is partial and the filter does not imply its where`);
    }
    return planOnIndex(index, request, true);
  }
  let best: { plan: IndexPlan; score: number } | undefined;
  for (const index of ready) {
    if (!whereImplied(index, request.filter)) continue;
    const plan = planOnIndex(index, request, false);
    if (plan === undefined) continue;
    const score = scoreOf(plan, request);
    if (best === undefined || score > best.score) best = { plan, score };
  }
  return best?.plan;
}

function scoreOf(plan: IndexPlan, request: PlanRequest): number {
  const rangeIntervals = plan.intervals.filter((i) => i.role === 'range');
  const hasRange = rangeIntervals.some((i) => i.interval.lower !== undefined || i.interval.upper !== undefined);
  return (
    plan.equalCount * 10 +
    (hasRange ? 5 : 0) +
    (plan.ordered && request.sort.length > 0 ? 8 : 0) +
    (plan.covering ? 2 : 0) -
    plan.intervals.length / MAX_INTERVALS
  );
}

/** The conditions of a conjunction usable by an index: path -> value tests. */
function conditionsOf(nodes: readonly FilterNode[]): Map<string, ValueTest[]> {
  const out = new Map<string, ValueTest[]>();
  const visit = (node: FilterNode): void => {
    if (node.kind === 'and') node.children.forEach(visit);
    else if (node.kind === 'path' && rangesOf(node.test) !== undefined) out.set(node.path, [...(out.get(node.path) ?? []), node.test]);
  };
  nodes.forEach(visit);
  return out;
}

function conjuncts(node: FilterNode): FilterNode[] {
  return node.kind === 'and' ? node.children.flatMap(conjuncts) : node.kind === 'true' ? [] : [node];
}

/** The intervals one conjunction gives on an index, with how many fields it fixes and constrains. */
interface Shape {
  readonly intervals: PlannedInterval[];
  readonly equalCount: number;
  readonly constrained: number;
  /** One equality prefix and at most one range: the index order holds across the whole result. */
  readonly single: boolean;
}

function shapeOn(fields: readonly (readonly IndexPathElement[])[], conditions: Map<string, ValueTest[]>): Shape {
  let prefixes: IndexInterval['equal'][] = [[]];
  const prefixesByLength: IndexInterval['equal'][][] = [];
  let range: FieldRange[] | undefined;
  let equalCount = 0;
  const sectionFields: number[] = [];
  for (let i = 0; i < fields.length; i++) {
    const path = queryPathOf(fields[i]);
    const tests = path === undefined ? [] : (conditions.get(path) ?? []);
    if (tests.length === 0) break;
    const ranges = fieldRanges(tests, isMultikey(fields[i]));
    prefixesByLength.push(prefixes);
    if (needsArraySection(fields[i], tests)) sectionFields.push(i);
    const points = ranges.map(pointOf);
    if (points.every((p) => p !== undefined) && prefixes.length * points.length <= MAX_INTERVALS) {
      prefixes = prefixes.flatMap((prefix) => points.map((p) => [...prefix, p.value]));
      equalCount++;
      continue;
    }
    range = ranges;
    break;
  }
  const intervals: PlannedInterval[] = [];
  for (const equal of prefixes) {
    if (range === undefined) intervals.push({ interval: { equal }, role: 'range' });
    else for (const r of range) intervals.push({ interval: { equal, lower: r.lower, upper: r.upper }, role: 'range' });
  }
  for (const i of sectionFields) {
    for (const equal of distinctPrefixes(prefixesByLength[i])) {
      intervals.push({ interval: { equal, ...ARRAY_SECTION }, role: 'array-section' });
    }
  }
  const constrained = equalCount + (range === undefined ? 0 : 1);
  return { intervals, equalCount, constrained, single: prefixes.length === 1 && (range === undefined || range.length === 1) };
}

/** The ranges the tests on one field allow: intersected on a single-valued field, else the most selective test's. */
function fieldRanges(tests: readonly ValueTest[], multikey: boolean): FieldRange[] {
  const all = tests.map((t) => rangesOf(t) as FieldRange[]);
  const pointTest = all.find((rs) => rs.every((r) => pointOf(r) !== undefined));
  if (pointTest !== undefined) return pointTest;
  if (!multikey && all.every((rs) => rs.length === 1)) return [all.map((rs) => rs[0]).reduce(intersect)];
  return all[0];
}

/**
 * Whether documents matching `tests` on this field may sit in its array section: always for a plain
 * path; for a path ending in `[*]` (elements indexed one by one) only when an operand is an array.
 */
function needsArraySection(field: readonly IndexPathElement[], tests: readonly ValueTest[]): boolean {
  if (field[field.length - 1] !== STAR) return true;
  return tests.some((t) => (t.op === '$in' ? t.values.some(Array.isArray) : 'value' in t && Array.isArray(t.value)));
}

function distinctPrefixes(prefixes: readonly IndexInterval['equal'][]): IndexInterval['equal'][] {
  const seen = new Set<string>();
  return prefixes.filter((p) => {
    const key = JSON.stringify(p, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : typeof v === 'symbol' ? '$missing' : v));
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function planOnIndex(index: IndexDescription, request: PlanRequest, forced: boolean): IndexPlan | undefined {
  const fields = index.fields.map((f) => parseIndexPath(f.path));
  const multikey = fields.some(isMultikey);
  const top = conjuncts(request.filter);
  const conditions = conditionsOf(top);
  let shape = shapeOn(fields, conditions);
  if (shape.constrained === 0) {
    // A top-level $or whose every branch this index serves: the union of the branches' intervals.
    const or = top.find((n) => n.kind === 'or');
    if (or !== undefined && or.kind === 'or') {
      const others = top.filter((n) => n !== or);
      const shapes = or.children.map((branch) => shapeOn(fields, conditionsOf([...others, ...conjuncts(branch)])));
      if (shapes.every((s) => s.constrained > 0)) {
        shape = {
          intervals: shapes.flatMap((s) => s.intervals),
          equalCount: Math.min(...shapes.map((s) => s.equalCount)),
          constrained: Math.min(...shapes.map((s) => s.constrained)),
          single: false,
        };
      }
    }
  }
  const order = orderOn(index, fields, shape, request.sort);
  const wholeIndexOrdered = shape.constrained === 0 && order.ordered && request.sort.length > 0 && request.filter.kind === 'true';
  if (shape.constrained === 0 && !forced && !wholeIndexOrdered) return undefined;
  if (shape.intervals.length > MAX_INTERVALS) return undefined;
  return {
    kind: 'index',
    index,
    fields,
    intervals: shape.intervals,
    equalCount: shape.equalCount,
    constrained: shape.constrained,
    ordered: order.ordered,
    orderKey: order.key,
    reverse: order.reverse,
    covering: !multikey && covers(index, fields, request, order.ordered),
    multikey,
  };
}

/** Whether the index order gives `sort` for this shape, in which direction, and the order key it gives. */
function orderOn(
  index: IndexDescription,
  fields: readonly (readonly IndexPathElement[])[],
  shape: Shape,
  sort: readonly SortField[],
): { ordered: boolean; reverse: boolean; key: { field: number; direction: 1 | -1 }[] } {
  const unordered = { ordered: false, reverse: false, key: [] };
  if (sort.length === 0 || !shape.single) return unordered;
  const paths = fields.map(queryPathOf);
  const fieldOf = (path: string): number => paths.indexOf(path);
  // A sort on a `[*]` field orders by the whole value, which its entries do not hold.
  if (sort.some((s) => fieldOf(s.path) >= 0 && isMultikey(fields[fieldOf(s.path)]))) return unordered;
  if (fields.slice(shape.equalCount).some(isMultikey)) return unordered;
  const wanted = sort.filter((s) => {
    const f = fieldOf(s.path);
    return f < 0 || f >= shape.equalCount;
  });
  let reverse: boolean | undefined;
  for (let i = 0; i < wanted.length; i++) {
    const f = shape.equalCount + i;
    if (f >= fields.length || paths[f] !== wanted[i].path) return unordered;
    const flip = (index.fields[f].order === 'desc' ? -1 : 1) !== wanted[i].direction;
    if (reverse !== undefined && reverse !== flip) return unordered;
    reverse = flip;
  }
  const backwards = reverse ?? false;
  const key = sort.map((s) => ({ field: fieldOf(s.path), direction: s.direction }));
  for (let f = shape.equalCount; f < fields.length; f++) {
    if (!key.some((k) => k.field === f))
      key.push({ field: f, direction: ((index.fields[f].order === 'desc' ? -1 : 1) * (backwards ? -1 : 1)) as 1 | -1 });
  }
  return { ordered: true, reverse: backwards, key };
}

/** Whether every path the query reads lies under a single-valued index field or an `include` path. */
function covers(index: IndexDescription, fields: readonly (readonly IndexPathElement[])[], request: PlanRequest, ordered: boolean): boolean {
  if (request.projection === undefined) return false;
  const available = [...fields.map((f) => (f.every((e) => typeof e === 'string') ? queryPathOf(f) : undefined)), ...index.include].filter(
    (p): p is string => p !== undefined,
  );
  const under = (path: string): boolean => available.some((a) => path === a || path.startsWith(`${a}.`));
  const read = [...filterPaths(request.filter), ...request.projection, ...(ordered ? [] : request.sort.map((s) => s.path))];
  return read.every(under);
}

/** Every path a filter tests (`$elemMatch` sub-filters tested below their array's path). */
export function filterPaths(node: FilterNode): string[] {
  switch (node.kind) {
    case 'true':
    case 'false':
      return [];
    case 'and':
    case 'or':
      return node.children.flatMap(filterPaths);
    case 'not':
      return filterPaths(node.child);
    case 'path':
      return [node.path];
  }
}

/** A partial index serves only filters that imply its `where`: each of its conditions is one of the filter's. */
function whereImplied(index: IndexDescription, filter: FilterNode): boolean {
  if (index.where === undefined) return true;
  const have = new Set(conjuncts(filter).map(nodeKey));
  return conjuncts(compileFilter(index.where).root).every((c) => have.has(nodeKey(c)));
}

function nodeKey(node: FilterNode): string {
  return JSON.stringify(node, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v));
}

/**
 * The fields of an index that would serve the filter and sort: the equality paths, then one range
 * path, then the sort paths. `undefined` when the filter has no condition an index could use.
 */
export function suggestIndexFields(request: PlanRequest): string[] | undefined {
  const conditions = conditionsOf(conjuncts(request.filter));
  const equal: string[] = [];
  const ranged: string[] = [];
  for (const [path, tests] of conditions) {
    const ranges = fieldRanges(tests, false);
    (ranges.every((r) => pointOf(r) !== undefined) ? equal : ranged).push(path);
  }
  const fields = [...equal, ...ranged.slice(0, 1)];
  for (const s of request.sort) if (!fields.includes(s.path)) fields.push(s.path);
  return fields.length === 0 ? undefined : fields;
}
