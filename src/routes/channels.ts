// GET /channels/followers and GET /channels/followed: the two successors of the decommissioned
// GET /users/follows, on the same follows table. Both page forward only, most recent follow first.
import type { FastifyInstance } from 'fastify';
import { rfc3339 } from '../clock.ts';
import type { AppContext } from '../context.ts';
import { type Principal, tokenUser } from '../http/access.ts';
import { unauthorized } from '../http/errors.ts';
import { readOptionalId, readRequiredId } from '../http/ids.ts';
import { registerOperation } from '../http/operation.ts';
import {
  type Pagination,
  type PagingQuery,
  paginationOf,
  paginationSchema,
  pagingProperties,
  readPaging,
  refuseBefore,
  singleString,
} from '../http/params.ts';
import {
  countFollows,
  type FollowSelector,
  followedPage,
  followersPage,
  followOfPair,
  type NamedFollowRow,
} from '../store/follows.ts';
import { isModerator } from '../store/moderators.ts';

export const FOLLOWERS_SCOPE = 'moderator:read:followers';
export const FOLLOWED_SCOPE = 'user:read:follows';

export interface ChannelFollower {
  user_id: string;
  user_login: string;
  user_name: string;
  followed_at: string;
}

export interface FollowedChannel {
  broadcaster_id: string;
  broadcaster_login: string;
  broadcaster_name: string;
  followed_at: string;
}

const str = { type: 'string' } as const;

/** `{ total, data, pagination }`, in this key order, with `item` as the element. */
function followListSchema(item: { properties: object; required: readonly string[] }) {
  return {
    200: {
      type: 'object',
      properties: {
        total: { type: 'integer' },
        data: { type: 'array', items: { type: 'object', ...item } },
        pagination: paginationSchema,
      },
      required: ['total', 'data', 'pagination'],
    },
  } as const;
}

interface FollowList<T> {
  total: number;
  data: T[];
  pagination: Pagination;
}

interface FollowersQuery extends PagingQuery {
  broadcaster_id?: string;
  user_id?: string;
}

interface FollowedQuery extends PagingQuery {
  user_id?: string;
  broadcaster_id?: string;
}

/**
 * Whether the caller may see who follows the channel: a user token with moderator:read:followers
 * of the broadcaster or of one of the channel's moderators. The moderator table is probed only when
 * the token qualifies otherwise.
 */
async function mayListFollowers(ctx: AppContext, p: Principal, broadcasterId: number): Promise<boolean> {
  if (p.kind !== 'user' || !p.scopes.has(FOLLOWERS_SCOPE)) return false;
  return p.userId === broadcasterId || isModerator(ctx.store.db, broadcasterId, p.userId);
}

export function channelsRoutes(app: FastifyInstance, ctx: AppContext): void {
  registerOperation<FollowersQuery>(app, ctx, {
    path: '/channels/followers',
    // Any token: production answers everyone the follower count; only the list is restricted.
    access: { token: 'any' },
    schema: {
      querystring: {
        type: 'object',
        properties: { ...pagingProperties, broadcaster_id: singleString, user_id: singleString },
      },
      response: followListSchema({
        properties: { user_id: str, user_login: str, user_name: str, followed_at: str },
        required: ['user_id', 'user_login', 'user_name', 'followed_at'],
      }),
    },
    async handler(ctx, { query, principal }): Promise<FollowList<ChannelFollower>> {
      const broadcasterId = readRequiredId('broadcaster_id', query.broadcaster_id);
      const userId = readOptionalId('user_id', query.user_id);
      refuseBefore(query);
      const paging = readPaging(ctx, '/channels/followers', query, {
        broadcaster_id: broadcasterId,
        user_id: userId,
      });
      const db = ctx.store.db;
      const allowed = await mayListFollowers(ctx, principal, broadcasterId);
      // Production documents a check of one user without the right to the list as a 401, not as
      // an empty answer: an empty `data` would claim that the user does not follow.
      if (!allowed && userId !== undefined)
        throw unauthorized(
          `The parameter "user_id" requires a user access token with the ${FOLLOWERS_SCOPE} scope of the broadcaster or of one of the broadcaster's moderators`,
        );
      const total = await countFollows(db, { to: broadcasterId });
      if (!allowed) return { total, data: [], pagination: {} };
      const toFollower = (r: NamedFollowRow): ChannelFollower => ({
        user_id: String(r.from_id),
        user_login: r.login,
        user_name: r.display_name,
        followed_at: rfc3339(r.followed_at),
      });
      if (userId !== undefined) {
        const row = await followOfPair(db, userId, broadcasterId, 'from');
        return { total, data: row ? [toFollower(row)] : [], pagination: {} };
      }
      const page = await followersPage(db, broadcasterId, paging);
      return {
        total,
        data: page.rows.map(toFollower),
        pagination: paginationOf(ctx, paging, page),
      };
    },
  });

  registerOperation<FollowedQuery>(app, ctx, {
    path: '/channels/followed',
    access: { token: 'user', anyScope: [FOLLOWED_SCOPE] },
    schema: {
      querystring: {
        type: 'object',
        properties: { ...pagingProperties, user_id: singleString, broadcaster_id: singleString },
      },
      response: followListSchema({
        properties: { broadcaster_id: str, broadcaster_login: str, broadcaster_name: str, followed_at: str },
        required: ['broadcaster_id', 'broadcaster_login', 'broadcaster_name', 'followed_at'],
      }),
    },
    async handler(ctx, { query, principal }): Promise<FollowList<FollowedChannel>> {
      const userId = readRequiredId('user_id', query.user_id);
      const broadcasterId = readOptionalId('broadcaster_id', query.broadcaster_id);
      if (userId !== tokenUser(principal))
        throw unauthorized("The ID in user_id must match the user ID found in the request's OAuth token.");
      refuseBefore(query);
      const paging = readPaging(ctx, '/channels/followed', query, {
        user_id: userId,
        broadcaster_id: broadcasterId,
      });
      const db = ctx.store.db;
      const toFollowed = (r: NamedFollowRow): FollowedChannel => ({
        broadcaster_id: String(r.to_id),
        broadcaster_login: r.login,
        broadcaster_name: r.display_name,
        followed_at: rfc3339(r.followed_at),
      });
      const sel: FollowSelector = { from: userId };
      if (broadcasterId !== undefined) {
        // `total` stays every channel the user follows, as without `broadcaster_id`.
        const [row, total] = await Promise.all([
          followOfPair(db, userId, broadcasterId, 'to'),
          countFollows(db, sel),
        ]);
        return { total, data: row ? [toFollowed(row)] : [], pagination: {} };
      }
      const [page, total] = await Promise.all([followedPage(db, userId, paging), countFollows(db, sel)]);
      return {
        total,
        data: page.rows.map(toFollowed),
        pagination: paginationOf(ctx, paging, page),
      };
    },
  });
}
