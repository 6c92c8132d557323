// GET and POST /oauth2/authorize: the consent page and its answer (development profile only; the
// flows are src/auth/authorize.ts).
import type { FastifyInstance, FastifyReply } from 'fastify';
import { Type } from 'typebox';
import {
  answerConsent,
  authorizeRequest,
  consentUsers,
  RedirectError,
  redirectTo,
} from '../../auth/authorize.ts';
import {
  type AuthorizeRequest,
  CONSENT_HEADERS,
  RESPONSE_TYPES,
  renderConsentPage,
} from '../../auth/consent.ts';
import type { Params } from '../../auth/params.ts';
import type { AppContext } from '../../context.ts';
import { grantEnv, paramsOf } from './request.ts';
import {
  BODY_ERRORS,
  field,
  html,
  noBody,
  serviceError,
  serviceSchema,
  tokenServiceErrorSchema,
} from './schema.ts';

const authorizeForm = Type.Object({
  client_id: field('The client'),
  redirect_uri: field('One of the redirect URIs registered for the client'),
  response_type: Type.Unsafe<string>({ type: 'string', enum: RESPONSE_TYPES }),
  scope: field('Space-separated scopes'),
  state: field('Echoed back in the redirect'),
});

const authorizeErrors = {
  302: noBody('Back to the redirect URI: with the code or token, or with `error` and `error_description`'),
  400: serviceError('The client or the redirect URI is missing or wrong (never redirected)'),
};

const consentPageSchema = () =>
  serviceSchema(
    'Authorize (consent page)',
    'The consent page of the authorization code and implicit flows: pick the user the token is for.',
    authorizeForm,
    { 200: html('The consent page'), ...authorizeErrors },
  );

const consentGivenSchema = () =>
  serviceSchema(
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
  );

const sendRedirect = (reply: FastifyReply, r: AuthorizeRequest, values: Record<string, string>) =>
  reply.code(302).header('cache-control', 'no-store').redirect(redirectTo(r, values), 302);

/**
 * The checked authorization request, or undefined when its error has been sent back through the
 * redirect. An error that cannot be redirected is thrown, for the error answer.
 */
async function checkedRequest(ctx: AppContext, p: Params, reply: FastifyReply) {
  try {
    return await authorizeRequest(ctx.store.db, p);
  } catch (err) {
    if (!(err instanceof RedirectError)) throw err;
    sendRedirect(reply, err.request, { error: err.error, error_description: err.description });
    return undefined;
  }
}

/** The consent page, with `problem` above the form when given. */
async function sendConsentPage(
  ctx: AppContext,
  reply: FastifyReply,
  status: number,
  r: AuthorizeRequest,
  problem?: string,
) {
  // Status and headers are set before the users are read: a failure to read them keeps the headers.
  reply.code(status).headers(CONSENT_HEADERS);
  return reply.send(renderConsentPage(r, await consentUsers(ctx.store.db), problem));
}

export function authorizeRoutes(scope: FastifyInstance, ctx: AppContext): void {
  const env = grantEnv(ctx);
  scope.get('/oauth2/authorize', { schema: consentPageSchema() }, async (req, reply) => {
    const r = await checkedRequest(ctx, paramsOf(req), reply);
    return r ? sendConsentPage(ctx, reply, 200, r) : reply;
  });
  scope.post('/oauth2/authorize', { schema: consentGivenSchema() }, async (req, reply) => {
    const p = paramsOf(req);
    const r = await checkedRequest(ctx, p, reply);
    if (!r) return reply;
    const answer = await answerConsent(env, r, p);
    if ('problem' in answer) return sendConsentPage(ctx, reply, 400, r, answer.problem);
    return sendRedirect(reply, r, answer.redirect);
  });
}
