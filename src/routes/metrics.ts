import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.ts';
import { bearerToken, isSecretToken } from '../http/access.ts';
import { helixErrorBody, unauthorized } from '../http/errors.ts';

export const METRICS_PATH = '/metrics';

/** With a metrics token configured, a request without it (or with another) is a 401. */
function authorizeMetrics(ctx: AppContext, req: FastifyRequest): void {
  const token = bearerToken(req.headers.authorization);
  if (!isSecretToken(token, ctx.config.metricsToken))
    throw unauthorized('The token is not the metrics token');
}

/** /metrics, in Prometheus text format (src/metrics/registry.ts): open, or behind --metrics-token. */
export function metricsRoutes(app: FastifyInstance, ctx: AppContext): void {
  const guarded = ctx.config.metricsToken !== undefined;
  app.get(
    METRICS_PATH,
    {
      schema: {
        tags: ['Metrics'],
        summary: 'Metrics in Prometheus text format',
        description:
          'Requests by operation and status, their latency, store query times, rate-limit refusals, token-cache lookups, and the process (CPU, memory, event loop, GC); under --workers, summed over every worker. ' +
          (guarded ? 'Needs the metrics token (--metrics-token).' : 'Open: no --metrics-token is set.'),
        ...(guarded ? { security: [{ metrics: [] }] } : {}),
        response: {
          200: {
            description: 'The metrics (Prometheus text exposition format 0.0.4)',
            content: { 'text/plain': { schema: { type: 'string' } } },
          },
          ...(guarded
            ? {
                401: { ...helixErrorBody, description: 'No token, or a token that is not the metrics token' },
              }
            : {}),
          ...(ctx.metrics.summed
            ? {
                503: {
                  ...helixErrorBody,
                  description:
                    "Under --workers: the first process did not sum the workers' figures within the deadline (--query-timeout)",
                },
              }
            : {}),
        },
      },
      ...(guarded ? { onRequest: async (req: FastifyRequest) => authorizeMetrics(ctx, req) } : {}),
    },
    async (_req, reply) => reply.type(ctx.metrics.contentType).send(await ctx.metrics.text()),
  );
}
