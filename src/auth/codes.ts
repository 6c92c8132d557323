import type { Kysely } from 'kysely';
import { insertCode, takeCode } from '../store/codes.ts';
import type { Database } from '../store/schema.ts';
import { randomId, sha256 } from './tokens.ts';

/** Authorization codes live 10 minutes at most (RFC 6749 section 4.1.2). */
export const CODE_TTL = 600;

export interface CodeGrant {
  clientId: string;
  userId: number;
  scopes: readonly string[];
  redirectUri: string;
}

/** Issues a one-time authorization code; only its hash is stored. */
export async function issueCode(db: Kysely<Database>, g: CodeGrant, now: number): Promise<string> {
  const code = randomId();
  await insertCode(db, {
    hash: sha256(code),
    client_id: g.clientId,
    user_id: g.userId,
    scopes: g.scopes.join(' '),
    redirect_uri: g.redirectUri,
    expires_at: now + CODE_TTL,
  });
  return code;
}

/**
 * Redeems a code: it is taken out of the store as it is read, so it works once only, even when two
 * requests race. Undefined when unknown, used, expired or issued to another client.
 */
export async function redeemCode(
  db: Kysely<Database>,
  code: string,
  clientId: string,
  now: number,
): Promise<CodeGrant | undefined> {
  const row = await takeCode(db, sha256(code));
  if (!row || row.expires_at <= now || row.client_id !== clientId) return undefined;
  return {
    clientId: row.client_id,
    userId: row.user_id,
    scopes: row.scopes.split(' ').filter(Boolean),
    redirectUri: row.redirect_uri,
  };
}
