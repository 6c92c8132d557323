// EventSub's admin routes (docs/admin.md, docs/eventsub.md): events on demand, made by writing the
// change that causes them (src/eventsub/trigger.ts).
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { nowSeconds } from '../../clock.ts';
import type { AppContext } from '../../context.ts';
import { TRIGGER_TYPES, trigger, triggerInput } from '../../eventsub/trigger.ts';
import { registerAdmin } from './route.ts';

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
}
