import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import { nowSeconds } from '../clock.ts';
import type { AppContext } from '../context.ts';
import { tokenUser } from '../http/access.ts';
import { badRequest, notFound, unauthorized } from '../http/errors.ts';
import { readNumericId, readNumericIds } from '../http/ids.ts';
import { operation, registerOperations } from '../http/operation.ts';
import {
  cursorParam,
  DEFAULT_FIRST,
  dataResponse,
  dateTime,
  exactlyOneSelector,
  listResponse,
  MAX_FIRST,
  nullable,
  singleString,
  stringEnum,
  stringList,
} from '../http/params.ts';
import { refuseUnknownGame } from '../http/rules.ts';
import { deleteVideos } from '../records/write.ts';
import { VIDEO_TYPES } from '../store/schema.ts';
import type { UserName } from '../store/users.ts';
import { VIDEO_SELECTORS, VIDEO_SORTS, type VideoRow, videosByIds, videosPage } from '../store/videos.ts';
import { rfc3339 } from '../wire/datetime.ts';
import { hms, type Links } from '../wire/links.ts';

/** A stretch of a video whose sound is muted, in seconds. */
const mutedSegmentSchema = Type.Object({ duration: Type.Integer(), offset: Type.Integer() });
export type MutedSegment = Static<typeof mutedSegmentSchema>;

/** The wire shape of a video. */
const videoSchema = Type.Object({
  id: Type.String(),
  stream_id: nullable(
    Type.String({ description: 'The stream it recorded; null for uploads and highlights' }),
  ),
  user_id: Type.String(),
  user_login: Type.String(),
  user_name: Type.String(),
  title: Type.String(),
  description: Type.String(),
  created_at: dateTime,
  published_at: dateTime,
  url: Type.String(),
  thumbnail_url: Type.String(),
  viewable: Type.Literal('public'),
  view_count: Type.Integer(),
  language: Type.String(),
  type: Type.String(),
  duration: Type.String({ description: 'As Helix writes it, e.g. 1h2m3s' }),
  muted_segments: nullable(Type.Array(mutedSegmentSchema)),
});
export type Video = Static<typeof videoSchema>;

/** `users` holds the owner when it exists (login and name are "" otherwise). */
export function videoRowToVideo(row: VideoRow, users: ReadonlyMap<number, UserName>, links: Links): Video {
  const owner = users.get(row.user_id);
  return {
    id: String(row.id),
    stream_id: row.stream_id === null ? null : String(row.stream_id),
    user_id: String(row.user_id),
    user_login: owner?.login ?? '',
    user_name: owner?.display_name ?? '',
    title: row.title,
    description: row.description,
    created_at: rfc3339(row.created_at),
    published_at: rfc3339(row.published_at),
    url: links.video(row.id),
    thumbnail_url: links.videoThumbnail(owner?.login ?? '', row.id),
    viewable: 'public',
    view_count: row.view_count,
    language: row.language,
    type: row.type,
    duration: hms(row.duration_s),
    muted_segments: row.muted_segments === null ? null : (JSON.parse(row.muted_segments) as MutedSegment[]),
  };
}

/** Spec 8: at most 100 `id` values per request. */
const MAX_IDS = 100;
/** `period` of GET /videos (docs/api.md; default `all`): how far back from the clock, on created_at. */
const PERIODS = ['all', 'day', 'week', 'month'] as const;
const PERIOD_SECONDS = { day: 86400, week: 7 * 86400, month: 30 * 86400 } as const;
/** `type` of GET /videos (docs/api.md; default `all`). */
const TYPES = ['all', ...VIDEO_TYPES] as const;
/** The selectors of GET /videos (docs/api.md): by ids, or those of a page. */
const SELECTOR_KINDS = ['id', ...VIDEO_SELECTORS] as const;
/**
 * With `id`, none of these may be used, except at its documented default value: a parameter sent
 * at its default changes nothing, and client libraries send them always (pyTwitchAPI sends
 * `first=20&period=all&sort=time&type=all` with every id lookup).
 */
const NOT_WITH_ID = ['language', 'period', 'sort', 'type', 'first', 'after', 'before'] as const;
const DEFAULTS_WITH_ID: Partial<Record<(typeof NOT_WITH_ID)[number], unknown>> = {
  period: 'all',
  sort: 'time',
  type: 'all',
  first: DEFAULT_FIRST,
};

const videosParams = {
  id: stringList(MAX_IDS),
  user_id: singleString,
  game_id: singleString,
  language: singleString,
  period: stringEnum(PERIODS),
  sort: stringEnum(VIDEO_SORTS),
  type: stringEnum(TYPES),
  // no default here: with `id`, a `first` that was given is a 400 (docs/api.md)
  first: Type.Integer({ minimum: 1, maximum: MAX_FIRST, description: `Default ${DEFAULT_FIRST}` }),
  after: cursorParam,
  before: cursorParam,
};

/** Production: DELETE /videos takes at most 5 ids. */
const MAX_DELETE = 5;

/**
 * Production's 401 when a video is not the token user's (Delete Videos): none of the videos is
 * deleted then.
 */
const NOT_YOURS = 'The caller is not authorized to delete the specified video.';

/** GET /videos (docs/api.md): videos by ids, by owner or by game; DELETE /videos: the owner's. */
export function videosRoutes(app: FastifyInstance, ctx: AppContext): void {
  registerOperations(app, ctx, [
    operation({
      path: '/videos',
      summary: 'Get Videos',
      description:
        'Videos by id, by owner or by game (exactly one of the three); by owner or game, filtered by language, period and type, in the order `sort` asks.',
      access: { token: 'any' },
      query: videosParams,
      response: listResponse(videoSchema),
      errors: { 404: 'None of the ids exists, or the game in game_id does not exist' },
      async handler(ctx, { query, pages }) {
        const selected = exactlyOneSelector(query, SELECTOR_KINDS);
        const db = ctx.store.db;

        if (selected.kind === 'id') {
          for (const p of NOT_WITH_ID)
            if (query[p] !== undefined && query[p] !== DEFAULTS_WITH_ID[p])
              throw badRequest(
                p in DEFAULTS_WITH_ID
                  ? `The parameter "${p}" cannot be used with "id" except at its default value, ${DEFAULTS_WITH_ID[p]}`
                  : `The parameter "${p}" cannot be used with "id"`,
              );
          const rows = await videosByIds(db, readNumericIds('id', selected.value));
          // Production: 404 only when none of the ids exists; ids that do not exist are left out.
          if (rows.length === 0) throw notFound('The ID in the id query parameter was not found');
          const users = await ctx.userNames.byIds(rows.map((r) => r.user_id));
          return { data: rows.map((r) => videoRowToVideo(r, users, ctx.links)), pagination: {} };
        }

        const selector = selected.kind;
        const value = readNumericId(selector, selected.value);
        // Spec 8: one language value per request (a comma-joined list is several).
        if (query.language?.includes(','))
          throw badRequest('The parameter "language" takes one value: several languages were given');
        const sort = query.sort ?? 'time';
        const type = query.type === undefined || query.type === 'all' ? undefined : query.type;
        const period = query.period === undefined || query.period === 'all' ? undefined : query.period;
        // The cursor is bound to everything that decides the rows and their order; `period` by name,
        // so that a cursor stays valid while the window moves with the clock.
        const paging = pages.read(
          { first: query.first ?? DEFAULT_FIRST, after: query.after, before: query.before },
          { [selector]: value, language: query.language, period, sort, type },
        );
        const page = await videosPage(
          db,
          {
            selector,
            value,
            sort,
            language: query.language,
            type,
            since: period === undefined ? undefined : nowSeconds(ctx.clock) - PERIOD_SECONDS[period],
          },
          paging,
        );
        if (selector === 'game_id')
          await refuseUnknownGame(
            db,
            value,
            page.rows,
            'The ID in the game_id query parameter was not found',
          );
        const users = await ctx.userNames.byIds(page.rows.map((r) => r.user_id));
        return {
          data: page.rows.map((r) => videoRowToVideo(r, users, ctx.links)),
          pagination: pages.pagination(paging, page),
        };
      },
    }),
    operation({
      method: 'DELETE',
      path: '/videos',
      summary: 'Delete Videos',
      description:
        "The token user's videos by id, at most 5, with their stream markers; the clips cut from them stay, their video_id cleared. Ids of no video are passed over; a video of another user refuses the whole request.",
      access: { token: 'user', anyScope: ['channel:manage:videos'] },
      query: { id: stringList(MAX_DELETE) },
      response: dataResponse(Type.String({ description: 'The id of a video deleted' })),
      async handler(ctx, { query, principal }) {
        const me = tokenUser(principal);
        if (!query.id?.length) throw badRequest('Missing required parameter "id"');
        const ids = readNumericIds('id', query.id);
        // All or none, as production: one video of another user and nothing is deleted.
        const deleted = await deleteVideos(ctx.store, ids, (owners) => {
          for (const owner of owners.values()) if (owner !== me) throw unauthorized(NOT_YOURS);
        });
        return { data: deleted.map(String) };
      },
    }),
  ]);
}
