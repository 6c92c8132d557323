// Rules of the request that several routes share, written once (src/routes/ files do not import
// one another).
import type { Kysely } from 'kysely';
import { gameExists } from '../store/games.ts';
import type { Database } from '../store/schema.ts';
import { notFound } from './errors.ts';

/**
 * A listing by `game_id` (GET /clips, GET /videos): a game that does not exist is a 404 with the
 * operation's `message` (Helix words it differently for each); one that exists with no rows,
 * or none that pass the filters, is an empty page. The store is asked only for an empty page: a
 * page with rows names its game.
 */
export async function refuseUnknownGame(
  db: Kysely<Database>,
  gameId: number,
  rows: readonly unknown[],
  message: string,
): Promise<void> {
  if (rows.length === 0 && !(await gameExists(db, gameId))) throw notFound(message);
}
