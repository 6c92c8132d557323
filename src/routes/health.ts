import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.ts';
import { errorBody } from '../http/errors.ts';

/** Probes for load balancers and orchestrators; no token needed. */
export function healthRoutes(app: FastifyInstance, ctx: AppContext): void {
  // The process is up and serving HTTP.
  app.get('/healthz', async () => ({ status: 'ok' }));
  // The store answers: send traffic here.
  app.get('/readyz', async (req, reply) => {
    try {
      await ctx.store.ping();
      return { status: 'ok' };
    } catch (err) {
      req.log.warn({ err }, 'store not reachable');
      return reply.code(503).send(errorBody(503, 'The store is not reachable'));
    }
  });
}
