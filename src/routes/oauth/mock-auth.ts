// POST /auth/authorize, the mock-server convention (Twitch CLI's mock API): a user token for any
// user, without a browser (development profile only; src/auth/grants.ts, userTokenGrant).
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { userTokenGrant } from '../../auth/grants.ts';
import type { AppContext } from '../../context.ts';
import { grantEnv, paramsOf } from './request.ts';
import { clientFields, field, serviceSchema, type TokenReply, tokenResponses } from './schema.ts';

const userTokenSchema = () =>
  serviceSchema(
    'Get a user token (mock shortcut)',
    'A user access token for any user, without a browser (grant_type=user_token).',
    Type.Object({
      ...clientFields,
      grant_type: Type.Unsafe<string>({ type: 'string', enum: ['user_token'] }),
      user_id: field('The user'),
      scope: field('Space-separated scopes'),
    }),
    tokenResponses('A parameter is missing or wrong'),
  );

export function mockAuthRoute(scope: FastifyInstance, ctx: AppContext): void {
  const env = grantEnv(ctx);
  scope.post(
    '/auth/authorize',
    { schema: userTokenSchema() },
    async (req): Promise<TokenReply> => userTokenGrant(env, paramsOf(req)),
  );
}
