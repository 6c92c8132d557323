import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { tokenUser } from '../http/access.ts';
import { badRequest, unauthorized } from '../http/errors.ts';
import { readNumericIds, readRequiredId } from '../http/ids.ts';
import { registerOperation } from '../http/operation.ts';
import {
  cursorParam,
  dateTime,
  firstParamOf,
  listResponse,
  pagingParams,
  refuseBefore,
  singleString,
  stringEnum,
  stringList,
} from '../http/params.ts';
import { type StreamFilters, type StreamListRow, streamsPage } from '../store/streams.ts';
import { type UserName, userIdsByLogins } from '../store/users.ts';
import { rfc3339 } from '../wire/datetime.ts';
import type { Links } from '../wire/links.ts';

/** The wire shape of a live stream, in Helix's field order (its reference and what it sends). */
const streamSchema = Type.Object({
  id: Type.String(),
  user_id: Type.String(),
  user_login: Type.String(),
  user_name: Type.String(),
  game_id: Type.String(),
  game_name: Type.String(),
  type: Type.Literal('live', { description: 'Every stream helixd holds is live' }),
  title: Type.String(),
  tags: Type.Array(Type.String()),
  viewer_count: Type.Integer(),
  started_at: dateTime,
  language: Type.String(),
  thumbnail_url: Type.String({ description: 'With {width} and {height} to fill in' }),
  tag_ids: Type.Array(Type.String(), {
    maxItems: 0,
    description: 'Always empty: Helix replaced the platform tag ids with `tags`',
  }),
  is_mature: Type.Boolean(),
});
export type Stream = Static<typeof streamSchema>;

/** `users` holds the broadcaster when it exists (login and name are "" otherwise). */
export function streamRowToStream(
  row: StreamListRow,
  users: ReadonlyMap<number, UserName>,
  links: Links,
): Stream {
  const owner = users.get(row.user_id);
  return {
    id: String(row.id),
    user_id: String(row.user_id),
    user_login: owner?.login ?? '',
    user_name: owner?.display_name ?? '',
    game_id: String(row.game_id),
    game_name: row.game_name ?? '',
    // every row of the table is a live stream
    type: 'live',
    title: row.title,
    tags: JSON.parse(row.tags) as string[],
    viewer_count: row.viewer_count,
    started_at: rfc3339(row.started_at),
    language: row.language,
    thumbnail_url: links.streamThumbnail(owner?.login ?? ''),
    // Helix deprecated the platform tag ids for `tags` and answers an empty list
    tag_ids: [],
    is_mature: row.is_mature === 1,
  };
}

/** Production: at most 100 values of each of user_id, user_login, game_id and language. */
const MAX_VALUES = 100;
/** `type`: `all` (default) or `live`; every stream helixd holds is live, so both list the same. */
const TYPES = ['all', 'live'] as const;

const streamsParams = {
  ...pagingParams,
  user_id: stringList(MAX_VALUES),
  user_login: stringList(MAX_VALUES),
  game_id: stringList(MAX_VALUES),
  language: stringList(MAX_VALUES),
  type: stringEnum(TYPES),
};

/** A repeatable text parameter: no empty value, no comma-joined list (several values are repeated). */
function readTexts(name: string, values: readonly string[]): string[] {
  for (const v of values) {
    if (v === '') throw badRequest(`The parameter "${name}" was malformed: a value must not be empty`);
    if (v.includes(','))
      throw badRequest(
        `The parameter "${name}" was malformed: give each value as its own "${name}" parameter`,
      );
  }
  return values as string[];
}

/** GET /streams/followed: a user token with this scope (the scope of GET /channels/followed). */
const FOLLOWED_SCOPE = 'user:read:follows';
/** Production's default page of GET /streams/followed is 100 streams, not the usual 20. */
const FOLLOWED_DEFAULT_FIRST = 100;

const followedParams = {
  first: firstParamOf(FOLLOWED_DEFAULT_FIRST),
  after: cursorParam,
  before: cursorParam,
  user_id: singleString,
};

const sortedUnique = <T extends string | number>(values: readonly T[] | undefined) =>
  values === undefined ? undefined : [...new Set(values)].sort();

/**
 * GET /streams: live streams, most viewers first, filtered by users, games and languages.
 * GET /streams/followed: those of the channels the token's user follows, in the same order.
 */
export function streamsRoutes(app: FastifyInstance, ctx: AppContext): void {
  registerOperation(app, ctx, {
    path: '/streams',
    summary: 'Get Streams',
    description: 'Live streams, most viewers first, filtered by users (id or login), games and languages.',
    access: { token: 'any' },
    query: streamsParams,
    response: listResponse(streamSchema),
    async handler(ctx, { query, pages }) {
      // Every value is checked before anything reaches the store.
      const userIds = query.user_id && readNumericIds('user_id', query.user_id);
      const logins =
        query.user_login && readTexts('user_login', query.user_login).map((l) => l.toLowerCase());
      const gameIds = query.game_id && readNumericIds('game_id', query.game_id);
      const languages = query.language && readTexts('language', query.language);
      // The cursor is bound to everything that decides the rows (the sets of values, whatever
      // their order or repetition); not to the users the logins name today.
      const paging = pages.read(query, {
        user_id: sortedUnique(userIds),
        user_login: sortedUnique(logins),
        game_id: sortedUnique(gameIds),
        language: sortedUnique(languages),
        type: query.type ?? 'all',
      });
      const db = ctx.store.db;
      const filters: StreamFilters = {
        gameIds: sortedUnique(gameIds),
        languages: sortedUnique(languages),
      };
      // Users given by id and by login: the streams of any of them.
      if (userIds !== undefined || logins !== undefined) {
        const byLogin = logins === undefined ? [] : await userIdsByLogins(db, logins);
        filters.userIds = sortedUnique([...(userIds ?? []), ...byLogin]);
      }
      const page = await streamsPage(db, filters, paging);
      const users = await ctx.userNames.byIds(page.rows.map((r) => r.user_id));
      return {
        data: page.rows.map((r) => streamRowToStream(r, users, ctx.links)),
        pagination: pages.pagination(paging, page),
      };
    },
  });

  registerOperation(app, ctx, {
    path: '/streams/followed',
    summary: 'Get Followed Streams',
    description:
      "The live streams of the channels the token's user follows, most viewers first: the streams of GET /streams.",
    access: { token: 'user', anyScope: [FOLLOWED_SCOPE] },
    query: followedParams,
    response: listResponse(streamSchema),
    async handler(ctx, { query, principal, pages }) {
      const userId = readRequiredId('user_id', query.user_id);
      if (userId !== tokenUser(principal))
        throw unauthorized("The ID in user_id must match the user ID found in the request's OAuth token.");
      refuseBefore(query);
      const paging = pages.read(query, { user_id: userId });
      const page = await streamsPage(ctx.store.db, { followedBy: userId }, paging);
      const users = await ctx.userNames.byIds(page.rows.map((r) => r.user_id));
      return {
        data: page.rows.map((r) => streamRowToStream(r, users, ctx.links)),
        pagination: pages.pagination(paging, page),
      };
    },
  });
}
