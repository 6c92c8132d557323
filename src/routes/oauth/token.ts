// POST /oauth2/token (and its alias): the grants of src/auth/grants.ts, those the profile serves.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { type GrantType, grantsOf, tokenGrant } from '../../auth/grants.ts';
import type { AppContext } from '../../context.ts';
import { grantEnv, paramsOf } from './request.ts';
import { clientFields, field, serviceSchema, type TokenReply, tokenResponses } from './schema.ts';

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

const tokenSchema = (grants: readonly GrantType[], hide: boolean) =>
  serviceSchema(
    'Get a token',
    grants.includes('authorization_code')
      ? 'An app access token (client_credentials), or a user access token for an authorization code or a refresh token.'
      : 'An app access token (client_credentials), or a new user access token for a refresh token.',
    tokenForm(grants),
    tokenResponses('A parameter is missing or wrong, or the code or refresh token is invalid'),
    hide,
  );

/** `hide`: an alias, described once under /oauth2. */
export function tokenRoute(scope: FastifyInstance, ctx: AppContext, prefix: string, hide: boolean): void {
  const grants = grantsOf(ctx.config.devShortcuts);
  const env = grantEnv(ctx);
  scope.post(
    `${prefix}/token`,
    { schema: tokenSchema(grants, hide) },
    async (req): Promise<TokenReply> => tokenGrant(env, paramsOf(req), grants),
  );
}
