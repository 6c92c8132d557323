// GET /oauth2/validate (and its alias): what the token in the Authorization header is.
import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import { oauthError } from '../../auth/params.ts';
import { validateToken } from '../../auth/validate.ts';
import { nowSeconds } from '../../clock.ts';
import type { AppContext } from '../../context.ts';
import { bearerToken } from '../../http/access.ts';
import { serviceError, serviceSchema } from './schema.ts';

/** What /validate says of a live token; `login` and `user_id` only for a user access token. */
const validateReplySchema = Type.Object({
  client_id: Type.String(),
  login: Type.Optional(Type.String()),
  scopes: Type.Array(Type.String()),
  user_id: Type.Optional(Type.String()),
  expires_in: Type.Integer({ description: 'Seconds until the token expires' }),
});
type ValidateReply = Static<typeof validateReplySchema>;

const validateSchema = (hide: boolean) =>
  serviceSchema(
    'Validate a token',
    'What the token in `Authorization: OAuth <token>` (or `Bearer <token>`) is: its client, user, scopes and remaining lifetime.',
    undefined,
    {
      200: { ...validateReplySchema, description: 'The token is live' },
      401: serviceError('No token, or a token that is unknown, expired or revoked'),
    },
    hide,
  );

/** The raw token of `Authorization: OAuth <token>` or `Bearer <token>`; none or another form is a 401. */
function tokenOf(header: string | undefined): string {
  if (header === undefined || header.trim() === '') throw oauthError(401, 'missing authorization token');
  try {
    return bearerToken(header, ['oauth', 'bearer']);
  } catch {
    throw oauthError(401, 'invalid access token');
  }
}

/** `hide`: an alias, described once under /oauth2. */
export function validateRoute(scope: FastifyInstance, ctx: AppContext, prefix: string, hide: boolean): void {
  const now = () => nowSeconds(ctx.clock);
  scope.get(
    `${prefix}/validate`,
    { schema: validateSchema(hide) },
    async (req): Promise<ValidateReply> =>
      validateToken(ctx.tokens, ctx.store.db, tokenOf(req.headers.authorization), now),
  );
}
