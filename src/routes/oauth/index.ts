// The token service (docs/auth.md): /oauth2/token, /oauth2/authorize, /oauth2/validate,
// /oauth2/revoke, their mock-server aliases under /auth/*, and the mock-server shortcut POST
// /auth/authorize (grant_type=user_token). Parameters come in the query string, a form body or a
// JSON object body; errors have the token service's own shape, {"status", "message"}. What the
// production profile leaves out, and why: grantsOf below.
import { timingSafeEqual } from 'node:crypto';
import formbody from '@fastify/formbody';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type Static, Type } from 'typebox';
import { issueCode, redeemCode } from '../../auth/codes.ts';
import {
  type AuthorizeRequest,
  CONSENT_HEADERS,
  RESPONSE_TYPES,
  renderConsentPage,
} from '../../auth/consent.ts';
import { isScope, splitScopes } from '../../auth/scopes.ts';
import { type MintedToken, mintToken, refreshToken, revokeToken, sha256 } from '../../auth/tokens.ts';
import { nowSeconds } from '../../clock.ts';
import type { AppContext } from '../../context.ts';
import { bearerToken } from '../../http/access.ts';
import { describeError, HelixError } from '../../http/errors.ts';
import { FORM_KEY } from '../../http/openapi.ts';
import { redirectUriRule } from '../../records/kinds.ts';
import { findClient, redirectUrisOf } from '../../store/clients.ts';
import type { ClientRow } from '../../store/schema.ts';
import { unstorableText } from '../../store/text.ts';
import { findUserById, findUserByLogin, usersById } from '../../store/users.ts';
import { parseNumericId } from '../../wire/ids.ts';

/** The token service answers here and, for client libraries' mock mode, under /auth. */
const TOKEN_SERVICE_PREFIXES = ['/oauth2', '/auth'] as const;

export const GRANT_TYPES = ['client_credentials', 'authorization_code', 'refresh_token'] as const;
type GrantType = (typeof GRANT_TYPES)[number];

/**
 * The grants POST /oauth2/token accepts, decided grant by grant from the profile's one switch
 * (config.ts, devShortcuts):
 * - client_credentials: every profile; the client proves itself with its secret.
 * - refresh_token: every profile; the caller holds a refresh token and the client's secret. In
 *   production user tokens come from the operator (`helixd token --user`) and live on this way.
 * - authorization_code: development only. Its codes come from the consent page alone, and helixd
 *   has no sign-in of its own: whoever reaches that page acts as any user. Without the page (off
 *   with the grant) there could be no code to redeem.
 * - user_token (POST /auth/authorize, never this route): development only; any user's token for a
 *   client secret alone, which /units/clients hands out.
 * A grant left out is refused as any unknown one is: 400 `unsupported grant type`.
 */
function grantsOf(ctx: AppContext): readonly GrantType[] {
  return ctx.config.devShortcuts ? GRANT_TYPES : ['client_credentials', 'refresh_token'];
}

/** How many users the consent page offers to pick from (any other can be typed in). */
const CONSENT_USERS = 10;

const oauthError = (status: number, message: string) => new HelixError(status, message);

// ---- The token service's wire shapes (each declared once; they also serialise the answers) ----

/** The token service's own error body: no `error` key, unlike the operations'. */
const tokenServiceErrorSchema = Type.Object({ status: Type.Integer(), message: Type.String() });

/** A minted token, in the order production sends its keys; an app token has no refresh token or scope. */
const tokenReplySchema = Type.Object({
  access_token: Type.String(),
  refresh_token: Type.Optional(Type.String({ description: 'User access tokens only' })),
  expires_in: Type.Integer({ description: 'Seconds until the token expires' }),
  scope: Type.Optional(Type.Array(Type.String(), { description: 'User access tokens only' })),
  token_type: Type.Literal('bearer'),
});
type TokenReply = Static<typeof tokenReplySchema>;

/** What /validate says of a live token; `login` and `user_id` only for a user access token. */
const validateReplySchema = Type.Object({
  client_id: Type.String(),
  login: Type.Optional(Type.String()),
  scopes: Type.Array(Type.String()),
  user_id: Type.Optional(Type.String()),
  expires_in: Type.Integer({ description: 'Seconds until the token expires' }),
});
type ValidateReply = Static<typeof validateReplySchema>;

const field = (description: string) => Type.String({ description });
const clientFields = {
  client_id: field('The client'),
  client_secret: field("The client's secret"),
};
/** The parameters of POST /oauth2/token, by grant type: those of the grants served. */
const tokenForm = (grants: readonly GrantType[]) =>
  Type.Object({
    ...clientFields,
    grant_type: Type.Unsafe<string>({ type: 'string', enum: grants }),
    scope: field(
      'client_credentials: space-separated scopes (app tokens carry none; unknown ones are refused)',
    ),
    ...(grants.includes('authorization_code')
      ? {
          code: field('authorization_code: the code from the redirect'),
          redirect_uri: field('authorization_code: the redirect URI the code was issued for'),
        }
      : {}),
    refresh_token: field('refresh_token: the refresh token'),
  });
const authorizeForm = Type.Object({
  client_id: field('The client'),
  redirect_uri: field('One of the redirect URIs registered for the client'),
  response_type: Type.Unsafe<string>({ type: 'string', enum: RESPONSE_TYPES }),
  scope: field('Space-separated scopes'),
  state: field('Echoed back in the redirect'),
});

const html = (description: string) => ({
  description,
  content: { 'text/html': { schema: { type: 'string' } } },
});
const noBody = (description: string) => ({ description, type: 'null' });
const serviceError = (description: string) => ({ ...tokenServiceErrorSchema, description });
/** Errors of every token-service route that reads a body. */
const BODY_ERRORS = {
  413: serviceError('The body is larger than 64 KiB'),
  415: serviceError('A body that is neither empty, a form nor a JSON object'),
};

/** Errors every token-service route may answer, as the operations may (src/http/operation.ts). */
const SERVICE_FAILURES = {
  429: serviceError('Only an injected fault (development profile: the Helixd-Fault header, --faults)'),
  500: serviceError('An unexpected failure (its details are logged, never sent)'),
  503: serviceError('The store is unreachable'),
};

/** A token-service route's schema: documentation (tagged, `x-form` for its parameters) and answers. */
function serviceSchema(
  summary: string,
  description: string,
  form: object | undefined,
  response: Record<number, object>,
  hide = false,
) {
  return {
    hide,
    tags: ['Token service'],
    summary,
    description,
    ...(form ? { [FORM_KEY]: form } : {}),
    response: { ...SERVICE_FAILURES, ...response } as Record<number, object>,
  };
}

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
  // Every parameter may reach SQL (a client id, a login): text no store can hold is refused here.
  const rule = unstorableText(v);
  if (rule !== undefined) throw oauthError(400, `parameter ${name} ${rule}`);
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

function appTokenReply(t: MintedToken): TokenReply {
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
    const grants = grantsOf(ctx);

    const mintUserToken = (clientId: string, userId: number, scopes: readonly string[]) =>
      mintToken(db, { kind: 'user', clientId, userId, scopes, ttl: ctx.config.userTokenTtl, now: now() });

    for (const prefix of TOKEN_SERVICE_PREFIXES) {
      // The /auth aliases are the same routes: described once, under /oauth2.
      const alias = prefix !== TOKEN_SERVICE_PREFIXES[0];
      scope.post(
        `${prefix}/token`,
        {
          schema: serviceSchema(
            'Get a token',
            grants.includes('authorization_code')
              ? 'An app access token (client_credentials), or a user access token for an authorization code or a refresh token.'
              : 'An app access token (client_credentials), or a new user access token for a refresh token.',
            tokenForm(grants),
            {
              200: { ...tokenReplySchema, description: 'The token' },
              400: serviceError('A parameter is missing or wrong, or the code or refresh token is invalid'),
              403: serviceError('The client secret is wrong'),
              ...BODY_ERRORS,
            },
            alias,
          ),
        },
        async (req): Promise<TokenReply> => {
          const p = paramsOf(req);
          const client = await clientOf(ctx, p, true);
          const grant = required(p, 'grant_type', 'missing grant_type');
          if (!(grants as readonly string[]).includes(grant)) throw oauthError(400, 'unsupported grant type');
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
        },
      );

      scope.get(
        `${prefix}/validate`,
        {
          schema: serviceSchema(
            'Validate a token',
            'What the token in `Authorization: OAuth <token>` (or `Bearer <token>`) is: its client, user, scopes and remaining lifetime.',
            undefined,
            {
              200: { ...validateReplySchema, description: 'The token is live' },
              401: serviceError('No token, or a token that is unknown, expired or revoked'),
            },
            alias,
          ),
        },
        async (req): Promise<ValidateReply> => {
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
        },
      );

      scope.post(
        `${prefix}/revoke`,
        {
          schema: serviceSchema(
            'Revoke a token',
            'Revokes an access token of the client (and, with it, its refresh token).',
            Type.Object({ client_id: field('The client'), token: field('The access token') }),
            {
              200: noBody('Revoked'),
              400: serviceError('A parameter is missing, or the token is not a live token of the client'),
              ...BODY_ERRORS,
            },
            alias,
          ),
        },
        async (req, reply) => {
          const p = paramsOf(req);
          const client = await clientOf(ctx, p, false);
          const token = required(p, 'token', 'missing oauth token');
          // The deletion moves the store's change epoch: no cache here or elsewhere keeps the token.
          if (!(await revokeToken(db, token, client.id))) throw oauthError(400, 'Invalid token');
          return reply.code(200).send();
        },
      );
    }

    // The consent page and POST /auth/authorize: development's only (grantsOf says why).
    if (!ctx.config.devShortcuts) return;

    /**
     * The parameters of an authorization request, checked in RFC 6749's order: while the client or
     * the redirect URI is in doubt the error is shown here (never redirected to an unchecked URI);
     * after that, errors go back to the client through the redirect (section 4.1.2.1).
     */
    async function authorizeRequest(p: Params): Promise<AuthorizeRequest> {
      const client = await clientOf(ctx, p, false);
      const redirectUri = required(p, 'redirect_uri', 'missing redirect_uri');
      // Compared exactly, as registered; and the rule of registration again, for a URI a store took
      // before the rule (one with CR LF would be redirected to another URI than the one compared).
      if (!redirectUrisOf(client).includes(redirectUri) || redirectUriRule(redirectUri) !== undefined)
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

    const authorizeErrors = {
      302: noBody(
        'Back to the redirect URI: with the code or token, or with `error` and `error_description`',
      ),
      400: serviceError('The client or the redirect URI is missing or wrong (never redirected)'),
    };
    scope.get(
      '/oauth2/authorize',
      {
        schema: serviceSchema(
          'Authorize (consent page)',
          'The consent page of the authorization code and implicit flows: pick the user the token is for.',
          authorizeForm,
          { 200: html('The consent page'), ...authorizeErrors },
        ),
      },
      async (req, reply) => {
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
      },
    );

    scope.post(
      '/oauth2/authorize',
      {
        schema: serviceSchema(
          'Authorize (consent given)',
          "The consent page's answer: `decision=allow` and the user's `login` (or `user`) issue the code or token.",
          Type.Object({
            ...authorizeForm.properties,
            decision: field('`allow`, or anything else to deny'),
            login: field('The login of the user the token is for'),
          }),
          {
            ...authorizeErrors,
            400: {
              description:
                'The client or the redirect URI is wrong (the error body), or no such user (the consent page again)',
              content: {
                'application/json': { schema: tokenServiceErrorSchema },
                'text/html': { schema: { type: 'string' } },
              },
            },
            ...BODY_ERRORS,
          },
        ),
      },
      async (req, reply) => {
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
      },
    );

    // Mock-server convention (Twitch CLI's mock API): a user token for any user, without a browser.
    scope.post(
      '/auth/authorize',
      {
        schema: serviceSchema(
          'Get a user token (mock shortcut)',
          'A user access token for any user, without a browser (grant_type=user_token).',
          Type.Object({
            ...clientFields,
            grant_type: Type.Unsafe<string>({ type: 'string', enum: ['user_token'] }),
            user_id: field('The user'),
            scope: field('Space-separated scopes'),
          }),
          {
            200: { ...tokenReplySchema, description: 'The token' },
            400: serviceError('A parameter is missing or wrong'),
            403: serviceError('The client secret is wrong'),
            ...BODY_ERRORS,
          },
        ),
      },
      async (req): Promise<TokenReply> => {
        const p = paramsOf(req);
        const client = await clientOf(ctx, p, true);
        const grant = required(p, 'grant_type', 'missing grant_type');
        if (grant !== 'user_token') throw oauthError(400, 'unsupported grant type');
        const userId = required(p, 'user_id', 'missing user_id');
        const id = parseNumericId(userId);
        const user = id === undefined ? undefined : await findUserById(db, id);
        if (!user) throw oauthError(400, 'invalid user_id');
        return mintUserToken(client.id, user.id, requestedScopes(p));
      },
    );
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
 * the implicit flow, `state` echoed unchanged in both. The registered URI is written as registered,
 * its own query kept byte for byte, and the parameters appended after it: a URL object would write
 * its query again in its own encoding (`/` as `%2F`, `%20` as `+`). A registered URI has no fragment.
 */
function redirectTo(r: AuthorizeRequest, values: Record<string, string>): string {
  const uri = r.redirectUri;
  const params = new URLSearchParams({ ...values, ...(r.state !== undefined ? { state: r.state } : {}) });
  if (r.responseType === 'token') return `${uri}#${params}`;
  const joiner = !uri.includes('?') ? '?' : uri.endsWith('?') || uri.endsWith('&') ? '' : '&';
  return `${uri}${joiner}${params}`;
}
