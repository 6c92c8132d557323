// The admin API's request plumbing (docs/admin.md): who may call it, how its routes are declared
// and described in /openapi.json. The routes themselves are src/routes/admin/records.ts.
import type {} from '@fastify/swagger';
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import type { TSchema } from 'typebox';
import type { AppContext } from '../../context.ts';
import { bearerToken, isSecretToken } from '../../http/access.ts';
import { forbidden, HelixError, helixErrorBody } from '../../http/errors.ts';
import { strictJsonBodies } from '../../http/json-body.ts';
import { compileValidator } from '../../http/query-validator.ts';
import { INPUT_LIMIT } from '../../wire/text.ts';

/** Every admin path starts here. */
export const ADMIN_PREFIX = '/admin';
/**
 * An admin batch may be large (an import's worth of records): bodies up to this many bytes, as many
 * as a line of `helixd import` may hold.
 */
export const ADMIN_BODY_LIMIT = INPUT_LIMIT;

/**
 * No `Authorization: Bearer` is a 401; any other token (a Helix token included) a 403. The check
 * runs before the body is read.
 */
function authorizeAdmin(ctx: AppContext, req: FastifyRequest): void {
  const token = bearerToken(req.headers.authorization);
  if (!isSecretToken(token, ctx.config.adminToken)) throw forbidden('The token is not the admin token');
}

/** What an admin route may answer besides its success, and when. */
const ADMIN_ERRORS = {
  400: 'A record, a field or a parameter breaks a rule; the message names the record, the field and the rule',
  401: 'No admin token',
  403: 'A token that is not the admin token',
  404: 'No record has the key in the path, or a record names a record that does not exist',
  409: 'The key is taken, or the record is still named by others',
  413: 'The body is larger than 32 MiB',
  415: 'The body is not JSON (Content-Type: application/json)',
  500: 'An unexpected failure (its details are logged, never sent)',
  503: 'The store is unreachable (/admin/clock under --workers: a worker did not take the move in time)',
} as const;

export interface AdminRouteDef {
  method: HTTPMethods;
  /** under /admin, Fastify's syntax for path parameters (`/clips/:id`) */
  path: string;
  summary: string;
  description: string;
  /** the OpenAPI tag: the record kind's plural, or 'admin' */
  tag: string;
  /** the query string (Fastify validates it) */
  querystring?: TSchema;
  /** the path parameters, for the description */
  params?: TSchema;
  /** the body, for the description: the write path checks it (src/records/write.ts) */
  body?: TSchema;
  /** the success status and its schema (none: no body) */
  status: 200 | 201 | 202 | 204;
  response?: TSchema;
  handler: (req: FastifyRequest, reply: FastifyReply) => Promise<unknown>;
}

/** The apps whose bodies are read as the admin API reads them (adminBodies). */
const withAdminBodies = new WeakSet<FastifyInstance>();

/**
 * The admin API's bodies, read in place of Fastify's parsers. An empty body is no body, whatever
 * its Content-Type says (fetch-based clients send `Content-Type: application/json` on every call,
 * a DELETE without data included), so that the route decides: DELETE /admin/faults clears the
 * rules, a route that needs a body says so in its own words. A JSON body must be UTF-8: other bytes
 * are a 400 naming the body, the rule and the first bad byte, never text with U+FFFD in their
 * place. Any other type, text/plain included, is a 415 (every admin body is JSON): read as text,
 * it would only turn into a confusing "must be a JSON object". A request to no route is a 404
 * whatever its body.
 *
 * Installed on the app itself, once, by the first admin route: the admin routes are declared from
 * several files, and the app's other routes read no body (the token service reads its own,
 * src/routes/oauth/request.ts).
 */
function adminBodies(app: FastifyInstance): void {
  if (withAdminBodies.has(app)) return;
  withAdminBodies.add(app);
  app.removeAllContentTypeParsers();
  strictJsonBodies(app, (req, bytes) => bytes.length === 0 || req.is404);
  // Never read: an empty body is told by its headers (a length of 0, or neither a length nor
  // chunks), and any other is refused as it is.
  app.addContentTypeParser('*', (req, _payload, done) => {
    const length = req.headers['content-length'];
    const empty = length === '0' || (length === undefined && req.headers['transfer-encoding'] === undefined);
    if (empty || req.is404) return done(null, undefined);
    done(new HelixError(415, 'Unsupported Media Type'), undefined);
  });
}

/** Registers one admin route, off (404) when no admin token is configured. */
export function registerAdmin(app: FastifyInstance, ctx: AppContext, def: AdminRouteDef): void {
  if (ctx.config.adminToken === undefined) return;
  adminBodies(app);
  const response: Record<number, object> = {
    [def.status]: def.response
      ? { ...def.response, description: def.status === 202 ? 'Accepted' : 'OK' }
      : { description: 'No content', type: 'null' },
  };
  for (const [status, when] of Object.entries(ADMIN_ERRORS))
    response[Number(status)] = { ...helixErrorBody, description: when };
  app.route({
    method: def.method,
    url: ADMIN_PREFIX + def.path,
    bodyLimit: ADMIN_BODY_LIMIT,
    schema: {
      operationId: `admin-${def.method.toLowerCase()}${def.path.replaceAll(/[/:]+/g, '-')}`,
      tags: [def.tag === 'admin' ? 'admin' : `admin ${def.tag}`],
      summary: def.summary,
      description: def.description,
      security: [{ admin: [] }],
      ...(def.querystring ? { querystring: def.querystring } : {}),
      ...(def.params ? { params: def.params } : {}),
      ...(def.body ? { body: def.body } : {}),
      response,
    },
    // Bodies and path segments are read by the write path, whose messages name the record and the
    // field; only the query string is Fastify's to check.
    validatorCompiler: (route) =>
      route.httpPart === 'querystring' ? compileValidator(route) : (data: unknown) => ({ value: data }),
    onRequest: async (req) => authorizeAdmin(ctx, req),
    handler: async (req, reply) => {
      const out = await def.handler(req, reply);
      reply.code(def.status);
      return def.status === 204 ? undefined : out;
    },
  });
}
