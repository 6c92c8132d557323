// The authorization-code and implicit flows behind the consent page (development profile only,
// grants.ts says why): the request checked, the user's answer turned into a code or a token, and
// the redirect that carries either back to the client.
import type { Kysely } from 'kysely';
import { redirectUriRule } from '../records/kinds.ts';
import { redirectUrisOf } from '../store/clients.ts';
import type { Database } from '../store/schema.ts';
import { findUserByLogin, usersById } from '../store/users.ts';
import { issueCode } from './codes.ts';
import { type AuthorizeRequest, type ConsentUser, RESPONSE_TYPES } from './consent.ts';
import { clientOf, type GrantEnv, mintUserToken, requestedScopes } from './grants.ts';
import { oauthError, type Params, param, required } from './params.ts';

/** How many users the consent page offers to pick from (any other can be typed in). */
const CONSENT_USERS = 10;

/** An authorization error that is reported to the client through its (checked) redirect URI. */
export class RedirectError extends Error {
  constructor(
    readonly request: AuthorizeRequest,
    readonly error: string,
    readonly description: string,
  ) {
    super(description);
  }
}

/**
 * The parameters of an authorization request, checked in RFC 6749's order: while the client or
 * the redirect URI is in doubt the error is thrown as is (never redirected to an unchecked URI);
 * after that, as a RedirectError, to go back to the client through the redirect (section 4.1.2.1).
 */
export async function authorizeRequest(db: Kysely<Database>, p: Params): Promise<AuthorizeRequest> {
  const client = await clientOf(db, p, false);
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

/** The users the consent page offers. */
export async function consentUsers(db: Kysely<Database>): Promise<ConsentUser[]> {
  return (await usersById(db, { first: CONSENT_USERS })).rows;
}

/** The consent page's answer: the redirect's parameters, or the problem to show on the page again. */
export type ConsentAnswer = { redirect: Record<string, string> } | { problem: string };

/** The answer to the consent page (`decision`, and `login` or `user`) for the checked request `r`. */
export async function answerConsent(env: GrantEnv, r: AuthorizeRequest, p: Params): Promise<ConsentAnswer> {
  if (param(p, 'decision') !== 'allow')
    return { redirect: { error: 'access_denied', error_description: 'The user denied you access' } };
  const login = (param(p, 'login') ?? '').trim() || (param(p, 'user') ?? '').trim();
  const user = login ? await findUserByLogin(env.db, login) : undefined;
  if (!user)
    return {
      problem: login ? `There is no user with the login "${login}".` : 'Pick a user or type a login.',
    };
  return { redirect: await grantTo(env, r, user.id) };
}

/** The code (code flow) or the token (implicit flow) for the user, as the redirect's parameters. */
async function grantTo(env: GrantEnv, r: AuthorizeRequest, userId: number): Promise<Record<string, string>> {
  const scope = r.scopes.join(' ');
  if (r.responseType === 'code') {
    const g = { clientId: r.clientId, userId, scopes: r.scopes, redirectUri: r.redirectUri };
    return { code: await issueCode(env.db, g, env.now()), scope };
  }
  const t = await mintUserToken(env, r.clientId, userId, r.scopes);
  return { access_token: t.access_token, expires_in: String(t.expires_in), scope, token_type: 'bearer' };
}

/**
 * The redirect back to the client: parameters in the query for the code flow, in the fragment for
 * the implicit flow, `state` echoed unchanged in both. The registered URI is written as registered,
 * its own query kept byte for byte, and the parameters appended after it: a URL object would write
 * its query again in its own encoding (`/` as `%2F`, `%20` as `+`). A registered URI has no fragment.
 */
export function redirectTo(r: AuthorizeRequest, values: Record<string, string>): string {
  const uri = r.redirectUri;
  const params = new URLSearchParams({ ...values, ...(r.state !== undefined ? { state: r.state } : {}) });
  if (r.responseType === 'token') return `${uri}#${params}`;
  const joiner = !uri.includes('?') ? '?' : uri.endsWith('?') || uri.endsWith('&') ? '' : '&';
  return `${uri}${joiner}${params}`;
}
