import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { errorBody, helixErrorBody } from '../http/errors.ts';

const okSchema = Type.Object({ status: Type.Literal('ok') });

const probeSchema = (summary: string) => ({
  summary,
  tags: ['Probes'],
  response: { 200: { ...okSchema, description: summary } },
});

/** Probes for load balancers and orchestrators; no token needed. */
export function healthRoutes(app: FastifyInstance, ctx: AppContext): void {
  // The process is up and serving HTTP.
  app.get('/healthz', { schema: probeSchema('The process is up') }, async () => ({ status: 'ok' as const }));
  // The store answers: send traffic here.
  app.get(
    '/readyz',
    {
      schema: {
        ...probeSchema('The store answers'),
        response: {
          200: { ...okSchema, description: 'The store answers' },
          503: { ...helixErrorBody, description: 'The store is not reachable, or the server is draining' },
        },
      },
    },
    async (req, reply) => {
      // First: a load balancer must stop sending here even while the store answers.
      if (ctx.drain.draining)
        return reply.code(503).send(errorBody(503, 'Draining: this instance is shutting down'));
      try {
        await ctx.store.ping();
        return { status: 'ok' };
      } catch (err) {
        req.log.warn({ err }, 'store not reachable');
        return reply.code(503).send(errorBody(503, 'The store is not reachable'));
      }
    },
  );
}
