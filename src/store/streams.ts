import { type Kysely, type Selectable, type SelectQueryBuilder, SqliteAdapter, sql } from 'kysely';
import { keysetPage, keysetQuery, type Page, type PageQuery } from './page.ts';
import type { Database, StreamsTable } from './schema.ts';

/** The order of /streams (the order of /games/top's sums): current viewers, most first; ties by id, higher first. */
export const STREAMS_ORDER = ['streams.viewer_count', 'streams.id'] as const;

/** A live stream with its game's name (null when the game is not in the store). */
export type StreamListRow = Selectable<StreamsTable> & { game_name: string | null };

/**
 * The filters of a /streams query, each a set of values of one column (a row matches one of them);
 * the kinds combine with AND. Absent: no filter on that column. `userIds` holds the users given by
 * id and those given by login.
 */
export interface StreamFilters {
  userIds?: readonly number[];
  gameIds?: readonly number[];
  languages?: readonly string[];
}

type Column = 'user_id' | 'game_id' | 'language';
const FILTERS = [
  ['userIds', 'user_id'],
  ['gameIds', 'game_id'],
  ['languages', 'language'],
] as const;

/**
 * The column whose index serves the page (migration 006): the first of user, game, language that
 * is filtered on exactly one value; none (the whole list, streams_viewers) otherwise.
 */
export function drivingColumn(f: StreamFilters): Column | undefined {
  return FILTERS.find(([key]) => f[key]?.length === 1)?.[1];
}

/**
 * A filter the page's index checks as it walks, but must not be chosen for: `coalesce(column IN
 * (...), false)` (the same rows: no column is null) is an expression that no index holds, so
 * neither store takes an IN list as a set of ranges, which it would then have to sort. PostgreSQL
 * also has no statistics for such an expression and takes it to keep half of the rows, where the
 * bare column's statistics would make a selective list look cheaper to fetch whole and sort than
 * to walk in order: the walk stops after `first` + 1 matches and its length is bounded by the
 * live streams of the page's selector.
 */
function walkFilter(column: Column, values: readonly (number | string)[]) {
  return sql<boolean>`coalesce(${sql.ref(`streams.${column}`)} in (${sql.join(values)}), false)`;
}

function streamsWhere(db: Kysely<Database>, f: StreamFilters) {
  const driving = drivingColumn(f);
  // The game's name in the same query: a primary-key probe of games for each row of the page.
  let q = db
    .selectFrom('streams')
    .leftJoin('games', 'games.id', 'streams.game_id')
    .selectAll('streams')
    .select('games.name as game_name') as SelectQueryBuilder<Database, 'streams' | 'games', StreamListRow>;
  const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
  for (const [key, column] of FILTERS) {
    const values = f[key];
    if (values === undefined) continue;
    if (column === driving) q = q.where(`streams.${column}`, '=', values[0] as never);
    // SQLite, which plans without statistics, would take any equality for an index; PostgreSQL
    // makes a single value a condition of the page's index range, checked on its entries.
    else if (sqlite || values.length > 1) q = q.where(walkFilter(column, values));
    else q = q.where(`streams.${column}`, '=', values[0] as never);
  }
  return q;
}

/** The SQL of one page of live streams (for the plan tests). */
export function streamsPageQuery(db: Kysely<Database>, f: StreamFilters, page: PageQuery) {
  return keysetQuery(streamsWhere(db, f), STREAMS_ORDER, 'desc', page);
}

/** One page of live streams matching `f`, most viewers first. */
export function streamsPage(
  db: Kysely<Database>,
  f: StreamFilters,
  page: PageQuery,
): Promise<Page<StreamListRow>> {
  // A filter with no values (every login given was unknown) matches nothing.
  if (FILTERS.some(([key]) => f[key]?.length === 0)) return Promise.resolve({ rows: [], hasMore: false });
  return keysetPage(streamsWhere(db, f), STREAMS_ORDER, 'desc', page);
}
