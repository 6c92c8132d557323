import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { badRequest } from '../http/errors.ts';
import { readNumericId } from '../http/ids.ts';
import { registerOperation } from '../http/operation.ts';
import {
  booleanParam,
  dateTime,
  exactlyOneSelector,
  listResponse,
  nullable,
  pagingParams,
  type QueryOf,
  readDateTime,
  singleString,
  stringList,
} from '../http/params.ts';
import { refuseUnknownGame } from '../http/rules.ts';
import { CLIP_SELECTORS, type ClipFilters, clipsByIds, clipsPage } from '../store/clips.ts';
import type { ClipRow } from '../store/schema.ts';
import type { UserName } from '../store/users.ts';
import { rfc3339 } from '../wire/datetime.ts';
import type { Links } from '../wire/links.ts';

/** The wire shape of a clip. */
const clipSchema = Type.Object({
  id: Type.String(),
  url: Type.String(),
  embed_url: Type.String(),
  broadcaster_id: Type.String(),
  broadcaster_name: Type.String(),
  creator_id: Type.String(),
  creator_name: Type.String(),
  video_id: Type.String({ description: 'The video the clip was cut from; "" when there is none' }),
  game_id: Type.String(),
  language: Type.String(),
  title: Type.String(),
  view_count: Type.Integer(),
  created_at: dateTime,
  thumbnail_url: Type.String(),
  duration: Type.Number({ description: 'In seconds, to a tenth of a second' }),
  vod_offset: nullable(Type.Integer()),
  is_featured: Type.Boolean(),
});
export type Clip = Static<typeof clipSchema>;

/** `users` holds the broadcaster and the creator when they exist (names are "" otherwise). */
export function clipRowToClip(row: ClipRow, users: ReadonlyMap<number, UserName>, links: Links): Clip {
  return {
    id: row.id,
    url: links.clip(row.id),
    embed_url: links.clipEmbed(row.id),
    broadcaster_id: String(row.broadcaster_id),
    broadcaster_name: users.get(row.broadcaster_id)?.display_name ?? '',
    creator_id: String(row.creator_id),
    creator_name: users.get(row.creator_id)?.display_name ?? '',
    video_id: row.video_id === null ? '' : String(row.video_id),
    game_id: String(row.game_id),
    language: row.language,
    title: row.title,
    view_count: row.view_count,
    created_at: rfc3339(row.created_at),
    thumbnail_url: links.clipThumbnail(row.id),
    // stored in tenths of a second: exact on both stores, one decimal on the wire
    duration: row.duration_ds / 10,
    vod_offset: row.vod_offset,
    is_featured: row.is_featured === 1,
  };
}

/** Spec 8: at most 100 `id` values per request. */
const MAX_IDS = 100;
/** Spec 4.2: without `ended_at`, the period is one week from `started_at`. */
const DEFAULT_PERIOD = 7 * 86400;
/** The three selector kinds of GET /clips (docs/api.md): by ids, or those of a page. */
const SELECTOR_KINDS = ['id', ...CLIP_SELECTORS] as const;

const clipsParams = {
  ...pagingParams,
  id: stringList(MAX_IDS),
  broadcaster_id: singleString,
  game_id: singleString,
  started_at: singleString,
  ended_at: singleString,
  is_featured: booleanParam,
};
type ClipsQuery = QueryOf<typeof clipsParams>;

/** Spec 4.2: "The seconds value is ignored": the instant, truncated to its minute. */
const toMinute = (t: number) => Math.floor(t / 60) * 60;

/** `started_at` / `ended_at` / `is_featured` of GET /clips (docs/api.md), as store filters. */
function readFilters(q: ClipsQuery): ClipFilters {
  const f: ClipFilters = {};
  if (q.is_featured !== undefined) f.isFeatured = q.is_featured;
  // A malformed ended_at is a 400 even when it is ignored (no started_at): it is still a bad value.
  const ended = q.ended_at === undefined ? undefined : toMinute(readDateTime('ended_at', q.ended_at));
  if (q.started_at !== undefined) {
    const from = toMinute(readDateTime('started_at', q.started_at));
    const to = ended ?? from + DEFAULT_PERIOD;
    if (to < from) throw badRequest('The parameter "ended_at" must not be earlier than "started_at"');
    f.period = { from, to };
  }
  return f;
}

/** GET /clips (docs/api.md): clips by ids, by broadcaster or by game. */
export function clipsRoutes(app: FastifyInstance, ctx: AppContext): void {
  registerOperation(app, ctx, {
    path: '/clips',
    summary: 'Get Clips',
    description:
      'Clips by id, by broadcaster or by game (exactly one of the three), optionally within a period and featured or not.',
    access: { token: 'any' },
    query: clipsParams,
    response: listResponse(clipSchema),
    errors: { 404: 'The game in game_id does not exist' },
    async handler(ctx, { query, pages }) {
      const selected = exactlyOneSelector(query, SELECTOR_KINDS);
      const filters = readFilters(query);
      const db = ctx.store.db;

      if (selected.kind === 'id') {
        // Spec 4.2: the cursors apply only to broadcaster and game queries; an id query never
        // issues one, so a cursor here can only be a mistake.
        for (const p of ['after', 'before'] as const)
          if (query[p] !== undefined)
            throw badRequest(`The parameter "${p}" applies only to queries by "broadcaster_id" or "game_id"`);
        const rows = await clipsByIds(db, selected.value, filters);
        const users = await ctx.userNames.byIds(rows.flatMap((r) => [r.broadcaster_id, r.creator_id]));
        return { data: rows.map((r) => clipRowToClip(r, users, ctx.links)), pagination: {} };
      }

      const selector = selected.kind;
      const value = readNumericId(selector, selected.value);
      // The cursor is bound to everything that decides the rows and their order.
      const paging = pages.read(query, {
        [selector]: value,
        started_at: filters.period?.from,
        ended_at: filters.period?.to,
        is_featured: filters.isFeatured,
      });
      const page = await clipsPage(db, { selector, value, ...filters }, paging);
      if (selector === 'game_id')
        await refuseUnknownGame(db, value, page.rows, 'The ID in game_id was not found');
      const users = await ctx.userNames.byIds(page.rows.flatMap((r) => [r.broadcaster_id, r.creator_id]));
      return {
        data: page.rows.map((r) => clipRowToClip(r, users, ctx.links)),
        pagination: pages.pagination(paging, page),
      };
    },
  });
}
