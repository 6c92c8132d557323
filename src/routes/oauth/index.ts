// The token service (docs/auth.md): /oauth2/token, /oauth2/authorize, /oauth2/validate,
// /oauth2/revoke, their mock-server aliases under /auth/*, and the mock-server shortcut POST
// /auth/authorize (grant_type=user_token). Parameters come in the query string, a form body or a
// JSON object body; errors have the token service's own shape, {"status", "message"}. What the
// production profile leaves out, and why: grantsOf in src/auth/grants.ts.
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.ts';
import { authorizeRoutes } from './authorize.ts';
import { mockAuthRoute } from './mock-auth.ts';
import { handleTokenServiceError, tokenServiceBodies } from './request.ts';
import { revokeRoute } from './revoke.ts';
import { tokenRoute } from './token.ts';
import { validateRoute } from './validate.ts';

/** The token service answers here and, for client libraries' mock mode, under /auth. */
const TOKEN_SERVICE_PREFIXES = ['/oauth2', '/auth'] as const;

export function oauthRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.register(async (scope) => {
    // Bodies are parsed only here: the operations take none.
    await tokenServiceBodies(scope);
    scope.setErrorHandler(handleTokenServiceError);
    for (const prefix of TOKEN_SERVICE_PREFIXES) {
      // The /auth aliases are the same routes: described once, under /oauth2.
      const alias = prefix !== TOKEN_SERVICE_PREFIXES[0];
      tokenRoute(scope, ctx, prefix, alias);
      validateRoute(scope, ctx, prefix, alias);
      revokeRoute(scope, ctx, prefix, alias);
    }
    // The consent page and POST /auth/authorize: development's only (grantsOf says why).
    if (!ctx.config.devShortcuts) return;
    authorizeRoutes(scope, ctx);
    mockAuthRoute(scope, ctx);
  });
}
