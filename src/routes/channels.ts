// GET /channels/followers and GET /channels/followed: the two successors of the decommissioned
// GET /users/follows, on the same follows table. Both page forward only, most recent follow first.
import type { FastifyInstance } from 'fastify';
import { type Static, type TSchema, Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { type Principal, tokenUser } from '../http/access.ts';
import { unauthorized } from '../http/errors.ts';
import { readOptionalId, readRequiredId } from '../http/ids.ts';
import { registerOperation } from '../http/operation.ts';
import { dateTime, paginationSchema, pagingParams, refuseBefore, singleString } from '../http/params.ts';
import {
  countFollows,
  type FollowSelector,
  followOfPair,
  type NamedFollowRow,
  oneSidedPage,
} from '../store/follows.ts';
import { isModerator } from '../store/moderators.ts';
import { rfc3339 } from '../wire/datetime.ts';

export const FOLLOWERS_SCOPE = 'moderator:read:followers';
export const FOLLOWED_SCOPE = 'user:read:follows';

/** The wire shape of a follower of a channel. */
const channelFollowerSchema = Type.Object({
  user_id: Type.String(),
  user_login: Type.String(),
  user_name: Type.String(),
  followed_at: dateTime,
});
export type ChannelFollower = Static<typeof channelFollowerSchema>;

/** The wire shape of a channel a user follows. */
const followedChannelSchema = Type.Object({
  broadcaster_id: Type.String(),
  broadcaster_login: Type.String(),
  broadcaster_name: Type.String(),
  followed_at: dateTime,
});
export type FollowedChannel = Static<typeof followedChannelSchema>;

/** `{ total, data, pagination }`, in this key order, with `item` as the element. */
const followList = <T extends TSchema>(item: T) =>
  Type.Object({
    total: Type.Integer({ description: 'How many follows there are in all, whatever the page' }),
    data: Type.Array(item),
    pagination: paginationSchema,
  });

const followersParams = { ...pagingParams, broadcaster_id: singleString, user_id: singleString };
const followedParams = { ...pagingParams, user_id: singleString, broadcaster_id: singleString };

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
  registerOperation(app, ctx, {
    path: '/channels/followers',
    summary: 'Get Channel Followers',
    description: `The channel's follower count for any token; the followers themselves, most recent first, only to a user token with ${FOLLOWERS_SCOPE} of the broadcaster or of one of its moderators (an empty list otherwise).`,
    // Any token: Helix answers everyone the follower count; only the list is restricted.
    access: { token: 'any' },
    query: followersParams,
    response: followList(channelFollowerSchema),
    async handler(ctx, { query, principal, pages }) {
      const broadcasterId = readRequiredId('broadcaster_id', query.broadcaster_id);
      const userId = readOptionalId('user_id', query.user_id);
      refuseBefore(query);
      const paging = pages.read(query, {
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
      const page = await oneSidedPage(db, { to: broadcasterId }, paging);
      return {
        total,
        data: page.rows.map(toFollower),
        pagination: pages.pagination(paging, page),
      };
    },
  });

  registerOperation(app, ctx, {
    path: '/channels/followed',
    summary: 'Get Followed Channels',
    description: "The channels the token's user follows, most recent follow first.",
    access: { token: 'user', anyScope: [FOLLOWED_SCOPE] },
    query: followedParams,
    response: followList(followedChannelSchema),
    async handler(ctx, { query, principal, pages }) {
      const userId = readRequiredId('user_id', query.user_id);
      const broadcasterId = readOptionalId('broadcaster_id', query.broadcaster_id);
      if (userId !== tokenUser(principal))
        throw unauthorized("The ID in user_id must match the user ID found in the request's OAuth token.");
      refuseBefore(query);
      const paging = pages.read(query, {
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
      const [page, total] = await Promise.all([
        oneSidedPage(db, { from: userId }, paging),
        countFollows(db, sel),
      ]);
      return {
        total,
        data: page.rows.map(toFollowed),
        pagination: pages.pagination(paging, page),
      };
    },
  });
}
