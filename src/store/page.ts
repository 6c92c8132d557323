// Keyset pagination shared by every paged query. Never OFFSET: a page is an index range scan that
// starts at the cursor's key, so page 10,000 costs what page 1 costs.
//
// Every ordering is uniform in direction over its key columns (for example view_count DESC, id
// DESC), so "after this row" is one row-value comparison, `(sort, id) < (?, ?)`, which both SQLite
// and PostgreSQL turn into an index range.
//
// An ordering is described once, by its column list: the same list writes the ORDER BY, the
// comparison with a cursor's key, and the keys of the page's first and last rows that the next
// cursor carries, so the three cannot drift apart.
import { type CompiledQuery, type Kysely, type SelectQueryBuilder, sql } from 'kysely';
import type { Database } from './schema.ts';

/** A row's position in an ordering: its sort value(s) and then its id (what a cursor carries). */
export type Key = readonly (string | number)[];

export type Direction = 'asc' | 'desc';

/**
 * A LIMIT written into the SQL text as a number, never bound as a parameter. SQLite's planner reads
 * a bound LIMIT's value, so binding one marks the prepared statement for a new prepare on every
 * run (docs/perf/2026-11-22-third-session.md, change 1). There are at most 101 values (`first` is
 * 1..100, plus the look-ahead row), so the statement cache holds them all. PostgreSQL plans either
 * form alike.
 */
export function rowLimit(n: number) {
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`not a row count: ${n}`);
  return sql.lit(n);
}

/** Whether the query finds at least one row: it reads one at most. */
export async function hasRow<DB, TB extends keyof DB, O>(q: SelectQueryBuilder<DB, TB, O>): Promise<boolean> {
  return (await q.limit(rowLimit(1)).executeTakeFirst()) !== undefined;
}

export interface PageQuery {
  first: number;
  /** rows strictly after this key in the ordering */
  after?: Key;
  /** rows strictly before this key in the ordering */
  before?: Key;
  /**
   * the epoch of the walk the cursor belongs to, in a listing whose order moves (src/store/moves.ts);
   * unset: none given (0)
   */
  epoch?: number;
}

/** The keys of a page's first and last rows, in its ordering. */
export interface PageEnds {
  first: Key;
  last: Key;
}

export interface Page<R> {
  rows: R[];
  /** more rows exist beyond this page in the direction of travel */
  hasMore: boolean;
  /** the keys of the first and last rows (none when the page is empty) */
  ends?: PageEnds;
  /** a listing whose order moves: the epoch of the walk, which its cursors carry (src/store/moves.ts) */
  epoch?: number;
}

/**
 * The SQL of one page: `query` ordered by `columns` (sort columns then the id) in `direction`,
 * starting after the page's key, one row more than asked for (to know whether more follow).
 * `before` walks backward: the rows come in reverse order.
 */
export function keysetQuery<DB, TB extends keyof DB, R>(
  query: SelectQueryBuilder<DB, TB, R>,
  columns: readonly string[],
  direction: Direction,
  page: PageQuery,
): SelectQueryBuilder<DB, TB, R> {
  const backward = page.before !== undefined;
  const key = page.before ?? page.after;
  const ascending = (direction === 'asc') !== backward;
  // biome-ignore lint/suspicious/noExplicitAny: columns are checked by the callers' types
  let q = query as SelectQueryBuilder<any, any, R>;
  if (key) {
    if (key.length !== columns.length) throw new Error('cursor key does not fit the ordering');
    const lhs = sql.join(columns.map((c) => sql.ref(c)));
    const rhs = sql.join(key.map((v) => sql.val(v)));
    q = q.where(sql<boolean>`(${lhs}) ${sql.raw(ascending ? '>' : '<')} (${rhs})`);
  }
  for (const c of columns) q = q.orderBy(c, ascending ? 'asc' : 'desc');
  return q.limit(rowLimit(page.first + 1));
}

/**
 * The name a row carries an ordering column under: the column's own name, without its table
 * (`follows.followed_at` is the row's `followed_at`). Ordering columns are plain column references,
 * so a select that renames one (`games.id as id`) keeps the same name.
 */
const fieldOf = (column: string): string => column.slice(column.lastIndexOf('.') + 1);

function keyOf(row: unknown, pinned: Key, fields: readonly string[]): Key {
  const values = fields.map((f) => {
    const v = (row as Record<string, unknown>)[f];
    if (typeof v !== 'string' && typeof v !== 'number') throw new Error(`no key value "${f}" in the row`);
    return v;
  });
  return [...pinned, ...values];
}

/** A cursor's key without the `pinned` values that lead it; they must be the query's own. */
function unpinned(key: Key | undefined, pinned: Key): Key | undefined {
  if (key === undefined || pinned.length === 0) return key;
  if (pinned.some((v, i) => key[i] !== v)) throw new Error('cursor key of another pinned range');
  return key.slice(pinned.length);
}

/** The page of `rows` fetched for it (one more than `first` when more follow; reversed when `backward`). */
function pageOf<R>(
  rows: R[],
  first: number,
  backward: boolean,
  columns: readonly string[],
  pinned: Key,
): Page<R> {
  const hasMore = rows.length > first;
  if (hasMore) rows.pop();
  if (backward) rows.reverse();
  const firstRow = rows[0];
  const lastRow = rows[rows.length - 1];
  if (firstRow === undefined || lastRow === undefined) return { rows, hasMore };
  const fields = columns.map(fieldOf);
  return {
    rows,
    hasMore,
    ends: { first: keyOf(firstRow, pinned, fields), last: keyOf(lastRow, pinned, fields) },
  };
}

// ---- pages of queries built once per shape --------------------------------------------------------
//
// Kysely builds a query as a tree of frozen nodes and compiles the tree to SQL on every call: 15-30 µs
// of a page's request (docs/perf/2026-11-27-per-request.md). `shapedPage` builds and compiles a
// listing's page query once per shape and binds each call's values into the kept SQL. A query's
// values are handed to its builder as slots (stand-ins that Kysely carries into the compiled
// parameters untouched), so the kept SQL says where each value goes.

/** Where a value of a shaped query goes among the compiled parameters. */
class Slot {
  constructor(readonly index: number) {}
}

interface Shape {
  compiled: CompiledQuery;
  /** per compiled parameter: the index, among the defined values' names, of the value it takes; -1: a constant */
  slots: number[];
}

/** Kept shapes, per SQL dialect (the adapter's class); cleared when full. */
const shapes = new WeakMap<object, Map<string, Shape>>();
const MAX_SHAPES = 2000;

/** The values a shaped query binds, by name; an undefined value is a part the query leaves out. */
export type ShapeValues = Record<string, string | number | undefined>;

/**
 * The rows of the query `build` makes, built and compiled once per shape and kept: the shape is
 * `name` and which of `values` are defined; each call binds `values` into the kept SQL. `build` gets
 * a slot in place of each defined value and must put it into the query as it is: it may test
 * whether a value is defined (that is in the shape), never compute with it or compare it, since a
 * slot is not the value and what it computed would be kept with the SQL. Everything else the SQL's
 * text depends on goes in `name`.
 *
 * Through a Kysely with plugins (the plan tests and the bench record queries with one), the query
 * is built for every call from the values themselves, so that they see it.
 */
export async function shapedRows<R>(
  db: Kysely<Database>,
  name: string,
  values: ShapeValues,
  // biome-ignore lint/suspicious/noExplicitAny: the builder's tables are the caller's
  build: (slots: ShapeValues) => SelectQueryBuilder<Database, any, R>,
): Promise<R[]> {
  const executor = db.getExecutor();
  if (executor.plugins.length > 0) return build(values).execute();
  const names = Object.keys(values).filter((k) => values[k] !== undefined);
  const id = `${name}|${names.join(',')}`;
  let kept = shapes.get(executor.adapter.constructor);
  if (kept === undefined) {
    kept = new Map();
    shapes.set(executor.adapter.constructor, kept);
  }
  let shape = kept.get(id);
  if (shape === undefined) {
    const slots: ShapeValues = {};
    for (const [i, n] of names.entries()) slots[n] = new Slot(i) as unknown as number;
    const compiled = build(slots).compile();
    shape = { compiled, slots: compiled.parameters.map((p) => (p instanceof Slot ? p.index : -1)) };
    if (kept.size >= MAX_SHAPES) kept.clear();
    kept.set(id, shape);
  }
  const { compiled, slots } = shape;
  const parameters = slots.map((i, at) => (i < 0 ? compiled.parameters[at] : values[names[i] as string]));
  return (await executor.executeQuery<R>({ ...compiled, parameters })).rows as R[];
}

/**
 * The rows of one page of `build`'s query (keysetQuery: ordered by `columns`, after or before the
 * cursor's key, `first` + 1 of them), through shapedRows: the cursor's key values are bound like
 * the others, and `first` and the cursor's direction are part of the shape.
 */
export function shapedKeysetRows<R>(
  db: Kysely<Database>,
  name: string,
  values: ShapeValues,
  // biome-ignore lint/suspicious/noExplicitAny: the builder's tables are the caller's
  build: (slots: ShapeValues) => SelectQueryBuilder<Database, any, R>,
  columns: readonly string[],
  direction: Direction,
  page: PageQuery,
): Promise<R[]> {
  const key = page.before ?? page.after;
  const travel = page.before ? 'before' : page.after ? 'after' : 'first';
  return shapedRows(db, `${name}|${page.first}|${travel}`, withCursor(values, key), (s) => {
    const k = cursorSlots(s, key);
    const ends = travel === 'before' ? { before: k } : travel === 'after' ? { after: k } : {};
    return keysetQuery(build(s), columns, direction, { first: page.first, ...ends });
  });
}

/**
 * `values` and the values of `list` as values of their own (`name.0`, `name.1`...), for a shaped
 * query that binds a list: its length is then part of the shape.
 */
export function withList(
  values: ShapeValues,
  name: string,
  list: readonly (string | number)[] | undefined,
): ShapeValues {
  const all: ShapeValues = { ...values };
  for (const [i, v] of (list ?? []).entries()) all[`${name}.${i}`] = v;
  return all;
}

/** The slots of the list's values that withList added, in its order (undefined: no list). */
export const listSlots = <T extends string | number>(
  slots: ShapeValues,
  name: string,
  list: readonly T[] | undefined,
): T[] | undefined => list?.map((_, i) => slots[`${name}.${i}`] as T);

/** `values` and a cursor's key values, for a shaped query that binds both (withList). */
export const withCursor = (values: ShapeValues, key: Key | undefined) => withList(values, 'cursor', key);

/** The slots of the cursor's key values that withCursor added (undefined: no cursor). */
export const cursorSlots = (slots: ShapeValues, key: Key | undefined): Key | undefined =>
  listSlots(slots, 'cursor', key);

/**
 * One page of the query `build` makes, ordered by `columns` (sort columns then the id) in
 * `direction`, with the keys of its first and last rows read from the rows under the columns'
 * names; through shapedKeysetRows (built and compiled once per shape; see shapedRows for what
 * `build` may do with its values). `before` walks backward: the rows are fetched in reverse and
 * returned in the forward order.
 *
 * `pinned`: the values of leading key columns that the query fixes with `=`. They lead every key of
 * the page (a cursor names them), but the SQL compares only `columns`: a row comparison that also
 * covered the pinned columns would let SQLite use only the equalities and filter the whole pinned
 * range, so a deep page would cost more than the first.
 */
export async function shapedPage<R>(
  db: Kysely<Database>,
  name: string,
  values: ShapeValues,
  // biome-ignore lint/suspicious/noExplicitAny: the builder's tables are the caller's
  build: (slots: ShapeValues) => SelectQueryBuilder<Database, any, R>,
  columns: readonly string[],
  direction: Direction,
  page: PageQuery,
  pinned: Key = [],
): Promise<Page<R>> {
  const after = unpinned(page.after, pinned);
  const before = unpinned(page.before, pinned);
  const rows = await shapedKeysetRows(db, name, values, build, columns, direction, {
    first: page.first,
    after,
    before,
  });
  return pageOf(rows, page.first, before !== undefined, columns, pinned);
}
