import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.ts';
import { tokenUser } from '../http/access.ts';
import { badRequest, unauthorized } from '../http/errors.ts';
import { readNumericId, readRequiredId } from '../http/ids.ts';
import { registerOperation } from '../http/operation.ts';
import {
  type PagingQuery,
  paginationOf,
  paginationSchema,
  pagingProperties,
  readPaging,
  singleString,
  stringList,
} from '../http/params.ts';
import { TIERS } from '../store/schema.ts';
import {
  type BroadcasterTotals,
  broadcasterTotals,
  type ListedSubscription,
  subscriptionsOfUsers,
  subscriptionsPage,
} from '../store/subscriptions.ts';
import type { UserName } from '../store/users.ts';

/** The wire shape (docs/api.md), Subscription. */
export interface Subscription {
  broadcaster_id: string;
  broadcaster_login: string;
  broadcaster_name: string;
  gifter_id: string;
  gifter_login: string;
  gifter_name: string;
  is_gift: boolean;
  plan_name: string;
  tier: string;
  user_id: string;
  user_name: string;
  user_login: string;
}

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

const str = { type: 'string' } as const;
const subscriptionSchema = {
  type: 'object',
  properties: {
    broadcaster_id: str,
    broadcaster_login: str,
    broadcaster_name: str,
    gifter_id: str,
    gifter_login: str,
    gifter_name: str,
    is_gift: { type: 'boolean' },
    plan_name: str,
    tier: { type: 'string', enum: TIERS },
    user_id: str,
    user_name: str,
    user_login: str,
  },
  required: [
    'broadcaster_id',
    'broadcaster_login',
    'broadcaster_name',
    'gifter_id',
    'gifter_login',
    'gifter_name',
    'is_gift',
    'plan_name',
    'tier',
    'user_id',
    'user_name',
    'user_login',
  ],
} as const;

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

interface SubscriptionsQuery extends PagingQuery {
  broadcaster_id?: string;
  user_id?: string[];
}

/** GET /subscriptions (spec 4.1): the token user's own subscribers, most recent first. */
export function subscriptionsRoutes(app: FastifyInstance, ctx: AppContext): void {
  registerOperation<SubscriptionsQuery>(app, ctx, {
    path: '/subscriptions',
    // Spec 5: a user access token of the broadcaster with channel:read:subscriptions.
    access: { token: 'user', anyScope: ['channel:read:subscriptions'] },
    schema: {
      querystring: {
        type: 'object',
        properties: { ...pagingProperties, broadcaster_id: singleString, user_id: stringList(MAX_USER_IDS) },
      },
      response: {
        200: {
          type: 'object',
          properties: {
            data: { type: 'array', items: subscriptionSchema },
            pagination: paginationSchema,
            total: { type: 'integer' },
            points: { type: 'integer' },
          },
          required: ['data', 'pagination', 'total', 'points'],
        },
      },
    },
    async handler(ctx, { query, principal }) {
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

      const paging = readPaging(ctx, '/subscriptions', query, { broadcaster_id: broadcasterId });
      const page = await subscriptionsPage(db, broadcasterId, paging, joined);
      const users = await namesOf(ctx, page.rows, joined);
      return {
        data: page.rows.map((r) => subscriptionRowToSubscription(r, broadcaster, users)),
        pagination: paginationOf(ctx, paging, page),
        ...counts,
      };
    },
  });
}
