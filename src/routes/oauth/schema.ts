// The token service's wire shapes and documentation, shared by its routes: each shape is declared
// once, and also serialises the answers.
import { type Static, Type } from 'typebox';
import { FORM_KEY } from '../../http/openapi.ts';

/** The token service's own error body: no `error` key, unlike the operations'. */
export const tokenServiceErrorSchema = Type.Object({ status: Type.Integer(), message: Type.String() });

/** A minted token, in the order Helix sends its keys; an app token has no refresh token or scope. */
export const tokenReplySchema = Type.Object({
  access_token: Type.String(),
  refresh_token: Type.Optional(Type.String({ description: 'User access tokens only' })),
  expires_in: Type.Integer({ description: 'Seconds until the token expires' }),
  scope: Type.Optional(Type.Array(Type.String(), { description: 'User access tokens only' })),
  token_type: Type.Literal('bearer'),
});
export type TokenReply = Static<typeof tokenReplySchema>;

export const field = (description: string) => Type.String({ description });
export const clientFields = {
  client_id: field('The client'),
  client_secret: field("The client's secret"),
};

export const html = (description: string) => ({
  description,
  content: { 'text/html': { schema: { type: 'string' } } },
});
export const noBody = (description: string) => ({ description, type: 'null' });
export const serviceError = (description: string) => ({ ...tokenServiceErrorSchema, description });
/** Errors of every token-service route that reads a body. */
export const BODY_ERRORS = {
  413: serviceError('The body is larger than 64 KiB'),
  415: serviceError('A body that is neither empty, a form nor a JSON object'),
};

/** The answers of a route that mints a token: the token, or a 400 (`badRequest` says when) or 403. */
export const tokenResponses = (badRequest: string) => ({
  200: { ...tokenReplySchema, description: 'The token' },
  400: serviceError(badRequest),
  403: serviceError('The client secret is wrong'),
  ...BODY_ERRORS,
});

/** Errors every token-service route may answer, as the operations may (src/http/operation.ts). */
const SERVICE_FAILURES = {
  429: serviceError('Only an injected fault (development profile: the Helixd-Fault header, --faults)'),
  500: serviceError('An unexpected failure (its details are logged, never sent)'),
  503: serviceError('The store is unreachable'),
};

/** A token-service route's schema: documentation (tagged, `x-form` for its parameters) and answers. */
export function serviceSchema(
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
