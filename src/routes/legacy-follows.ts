// GET /users/follows, decommissioned by Helix (docs/api.md, Decommissioned): served from the
// store under its former rules with --legacy only (otherwise it answers 410: src/http/sunset.ts).
import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { badRequest } from '../http/errors.ts';
import { registerOperation } from '../http/operation.ts';
import { dateTime, paginationSchema, pagingParams, refuseBefore, singleString } from '../http/params.ts';
import { type Decommissioned, serveGone, setNotice } from '../http/sunset.ts';
import { countFollows, type FollowListRow, type FollowSelector, followsPage } from '../store/follows.ts';
import { rfc3339 } from '../wire/datetime.ts';
import { isDigits, parseNumericId } from '../wire/ids.ts';

const FOLLOWS: Decommissioned = {
  path: '/users/follows',
  summary: 'Get Users Follows',
  sunset: '2023-09-12',
  successors: [
    { path: '/channels/followers', title: 'Get Channel Followers' },
    { path: '/channels/followed', title: 'Get Followed Channels' },
  ],
};

/** The wire shape of a follow (GET /users/follows, decommissioned). */
const followSchema = Type.Object({
  from_id: Type.String(),
  from_login: Type.String(),
  from_name: Type.String(),
  to_id: Type.String(),
  to_login: Type.String(),
  to_name: Type.String(),
  followed_at: dateTime,
});
export type Follow = Static<typeof followSchema>;

export function followRowToFollow(r: FollowListRow): Follow {
  return {
    from_id: String(r.from_id),
    from_login: r.from_login,
    from_name: r.from_name,
    to_id: String(r.to_id),
    to_login: r.to_login,
    to_name: r.to_name,
    followed_at: rfc3339(r.followed_at),
  };
}

const followsParams = { from_id: singleString, to_id: singleString, ...pagingParams };

/**
 * A user id parameter: digits; '' counts as not given. `null`: digits that spell no numeric id
 * (too long, or a leading zero), so no stored user has them.
 */
function userIdParam(name: string, v: string | undefined): number | null | undefined {
  if (v === undefined || v === '') return undefined;
  if (!isDigits(v))
    throw badRequest(`The parameter "${name}" was malformed: the value must be a user ID (digits only)`);
  return parseNumericId(v) ?? null;
}

/** GET /users/follows: 410 Gone as Helix answers, or with --legacy served from the store. */
export function legacyFollowsRoutes(app: FastifyInstance, ctx: AppContext): void {
  if (!ctx.config.legacy) {
    serveGone(app, FOLLOWS);
    return;
  }
  registerOperation(app, ctx, {
    path: FOLLOWS.path,
    summary: FOLLOWS.summary,
    description: `Decommissioned by Helix on ${FOLLOWS.sunset} (served with --legacy only): the follows from a user and/or to a user, most recent first.`,
    deprecated: true,
    access: { token: 'any' },
    query: followsParams,
    response: Type.Object({
      total: Type.Integer(),
      data: Type.Array(followSchema),
      pagination: paginationSchema,
    }),
    async handler(ctx, { query, reply, pages }) {
      setNotice(reply, FOLLOWS);
      const from = userIdParam('from_id', query.from_id);
      const to = userIdParam('to_id', query.to_id);
      if (from === undefined && to === undefined)
        throw badRequest('Missing required parameter "from_id" or "to_id"');
      refuseBefore(query);
      const paging = pages.read(query, { from_id: query.from_id, to_id: query.to_id });
      if (from === null || to === null) return { total: 0, data: [], pagination: {} };
      const sel = { from, to } as FollowSelector;
      const [page, total] = await Promise.all([
        followsPage(ctx.store.db, sel, paging),
        countFollows(ctx.store.db, sel),
      ]);
      return {
        total,
        data: page.rows.map(followRowToFollow),
        pagination: pages.pagination(paging, page),
      };
    },
  });
}
