// The token service (docs/auth.md): /oauth2/token, /oauth2/authorize, /oauth2/validate,
// /oauth2/revoke, their mock-server aliases under /auth/*, and the mock-server shortcut POST
// /auth/authorize (grant_type=user_token). Parameters come in the query string, a form body or a
// JSON object body; errors have the token service's own shape, {"status", "message"}.
import { timingSafeEqual } from 'node:crypto';
import formbody from '@fastify/formbody';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { issueCode, redeemCode } from '../auth/codes.ts';
import {
  type AuthorizeRequest,
  CONSENT_HEADERS,
  RESPONSE_TYPES,
  renderConsentPage,
} from '../auth/consent.ts';
import { isScope, splitScopes } from '../auth/scopes.ts';
import { type MintedToken, mintToken, refreshToken, revokeToken, sha256 } from '../auth/tokens.ts';
import { nowSeconds } from '../clock.ts';
import type { AppContext } from '../context.ts';
import { bearerToken } from '../http/access.ts';
import { describeError, HelixError } from '../http/errors.ts';
import { findClient, redirectUrisOf } from '../store/clients.ts';
import { parseNumericId } from '../store/ids.ts';
import type { ClientRow } from '../store/schema.ts';
import { findUserById, findUserByLogin, usersById } from '../store/users.ts';

/** The token service answers here and, for client libraries' mock mode, under /auth. */
const TOKEN_SERVICE_PREFIXES = ['/oauth2', '/auth'] as const;

export const GRANT_TYPES = ['client_credentials', 'authorization_code', 'refresh_token'] as const;
type GrantType = (typeof GRANT_TYPES)[number];

/** How many users the consent page offers to pick from (any other can be typed in). */
const CONSENT_USERS = 10;

const oauthError = (status: number, message: string) => new HelixError(status, message);

/**
 * A JSON body's value that is not a string (a number, boolean, null, array or object). Kept, not
 * refused while parsing, so that only a parameter the request actually uses is an error, and the
 * error names it: a repeated query or form parameter (an array of strings) reads differently.
 */
class NotAString {}

type Params = Record<string, string | string[] | NotAString>;

/** Query string and form (or JSON) body together; the body wins when both name a parameter. */
function paramsOf(req: FastifyRequest): Params {
  return { ...(req.query as Params), ...((req.body as Params | undefined) ?? {}) };
}

function param(p: Params, name: string): string | undefined {
  const v = p[name];
  if (v === undefined) return undefined;
  if (v instanceof NotAString) throw oauthError(400, `parameter ${name} must be a string`);
  if (typeof v !== 'string') throw oauthError(400, `parameter ${name} may be given only once`);
  return v;
}

/**
 * The bodies the token service reads. Clients send their parameters three ways: in the query
 * string with no body at all, or an EMPTY body whatever its Content-Type says (aiohttp, under
 * pyTwitchAPI, sends `Content-Type: application/octet-stream` and `Content-Length: 0` for a POST
 * without data); as a form (`application/x-www-form-urlencoded`); or as a JSON object. An empty
 * body is no body for every type, JSON included. Any other non-empty body, `text/plain` included,
 * is a 415: guessing at it would only turn into a confusing "missing client id" further on.
 */
async function tokenServiceBodies(scope: FastifyInstance): Promise<void> {
  const parseJson = scope.getDefaultJsonParser('error', 'error');
  // Fastify's own parsers (JSON, which refuses an empty body, and text/plain) are replaced here.
  scope.removeAllContentTypeParsers();
  await scope.register(formbody);
  scope.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if (body === '') return done(null, undefined);
    parseJson(req, body as string, (err, value) => {
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

function required(p: Params, name: string, message: string): string {
  const v = param(p, name);
  if (v === undefined || v === '') throw oauthError(400, message);
  return v;
}

/** The scopes asked for, each one a known scope; duplicates dropped. */
function requestedScopes(p: Params): string[] {
  const scopes = [...new Set(splitScopes(param(p, 'scope')))];
  for (const s of scopes) if (!isScope(s)) throw oauthError(400, `invalid scope requested: '${s}'`);
  return scopes;
}

function secretMatches(client: ClientRow, secret: string): boolean {
  const a = Buffer.from(sha256(secret));
  const b = Buffer.from(client.secret_hash);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The client named by client_id, and (for the token endpoint) proven by its client_secret. */
async function clientOf(ctx: AppContext, p: Params, withSecret: boolean): Promise<ClientRow> {
  const id = required(p, 'client_id', 'missing client id');
  const client = await findClient(ctx.store.db, id);
  if (!client) throw oauthError(400, 'invalid client');
  if (withSecret) {
    const secret = param(p, 'client_secret');
    if (!secret || !secretMatches(client, secret)) throw oauthError(403, 'invalid client secret');
  }
  return client;
}

function appTokenReply(t: MintedToken) {
  return { access_token: t.access_token, expires_in: t.expires_in, token_type: t.token_type };
}

function handleTokenServiceError(err: FastifyError | Error, req: FastifyRequest, reply: FastifyReply) {
  const { status, message, headers } = describeError(err, req);
  if (headers) reply.headers(headers);
  reply.code(status).type('application/json; charset=utf-8').send({ status, message });
}

export function oauthRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.register(async (scope) => {
    // Bodies are parsed only here: the operations take none.
    await tokenServiceBodies(scope);
    scope.setErrorHandler(handleTokenServiceError);
    const db = ctx.store.db;
    const now = () => nowSeconds(ctx.clock);

    const mintUserToken = (clientId: string, userId: number, scopes: readonly string[]) =>
      mintToken(db, { kind: 'user', clientId, userId, scopes, ttl: ctx.config.userTokenTtl, now: now() });

    for (const prefix of TOKEN_SERVICE_PREFIXES) {
      scope.post(`${prefix}/token`, async (req) => {
        const p = paramsOf(req);
        const client = await clientOf(ctx, p, true);
        const grant = required(p, 'grant_type', 'missing grant_type');
        if (!(GRANT_TYPES as readonly string[]).includes(grant))
          throw oauthError(400, 'unsupported grant type');
        switch (grant as GrantType) {
          case 'client_credentials': {
            // App tokens carry no scopes; an unknown one is still refused, as production does.
            requestedScopes(p);
            const t = await mintToken(db, {
              kind: 'app',
              clientId: client.id,
              scopes: [],
              ttl: ctx.config.appTokenTtl,
              now: now(),
            });
            return appTokenReply(t);
          }
          case 'authorization_code': {
            const code = required(p, 'code', 'missing code');
            const grantOf = await redeemCode(db, code, client.id, now());
            if (!grantOf) throw oauthError(400, 'Invalid authorization code');
            if (param(p, 'redirect_uri') !== grantOf.redirectUri)
              throw oauthError(400, 'Parameter redirect_uri does not match registered URI');
            return mintUserToken(client.id, grantOf.userId, grantOf.scopes);
          }
          case 'refresh_token': {
            const raw = required(p, 'refresh_token', 'missing refresh token');
            const t = await refreshToken(db, raw, client.id, ctx.config.userTokenTtl, now());
            if (!t) throw oauthError(400, 'Invalid refresh token');
            return t;
          }
        }
      });

      scope.get(`${prefix}/validate`, async (req) => {
        const header = req.headers.authorization;
        if (header === undefined || header.trim() === '')
          throw oauthError(401, 'missing authorization token');
        let raw: string;
        try {
          raw = bearerToken(header, ['oauth', 'bearer']);
        } catch {
          throw oauthError(401, 'invalid access token');
        }
        const live = await ctx.tokens.find(raw, now());
        if (!live) throw oauthError(401, 'invalid access token');
        const t = live.row;
        const user = t.user_id === null ? undefined : await findUserById(db, t.user_id);
        return {
          client_id: t.client_id,
          ...(user ? { login: user.login } : {}),
          scopes: t.scopes.split(' ').filter(Boolean),
          ...(user ? { user_id: String(user.id) } : {}),
          expires_in: t.expires_at - now(),
        };
      });

      scope.post(`${prefix}/revoke`, async (req, reply) => {
        const p = paramsOf(req);
        const client = await clientOf(ctx, p, false);
        const token = required(p, 'token', 'missing oauth token');
        // The deletion moves the store's change epoch: no cache here or elsewhere keeps the token.
        if (!(await revokeToken(db, token, client.id))) throw oauthError(400, 'Invalid token');
        return reply.code(200).send();
      });
    }

    /**
     * The parameters of an authorization request, checked in RFC 6749's order: while the client or
     * the redirect URI is in doubt the error is shown here (never redirected to an unchecked URI);
     * after that, errors go back to the client through the redirect (section 4.1.2.1).
     */
    async function authorizeRequest(p: Params): Promise<AuthorizeRequest> {
      const client = await clientOf(ctx, p, false);
      const redirectUri = required(p, 'redirect_uri', 'missing redirect_uri');
      if (!redirectUrisOf(client).includes(redirectUri) || !URL.canParse(redirectUri))
        throw oauthError(400, 'Parameter redirect_uri does not match registered URI');
      const state = param(p, 'state');
      const responseType = param(p, 'response_type');
      const base = { clientId: client.id, clientName: client.name, redirectUri, state, scopes: [] };
      if (!(RESPONSE_TYPES as readonly (string | undefined)[]).includes(responseType))
        throw new RedirectError(
          { ...base, responseType: 'code' },
          'unsupported_response_type',
          'response_type must be code or token',
        );
      const r: AuthorizeRequest = { ...base, responseType: responseType as AuthorizeRequest['responseType'] };
      try {
        r.scopes = requestedScopes(p);
      } catch (err) {
        throw new RedirectError(r, 'invalid_scope', (err as Error).message);
      }
      return r;
    }

    async function consentUsers() {
      return (await usersById(db, { first: CONSENT_USERS })).rows;
    }

    const sendRedirect = (reply: FastifyReply, r: AuthorizeRequest, values: Record<string, string>) =>
      reply.code(302).header('cache-control', 'no-store').redirect(redirectTo(r, values), 302);

    const onRedirectError = (reply: FastifyReply, err: unknown) => {
      if (!(err instanceof RedirectError)) throw err;
      return sendRedirect(reply, err.request, { error: err.error, error_description: err.description });
    };

    scope.get('/oauth2/authorize', async (req, reply) => {
      let r: AuthorizeRequest;
      try {
        r = await authorizeRequest(paramsOf(req));
      } catch (err) {
        return onRedirectError(reply, err);
      }
      return reply
        .code(200)
        .headers(CONSENT_HEADERS)
        .send(renderConsentPage(r, await consentUsers()));
    });

    scope.post('/oauth2/authorize', async (req, reply) => {
      const p = paramsOf(req);
      let r: AuthorizeRequest;
      try {
        r = await authorizeRequest(p);
      } catch (err) {
        return onRedirectError(reply, err);
      }
      if (param(p, 'decision') !== 'allow')
        return sendRedirect(reply, r, {
          error: 'access_denied',
          error_description: 'The user denied you access',
        });
      const login = (param(p, 'login') ?? '').trim() || (param(p, 'user') ?? '').trim();
      const user = login ? await findUserByLogin(db, login) : undefined;
      if (!user) {
        const problem = login
          ? `There is no user with the login "${login}".`
          : 'Pick a user or type a login.';
        return reply
          .code(400)
          .headers(CONSENT_HEADERS)
          .send(renderConsentPage(r, await consentUsers(), problem));
      }
      if (r.responseType === 'code') {
        const code = await issueCode(
          db,
          { clientId: r.clientId, userId: user.id, scopes: r.scopes, redirectUri: r.redirectUri },
          now(),
        );
        return sendRedirect(reply, r, { code, scope: r.scopes.join(' ') });
      }
      const t = await mintUserToken(r.clientId, user.id, r.scopes);
      return sendRedirect(reply, r, {
        access_token: t.access_token,
        expires_in: String(t.expires_in),
        scope: r.scopes.join(' '),
        token_type: 'bearer',
      });
    });

    // Mock-server convention (Twitch CLI's mock API): a user token for any user, without a browser.
    scope.post('/auth/authorize', async (req) => {
      const p = paramsOf(req);
      const client = await clientOf(ctx, p, true);
      const grant = required(p, 'grant_type', 'missing grant_type');
      if (grant !== 'user_token') throw oauthError(400, 'unsupported grant type');
      const userId = required(p, 'user_id', 'missing user_id');
      const id = parseNumericId(userId);
      const user = id === undefined ? undefined : await findUserById(db, id);
      if (!user) throw oauthError(400, 'invalid user_id');
      return mintUserToken(client.id, user.id, requestedScopes(p));
    });
  });
}

/** An authorization error that is reported to the client through its (checked) redirect URI. */
class RedirectError extends Error {
  constructor(
    readonly request: AuthorizeRequest,
    readonly error: string,
    readonly description: string,
  ) {
    super(description);
  }
}

/**
 * The redirect back to the client: parameters in the query for the code flow, in the fragment for
 * the implicit flow (RFC 6749 sections 4.1.2 and 4.2.2), `state` echoed unchanged in both.
 */
function redirectTo(r: AuthorizeRequest, values: Record<string, string>): string {
  const u = new URL(r.redirectUri);
  const all = { ...values, ...(r.state !== undefined ? { state: r.state } : {}) };
  if (r.responseType === 'token') {
    u.hash = new URLSearchParams(all).toString();
  } else {
    for (const [k, v] of Object.entries(all)) u.searchParams.set(k, v);
  }
  return u.toString();
}
