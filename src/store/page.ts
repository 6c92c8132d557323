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
import { type SelectQueryBuilder, sql } from 'kysely';

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

/**
 * Runs `query` ordered by `columns` (sort columns then the id) in `direction`, one page of it, with
 * the keys of its first and last rows read from the rows under the columns' names.
 * `before` walks backward: the rows are fetched in reverse and returned in the forward order.
 *
 * `pinned`: the values of leading key columns that the query fixes with `=`. They lead every key of
 * the page (a cursor names them), but the SQL compares only `columns`: a row comparison that also
 * covered the pinned columns would let SQLite use only the equalities and filter the whole pinned
 * range, so a deep page would cost more than the first.
 */
export async function keysetPage<DB, TB extends keyof DB, R>(
  query: SelectQueryBuilder<DB, TB, R>,
  columns: readonly string[],
  direction: Direction,
  page: PageQuery,
  pinned: Key = [],
): Promise<Page<R>> {
  const after = unpinned(page.after, pinned);
  const before = unpinned(page.before, pinned);
  const rows = await keysetQuery(query, columns, direction, { first: page.first, after, before }).execute();
  const hasMore = rows.length > page.first;
  if (hasMore) rows.pop();
  if (before !== undefined) rows.reverse();
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
