import type { Kysely } from 'kysely';
import type { Key } from '../http/cursor.ts';
import { keysetPage, type Page, type PageQuery } from './page.ts';
import type { Database, GameRow } from './schema.ts';

/** The order of /games/top: current viewers, most first; ties by id, higher first. */
export const TOP_GAMES_ORDER = ['viewer_count', 'id'] as const;
export const topGameKey = (g: Pick<GameRow, 'viewer_count' | 'id'>): Key => [g.viewer_count, g.id];

// `stream_count > 0` is the predicate of the partial index games_top_live (migration 004b): the
// query must say it in these words for the stores to use that index.
const liveGames = (db: Kysely<Database>) => db.selectFrom('games').selectAll().where('stream_count', '>', 0);

/** Games with at least one live stream, by their streams' summed viewers (index games_top_live). */
export function topGames(db: Kysely<Database>, page: PageQuery): Promise<Page<GameRow>> {
  return keysetPage(liveGames(db), TOP_GAMES_ORDER, 'desc', page);
}
