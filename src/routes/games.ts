import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.ts';
import { badRequest } from '../http/errors.ts';
import { registerOperation } from '../http/operation.ts';
import {
  dataResponseSchema,
  listResponseSchema,
  type PagingQuery,
  paginationOf,
  pagingProperties,
  readPaging,
  stringList,
  valuesTogether,
} from '../http/params.ts';
import type { Links } from '../links.ts';
import { gamesByLookup, topGames } from '../store/games.ts';
import { parseNumericId } from '../store/ids.ts';
import type { GameRow } from '../store/schema.ts';

export interface Game {
  id: string;
  name: string;
  box_art_url: string;
  igdb_id: string;
}

export function gameRowToGame(row: GameRow, links: Links): Game {
  return { id: String(row.id), name: row.name, box_art_url: links.boxArt(row.id), igdb_id: row.igdb_id };
}

const gameSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    box_art_url: { type: 'string' },
    igdb_id: { type: 'string' },
  },
  required: ['id', 'name', 'box_art_url', 'igdb_id'],
} as const;

/** Production: up to 100 games per request, ids, names and IGDB ids together. */
const MAX_GAMES = 100;
const GAME_SELECTORS = ['id', 'name', 'igdb_id'] as const;

interface GamesQuery {
  id?: string[];
  name?: string[];
  igdb_id?: string[];
}

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
 * GET /games/top (spec 4.5): games by current viewers, most popular first. GET /games: games by
 * id, exact name or IGDB id.
 */
export function gamesRoutes(app: FastifyInstance, ctx: AppContext): void {
  registerOperation<PagingQuery>(app, ctx, {
    path: '/games/top',
    access: { token: 'any' },
    schema: {
      querystring: { type: 'object', properties: pagingProperties },
      response: listResponseSchema(gameSchema),
    },
    async handler(ctx, { query }) {
      const paging = readPaging(ctx, '/games/top', query, {});
      const page = await topGames(ctx.store.db, paging);
      return {
        data: page.rows.map((r) => gameRowToGame(r, ctx.links)),
        pagination: paginationOf(ctx, paging, page),
      };
    },
  });

  registerOperation<GamesQuery>(app, ctx, {
    path: '/games',
    access: { token: 'any' },
    schema: {
      querystring: {
        type: 'object',
        properties: {
          id: stringList(MAX_GAMES),
          name: stringList(MAX_GAMES),
          igdb_id: stringList(MAX_GAMES),
        },
      },
      response: dataResponseSchema(gameSchema),
    },
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
