import crypto, { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { matchKey } from '../eventsub/types.ts';
import type { Store } from '../store/db.ts';
import { eventsCommitted, recordEvents } from '../store/events.ts';
import { liveGrants, revokeSubscriptions } from '../store/eventsub-subscriptions.ts';
import type { Database, TokenKind } from '../store/schema.ts';
import { deleteToken, insertToken, spendRefreshToken } from '../store/tokens.ts';
import { findUserById } from '../store/users.ts';

// Tokens, codes, client ids and secrets are random lowercase alphanumerics of 30 characters, the
// form client libraries expect. Only their SHA-256 is stored: a copy of the database grants nothing.
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

export function randomId(length = 30): string {
  const bytes = randomBytes(length);
  let s = '';
  // 256 % 36 = 4: the bias toward the first 4 letters is negligible for opaque credentials of 30 chars.
  for (const b of bytes) s += ALPHABET[b % ALPHABET.length];
  return s;
}

// Every request hashes its token to look it up: Node's one-shot `crypto.hash` (20.12 on) is faster
// than a Hash object (docs/perf/2026-11-23-per-request.md); older 20.x releases have only the
// object.
const oneShot = (crypto as { hash?: typeof crypto.hash }).hash;

export function sha256(s: string): string {
  return oneShot ? oneShot('sha256', s, 'hex') : crypto.createHash('sha256').update(s).digest('hex');
}

export interface MintedToken {
  access_token: string;
  refresh_token?: string;
  expires_in: number;
  scope: string[];
  token_type: 'bearer';
}

export interface MintOptions {
  kind: TokenKind;
  clientId: string;
  userId?: number | null;
  scopes: readonly string[];
  /** lifetime in seconds */
  ttl: number;
  /** now, Unix seconds */
  now: number;
}

export async function mintToken(db: Kysely<Database>, o: MintOptions): Promise<MintedToken> {
  const access = randomId();
  const refresh = o.kind === 'user' ? randomId(50) : undefined;
  await insertToken(db, {
    hash: sha256(access),
    kind: o.kind,
    client_id: o.clientId,
    user_id: o.kind === 'user' ? (o.userId ?? null) : null,
    scopes: o.scopes.join(' '),
    expires_at: o.now + o.ttl,
    refresh_hash: refresh ? sha256(refresh) : null,
    created_at: o.now,
  });
  return {
    access_token: access,
    ...(refresh ? { refresh_token: refresh } : {}),
    expires_in: o.ttl,
    scope: [...o.scopes],
    token_type: 'bearer',
  };
}

/**
 * Refresh (RFC 6749 section 6) with rotation: the refresh token is spent in one conditional update,
 * so two requests racing with the same refresh token cannot both win, and a new access token and
 * refresh token are minted with the same client, user and scopes. The old access token keeps
 * working until it expires. App tokens carry no refresh token, so they cannot be refreshed.
 */
export async function refreshToken(
  db: Kysely<Database>,
  raw: string,
  clientId: string,
  ttl: number,
  now: number,
): Promise<MintedToken | undefined> {
  return db.transaction().execute(async (trx) => {
    const spent = await spendRefreshToken(trx, sha256(raw), clientId);
    if (!spent) return undefined;
    return mintToken(trx, {
      kind: 'user',
      clientId,
      userId: spent.userId,
      scopes: spent.scopes.split(' ').filter(Boolean),
      ttl,
      now,
    });
  });
}

/**
 * Revokes the token (access or refresh token, RFC 7009) issued to `clientId`: its row goes, so the
 * access token and its refresh token stop working at once here and on every other instance within CHANGE_CHECK_MS (docs/auth.md). False when no such
 * token of that client exists. One transaction: when it was the user's last live token of the
 * client (`now`, Unix seconds), the user's authorization of the client is gone
 * (docs/eventsub-design.md, section 1): `user.authorization.revoke` is recorded, and the client's
 * EventSub subscriptions resting on that user are revoked (`authorization_revoked`).
 */
export async function revokeToken(
  store: Store,
  raw: string,
  clientId: string,
  now: number,
): Promise<boolean> {
  const { dialect } = store;
  const result = await store.db.transaction().execute(async (trx) => {
    const gone = await deleteToken(trx, sha256(raw), clientId);
    if (!gone) return { revoked: false, recorded: 0 };
    const userId = gone.userId;
    if (userId === null || (await liveGrants(trx, clientId, userId, now)).length > 0)
      return { revoked: true, recorded: 0 };
    const at = Date.now();
    const user = await findUserById(trx, userId);
    const type = 'user.authorization.revoke';
    const events = await recordEvents(
      trx,
      dialect,
      [
        {
          kind: 'event',
          type,
          match_key: matchKey(type, clientId),
          payload: JSON.stringify({
            client_id: clientId,
            user_id: String(userId),
            user_login: user?.login ?? null,
            user_name: user?.display_name ?? null,
          }),
        },
      ],
      at,
    );
    const controls = await revokeSubscriptions(
      trx,
      dialect,
      { clientId, authUserId: userId },
      'authorization_revoked',
      at,
    );
    return { revoked: true, recorded: events.length + controls };
  });
  if (result.recorded > 0) eventsCommitted(store);
  return result.revoked;
}
