import { type Kysely, sql } from 'kysely';
import type { Key } from '../http/cursor.ts';
import { keysetPage, type Page, type PageQuery } from './page.ts';
import type { Database, GameRow } from './schema.ts';

/** The order of /games/top: current viewers, most first; ties by id, higher first. */
export const TOP_GAMES_ORDER = ['viewer_count', 'id'] as const;
export const topGameKey = (g: Pick<GameRow, 'viewer_count' | 'id'>): Key => [g.viewer_count, g.id];

// `stream_count > 0` is the predicate of the partial index games_top_live (migration 004b): the
// query must say it in these words for the stores to use that index. The 0 is written into the SQL,
// not bound: SQLite would check a bound value against the index's predicate, and a statement whose
// plan read a bound value is prepared again every time that value is bound.
const liveGames = (db: Kysely<Database>) =>
  db.selectFrom('games').selectAll().where('stream_count', '>', sql.lit(0));

/** Games with at least one live stream, by their streams' summed viewers (index games_top_live). */
export function topGames(db: Kysely<Database>, page: PageQuery): Promise<Page<GameRow>> {
  return keysetPage(liveGames(db), TOP_GAMES_ORDER, 'desc', page);
}

/** Whether a game with this id exists (the primary key). */
export async function gameExists(db: Kysely<Database>, id: number): Promise<boolean> {
  return (await db.selectFrom('games').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
}
