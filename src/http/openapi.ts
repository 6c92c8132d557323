// The OpenAPI 3.1 document at /openapi.json and the docs page at /docs, both generated from the
// routes' own schemas (registerOperation's declarations): nothing here describes a parameter or a
// field. The page is Swagger UI served from its npm package: no CDN is needed to read it.
//
// Both are answered by a second Fastify app, the docs app (docs-app.ts), made on the first request
// to either: @fastify/swagger and @fastify/swagger-ui with what they load (yaml, @fastify/static,
// glob) were a large part of the code a start loads (docs/perf/2026-11-22-startup.md), for pages
// few requests ask for. This app keeps the routes as they are added, which the docs app is given
// to describe, and answers the docs' URLs with what the docs app answers.
import type { SwaggerOptions } from '@fastify/swagger';
import type { FastifySwaggerUiOptions } from '@fastify/swagger-ui';
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema, RouteOptions } from 'fastify';
import type { Config } from '../config.ts';
import { VERSION } from '../version.ts';
import { DOCUMENTED_PREFIX, OPERATION_PREFIXES } from './operation.ts';

export const OPENAPI_PATH = '/openapi.json';
export const DOCS_PATH = '/docs';

/**
 * A route schema's `x-form`: the parameters a token-service route reads from its query string or its
 * form or JSON body (src/routes/oauth/request.ts reads them, body first). Shown as the request body
 * (the query string for a GET), for the document only: Fastify never validates it.
 */
export const FORM_KEY = 'x-form';

const DESCRIPTION = `A self-hostable server wire-compatible with the Twitch Helix API.

Every operation is served under \`${DOCUMENTED_PREFIX}\` (described here) and, identically, under \`${OPERATION_PREFIXES.filter((p) => p !== DOCUMENTED_PREFIX).join(', ')}\`.
Each needs \`Authorization: Bearer <token>\` and \`Client-Id: <the client the token was issued to>\`.
An operation's \`security\` lists the scopes it accepts (any one of them), and \`x-token-kind\` says
whether an app access token is enough or a user access token is needed. Tokens come from the token
service (\`/oauth2/*\`).`;

/**
 * The URLs @fastify/swagger-ui serves under DOCS_PATH: the page, its assets (@fastify/static's
 * wildcard), and the document as JSON and YAML. Each is a route of this app, so that logs and
 * metrics name the same route as when Swagger UI was registered here.
 */
const DOCS_ROUTES = [
  '',
  '/static/index.html',
  '/static/swagger-initializer.js',
  '/json',
  '/yaml',
  '/static/*',
];

/** A route's tags: its own, or an operation's first path segment under the documented prefix. */
function tagsOf(schema: Record<string, unknown> | undefined, url: string): string[] | undefined {
  return (
    (schema?.tags as string[] | undefined) ??
    (url.startsWith(`${DOCUMENTED_PREFIX}/`) ? [url.split('/')[2] ?? ''] : undefined)
  );
}

/**
 * The tags in the order /docs lists them (Swagger UI follows the document's `tags`): the
 * operations first, as a reader comes for them, then the report downloads, the token service, the
 * mock-server units and the admin API, and the probes and metrics, an operator's, last.
 */
function orderedTags(routes: readonly RouteOptions[]): { name: string }[] {
  const rank = (tag: string, operation: boolean) =>
    operation
      ? 0
      : ((
          { Reports: 1, 'Token service': 2, 'Mock units': 3, Probes: 6, Metrics: 6 } as Record<string, number>
        )[tag] ?? (tag.startsWith('admin') ? 4 : 5));
  const seen = new Map<string, number>();
  for (const { url, schema } of routes) {
    const own = schema as Record<string, unknown> | undefined;
    if (own?.hide) continue;
    for (const tag of tagsOf(own, url) ?? [])
      if (!seen.has(tag)) seen.set(tag, rank(tag, own?.tags === undefined));
  }
  return [...seen].sort((a, b) => a[1] - b[1]).map(([name]) => ({ name }));
}

/** @fastify/swagger's options: the document's frame and how a route's schema is shown. */
function swaggerOptions(config: Config, routes: readonly RouteOptions[]): SwaggerOptions {
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'helixd',
        version: VERSION,
        description: DESCRIPTION,
      },
      tags: orderedTags(routes),
      servers: [{ url: config.publicUrl }],
      components: {
        securitySchemes: {
          bearer: {
            type: 'http',
            scheme: 'bearer',
            description: config.devShortcuts
              ? 'An access token of the token service: an app access token (client_credentials) or a user access token (authorization code, implicit flow, or POST /auth/authorize)'
              : 'An access token of the token service: an app access token (client_credentials) or a user access token (from the operator, `helixd token --user`, renewed with its refresh token)',
          },
          clientId: {
            type: 'apiKey',
            in: 'header',
            name: 'Client-Id',
            description: 'The id of the client the token was issued to',
          },
          ...(config.adminToken === undefined
            ? {}
            : {
                admin: {
                  type: 'http',
                  scheme: 'bearer',
                  description:
                    'The admin token (--admin-token / HELIXD_ADMIN_TOKEN); the admin API is off without one (docs/admin.md)',
                },
              }),
          ...(config.metricsToken === undefined
            ? {}
            : {
                metrics: {
                  type: 'http',
                  scheme: 'bearer',
                  description:
                    'The metrics token (--metrics-token / HELIXD_METRICS_TOKEN); /metrics is open without one',
                },
              }),
        },
      },
    },
    // Operations are tagged by their first path segment; the token service's routes carry their own tag.
    transform: ({ schema, url, route }) => {
      if (!schema) return { schema, url };
      const { [FORM_KEY]: form, ...rest } = schema as Record<string, unknown>;
      const tags = tagsOf(rest, url);
      const body = !form
        ? {}
        : route.method === 'GET'
          ? { querystring: form }
          : { body: form, consumes: ['application/x-www-form-urlencoded', 'application/json'] };
      return { schema: { ...rest, ...(tags ? { tags } : {}), ...body } as FastifySchema, url };
    },
  };
}

// The page is helixd's: its title and its name in the top bar (Swagger UI's default is
// Fastify's logo, which says nothing of what the page documents).
const LOGO = `<svg xmlns="http://www.w3.org/2000/svg" width="120" height="32" viewBox="0 0 120 32"><text x="0" y="24" font-family="sans-serif" font-size="24" font-weight="bold" fill="#ffffff">helixd</text></svg>`;

const SWAGGER_UI_OPTIONS: FastifySwaggerUiOptions = {
  routePrefix: DOCS_PATH,
  uiConfig: { docExpansion: 'list', deepLinking: true },
  theme: { title: 'helixd API' },
  logo: { type: 'image/svg+xml', content: Buffer.from(LOGO), href: DOCS_PATH, target: '_self' },
};

/** Headers of the docs app's answer that belong to its own connection, not to the answer. */
const HOP_HEADERS = new Set(['connection', 'keep-alive', 'transfer-encoding', 'date', 'content-length']);

/**
 * Registers /openapi.json and the /docs routes, then (before any other route, so that it sees them
 * all) keeps every route added, as @fastify/swagger's own hook does: HEAD routes are left out.
 */
export async function registerDocs(app: FastifyInstance, config: Config): Promise<void> {
  const routes: RouteOptions[] = [];
  let docsApp: Promise<FastifyInstance> | undefined;
  const docs = () => {
    docsApp ??= import('./docs-app.ts').then(({ buildDocsApp }) =>
      buildDocsApp(routes, swaggerOptions(config, routes), SWAGGER_UI_OPTIONS),
    );
    return docsApp;
  };
  app.get(OPENAPI_PATH, { schema: { hide: true } }, async () => (await docs()).swagger());
  // A HEAD request gets the GET answer's headers (Fastify's HEAD route of each GET route).
  const answer = async (req: FastifyRequest, reply: FastifyReply) => {
    const res = await (await docs()).inject({ method: 'GET', url: req.url, headers: req.headers });
    if (res.statusCode === 404) return reply.callNotFound();
    for (const [name, value] of Object.entries(res.headers))
      if (!HOP_HEADERS.has(name) && value !== undefined) reply.header(name, value);
    // An answer without a body (a redirect, a 304) gets none here either, nor a type.
    return reply.code(res.statusCode).send(res.rawPayload.length > 0 ? res.rawPayload : undefined);
  };
  for (const path of DOCS_ROUTES) app.get(DOCS_PATH + path, { schema: { hide: true } }, answer);
  app.addHook('onRoute', (route) => {
    if (route.method !== 'HEAD') routes.push(route);
  });
}
