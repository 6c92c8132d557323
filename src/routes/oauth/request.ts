// What every token-service route shares to read a request and answer an error: the bodies it
// takes, its parameters, its error shape and what the grants (src/auth/grants.ts) work with.
import formbody from '@fastify/formbody';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { GrantEnv } from '../../auth/grants.ts';
import { NotAString, oauthError, type Params } from '../../auth/params.ts';
import { nowSeconds } from '../../clock.ts';
import type { AppContext } from '../../context.ts';
import { describeError } from '../../http/errors.ts';
import { decodeUtf8, InvalidUtf8 } from '../../wire/text.ts';

/**
 * The bodies the token service reads. Clients send their parameters three ways: in the query
 * string with no body at all, or an EMPTY body whatever its Content-Type says (aiohttp, under
 * pyTwitchAPI, sends `Content-Type: application/octet-stream` and `Content-Length: 0` for a POST
 * without data); as a form (`application/x-www-form-urlencoded`); or as a JSON object. An empty
 * body is no body for every type, JSON included; a JSON body must be UTF-8. Any other non-empty body, `text/plain` included,
 * is a 415: guessing at it would only turn into a confusing "missing client id" further on.
 */
export async function tokenServiceBodies(scope: FastifyInstance): Promise<void> {
  const parseJson = scope.getDefaultJsonParser('error', 'error');
  // Fastify's own parsers (JSON, which refuses an empty body, and text/plain) are replaced here.
  scope.removeAllContentTypeParsers();
  await scope.register(formbody);
  scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (req, bytes, done) => {
    if ((bytes as Buffer).length === 0) return done(null, undefined);
    // Bytes that are not UTF-8 are refused, as the admin API refuses them, rather than read as
    // U+FFFD: a parameter would otherwise be compared as other text than the one sent.
    let body: string;
    try {
      body = decodeUtf8(bytes as Buffer);
    } catch (err) {
      if (!(err instanceof InvalidUtf8)) throw err;
      return done(oauthError(400, `body: is ${err.message}`));
    }
    parseJson(req, body, (err, value) => {
      if (err) return done(err);
      if (typeof value !== 'object' || value === null || Array.isArray(value))
        return done(oauthError(400, 'the JSON body must be an object'));
      const p: Params = {};
      for (const [k, v] of Object.entries(value)) p[k] = typeof v === 'string' ? v : new NotAString();
      done(null, p);
    });
  });
  scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => {
    if ((body as Buffer).length === 0) return done(null, undefined);
    done(oauthError(415, 'Unsupported Media Type'));
  });
}

/** Query string and form (or JSON) body together; the body wins when both name a parameter. */
export function paramsOf(req: FastifyRequest): Params {
  return { ...(req.query as Params), ...((req.body as Params | undefined) ?? {}) };
}

/** The token service's own error answer, {"status", "message"}: no `error` key, unlike the operations'. */
export function handleTokenServiceError(err: FastifyError | Error, req: FastifyRequest, reply: FastifyReply) {
  const { status, message, headers } = describeError(err, req);
  if (headers) reply.headers(headers);
  reply.code(status).type('application/json; charset=utf-8').send({ status, message });
}

/** What the grants work with, from the app's context. */
export function grantEnv(ctx: AppContext): GrantEnv {
  const { userTokenTtl, appTokenTtl } = ctx.config;
  return { db: ctx.store.db, now: () => nowSeconds(ctx.clock), userTokenTtl, appTokenTtl };
}
