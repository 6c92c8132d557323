import crypto, { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database, TokenKind } from '../store/schema.ts';
import { deleteToken, insertToken, spendRefreshToken } from '../store/tokens.ts';

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
 * access token and its refresh token stop working at once, on every instance. False when no such
 * token of that client exists.
 */
export async function revokeToken(db: Kysely<Database>, raw: string, clientId: string): Promise<boolean> {
  return deleteToken(db, sha256(raw), clientId);
}
