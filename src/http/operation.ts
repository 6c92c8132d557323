// The route schema's `hide` and the OpenAPI keys are @fastify/swagger's (it augments FastifySchema).
import type {} from '@fastify/swagger';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Static, TProperties, TSchema } from 'typebox';
import type { AppContext } from '../context.ts';
import { type AccessRule, authorize, type Principal } from './access.ts';
import { HelixError, helixErrorBody } from './errors.ts';
import { strictJsonBodies } from './json-body.ts';
import { type OperationPaging, operationPaging, type QueryOf, querySchema } from './params.ts';
import { compileValidator, queryReader } from './query-validator.ts';

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
  /** the JSON body, as parsed (an operation with a `body` only; undefined when none was sent) */
  body: unknown;
}

/** The error statuses an operation may answer besides the ones every operation may (COMMON_ERRORS). */
export type OperationErrors = Partial<Record<403 | 404 | 409 | 429, string>>;

/**
 * The methods an operation may be served with. Only the operations Helix serves with them are
 * writes (docs/api.md: PUT /users, POST /streams/markers, DELETE /videos, POST /clips, and
 * EventSub's POST and DELETE); every other method of an operation's path is a 405 (refuseOtherMethods).
 */
export type OperationMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface OperationDef<P extends TProperties, R extends TSchema> {
  /** GET (the default), POST, PUT or DELETE */
  method?: OperationMethod;
  /** the operation's path under each prefix, e.g. '/games/top' */
  path: string;
  /** Helix's name of the operation, e.g. 'Get Top Games' */
  summary: string;
  /** what it answers, in a sentence or two (the OpenAPI description) */
  description: string;
  access: AccessRule;
  /** the query-string parameters, each one's schema (Fastify validates them, after `access`) */
  query: P;
  /**
   * A JSON body (POST, PATCH): its schema describes it in /openapi.json; the handler checks it, so that
   * the message names the field and the rule as the operation words them.
   */
  body?: TSchema;
  /** the success status (default 200); 204 answers no body */
  status?: 200 | 202 | 204;
  /** the success answer's schema (it also serialises the answer, in its property order); Type.Null() for a 204 */
  response: R;
  /** when the operation answers 403, 404, 409 (or 429 besides the rate limit) */
  errors?: OperationErrors;
  /** decommissioned by Helix (the --legacy operations) */
  deprecated?: boolean;
  /**
   * Also served at the bare path, with no prefix (hidden from /openapi.json as /mock is): Twurple's
   * mock mode calls `/eventsub/subscriptions` so.
   */
  unprefixed?: boolean;
  handler: (ctx: AppContext, r: OperationRequest<QueryOf<P>>) => Promise<Static<R>>;
}

/** An operation of any parameters and answer, as `operation` makes it for registerOperations. */
export type AnyOperation = OperationDef<TProperties, TSchema>;

/** `def`, type-checked against its own parameters and answer, for registerOperations. */
export const operation = <P extends TProperties, R extends TSchema>(def: OperationDef<P, R>): AnyOperation =>
  def as unknown as AnyOperation;

/** What every operation may answer besides its 200, and when. */
const COMMON_ERRORS = {
  400: 'A parameter is missing, malformed, or breaks a rule of the operation; the message names it',
  401: 'No token or Client-Id, a token that is unknown, expired or of another client, or a token of the wrong kind or without a scope the operation needs',
  429: "The token's rate limit is spent until the time in Ratelimit-Reset",
  500: 'An unexpected failure (its details are logged, never sent)',
  503: 'The store is unreachable',
} as const;

/** What an operation that reads a JSON body may answer besides, and when. */
const BODY_ERRORS = {
  413: 'The body is larger than 64 KiB',
  415: 'The body is not JSON (Content-Type: application/json)',
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
 * The bodies of the operations that read one (`reading`: the methods whose operation declares a
 * body: POST, PATCH), read in place of Fastify's parsers in the operations' own scope: JSON only, UTF-8
 * only (other bytes are a 400 naming the first bad one, never text with U+FFFD in their place), an
 * empty body is no body (the handler says what is missing); any other type is a 415. Another
 * method's body is never looked at, nor that of a write that takes none (POST /clips reads its
 * query string only, as production: a body sent with it is passed over).
 */
function operationBodies(scope: FastifyInstance, reading: ReadonlySet<string>): void {
  const ignored = (method: string, bytes: Buffer) => bytes.length === 0 || !reading.has(method);
  scope.removeAllContentTypeParsers();
  strictJsonBodies(scope, (req, bytes) => ignored(req.method, bytes));
  scope.addContentTypeParser('*', { parseAs: 'buffer' }, (req, body, done) => {
    if (ignored(req.method, body as Buffer)) return done(null, undefined);
    done(new HelixError(415, 'Unsupported Media Type'), undefined);
  });
}

/** Registers one operation (GET, unless it says otherwise) at `/helix<path>` and `/mock<path>`. */
export function registerOperation<P extends TProperties, R extends TSchema>(
  app: FastifyInstance,
  ctx: AppContext,
  def: OperationDef<P, R>,
): void {
  registerOperations(app, ctx, [operation(def)]);
}

/**
 * Registers the operations of one path (one per method) at `/helix<path>` and `/mock<path>` (and
 * the bare path when they say so). The access rules run in the route's onRequest hook, before any
 * parameter or body is looked at (a request with no token is a 401 even when its parameters are
 * wrong); Fastify validates the query string after it, with the schema `query` (see
 * query-validator.ts), and the handler receives the typed, defaulted query. Any other method on the
 * path is a 405, not a 404.
 */
export function registerOperations(
  app: FastifyInstance,
  ctx: AppContext,
  defs: readonly AnyOperation[],
): void {
  const path = defs[0]?.path;
  if (path === undefined || defs.some((d) => d.path !== path))
    throw new Error('registerOperations: one or more operations of one path');
  const methods = defs.map((d) => d.method ?? 'GET');
  if (new Set(methods).size !== methods.length) throw new Error(`${path}: a method declared twice`);
  const add = (scope: FastifyInstance) => {
    for (const def of defs) addOperation(scope, ctx, def);
    refuseOtherMethods(scope, defs, methods);
  };
  // Operations with a body read it with their own parsers, in a scope of their own: the app's other
  // routes read none, or their own (the token service's, the admin API's). A path with a write that
  // takes no body (PUT /users, DELETE /videos, POST /clips) gets them too, so that a body sent with
  // it is passed over as on every method whose operation reads none, never read by the app's parsers.
  if (defs.some((d) => d.body !== undefined || (d.method ?? 'GET') !== 'GET'))
    app.register(async (scope) => {
      operationBodies(scope, new Set(defs.filter((d) => d.body !== undefined).map((d) => d.method ?? 'GET')));
      add(scope);
    });
  else add(app);
}

const prefixesOf = (def: AnyOperation): readonly string[] =>
  def.unprefixed ? [...OPERATION_PREFIXES, ''] : OPERATION_PREFIXES;

function addOperation(app: FastifyInstance, ctx: AppContext, def: AnyOperation): void {
  const method = def.method ?? 'GET';
  const status = def.status ?? 200;
  const errors = { ...COMMON_ERRORS, ...(def.body ? BODY_ERRORS : {}), ...def.errors };
  const response: Record<number, object> = {
    [status]: status === 204 ? { description: 'No content', type: 'null' } : described(def.response, 'OK'),
  };
  for (const [code, when] of Object.entries(errors)) response[Number(code)] = described(helixErrorBody, when);
  const pages = operationPaging(ctx.secret, def.path);
  const querystring = querySchema(def.query);
  /** The token's check and its rate limit, before anything else of the request is looked at. */
  const access = async (req: FastifyRequest, reply: FastifyReply) => {
    const principal = await authorize(ctx, req, def.access);
    // Rate limit after the token check (the bucket is the token's), before any parameter.
    reply.headers(await ctx.rateLimiter.charge(principal));
    req.principal = principal;
  };
  // A GET runs as one step (docs/perf/2026-11-27-per-request.md): the access rules, the rate limit
  // and the query's validation in the handler, in that order, rather than a hook of its own and
  // Fastify's validation. Every other method keeps the hook, whether or not its operation reads a
  // body: a request may carry one, and the access rules must answer before it is read (a 401,
  // never a 413 or a 415, for a request without a token).
  const oneStep = method === 'GET' && def.body === undefined;
  const readQuery = oneStep ? queryReader(querystring) : undefined;
  const passThrough = (data: unknown) => ({ value: data });
  for (const prefix of prefixesOf(def)) {
    app.route({
      method,
      url: prefix + def.path,
      schema: {
        // Only one prefix is described: the others serve the same operations.
        hide: prefix !== DOCUMENTED_PREFIX,
        operationId: `${method.toLowerCase()}${def.path.replaceAll('/', '-')}`,
        summary: def.summary,
        description: def.description,
        ...(def.deprecated ? { deprecated: true } : {}),
        ...securityOf(def.access),
        querystring,
        ...(def.body ? { body: def.body } : {}),
        response,
      },
      // The body is the handler's to check (its messages name the field); the query string is
      // Fastify's, with helixd's strict reading, or the one step's (readQuery, the same reading).
      validatorCompiler: (route) =>
        route.httpPart === 'body' || readQuery ? passThrough : compileValidator(route),
      ...(oneStep ? {} : { onRequest: access }),
      handler: async (req, reply) => {
        if (oneStep) await access(req, reply);
        const { principal } = req;
        if (principal === null) throw new Error(`${req.url}: no principal (the access hook did not run)`);
        const query = (readQuery ? readQuery(req.query) : req.query) as QueryOf<TProperties>;
        const out = await def.handler(ctx, { query, principal, req, reply, pages, body: req.body });
        reply.code(status);
        return status === 204 ? undefined : out;
      },
    });
  }
}

/**
 * The methods a path does not serve are a 405 naming the ones it does, not a 404. Refused in
 * onRequest, before any body is read, so a body's size or type cannot turn it into a 413/415.
 */
function refuseOtherMethods(app: FastifyInstance, defs: readonly AnyOperation[], served: readonly string[]) {
  const others = (['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const).filter((m) => !served.includes(m));
  const allow = [...served.flatMap((m) => (m === 'GET' ? ['GET', 'HEAD'] : [m]))].join(', ');
  const prefixes = new Set(defs.flatMap(prefixesOf));
  for (const prefix of prefixes)
    app.route({
      method: others,
      url: prefix + (defs[0] as AnyOperation).path,
      schema: { hide: true },
      onRequest: async () => {
        throw new HelixError(405, 'Method Not Allowed', { headers: { allow } });
      },
      handler: async () => undefined,
    });
}
