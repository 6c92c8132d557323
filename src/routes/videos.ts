import type { FastifyInstance } from 'fastify';
import { nowSeconds, rfc3339 } from '../clock.ts';
import type { AppContext } from '../context.ts';
import { badRequest, notFound } from '../http/errors.ts';
import { readNumericId, readNumericIds } from '../http/ids.ts';
import { registerOperation } from '../http/operation.ts';
import {
  cursorParamSchema,
  DEFAULT_FIRST,
  exactlyOneSelector,
  listResponseSchema,
  MAX_FIRST,
  paginationOf,
  readPaging,
  singleString,
  stringList,
} from '../http/params.ts';
import { hms, type Links } from '../links.ts';
import { gameExists } from '../store/games.ts';
import { VIDEO_TYPES } from '../store/schema.ts';
import type { UserName } from '../store/users.ts';
import { VIDEO_SELECTORS, VIDEO_SORTS, type VideoRow, videosByIds, videosPage } from '../store/videos.ts';

export interface MutedSegment {
  duration: number;
  offset: number;
}

export interface Video {
  id: string;
  stream_id: string | null;
  user_id: string;
  user_login: string;
  user_name: string;
  title: string;
  description: string;
  created_at: string;
  published_at: string;
  url: string;
  thumbnail_url: string;
  viewable: 'public';
  view_count: number;
  language: string;
  type: string;
  duration: string;
  muted_segments: MutedSegment[] | null;
}

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

const videoSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    stream_id: { type: ['string', 'null'] },
    user_id: { type: 'string' },
    user_login: { type: 'string' },
    user_name: { type: 'string' },
    title: { type: 'string' },
    description: { type: 'string' },
    created_at: { type: 'string' },
    published_at: { type: 'string' },
    url: { type: 'string' },
    thumbnail_url: { type: 'string' },
    viewable: { type: 'string' },
    view_count: { type: 'integer' },
    language: { type: 'string' },
    type: { type: 'string' },
    duration: { type: 'string' },
    muted_segments: {
      type: ['array', 'null'],
      items: {
        type: 'object',
        properties: { duration: { type: 'integer' }, offset: { type: 'integer' } },
        required: ['duration', 'offset'],
      },
    },
  },
  required: [
    'id',
    'stream_id',
    'user_id',
    'user_login',
    'user_name',
    'title',
    'description',
    'created_at',
    'published_at',
    'url',
    'thumbnail_url',
    'viewable',
    'view_count',
    'language',
    'type',
    'duration',
    'muted_segments',
  ],
} as const;

/** Spec 8: at most 100 `id` values per request. */
const MAX_IDS = 100;
/** `period` of spec 4.3 (default `all`): how far back from the server clock, on created_at. */
const PERIODS = ['all', 'day', 'week', 'month'] as const;
const PERIOD_SECONDS = { day: 86400, week: 7 * 86400, month: 30 * 86400 } as const;
/** `type` of spec 4.3 (default `all`). */
const TYPES = ['all', ...VIDEO_TYPES] as const;
/** The selectors of spec 4.3, in the order messages name them. */
const SELECTOR_KINDS = ['game_id', 'id', 'user_id'] as const;
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

interface VideosQuery {
  id?: string[];
  user_id?: string;
  game_id?: string;
  language?: string;
  period?: (typeof PERIODS)[number];
  sort?: (typeof VIDEO_SORTS)[number];
  type?: (typeof TYPES)[number];
  first?: number;
  after?: string;
  before?: string;
}

/** GET /videos (spec 4.3): videos by ids, by owner or by game. */
export function videosRoutes(app: FastifyInstance, ctx: AppContext): void {
  registerOperation<VideosQuery>(app, ctx, {
    path: '/videos',
    access: { token: 'any' },
    schema: {
      querystring: {
        type: 'object',
        properties: {
          id: stringList(MAX_IDS),
          user_id: singleString,
          game_id: singleString,
          language: singleString,
          period: { type: 'string', enum: PERIODS },
          sort: { type: 'string', enum: VIDEO_SORTS },
          type: { type: 'string', enum: TYPES },
          // no default here: with `id`, a `first` that was given is a 400 (spec 4.3)
          first: { type: 'integer', minimum: 1, maximum: MAX_FIRST },
          after: cursorParamSchema,
          before: cursorParamSchema,
        },
      },
      response: listResponseSchema(videoSchema),
    },
    async handler(ctx, { query }) {
      exactlyOneSelector(query, SELECTOR_KINDS);
      const db = ctx.store.db;

      if (query.id !== undefined) {
        for (const p of NOT_WITH_ID)
          if (query[p] !== undefined && query[p] !== DEFAULTS_WITH_ID[p])
            throw badRequest(
              p in DEFAULTS_WITH_ID
                ? `The parameter "${p}" cannot be used with "id" except at its default value, ${DEFAULTS_WITH_ID[p]}`
                : `The parameter "${p}" cannot be used with "id"`,
            );
        const rows = await videosByIds(db, readNumericIds('id', query.id));
        // Production: 404 only when none of the ids exists; ids that do not exist are left out.
        if (rows.length === 0) throw notFound('The ID in the id query parameter was not found');
        const users = await ctx.userNames.byIds(rows.map((r) => r.user_id));
        return { data: rows.map((r) => videoRowToVideo(r, users, ctx.links)), pagination: {} };
      }

      const selector = VIDEO_SELECTORS.find(
        (s) => query[s] !== undefined,
      ) as (typeof VIDEO_SELECTORS)[number];
      const value = readNumericId(selector, query[selector] as string);
      // Spec 8: one language value per request (a comma-joined list is several).
      if (query.language?.includes(','))
        throw badRequest('The parameter "language" takes one value: several languages were given');
      const sort = query.sort ?? 'time';
      const type = query.type === undefined || query.type === 'all' ? undefined : query.type;
      const period = query.period === undefined || query.period === 'all' ? undefined : query.period;
      // The cursor is bound to everything that decides the rows and their order; `period` by name,
      // so that a cursor stays valid while the window moves with the clock.
      const paging = readPaging(
        ctx,
        '/videos',
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
      // A game that does not exist is a 404; one that exists with no videos (or none that pass the
      // filters) is an empty page. Asked only for an empty page: a page with rows names its game.
      if (page.rows.length === 0 && selector === 'game_id' && !(await gameExists(db, value)))
        throw notFound('The ID in the game_id query parameter was not found');
      const users = await ctx.userNames.byIds(page.rows.map((r) => r.user_id));
      return {
        data: page.rows.map((r) => videoRowToVideo(r, users, ctx.links)),
        pagination: paginationOf(ctx, paging, page),
      };
    },
  });
}
