import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { errorBody, helixErrorBody } from '../http/errors.ts';
import { type Dependency, unavailability } from '../store/unavailable.ts';

const okSchema = Type.Object({ status: Type.Literal('ok') });

const probeSchema = (summary: string) => ({
  summary,
  tags: ['Probes'],
  response: { 200: { ...okSchema, description: summary } },
});

/** What /readyz found of each dependency that serves requests: "ok", or why it cannot serve. */
const checksSchema = Type.Object(
  {
    store: Type.String({
      description:
        '"ok", or why the store cannot serve: "did not answer within 2000 ms", "cannot be reached", "file was deleted", "file is read-only (EACCES)", "disk is full", ...',
    }),
    redis: Type.Optional(
      Type.String({
        description: 'With --redis-url and rate limits on: "ok", or why Redis cannot serve',
      }),
    ),
  },
  { description: 'Each dependency that serves requests, checked within the deadline (--query-timeout)' },
);
type Checks = { store: string; redis?: string };

const readySchema = Type.Object({ status: Type.Literal('ok'), checks: checksSchema });
const notReadySchema = Type.Object({ ...helixErrorBody.properties, checks: checksSchema });

/** Probes for load balancers and orchestrators; no token needed. */
export function healthRoutes(app: FastifyInstance, ctx: AppContext): void {
  // The process is up and serving HTTP.
  app.get('/healthz', { schema: probeSchema('The process is up') }, async () => ({ status: 'ok' as const }));
  // Every dependency answers: send traffic here.
  app.get(
    '/readyz',
    {
      schema: {
        summary: 'Every dependency that serves requests answers',
        tags: ['Probes'],
        response: {
          200: { ...readySchema, description: 'The store (and Redis, when configured) can serve' },
          503: {
            ...notReadySchema,
            description:
              'A dependency cannot serve (`checks` says which and why), or the server is draining before it stops',
          },
        },
      },
    },
    async (req, reply) => {
      const probes: [Exclude<Dependency, 'primary'>, Promise<void>][] = [['store', ctx.store.ping()]];
      const redis = ctx.rateLimiter.ping();
      if (redis) probes.push(['redis', redis]);
      // Each probe is bounded by its own deadline (the store's and Redis's): run them side by side.
      const results = await Promise.allSettled(probes.map(([, p]) => p));
      const checks: Checks = { store: 'ok' };
      const down: string[] = [];
      probes.forEach(([name], i) => {
        const r = results[i] as PromiseSettledResult<void>;
        if (r.status === 'fulfilled') {
          checks[name] = 'ok';
          return;
        }
        const reason = unavailability(r.reason)?.reason ?? 'failed (see the log)';
        checks[name] = reason;
        down.push(`${name} ${reason}`);
        req.log.warn({ err: r.reason, dependency: name, reason }, `not ready: ${name} ${reason}`);
      });
      // A load balancer must stop sending here while the server drains, whatever the checks say.
      if (ctx.drain.draining)
        return reply
          .code(503)
          .send({ ...errorBody(503, 'Draining: this instance is shutting down'), checks });
      if (down.length === 0) return { status: 'ok', checks };
      return reply.code(503).send({ ...errorBody(503, `Not ready: ${down.join('; ')}`), checks });
    },
  );
}
