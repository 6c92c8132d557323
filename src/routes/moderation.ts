// GET /moderation/moderators: the token user's own channel's moderators, from the moderators table
// (migration 007), which GET /channels/followers also reads for its right to the follower list.
import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { tokenUser } from '../http/access.ts';
import { badRequest, unauthorized } from '../http/errors.ts';
import { readNumericIds, readRequiredId } from '../http/ids.ts';
import { registerOperation } from '../http/operation.ts';
import { listResponse, pagingParams, refuseBefore, singleString, stringList } from '../http/params.ts';
import { moderatorsAmong, moderatorsPage, type NamedModeratorRow } from '../store/moderators.ts';

/** Production accepts either: moderation:read, or the scope of an app that also adds and removes moderators. */
const MODERATORS_SCOPES = ['moderation:read', 'channel:manage:moderators'] as const;
/** Production: at most 100 `user_id` values. */
const MAX_USER_IDS = 100;

/** The wire shape of a moderator. */
const moderatorSchema = Type.Object({
  user_id: Type.String(),
  user_login: Type.String(),
  user_name: Type.String(),
});
type Moderator = Static<typeof moderatorSchema>;

const toModerator = (r: NamedModeratorRow): Moderator => ({
  user_id: String(r.user_id),
  user_login: r.login,
  user_name: r.display_name,
});

const moderatorsParams = {
  ...pagingParams,
  broadcaster_id: singleString,
  user_id: stringList(MAX_USER_IDS),
};

export function moderationRoutes(app: FastifyInstance, ctx: AppContext): void {
  registerOperation(app, ctx, {
    path: '/moderation/moderators',
    summary: 'Get Moderators',
    description:
      "The moderators of the token user's own channel, by user id; or which of the given users moderate it, in the order given.",
    access: { token: 'user', anyScope: MODERATORS_SCOPES },
    query: moderatorsParams,
    response: listResponse(moderatorSchema),
    async handler(ctx, { query, principal, pages }) {
      const broadcasterId = readRequiredId('broadcaster_id', query.broadcaster_id);
      if (broadcasterId !== tokenUser(principal))
        throw unauthorized(
          "The ID in broadcaster_id must match the user ID found in the request's OAuth token.",
        );
      refuseBefore(query);
      const db = ctx.store.db;
      if (query.user_id !== undefined) {
        // A check of given users is one answer, as GET /subscriptions's: no cursor goes with it.
        if (query.after !== undefined)
          throw badRequest('The parameter "after" cannot be used with "user_id"');
        const ids = [...new Set(readNumericIds('user_id', query.user_id))];
        const rows = await moderatorsAmong(db, broadcasterId, ids);
        return { data: rows.map(toModerator), pagination: {} };
      }
      const paging = pages.read(query, { broadcaster_id: broadcasterId });
      const page = await moderatorsPage(db, broadcasterId, paging);
      return { data: page.rows.map(toModerator), pagination: pages.pagination(paging, page) };
    },
  });
}
