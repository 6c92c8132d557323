import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema } from 'fastify';
import type { AppContext } from '../context.ts';
import { type AccessRule, authorize, type Principal } from './access.ts';
import { HelixError } from './errors.ts';
import { compileQuery } from './validate.ts';

/** Every operation is served under both prefixes (DESIGN decision 1). */
export const OPERATION_PREFIXES = ['/helix', '/mock'] as const;

export interface OperationRequest<Q> {
  query: Q;
  principal: Principal;
  req: FastifyRequest;
  reply: FastifyReply;
}

export interface OperationDef<Q> {
  /** the spec's path, e.g. '/games/top' */
  path: string;
  access: AccessRule;
  /** JSON schema of the query string (and of the 200 response, for fast serialisation) */
  schema: { querystring: object; response?: Record<number, object> };
  handler: (ctx: AppContext, r: OperationRequest<Q>) => Promise<unknown>;
}

/**
 * Registers one operation at `/helix<path>` and `/mock<path>`. The access rules run before any
 * parameter is looked at (a request with no token is a 401 even when its parameters are wrong),
 * so the query string is validated after authorization, not by Fastify's preValidation.
 */
export function registerOperation<Q>(app: FastifyInstance, ctx: AppContext, def: OperationDef<Q>): void {
  const validate = compileQuery<Q>(def.schema.querystring);
  for (const prefix of OPERATION_PREFIXES) {
    app.get(prefix + def.path, {
      schema: { response: def.schema.response } as FastifySchema,
      handler: async (req, reply) => {
        const principal = await authorize(ctx, req, def.access);
        // Rate limit after the token check (the bucket is the token's), before any parameter.
        reply.headers(await ctx.rateLimiter.charge(principal));
        const query = validate(req.query);
        return def.handler(ctx, { query, principal, req, reply });
      },
    });
    // The operations are reads: any other method on their paths is a 405, not a 404. Refused in
    // onRequest, before any body is read, so a body's size or type cannot turn it into a 413/415.
    app.route({
      method: ['POST', 'PUT', 'PATCH', 'DELETE'],
      url: prefix + def.path,
      onRequest: async () => {
        throw new HelixError(405, 'Method Not Allowed', { headers: { allow: 'GET, HEAD' } });
      },
      handler: async () => undefined,
    });
  }
}
