import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.ts';
import { registerOperation } from '../http/operation.ts';
import {
  listResponseSchema,
  type PagingQuery,
  paginationOf,
  pagingProperties,
  readPaging,
} from '../http/params.ts';
import type { Links } from '../links.ts';
import { topGameKey, topGames } from '../store/games.ts';
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

/** GET /games/top (spec 4.5): games by current viewers, most popular first. */
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
        pagination: paginationOf(ctx, paging, page, topGameKey),
      };
    },
  });
}
