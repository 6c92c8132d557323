// The EventSub subscriptions API (docs/eventsub-design.md, section 2): POST, GET and DELETE
// /eventsub/subscriptions, under /helix and /mock and, for Twurple's mock mode, at the bare path.
// The rules are src/eventsub/subscriptions.ts; the SQL src/store/eventsub-subscriptions.ts.
import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import type { AppContext } from '../../context.ts';
import {
  createSubscription,
  ownerOf,
  readFilter,
  removeSubscription,
  SUBSCRIPTION_STATUSES,
  totalsOf,
} from '../../eventsub/subscriptions.ts';
import { EVENT_TYPES, TRANSPORTS } from '../../eventsub/types.ts';
import { wireSubscription } from '../../eventsub/wire.ts';
import { badRequest } from '../../http/errors.ts';
import { operation, registerOperations } from '../../http/operation.ts';
import { cursorParam, paginationSchema, singleString, stringEnum } from '../../http/params.ts';
import { sessionsConnectedAt, subscriptionsPage } from '../../store/eventsub-subscriptions.ts';

const PATH = '/eventsub/subscriptions';
/** GET's page size: Helix's pages hold 100 and take no `first`. */
const PAGE_SIZE = 100;

const nanoTime = Type.String({ description: 'RFC 3339 with nanoseconds' });

/** The subscription object (src/eventsub/wire.ts), in the platform's field order. */
const subscriptionSchema = Type.Object({
  id: Type.String({ description: 'A UUID' }),
  status: stringEnum(SUBSCRIPTION_STATUSES),
  type: Type.String(),
  version: Type.String(),
  cost: Type.Integer(),
  condition: Type.Record(Type.String(), Type.String()),
  transport: Type.Object({
    method: stringEnum(TRANSPORTS),
    callback: Type.Optional(Type.String({ description: 'webhook' })),
    session_id: Type.Optional(Type.String({ description: 'websocket' })),
    connected_at: Type.Optional(nanoTime),
    disconnected_at: Type.Optional(nanoTime),
  }),
  created_at: nanoTime,
});

type Subscription = Static<typeof subscriptionSchema>;
/** The wire form (its status is one of SUBSCRIPTION_STATUSES: the only ones ever stored). */
const wire = (...a: Parameters<typeof wireSubscription>) => wireSubscription(...a) as Subscription;

const totals = {
  total: Type.Integer({ description: 'How many subscriptions the listing holds (disabled ones included)' }),
  total_cost: Type.Integer({ description: 'The summed cost of the enabled and pending subscriptions' }),
  max_total_cost: Type.Integer({
    description: 'The most total_cost may be: 10000 for webhooks, 10 for WebSockets',
  }),
};

const createBody = Type.Object({
  type: stringEnum(EVENT_TYPES.map((t) => t.type)),
  version: Type.String(),
  condition: Type.Record(Type.String(), Type.String(), {
    description: "Exactly the type's fields: user ids as strings of digits",
  }),
  transport: Type.Object({
    method: stringEnum(TRANSPORTS),
    callback: Type.Optional(Type.String({ description: 'webhook: an https URL (http in development)' })),
    secret: Type.Optional(Type.String({ minLength: 10, maxLength: 100, description: 'webhook' })),
    session_id: Type.Optional(Type.String({ description: 'websocket: a connected session' })),
  }),
});

const listParams = {
  status: stringEnum(SUBSCRIPTION_STATUSES),
  type: singleString,
  user_id: singleString,
  subscription_id: singleString,
  after: cursorParam,
};

const RULES =
  "Webhook subscriptions are made and listed with an app access token, WebSocket ones with a user access token (the session is that user's).";

export function eventsubSubscriptionsRoutes(app: FastifyInstance, ctx: AppContext): void {
  registerOperations(app, ctx, [
    operation({
      method: 'POST',
      path: PATH,
      unprefixed: true,
      summary: 'Create EventSub Subscription',
      description: `A subscription of one of the served types (${EVENT_TYPES.map((t) => t.type).join(', ')}). ${RULES} A webhook subscription starts pending its callback's verification, a WebSocket one enabled.`,
      access: { token: 'any' },
      query: {},
      body: createBody,
      status: 202,
      response: Type.Object({ data: Type.Array(subscriptionSchema), ...totals }),
      errors: {
        403: "subscription missing proper authorization: the condition's user has not granted the client one of the type's scopes",
        409: 'subscription already exists: the same type, version, condition and destination is enabled or pending',
        429: "The token's rate limit is spent, or the subscription would pass a limit of subscriptions (the message says which)",
      },
      async handler(ctx, { principal, body }) {
        const c = await createSubscription(ctx, principal, body);
        return {
          data: [wire(c.row, c.connectedAt)],
          total: c.total,
          total_cost: c.total_cost,
          max_total_cost: c.max_total_cost,
        };
      },
    }),
    operation({
      path: PATH,
      unprefixed: true,
      summary: 'Get EventSub Subscriptions',
      description: `The client's subscriptions, oldest first, 100 a page, disabled ones included. ${RULES} At most one filter: status, type, user_id (the condition names the user) or subscription_id.`,
      access: { token: 'any' },
      query: listParams,
      response: Type.Object({
        data: Type.Array(subscriptionSchema),
        ...totals,
        pagination: paginationSchema,
      }),
      async handler(ctx, { query, principal, pages }) {
        const filter = readFilter(query);
        const owner = ownerOf(principal);
        const paging = pages.read({ first: PAGE_SIZE, after: query.after }, { owner, filter });
        const page = await subscriptionsPage(ctx.store.db, owner, filter, paging);
        const sessions = await sessionsConnectedAt(
          ctx.store.db,
          page.rows.flatMap((r) => (r.session_id === null ? [] : [r.session_id])),
        );
        const t = await totalsOf(ctx, owner, filter);
        return {
          data: page.rows.map((r) => wire(r, r.session_id === null ? undefined : sessions.get(r.session_id))),
          ...t,
          pagination: pages.pagination(paging, page),
        };
      },
    }),
    operation({
      method: 'DELETE',
      path: PATH,
      unprefixed: true,
      summary: 'Delete EventSub Subscription',
      description: "Deletes one of the client's subscriptions.",
      access: { token: 'any' },
      query: { id: singleString },
      status: 204,
      response: Type.Null(),
      errors: { 404: 'No subscription of the client has this id' },
      async handler(ctx, { query, principal }) {
        if (query.id === undefined || query.id === '') throw badRequest('Missing required parameter "id"');
        await removeSubscription(ctx, principal, query.id);
        return null;
      },
    }),
  ]);
}
