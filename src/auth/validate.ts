// What GET /oauth2/validate says of an access token: its client, its user, its scopes and the
// seconds it has left.
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';
import { findUserById } from '../store/users.ts';
import { oauthError } from './params.ts';
import type { TokenCache } from './token-cache.ts';

/** A live token as /validate describes it; `login` and `user_id` only for a user access token. */
export interface TokenInfo {
  client_id: string;
  login?: string;
  scopes: string[];
  user_id?: string;
  expires_in: number;
}

/** The live token `raw`; a 401 when it is unknown, expired or revoked. */
export async function validateToken(
  tokens: TokenCache,
  db: Kysely<Database>,
  raw: string,
  now: () => number,
): Promise<TokenInfo> {
  const live = await tokens.find(raw, now());
  if (!live) throw oauthError(401, 'invalid access token');
  const t = live.row;
  const user = t.user_id === null ? undefined : await findUserById(db, t.user_id);
  return {
    client_id: t.client_id,
    ...(user ? { login: user.login } : {}),
    scopes: t.scopes.split(' ').filter(Boolean),
    ...(user ? { user_id: String(user.id) } : {}),
    expires_in: t.expires_at - now(),
  };
}
