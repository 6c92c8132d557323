import { type Kysely, type SelectQueryBuilder, SqliteAdapter, sql } from 'kysely';
import { RECOUNT } from './migrations/008_game_live_counts.ts';
import {
  epochColumn,
  epochOfRows,
  firstMoveAfter,
  forgetAllMoves,
  movedKeysetPage,
  unmovedSince,
} from './moves.ts';
import { type Page, type PageQuery, shapedPage } from './page.ts';
import type { Database, GameRow } from './schema.ts';

/** The order of /games/top: current viewers, most first; ties by id, higher first. */
export const TOP_GAMES_ORDER = ['viewer_count', 'id'] as const;

// `stream_count > 0` is the predicate of the partial index games_top_live (migration 004b): the
// query must say it in these words for the stores to use that index. The 0 is written into the SQL,
// not bound: SQLite would check a bound value against the index's predicate, and a statement whose
// plan read a bound value is prepared again every time that value is bound.
const liveGames = (db: Kysely<Database>) =>
  db.selectFrom('games').selectAll().where('stream_count', '>', sql.lit(0));

/**
 * The games a walk lists in their current order, each with the last move logged (the epoch of a
 * first page): for a first page, all of them; after a cursor, those that have not moved since its
 * epoch (src/store/moves.ts).
 */
function currentTopGames(db: Kysely<Database>, page: PageQuery) {
  const dialect = db.getExecutor().adapter instanceof SqliteAdapter ? 'sqlite' : 'postgres';
  const withEpoch = liveGames(db).select(epochColumn('game_moves'));
  return page.after === undefined && page.before === undefined
    ? withEpoch
    : withEpoch.where(unmovedSince('game_moves', 'game_id', 'games.id', page.epoch ?? 0, dialect));
}

const MOVED_GAMES_ORDER = ['m.viewer_count', 'm.game_id'] as const;

/** The games moved since `epoch` that were live then, at their counters as of `epoch`. */
function movedTopGames(db: Kysely<Database>, epoch: number) {
  return db
    .selectFrom('game_moves as m')
    .innerJoin('games', 'games.id', 'm.game_id')
    .select(['games.id', 'games.name', 'games.igdb_id', 'games.owner_id', 'm.viewer_count', 'm.stream_count'])
    .where('m.seq', '>', epoch)
    .where(firstMoveAfter('game_moves', 'game_id', epoch))
    .where('m.stream_count', '>', sql.lit(0)) as unknown as SelectQueryBuilder<Database, never, GameRow>;
}

/**
 * Games with at least one live stream, by their streams' summed viewers (index games_top_live): a
 * first page in the current order, a page after a cursor in the order of its walk's epoch.
 */
export async function topGames(db: Kysely<Database>, page: PageQuery): Promise<Page<GameRow>> {
  if (page.after === undefined && page.before === undefined) {
    // It binds no value: built once per `first` (src/store/page.ts shapedPage).
    const first = await shapedPage(
      db,
      'top games, first page',
      {},
      () => currentTopGames(db, page),
      TOP_GAMES_ORDER,
      'desc',
      page,
    );
    return { ...first, epoch: epochOfRows(first.rows) };
  }
  return movedKeysetPage(
    db,
    {
      name: 'top games',
      values: { epoch: page.epoch ?? 0 },
      unmoved: (v) =>
        currentTopGames(db, { ...page, epoch: v.epoch as number }) as unknown as SelectQueryBuilder<
          Database,
          never,
          GameRow
        >,
      moved: (v) => movedTopGames(db, v.epoch as number),
      unmovedColumns: TOP_GAMES_ORDER,
      movedColumns: MOVED_GAMES_ORDER,
      fields: ['viewer_count', 'id'],
    },
    'desc',
    page,
  );
}

/** Whether a game with this id exists (the primary key). */
export async function gameExists(db: Kysely<Database>, id: number): Promise<boolean> {
  return (await db.selectFrom('games').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
}

/** What GET /games looks games up by; any of them may be empty. */
export interface GameLookup {
  ids: readonly number[];
  /** exact names: case and spaces as stored */
  names: readonly string[];
  igdbIds: readonly string[];
}

/**
 * GET /games: the games with any of the given ids, names or IGDB ids, in one query, in the order
 * asked: ids, then names, then IGDB ids, each game once, at its first mention. Names and IGDB ids
 * need not be unique: every game that has one is returned, those of one value by id.
 *
 * One SELECT per kind of key, joined by UNION ALL: each is a probe of its index (the primary key,
 * games_name, games_igdb: migration 005). An OR of the three lists would let PostgreSQL read the
 * table whole instead; a game named by several lists comes back more than once and is kept once.
 */
export async function gamesByLookup(db: Kysely<Database>, q: GameLookup): Promise<GameRow[]> {
  const ids = [...new Set(q.ids)];
  const names = [...new Set(q.names)];
  const igdbIds = [...new Set(q.igdbIds)];
  const games = () => db.selectFrom('games').selectAll();
  const selects = [
    ...(ids.length > 0 ? [games().where('id', 'in', ids)] : []),
    ...(names.length > 0 ? [games().where('name', 'in', names)] : []),
    ...(igdbIds.length > 0 ? [games().where('igdb_id', 'in', igdbIds)] : []),
  ];
  const [first, ...rest] = selects;
  if (first === undefined) return [];
  const found = await rest.reduce((q, next) => q.unionAll(next), first).execute();
  const rows = [...new Map(found.map((r) => [r.id, r])).values()].sort((a, b) => a.id - b.id);
  const ordered = new Set<GameRow>();
  const addMatches = <V>(values: readonly V[], keyOf: (r: GameRow) => V) => {
    const byKey = new Map<V, GameRow[]>();
    for (const r of rows) byKey.set(keyOf(r), [...(byKey.get(keyOf(r)) ?? []), r]);
    for (const v of values) for (const r of byKey.get(v) ?? []) ordered.add(r);
  };
  addMatches(ids, (r) => r.id);
  addMatches(names, (r) => r.name);
  addMatches(igdbIds, (r) => r.igdb_id);
  return [...ordered];
}

/**
 * Sets every game's viewer and stream counts from the streams table. Triggers keep them true on
 * every write (migration 008); a bulk load that writes games with counts of their own (the demo
 * generator) calls this once after, which costs one pass over the games. It forgets the moves its
 * writes logged (migration 013).
 */
export async function recountLiveGames(db: Kysely<Database>): Promise<void> {
  await sql.raw(RECOUNT).execute(db);
  // A bulk load's writes, before any walk of the listings: not moves a walk must see through.
  await forgetAllMoves(db);
}
