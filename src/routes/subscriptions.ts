import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { tokenUser } from '../http/access.ts';
import { badRequest, unauthorized } from '../http/errors.ts';
import { readNumericId, readRequiredId } from '../http/ids.ts';
import { registerOperation } from '../http/operation.ts';
import { paginationSchema, pagingParams, singleString, stringEnum, stringList } from '../http/params.ts';
import { TIERS } from '../store/schema.ts';
import {
  type BroadcasterTotals,
  broadcasterTotals,
  type ListedSubscription,
  subscriptionsOfUsers,
  subscriptionsPage,
} from '../store/subscriptions.ts';
import type { UserName } from '../store/users.ts';

/** The wire shape of a subscription (docs/api.md, Subscription). */
const subscriptionSchema = Type.Object({
  broadcaster_id: Type.String(),
  broadcaster_login: Type.String(),
  broadcaster_name: Type.String(),
  gifter_id: Type.String({ description: '"" when the subscription is not a gift' }),
  gifter_login: Type.String(),
  gifter_name: Type.String(),
  is_gift: Type.Boolean(),
  plan_name: Type.String(),
  tier: stringEnum(TIERS),
  user_id: Type.String(),
  user_name: Type.String(),
  user_login: Type.String(),
});
export type Subscription = Static<typeof subscriptionSchema>;

/** `users` holds the subscriber and the gifter when they exist (their names are "" otherwise). */
export function subscriptionRowToSubscription(
  row: ListedSubscription,
  broadcaster: Pick<BroadcasterTotals, 'login' | 'display_name'>,
  users: ReadonlyMap<number, UserName>,
): Subscription {
  // The gifter fields are "" when the subscription is not a gift.
  const gift = row.is_gift === 1 && row.gifter_id !== null;
  const user = users.get(row.user_id);
  const gifter = gift ? users.get(row.gifter_id as number) : undefined;
  return {
    broadcaster_id: String(row.broadcaster_id),
    broadcaster_login: broadcaster.login,
    broadcaster_name: broadcaster.display_name,
    gifter_id: gift ? String(row.gifter_id) : '',
    gifter_login: gifter?.login ?? '',
    gifter_name: gifter?.display_name ?? '',
    is_gift: row.is_gift === 1,
    plan_name: row.plan_name,
    tier: row.tier,
    user_id: String(row.user_id),
    user_name: user?.display_name ?? '',
    user_login: user?.login ?? '',
  };
}

/**
 * The names of the subscribers and gifters of `rows`: from the rows when the query joined them in,
 * else from the in-memory copy (see ofBroadcaster in src/store/subscriptions.ts).
 */
async function namesOf(
  ctx: AppContext,
  rows: readonly ListedSubscription[],
  joined: boolean,
): Promise<ReadonlyMap<number, UserName>> {
  if (!joined)
    return ctx.userNames.byIds(
      rows.flatMap((r) => (r.gifter_id === null ? [r.user_id] : [r.user_id, r.gifter_id])),
    );
  const names = new Map<number, UserName>();
  for (const r of rows) {
    if (r.user_login != null && r.user_name != null)
      names.set(r.user_id, { id: r.user_id, login: r.user_login, display_name: r.user_name });
    if (r.gifter_id !== null && r.gifter_login != null && r.gifter_name != null)
      names.set(r.gifter_id, { id: r.gifter_id, login: r.gifter_login, display_name: r.gifter_name });
  }
  return names;
}

/** Production accepts up to 100 `user_id` values to check given users. */
const MAX_USER_IDS = 100;

const subscriptionsParams = {
  ...pagingParams,
  broadcaster_id: singleString,
  user_id: stringList(MAX_USER_IDS),
};

/** GET /subscriptions (docs/api.md): the token user's own subscribers, most recent first. */
export function subscriptionsRoutes(app: FastifyInstance, ctx: AppContext): void {
  registerOperation(app, ctx, {
    path: '/subscriptions',
    summary: 'Get Broadcaster Subscriptions',
    description:
      "The token user's own subscribers, most recent first, or whether given users subscribe; with the channel's subscription count and points.",
    // Spec 5: a user access token of the broadcaster with channel:read:subscriptions.
    access: { token: 'user', anyScope: ['channel:read:subscriptions'] },
    query: subscriptionsParams,
    response: Type.Object({
      data: Type.Array(subscriptionSchema),
      pagination: paginationSchema,
      total: Type.Integer({ description: 'How many subscriptions the channel has' }),
      points: Type.Integer({ description: 'Subscriber points: tier 1 counts 1, tier 2 2, tier 3 6' }),
    }),
    async handler(ctx, { query, principal, pages }) {
      const broadcasterId = readRequiredId('broadcaster_id', query.broadcaster_id);
      // Spec 4.1: broadcaster_id must equal the user the token belongs to.
      if (broadcasterId !== tokenUser(principal))
        throw unauthorized(
          "The ID in broadcaster_id must match the user ID found in the request's OAuth token.",
        );
      const db = ctx.store.db;
      const broadcaster = await broadcasterTotals(db, broadcasterId);
      const counts = { total: broadcaster.total, points: broadcaster.points };
      // Names come from a join where the store keeps no copy of them in memory.
      const joined = !ctx.userNames.inMemory;

      if (query.user_id !== undefined) {
        // A check of given users is one answer: no cursor goes with it, so none is accepted.
        for (const p of ['after', 'before'] as const)
          if (query[p] !== undefined) throw badRequest(`The parameter "${p}" cannot be used with "user_id"`);
        const ids = query.user_id.map((v) => readNumericId('user_id', v));
        const rows = await subscriptionsOfUsers(db, broadcasterId, [...new Set(ids)], joined);
        const users = await namesOf(ctx, rows, joined);
        return {
          data: rows.map((r) => subscriptionRowToSubscription(r, broadcaster, users)),
          pagination: {},
          ...counts,
        };
      }

      const paging = pages.read(query, { broadcaster_id: broadcasterId });
      const page = await subscriptionsPage(db, broadcasterId, paging, joined);
      const users = await namesOf(ctx, page.rows, joined);
      return {
        data: page.rows.map((r) => subscriptionRowToSubscription(r, broadcaster, users)),
        pagination: pages.pagination(paging, page),
        ...counts,
      };
    },
  });
}
