// Starting the world of `serve --live` with the app (its events: world.ts; its admin routes:
// src/routes/admin/live.ts).
import { randomInt } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.ts';
import { LIVE_EVENT_KINDS, LiveWorld } from './world.ts';

/**
 * The live world of this app, or none without `--live`. Its timer runs at `--live-rate` (a worker
 * of `--workers` other than the one its primary chose is given a rate of 0: src/cluster/primary.ts); the
 * app's close stops it after the event in progress.
 */
export function startLiveWorld(app: FastifyInstance, ctx: AppContext): LiveWorld | undefined {
  const { config } = ctx;
  if (!config.live) return undefined;
  const seed = config.liveSeed ?? randomInt(2 ** 31 - 1);
  const world = new LiveWorld(ctx.store, ctx.clock, seed, (kind) => ctx.metrics.liveEvent(kind));
  for (const kind of LIVE_EVENT_KINDS) ctx.metrics.liveEvent(kind, 0);
  world.start(config.liveRate, (err) => app.log.error({ err }, 'live world: an event failed'));
  app.addHook('onClose', () => world.stop());
  app.log.warn(
    { liveRate: config.liveRate, liveSeed: seed },
    config.liveRate > 0
      ? `the world moves on its own (--live): ${config.liveRate} events a second; --live-seed ${seed} replays them`
      : `the world moves when stepped (--live, POST /admin/live/step); --live-seed ${seed} replays it`,
  );
  return world;
}
