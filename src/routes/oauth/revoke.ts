// POST /oauth2/revoke (and its alias): a token of the client revoked (src/auth/grants.ts, revoke).
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { revoke } from '../../auth/grants.ts';
import { nowSeconds } from '../../clock.ts';
import type { AppContext } from '../../context.ts';
import { paramsOf } from './request.ts';
import { BODY_ERRORS, field, noBody, serviceError, serviceSchema } from './schema.ts';

const revokeSchema = (hide: boolean) =>
  serviceSchema(
    'Revoke a token',
    'Revokes an access token of the client (and, with it, its refresh token).',
    Type.Object({ client_id: field('The client'), token: field('The access token') }),
    {
      200: noBody('Revoked'),
      400: serviceError('A parameter is missing, or the token is not a live token of the client'),
      ...BODY_ERRORS,
    },
    hide,
  );

/** `hide`: an alias, described once under /oauth2. */
export function revokeRoute(scope: FastifyInstance, ctx: AppContext, prefix: string, hide: boolean): void {
  scope.post(`${prefix}/revoke`, { schema: revokeSchema(hide) }, async (req, reply) => {
    await revoke(ctx.store, paramsOf(req), nowSeconds(ctx.clock));
    return reply.code(200).send();
  });
}
