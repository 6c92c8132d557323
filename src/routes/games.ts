import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { badRequest } from '../http/errors.ts';
import { registerOperation } from '../http/operation.ts';
import { dataResponse, listResponse, pagingParams, stringList, valuesTogether } from '../http/params.ts';
import { gamesByLookup, topGames } from '../store/games.ts';
import type { GameRow } from '../store/schema.ts';
import { parseNumericId } from '../wire/ids.ts';
import type { Links } from '../wire/links.ts';

/** The wire shape of a game. */
const gameSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  box_art_url: Type.String({ description: 'With {width} and {height} to fill in' }),
  igdb_id: Type.String({ description: 'The IGDB id; "" when unknown' }),
});
export type Game = Static<typeof gameSchema>;

export function gameRowToGame(row: GameRow, links: Links): Game {
  return { id: String(row.id), name: row.name, box_art_url: links.boxArt(row.id), igdb_id: row.igdb_id };
}

/** Production: up to 100 games per request, ids, names and IGDB ids together. */
const MAX_GAMES = 100;
const GAME_SELECTORS = ['id', 'name', 'igdb_id'] as const;

const gamesParams = {
  id: stringList(MAX_GAMES),
  name: stringList(MAX_GAMES),
  igdb_id: stringList(MAX_GAMES),
};

/**
 * Production ignores ids that are not ids (no game can have one) rather than refusing the request;
 * so does helixd, and such a value never reaches SQL. IGDB ids are numeric too: this also keeps ''
 * (the stored "unknown") from matching every game without one.
 */
const numericOnly = (values: readonly string[] = []) =>
  values.flatMap((v) => {
    const n = parseNumericId(v);
    return n === undefined ? [] : [n];
  });

/**
 * GET /games/top (docs/api.md): games by current viewers, most popular first. GET /games: games by
 * id, exact name or IGDB id.
 */
export function gamesRoutes(app: FastifyInstance, ctx: AppContext): void {
  registerOperation(app, ctx, {
    path: '/games/top',
    summary: 'Get Top Games',
    description: 'Games by current viewers, most popular first.',
    access: { token: 'any' },
    query: pagingParams,
    response: listResponse(gameSchema),
    async handler(ctx, { query, pages }) {
      const paging = pages.read(query, {});
      const page = await topGames(ctx.store.db, paging);
      return {
        data: page.rows.map((r) => gameRowToGame(r, ctx.links)),
        pagination: pages.pagination(paging, page),
      };
    },
  });

  registerOperation(app, ctx, {
    path: '/games',
    summary: 'Get Games',
    description: 'Games by id, exact name or IGDB id, at most 100 values together.',
    access: { token: 'any' },
    query: gamesParams,
    response: dataResponse(gameSchema),
    async handler(ctx, { query }) {
      if (valuesTogether(query, GAME_SELECTORS, MAX_GAMES) === 0)
        throw badRequest('Missing required parameter: at least one of "id", "name", "igdb_id" must be given');
      const rows = await gamesByLookup(ctx.store.db, {
        ids: numericOnly(query.id),
        names: query.name ?? [],
        igdbIds: numericOnly(query.igdb_id).map(String),
      });
      return { data: rows.map((r) => gameRowToGame(r, ctx.links)) };
    },
  });
}
