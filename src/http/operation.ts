// The route schema's `hide` and the OpenAPI keys are @fastify/swagger's (it augments FastifySchema).
import type {} from '@fastify/swagger';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Static, TProperties, TSchema } from 'typebox';
import type { AppContext } from '../context.ts';
import { type AccessRule, authorize, type Principal } from './access.ts';
import { HelixError, helixErrorBody } from './errors.ts';
import { type OperationPaging, operationPaging, type QueryOf, querySchema } from './params.ts';

/** Every operation is served under both prefixes (docs/api.md: the same operation at both). */
export const OPERATION_PREFIXES = ['/helix', '/mock'] as const;
/** The prefix /openapi.json describes; /mock serves the very same operations (docs/design.md). */
export const DOCUMENTED_PREFIX = OPERATION_PREFIXES[0];

export interface OperationRequest<Q> {
  query: Q;
  principal: Principal;
  req: FastifyRequest;
  reply: FastifyReply;
  /** `first`/`after`/`before` and `pagination` of this operation */
  pages: OperationPaging;
}

/** The error statuses an operation may answer besides the ones every operation may (COMMON_ERRORS). */
export type OperationErrors = Partial<Record<403 | 404, string>>;

export interface OperationDef<P extends TProperties, R extends TSchema> {
  /** the operation's path under each prefix, e.g. '/games/top' */
  path: string;
  /** Helix's name of the operation, e.g. 'Get Top Games' */
  summary: string;
  /** what it answers, in a sentence or two (the OpenAPI description) */
  description: string;
  access: AccessRule;
  /** the query-string parameters, each one's schema (Fastify validates them, after `access`) */
  query: P;
  /** the 200 answer's schema (it also serialises the answer, in its property order) */
  response: R;
  /** when the operation answers 403 or 404 */
  errors?: OperationErrors;
  /** decommissioned by Helix (the --legacy operations) */
  deprecated?: boolean;
  handler: (ctx: AppContext, r: OperationRequest<QueryOf<P>>) => Promise<Static<R>>;
}

/** What every operation may answer besides its 200, and when. */
const COMMON_ERRORS = {
  400: 'A parameter is missing, malformed, or breaks a rule of the operation; the message names it',
  401: 'No token or Client-Id, a token that is unknown, expired or of another client, or a token of the wrong kind or without a scope the operation needs',
  429: "The token's rate limit is spent until the time in Ratelimit-Reset",
  500: 'An unexpected failure (its details are logged, never sent)',
  503: 'The store is unreachable',
} as const;

const described = (schema: TSchema, description: string) => ({ ...schema, description });

/** The OpenAPI description of who may call: `bearer` with the scopes (any one of them), and Client-Id. */
function securityOf(access: AccessRule) {
  const scopes = access.anyScope?.length ? access.anyScope : [undefined];
  return {
    security: scopes.map((s) => ({ bearer: s === undefined ? [] : [s], clientId: [] })),
    'x-token-kind': access.token === 'user' ? 'user' : 'app or user',
  };
}

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * The caller an operation's onRequest hook found, for the handler of the same request; null
     * before it and on every other route. Declared with `decorateRequest` (decorateOperations).
     */
    principal: Principal | null;
  }
}

/**
 * Declares what registerOperation keeps on a request, once per app, before any route: with a null
 * start value every request object has the same shape from its creation (Fastify's advice).
 */
export function decorateOperations(app: FastifyInstance): void {
  app.decorateRequest('principal', null);
}

/**
 * Registers one operation at `/helix<path>` and `/mock<path>`. The access rules run in the route's
 * onRequest hook, before any parameter is looked at (a request with no token is a 401 even when
 * its parameters are wrong); Fastify validates the query string after it, with the schema `query`
 * (see query-validator.ts), and the handler receives the typed, defaulted query.
 */
export function registerOperation<P extends TProperties, R extends TSchema>(
  app: FastifyInstance,
  ctx: AppContext,
  def: OperationDef<P, R>,
): void {
  const errors = { ...COMMON_ERRORS, ...def.errors };
  const response: Record<number, object> = { 200: described(def.response, 'OK') };
  for (const [status, when] of Object.entries(errors))
    response[Number(status)] = described(helixErrorBody, when);
  const pages = operationPaging(ctx.secret, def.path);
  for (const prefix of OPERATION_PREFIXES) {
    app.get(prefix + def.path, {
      schema: {
        // Only one prefix is described: the other serves the same operations.
        hide: prefix !== DOCUMENTED_PREFIX,
        operationId: `get${def.path.replaceAll('/', '-')}`,
        summary: def.summary,
        description: def.description,
        ...(def.deprecated ? { deprecated: true } : {}),
        ...securityOf(def.access),
        querystring: querySchema(def.query),
        response,
      },
      onRequest: async (req, reply) => {
        const principal = await authorize(ctx, req, def.access);
        // Rate limit after the token check (the bucket is the token's), before any parameter.
        reply.headers(await ctx.rateLimiter.charge(principal));
        req.principal = principal;
      },
      handler: async (req, reply) => {
        const { principal } = req;
        if (principal === null) throw new Error(`${req.url}: no principal (the access hook did not run)`);
        return def.handler(ctx, { query: req.query as QueryOf<P>, principal, req, reply, pages });
      },
    });
    // The operations are reads: any other method on their paths is a 405, not a 404. Refused in
    // onRequest, before any body is read, so a body's size or type cannot turn it into a 413/415.
    app.route({
      method: ['POST', 'PUT', 'PATCH', 'DELETE'],
      url: prefix + def.path,
      schema: { hide: true },
      onRequest: async () => {
        throw new HelixError(405, 'Method Not Allowed', { headers: { allow: 'GET, HEAD' } });
      },
      handler: async () => undefined,
    });
  }
}
