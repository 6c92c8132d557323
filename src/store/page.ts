// Keyset pagination shared by every paged query. Never OFFSET: a page is an index range scan that
// starts at the cursor's key, so page 10,000 costs what page 1 costs.
//
// Every ordering is uniform in direction over its key columns (for example view_count DESC, id
// DESC), so "after this row" is one row-value comparison, `(sort, id) < (?, ?)`, which both SQLite
// and PostgreSQL turn into an index range.
import { type SelectQueryBuilder, sql } from 'kysely';

/** A row's position in an ordering: its sort value(s) and then its id (what a cursor carries). */
export type Key = readonly (string | number)[];

export type Direction = 'asc' | 'desc';

/**
 * A LIMIT written into the SQL text as a number, never bound as a parameter. SQLite's planner reads
 * a bound LIMIT's value, so binding one marks the prepared statement for a new prepare on every
 * run: 4-13 µs per query on the bench store (bench/README.md). There are at most 101 values (`first` is 1..100, plus the look-ahead row), so
 * the statement cache holds them all. PostgreSQL plans either form alike.
 */
export function rowLimit(n: number) {
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`not a row count: ${n}`);
  return sql.lit(n);
}

export interface PageQuery {
  first: number;
  /** rows strictly after this key in the ordering */
  after?: Key;
  /** rows strictly before this key in the ordering */
  before?: Key;
}

export interface Page<R> {
  rows: R[];
  /** more rows exist beyond this page in the direction of travel */
  hasMore: boolean;
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
 * Runs `query` ordered by `columns` (sort columns then the id) in `direction`, one page of it.
 * `before` walks backward: the rows are fetched in reverse and returned in the forward order.
 */
export async function keysetPage<DB, TB extends keyof DB, R>(
  query: SelectQueryBuilder<DB, TB, R>,
  columns: readonly string[],
  direction: Direction,
  page: PageQuery,
): Promise<Page<R>> {
  const rows = await keysetQuery(query, columns, direction, page).execute();
  const hasMore = rows.length > page.first;
  if (hasMore) rows.pop();
  if (page.before !== undefined) rows.reverse();
  return { rows, hasMore };
}
