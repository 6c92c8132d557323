import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { tokenUser } from '../http/access.ts';
import { badRequest, notFound, unauthorized } from '../http/errors.ts';
import { readNumericId, readRequiredId } from '../http/ids.ts';
import { registerOperation } from '../http/operation.ts';
import {
  dataResponse,
  paginationSchema,
  pagingParams,
  singleString,
  stringEnum,
  stringList,
} from '../http/params.ts';
import { TIERS } from '../store/schema.ts';
import {
  type BroadcasterTotals,
  broadcasterTotals,
  type ListedSubscription,
  subscriptionOfUser,
  subscriptionsOfUsers,
  subscriptionsPage,
  type UserSubscriptionRow,
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
 * The wire shape of a user's own subscription (GET /subscriptions/user), in the order of production's
 * reference: a gift with its gifter, or a subscription that is not a gift, which has no gifter
 * fields at all (production leaves them out, where GET /subscriptions sends them empty). Two shapes
 * rather than optional fields, because the serializer writes the optional fields of one object after
 * all the others: the gifter would come after `tier`.
 */
const subscriptionHead = {
  broadcaster_id: Type.String(),
  broadcaster_login: Type.String(),
  broadcaster_name: Type.String(),
};
const userSubscriptionSchema = Type.Union([
  Type.Object({
    ...subscriptionHead,
    gifter_id: Type.String(),
    gifter_login: Type.String(),
    gifter_name: Type.String(),
    is_gift: Type.Literal(true),
    tier: stringEnum(TIERS),
  }),
  Type.Object({ ...subscriptionHead, is_gift: Type.Literal(false), tier: stringEnum(TIERS) }),
]);
type UserSubscription = Static<typeof userSubscriptionSchema>;

/** A missing broadcaster or gifter has "" for a login and a name, as in GET /subscriptions. */
function toUserSubscription(row: UserSubscriptionRow): UserSubscription {
  const head = {
    broadcaster_id: String(row.broadcaster_id),
    broadcaster_login: row.broadcaster_login ?? '',
    broadcaster_name: row.broadcaster_name ?? '',
  };
  if (row.is_gift !== 1) return { ...head, is_gift: false, tier: row.tier };
  return {
    ...head,
    gifter_id: row.gifter_id === null ? '' : String(row.gifter_id),
    gifter_login: row.gifter_login ?? '',
    gifter_name: row.gifter_name ?? '',
    is_gift: true,
    tier: row.tier,
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

const userSubscriptionParams = { broadcaster_id: singleString, user_id: singleString };

/**
 * GET /subscriptions (docs/api.md): the token user's own subscribers, most recent first.
 * GET /subscriptions/user: whether the token's user subscribes to a broadcaster.
 */
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

  registerOperation(app, ctx, {
    path: '/subscriptions/user',
    summary: 'Check User Subscription',
    description:
      "Whether the token's user subscribes to the broadcaster: the subscription, or a 404 when there is none.",
    access: { token: 'user', anyScope: ['user:read:subscriptions'] },
    query: userSubscriptionParams,
    response: dataResponse(userSubscriptionSchema),
    errors: { 404: 'The user does not subscribe to the broadcaster' },
    async handler(ctx, { query, principal }) {
      const broadcasterId = readRequiredId('broadcaster_id', query.broadcaster_id);
      const userId = readRequiredId('user_id', query.user_id);
      if (userId !== tokenUser(principal))
        throw unauthorized("The ID in user_id must match the user ID found in the request's OAuth token.");
      const row = await subscriptionOfUser(ctx.store.db, broadcasterId, userId);
      // Production's words, with the two ids (its reference's example of this 404).
      if (row === undefined) throw notFound(`${userId} does not subscribe to ${broadcasterId}`);
      return { data: [toUserSubscription(row)] };
    },
  });
}
