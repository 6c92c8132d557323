// EventSub's admin routes (docs/admin.md, docs/eventsub.md): events on demand, made by writing the
// change that causes them (src/eventsub/trigger.ts); the WebSocket sessions listed, and commands for
// them (reconnect, keepalives silenced), which travel as `control` rows so that the process holding
// the session acts, whichever worker or instance answers the request; a subscription revoked with
// any disabled status.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { nowSeconds } from '../../clock.ts';
import type { AppContext } from '../../context.ts';
import { CONTROL } from '../../eventsub/service.ts';
import { SUBSCRIPTION_STATUSES } from '../../eventsub/subscriptions.ts';
import { TRIGGER_TYPES, trigger, triggerInput } from '../../eventsub/trigger.ts';
import { badRequest, HelixError, notFound } from '../../http/errors.ts';
import { listSessions, sessionCommand } from '../../store/eventsub-sessions.ts';
import { revokeSubscription } from '../../store/eventsub-subscriptions.ts';
import { registerAdmin } from './route.ts';

/** The statuses a revocation may give: every disabled one. */
const REVOKE_STATUSES = SUBSCRIPTION_STATUSES.filter(
  (s) => s !== 'enabled' && s !== 'webhook_callback_verification_pending',
);

const SessionParams = Type.Object({ id: Type.String({ description: "The session id (its welcome's)" }) });

/**
 * Session and subscription ids are UUIDs: anything else names none, and is answered without a read
 * (PostgreSQL refuses some bytes in text, a NUL among them).
 */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const noSession = (id: string) => notFound(`No EventSub WebSocket session has the id ${JSON.stringify(id)}`);

const id = (description: string) => Type.String({ pattern: '^[1-9][0-9]{0,15}$', description });

export function eventsubAdminRoutes(app: FastifyInstance, ctx: AppContext): void {
  registerAdmin(app, ctx, {
    method: 'POST',
    path: '/eventsub/trigger',
    tag: 'eventsub',
    summary: 'Trigger an EventSub event',
    description:
      "Makes an event by writing the change that causes it, through the same write path as the records routes: a `channel.follow` writes a follow (which `GET /channels/followers` then lists), a `stream.online` a stream, a `stream.offline` deletes the channel's stream. The user of a follow, subscription or moderator, and a stream's game and id, are drawn when left out. Subscribers on any process receive it.",
    body: Type.Object({
      type: Type.Unsafe<string>({ type: 'string', enum: TRIGGER_TYPES }),
      broadcaster_id: Type.Optional(id('The channel (every stream.* and channel.* type)')),
      user_id: Type.Optional(
        id('The follower, subscriber, moderator, or the user updated; drawn when left out'),
      ),
      tier: Type.Optional(Type.String({ enum: ['1000', '2000', '3000'] })),
      gifter_id: Type.Optional(id('channel.subscription.gift: the giver; left out, an anonymous gift')),
      count: Type.Optional(
        Type.Integer({ minimum: 1, maximum: 100, description: 'channel.subscription.gift: how many' }),
      ),
      description: Type.Optional(
        Type.String({ maxLength: 300, description: 'user.update: the new description' }),
      ),
    }),
    status: 201,
    response: Type.Object({
      type: Type.String(),
      written: Type.Array(
        Type.Object({ kind: Type.String(), data: Type.Object({}, { additionalProperties: true }) }),
      ),
      deleted: Type.Array(Type.Object({ kind: Type.String(), key: Type.Array(Type.String()) })),
    }),
    handler: async (req) => trigger(ctx.store, triggerInput(req.body), nowSeconds(ctx.clock)),
  });

  registerAdmin(app, ctx, {
    method: 'GET',
    path: '/eventsub/sessions',
    tag: 'eventsub',
    summary: 'List the EventSub WebSocket sessions',
    description:
      'The WebSocket sessions open on every worker and instance of the store, oldest first: each with the process holding it (`owner`, `host:pid:start`), its status (`connected`, or `reconnecting` while handed over), the client and user its first subscription bound it to, its keepalive timeout and when it connected.',
    status: 200,
    response: Type.Object({
      data: Type.Array(
        Type.Object({
          id: Type.String(),
          owner: Type.String(),
          status: Type.String(),
          client_id: Type.Union([Type.String(), Type.Null()]),
          user_id: Type.Union([Type.String(), Type.Null()]),
          keepalive_timeout_seconds: Type.Integer(),
          connected_at: Type.String(),
        }),
      ),
    }),
    handler: async () => ({
      data: (await listSessions(ctx.store.db)).map((r) => ({
        id: r.id,
        owner: r.owner,
        status: r.status,
        client_id: r.client_id,
        user_id: r.user_id === null ? null : String(r.user_id),
        keepalive_timeout_seconds: Number(r.keepalive_seconds),
        connected_at: new Date(Number(r.connected_at)).toISOString(),
      })),
    }),
  });

  registerAdmin(app, ctx, {
    method: 'POST',
    path: '/eventsub/sessions/:id/reconnect',
    tag: 'eventsub',
    summary: 'Make an EventSub session reconnect',
    description:
      "The process holding the session sends it `session_reconnect` with a `reconnect_url` (the public URL's host, valid 30 s). A connection to that URL is welcomed with the same session id and its subscriptions; the old socket closes (1000) once the new one holds the session, and the events sent around the hand-over may come twice (same `message_id`), none lost. Unclaimed after 30 s, the session closes with 4004. Answers 202: the command is carried out by the holder.",
    params: SessionParams,
    status: 202,
    response: Type.Object({ id: Type.String() }),
    handler: async (req) => {
      const { id } = req.params as { id: string };
      if (!UUID.test(id) || !(await sessionCommand(ctx.store, id, CONTROL.reconnect, {}, Date.now())))
        throw noSession(id);
      return { id };
    },
  });

  registerAdmin(app, ctx, {
    method: 'PUT',
    path: '/eventsub/sessions/:id/keepalives',
    tag: 'eventsub',
    summary: "Silence or restore an EventSub session's keepalives",
    description:
      'With `{"silenced": true}` the session gets no more `session_keepalive` messages (notifications still come), to test how a client handles the keepalive timeout; `false` restores them.',
    params: SessionParams,
    body: Type.Object({ silenced: Type.Boolean() }),
    status: 200,
    response: Type.Object({ id: Type.String(), silenced: Type.Boolean() }),
    handler: async (req) => {
      const { id } = req.params as { id: string };
      const body = req.body as unknown;
      const silenced = (body as { silenced?: unknown } | undefined)?.silenced;
      if (typeof silenced !== 'boolean') throw badRequest('The field "silenced" must be true or false');
      if (
        !UUID.test(id) ||
        !(await sessionCommand(ctx.store, id, CONTROL.keepalives, { silenced }, Date.now()))
      )
        throw noSession(id);
      return { id, silenced };
    },
  });

  registerAdmin(app, ctx, {
    method: 'POST',
    path: '/eventsub/subscriptions/:id/revoke',
    tag: 'eventsub',
    summary: 'Revoke an EventSub subscription',
    description:
      'Disables the subscription with the status given (any disabled one), as the platform does when it revokes: a WebSocket subscriber is sent a `revocation` message, a webhook a revocation request; `GET /helix/eventsub/subscriptions` lists it with that status.',
    params: Type.Object({ id: Type.String({ description: 'The subscription id' }) }),
    body: Type.Object({ status: Type.Unsafe<string>({ type: 'string', enum: REVOKE_STATUSES }) }),
    status: 200,
    response: Type.Object({ id: Type.String(), status: Type.String() }),
    handler: async (req) => {
      const { id } = req.params as { id: string };
      const status = (req.body as { status?: unknown } | undefined)?.status;
      if (typeof status !== 'string' || !(REVOKE_STATUSES as readonly string[]).includes(status))
        throw badRequest(
          `The field "status" must be one of the disabled statuses: ${REVOKE_STATUSES.join(', ')}`,
        );
      const result = UUID.test(id) ? await revokeSubscription(ctx.store, id, status) : 'not_found';
      if (result === 'not_found') throw notFound(`No EventSub subscription has the id ${JSON.stringify(id)}`);
      if (result === 'disabled')
        throw new HelixError(409, `The EventSub subscription ${JSON.stringify(id)} is already disabled`);
      return { id, status };
    },
  });
}
