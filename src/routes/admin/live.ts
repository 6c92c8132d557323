// The live world at run time (`serve --live`, development profile, with --admin-token): how it
// runs, and its events made on demand (docs/admin.md, docs/live.md).
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { AppContext } from '../../context.ts';
import { badRequest } from '../../http/errors.ts';
import { LIVE_EVENT_KINDS, type LiveWorld } from '../../live/world.ts';
import { registerAdmin } from './route.ts';

/** The most events one POST /admin/live/step makes. */
const MAX_STEP = 10_000;

const kindCounts = Type.Object(Object.fromEntries(LIVE_EVENT_KINDS.map((k) => [k, Type.Integer()])), {
  description: 'How many events of each kind happened',
});

export function liveRoutes(app: FastifyInstance, ctx: AppContext, world: LiveWorld | undefined): void {
  if (!world) return;
  registerAdmin(app, ctx, {
    method: 'GET',
    path: '/live',
    tag: 'admin',
    summary: 'Get the live world',
    description: 'How the world of `--live` moves in this process: its rate, its seed, its events so far.',
    status: 200,
    response: Type.Object({
      rate: Type.Number({ description: 'Events a second of the timer (0: only when stepped)' }),
      seed: Type.Integer({ description: 'The seed of the draws' }),
      events: Type.Integer({ description: 'Events made since the start' }),
    }),
    handler: async () => ({ rate: ctx.config.liveRate, seed: world.seed, events: world.events }),
  });
  registerAdmin(app, ctx, {
    method: 'POST',
    path: '/live/step',
    tag: 'admin',
    summary: 'Make events of the live world now',
    description:
      'Makes `events` events (`{"events": 100}`, 1 to 10000) after those in progress, and answers once they are written. With `--live-rate 0` the world moves only this way: the same seed and store then give the same rows.',
    body: Type.Object({ events: Type.Integer({ minimum: 1, maximum: MAX_STEP }) }),
    status: 200,
    response: Type.Object({ events: Type.Integer(), kinds: kindCounts }),
    async handler(req) {
      const body = req.body as Record<string, unknown> | null;
      if (typeof body !== 'object' || body === null || Array.isArray(body))
        throw badRequest('body: must be a JSON object {"events": <n>}');
      const extra = Object.keys(body).find((k) => k !== 'events');
      if (extra !== undefined) throw badRequest(`body: "${extra}" is not a field (events)`);
      const n = body.events;
      if (!(Number.isInteger(n) && (n as number) >= 1 && (n as number) <= MAX_STEP))
        throw badRequest(`events: must be a whole number from 1 to ${MAX_STEP}`);
      const kinds = await world.step(n as number);
      return { events: n, kinds };
    },
  });
}
