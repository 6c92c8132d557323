// The OpenAPI 3.1 document at /openapi.json and the docs page at /docs, both generated from the
// routes' own schemas (registerOperation's declarations): nothing here describes a parameter or a
// field. The page is Swagger UI served from its npm package: no CDN is needed to read it.
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, FastifySchema } from 'fastify';
import type { Config } from '../config.ts';
import { VERSION } from '../version.ts';
import { DOCUMENTED_PREFIX, OPERATION_PREFIXES } from './operation.ts';

export const OPENAPI_PATH = '/openapi.json';
export const DOCS_PATH = '/docs';

/**
 * A route schema's `x-form`: the parameters a token-service route reads from its query string or its
 * form or JSON body (oauth.ts reads them itself, body first). Shown as the request body (the query
 * string for a GET), for the document only: Fastify never validates it.
 */
export const FORM_KEY = 'x-form';

const DESCRIPTION = `A self-hostable server wire-compatible with the Twitch Helix API.

Every operation is served under \`${DOCUMENTED_PREFIX}\` (described here) and, identically, under \`${OPERATION_PREFIXES.filter((p) => p !== DOCUMENTED_PREFIX).join(', ')}\`.
Each needs \`Authorization: Bearer <token>\` and \`Client-Id: <the client the token was issued to>\`.
An operation's \`security\` lists the scopes it accepts (any one of them), and \`x-token-kind\` says
whether an app access token is enough or a user access token is needed. Tokens come from the token
service (\`/oauth2/*\`).`;

/** Registers @fastify/swagger (before any route, so that it sees them all), /openapi.json and /docs. */
export async function registerDocs(app: FastifyInstance, config: Config): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'helixd',
        version: VERSION,
        description: DESCRIPTION,
      },
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
      const tags =
        (rest.tags as string[] | undefined) ??
        (url.startsWith(`${DOCUMENTED_PREFIX}/`) ? [url.split('/')[2] ?? ''] : undefined);
      const body = !form
        ? {}
        : route.method === 'GET'
          ? { querystring: form }
          : { body: form, consumes: ['application/x-www-form-urlencoded', 'application/json'] };
      return { schema: { ...rest, ...(tags ? { tags } : {}), ...body } as FastifySchema, url };
    },
  });
  app.get(OPENAPI_PATH, { schema: { hide: true } }, async () => app.swagger());
  await app.register(swaggerUi, {
    routePrefix: DOCS_PATH,
    uiConfig: { docExpansion: 'list', deepLinking: true },
  });
}
