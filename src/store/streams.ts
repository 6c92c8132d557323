import { type Kysely, type Selectable, type SelectQueryBuilder, SqliteAdapter, sql } from 'kysely';
import {
  epochColumn,
  epochOfRows,
  firstMoveAfter,
  movedKeysetPage,
  pageInHand,
  unmovedSince,
} from './moves.ts';
import { listSlots, type Page, type PageQuery, type ShapeValues, shapedPage, withList } from './page.ts';
import type { Database, StreamsTable } from './schema.ts';

/** The order of /streams (the order of /games/top's sums): current viewers, most first; ties by id, higher first. */
export const STREAMS_ORDER = ['streams.viewer_count', 'streams.id'] as const;

/** A live stream with its game's name (null when the game is not in the store). */
export type StreamListRow = Selectable<StreamsTable> & { game_name: string | null };

/**
 * The filters of a /streams query, each a set of values of one column (a row matches one of them);
 * the kinds combine with AND. Absent: no filter on that column. `userIds` holds the users given by
 * id and those given by login. `followedBy`: only the streams of channels this user follows
 * (GET /streams/followed).
 */
export interface StreamFilters {
  userIds?: readonly number[];
  gameIds?: readonly number[];
  languages?: readonly string[];
  followedBy?: number;
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

/**
 * The stream's channel (`userRef`, its user id) is followed by `follower`: one probe of the follows
 * primary key (from_id, to_id) per stream the walk reaches. A correlated subquery, not a join, so
 * that neither store can drive the page from the user's follows, which would find the streams out
 * of page order and sort them: the page stays a walk of a listing index in its order (see
 * drivingColumn), which stops at `first` + 1 matches and reads at most the live streams. On
 * PostgreSQL written as `(select 1 ...) is not null` (a scalar subquery: the primary key makes it one
 * row at most), which its planner cannot estimate and takes to keep nearly every row, as moves.ts's
 * unmovedSince explains; an EXISTS it would plan as a semi-join, hashing the user's follows and
 * sorting the matches.
 */
function followedFilter(follower: number, userRef: string, sqlite: boolean) {
  const probe = sql`select 1 from follows fo where fo.from_id = ${follower} and fo.to_id = ${sql.ref(userRef)}`;
  return sqlite ? sql<boolean>`exists (${probe})` : sql<boolean>`(${probe}) is not null`;
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
  if (f.followedBy !== undefined) q = q.where(followedFilter(f.followedBy, 'streams.user_id', sqlite));
  return q;
}

/**
 * The streams a walk lists in their current order, each with the last move logged (the epoch of a
 * first page): for a first page, all of them; after a cursor, those that have not moved since its
 * epoch (src/store/moves.ts).
 */
function currentStreams(db: Kysely<Database>, f: StreamFilters, page: PageQuery) {
  const q = streamsWhere(db, f);
  const dialect = db.getExecutor().adapter instanceof SqliteAdapter ? 'sqlite' : 'postgres';
  const withEpoch = q.select(epochColumn('stream_moves'));
  return page.after === undefined && page.before === undefined
    ? withEpoch
    : withEpoch.where(unmovedSince('stream_moves', 'stream_id', 'streams.id', page.epoch ?? 0, dialect));
}

/** The order of the streams moved since a walk's epoch, at their values as of it. */
const MOVED_STREAMS_ORDER = ['m.viewer_count', 'm.stream_id'] as const;

/**
 * The streams moved since `epoch` that matched `f` then, at their listed values as of `epoch` (the
 * values their first move after it logged) and their other fields as they are now.
 */
function movedStreams(db: Kysely<Database>, f: StreamFilters, epoch: number) {
  let q = db
    .selectFrom('stream_moves as m')
    .innerJoin('streams', 'streams.id', 'm.stream_id')
    .leftJoin('games', 'games.id', 'm.game_id')
    .select([
      'streams.id',
      'm.user_id',
      'm.game_id',
      'streams.title',
      'm.viewer_count',
      'm.language',
      'streams.started_at',
      'streams.tags',
      'streams.is_mature',
      'games.name as game_name',
    ])
    .where('m.seq', '>', epoch)
    .where(firstMoveAfter('stream_moves', 'stream_id', epoch));
  for (const [key, column] of FILTERS) {
    const values = f[key];
    if (values !== undefined) q = q.where(`m.${column}`, 'in', values as never);
  }
  // The channel is followed now: a follow made or ended during a walk counts as of the page.
  if (f.followedBy !== undefined)
    q = q.where(followedFilter(f.followedBy, 'm.user_id', db.getExecutor().adapter instanceof SqliteAdapter));
  return q as unknown as SelectQueryBuilder<Database, never, StreamListRow>;
}

/**
 * One page of live streams matching `f`, most viewers first: a first page in the current order, a
 * page after a cursor in the order of its walk's epoch (src/store/moves.ts).
 */
export async function streamsPage(
  db: Kysely<Database>,
  f: StreamFilters,
  page: PageQuery,
): Promise<Page<StreamListRow>> {
  // A filter with no values (every login given was unknown) matches nothing.
  if (FILTERS.some(([key]) => f[key]?.length === 0)) return { rows: [], hasMore: false };
  if (f.followedBy !== undefined && FILTERS.every(([key]) => f[key] === undefined)) {
    const follows = await followsOf(db, f.followedBy);
    if (follows.length <= FOLLOWS_IN_HAND) return followedPage(db, f, follows, page);
  }
  // Built once per shape (src/store/page.ts shapedRows): each list's values are slots of their own,
  // so a list's length is part of the shape.
  let values: ShapeValues = { followedBy: f.followedBy };
  for (const [key] of FILTERS) values = withList(values, key, f[key]);
  const slotted = (v: ShapeValues): StreamFilters => {
    const out: { -readonly [K in keyof StreamFilters]: StreamFilters[K] } = {};
    for (const [key] of FILTERS) out[key] = listSlots<string | number>(v, key, f[key]) as never;
    if (v.followedBy !== undefined) out.followedBy = v.followedBy as number;
    return out;
  };
  if (page.after === undefined && page.before === undefined) {
    const first = await shapedPage(
      db,
      'streams, first page',
      values,
      (v) => currentStreams(db, slotted(v), page),
      STREAMS_ORDER,
      'desc',
      page,
    );
    return { ...first, epoch: epochOfRows(first.rows) };
  }
  return movedKeysetPage(
    db,
    {
      name: 'streams',
      values: { ...values, epoch: page.epoch ?? 0 },
      unmoved: (v) =>
        currentStreams(db, slotted(v), {
          ...page,
          epoch: v.epoch as number,
        }) as unknown as SelectQueryBuilder<Database, never, StreamListRow>,
      moved: (v) => movedStreams(db, slotted(v), v.epoch as number),
      unmovedColumns: STREAMS_ORDER,
      movedColumns: MOVED_STREAMS_ORDER,
      fields: ['viewer_count', 'id'],
    },
    'desc',
    page,
  );
}

/**
 * The most follows of a user from which GET /streams/followed reads the page (followedPage): up to
 * this many, the followed channels' live streams are probed by their unique user_id and ordered in
 * hand, a cost of the user's follows; beyond, the page is the walk of streams_viewers with a probe
 * of follows per stream, which stops after `first` + 1 matches and reads at most the live streams.
 * Most users follow far fewer channels than there are live streams, and few of them are live: the
 * walk then reads every live stream to find them (bench/README.md, "GET /streams/followed").
 */
export const FOLLOWS_IN_HAND = 1000;

/** The channels `follower` follows, at most FOLLOWS_IN_HAND + 1: a range of the follows primary key. */
function followsOf(db: Kysely<Database>, follower: number): Promise<{ to_id: number }[]> {
  return db
    .selectFrom('follows')
    .select('to_id')
    .where('from_id', '=', follower)
    .limit(FOLLOWS_IN_HAND + 1)
    .execute();
}

/**
 * A page of GET /streams/followed from the user's follows (`follows`, at most FOLLOWS_IN_HAND):
 * their live streams by the streams' unique user_id, each row's game by primary key, ordered and
 * cut in hand (pageInHand), at the walk's epoch as every /streams page: a first page reads the
 * streams as they are; a page after a cursor reads those not moved since its epoch, and the moved
 * ones at their values as of it (src/store/moves.ts).
 */
async function followedPage(
  db: Kysely<Database>,
  f: StreamFilters,
  follows: readonly { to_id: number }[],
  page: PageQuery,
): Promise<Page<StreamListRow>> {
  if (follows.length === 0) return { rows: [], hasMore: false };
  const fields = ['viewer_count', 'id'];
  // A plain IN list: a probe of the unique user_id per followed channel (streamsWhere's filter of
  // several users is for a walk in page order, which this is not).
  const streams = db
    .selectFrom('streams')
    .leftJoin('games', 'games.id', 'streams.game_id')
    .selectAll('streams')
    .select('games.name as game_name')
    .select(epochColumn('stream_moves'))
    .where(
      'streams.user_id',
      'in',
      follows.map((r) => r.to_id),
    );
  const first = page.after === undefined && page.before === undefined;
  if (first) {
    const rows = await streams.execute();
    return pageInHand(rows, fields, 'desc', page, epochOfRows(rows));
  }
  const dialect = db.getExecutor().adapter instanceof SqliteAdapter ? 'sqlite' : 'postgres';
  const unmoved = await streams
    .where(unmovedSince('stream_moves', 'stream_id', 'streams.id', page.epoch ?? 0, dialect))
    .execute();
  // Nothing logged after the epoch: no stream left out has moved (movedKeysetPage says why).
  const moved =
    unmoved.length > 0 && epochOfRows(unmoved) <= (page.epoch ?? 0)
      ? []
      : await movedStreams(db, f, page.epoch ?? 0).execute();
  return pageInHand([...unmoved, ...moved], fields, 'desc', page, page.epoch);
}
