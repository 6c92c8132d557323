// What each grant of the token service checks and mints, whatever carries the request: the client's
// authentication, the grants of POST /oauth2/token (client_credentials, authorization_code,
// refresh_token), the mock server's user_token grant (POST /auth/authorize) and revocation. Errors
// are thrown as the token service answers them (params.ts, oauthError).
import { timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import { findClient } from '../store/clients.ts';
import type { Store } from '../store/db.ts';
import type { ClientRow, Database } from '../store/schema.ts';
import { findUserById } from '../store/users.ts';
import { parseNumericId } from '../wire/ids.ts';
import { redeemCode } from './codes.ts';
import { oauthError, type Params, param, required } from './params.ts';
import { isScope, splitScopes } from './scopes.ts';
import { type MintedToken, mintToken, refreshToken, revokeToken, sha256 } from './tokens.ts';

export const GRANT_TYPES = ['client_credentials', 'authorization_code', 'refresh_token'] as const;
export type GrantType = (typeof GRANT_TYPES)[number];

/**
 * The grants POST /oauth2/token accepts, decided grant by grant from the profile's one switch
 * (config.ts, devShortcuts):
 * - client_credentials: every profile; the client proves itself with its secret.
 * - refresh_token: every profile; the caller holds a refresh token and the client's secret. In
 *   the production profile, user tokens come from the operator (`helixd token --user`) and live on this way.
 * - authorization_code: development only. Its codes come from the consent page alone, and helixd
 *   has no sign-in of its own: whoever reaches that page acts as any user. Without the page (off
 *   with the grant) there could be no code to redeem.
 * - user_token (POST /auth/authorize, never this route): development only; any user's token for a
 *   client secret alone, which /units/clients hands out.
 * A grant left out is refused as any unknown one is: 400 `unsupported grant type`.
 */
export function grantsOf(devShortcuts: boolean): readonly GrantType[] {
  return devShortcuts ? GRANT_TYPES : ['client_credentials', 'refresh_token'];
}

/** What the grants work with: the store, the app's clock and the tokens' lifetimes. */
export interface GrantEnv {
  readonly db: Kysely<Database>;
  /** Now, in Unix seconds: read at each use, from the app's clock. */
  readonly now: () => number;
  readonly appTokenTtl: number;
  readonly userTokenTtl: number;
}

/** A granted token as the token service sends it: an app token has no refresh token or scope. */
export type GrantedToken = Omit<MintedToken, 'scope'> & { scope?: string[] };

/** The scopes asked for, each one a known scope; duplicates dropped. */
export function requestedScopes(p: Params): string[] {
  const scopes = [...new Set(splitScopes(param(p, 'scope')))];
  for (const s of scopes) if (!isScope(s)) throw oauthError(400, `invalid scope requested: '${s}'`);
  return scopes;
}

function secretMatches(client: ClientRow, secret: string): boolean {
  const a = Buffer.from(sha256(secret));
  const b = Buffer.from(client.secret_hash);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The client named by client_id, and (for the token endpoint) proven by its client_secret. */
export async function clientOf(db: Kysely<Database>, p: Params, withSecret: boolean): Promise<ClientRow> {
  const id = required(p, 'client_id', 'missing client id');
  const client = await findClient(db, id);
  if (!client) throw oauthError(400, 'invalid client');
  if (withSecret) {
    const secret = param(p, 'client_secret');
    if (!secret || !secretMatches(client, secret)) throw oauthError(403, 'invalid client secret');
  }
  return client;
}

export function mintUserToken(env: GrantEnv, clientId: string, userId: number, scopes: readonly string[]) {
  return mintToken(env.db, { kind: 'user', clientId, userId, scopes, ttl: env.userTokenTtl, now: env.now() });
}

/** POST /oauth2/token: the client proven by its secret, then the grant it asks for among `grants`. */
export async function tokenGrant(
  env: GrantEnv,
  p: Params,
  grants: readonly GrantType[],
): Promise<GrantedToken> {
  const client = await clientOf(env.db, p, true);
  const grant = required(p, 'grant_type', 'missing grant_type');
  if (!(grants as readonly string[]).includes(grant)) throw oauthError(400, 'unsupported grant type');
  switch (grant as GrantType) {
    case 'client_credentials':
      return clientCredentials(env, p, client.id);
    case 'authorization_code':
      return exchangeCode(env, p, client.id);
    case 'refresh_token':
      return refresh(env, p, client.id);
  }
}

/** An app token. App tokens carry no scopes; an unknown one is still refused, as Helix does. */
async function clientCredentials(env: GrantEnv, p: Params, clientId: string): Promise<GrantedToken> {
  requestedScopes(p);
  const t = await mintToken(env.db, {
    kind: 'app',
    clientId,
    scopes: [],
    ttl: env.appTokenTtl,
    now: env.now(),
  });
  return { access_token: t.access_token, expires_in: t.expires_in, token_type: t.token_type };
}

/** A user token for a code from the consent page, redeemed once, with the redirect URI it was issued for. */
async function exchangeCode(env: GrantEnv, p: Params, clientId: string): Promise<GrantedToken> {
  const code = required(p, 'code', 'missing code');
  const grant = await redeemCode(env.db, code, clientId, env.now());
  if (!grant) throw oauthError(400, 'Invalid authorization code');
  if (param(p, 'redirect_uri') !== grant.redirectUri)
    throw oauthError(400, 'Parameter redirect_uri does not match registered URI');
  return mintUserToken(env, clientId, grant.userId, grant.scopes);
}

/** A new user token for a refresh token, which is spent (tokens.ts, refreshToken). */
async function refresh(env: GrantEnv, p: Params, clientId: string): Promise<GrantedToken> {
  const raw = required(p, 'refresh_token', 'missing refresh token');
  const t = await refreshToken(env.db, raw, clientId, env.userTokenTtl, env.now());
  if (!t) throw oauthError(400, 'Invalid refresh token');
  return t;
}

/** POST /auth/authorize (mock-server convention): a user token for any user, for the client's secret. */
export async function userTokenGrant(env: GrantEnv, p: Params): Promise<GrantedToken> {
  const client = await clientOf(env.db, p, true);
  const grant = required(p, 'grant_type', 'missing grant_type');
  if (grant !== 'user_token') throw oauthError(400, 'unsupported grant type');
  const userId = required(p, 'user_id', 'missing user_id');
  const id = parseNumericId(userId);
  const user = id === undefined ? undefined : await findUserById(env.db, id);
  if (!user) throw oauthError(400, 'invalid user_id');
  return mintUserToken(env, client.id, user.id, requestedScopes(p));
}

/**
 * POST /oauth2/revoke: the client's token goes (with the user's authorization of the client, when
 * it was the last: tokens.ts, revokeToken). The deletion moves the store's change epoch: no cache
 * anywhere keeps the token. `now`: the server clock, Unix seconds.
 */
export async function revoke(store: Store, p: Params, now: number): Promise<void> {
  const client = await clientOf(store.db, p, false);
  const token = required(p, 'token', 'missing oauth token');
  if (!(await revokeToken(store, token, client.id, now))) throw oauthError(400, 'Invalid token');
}
