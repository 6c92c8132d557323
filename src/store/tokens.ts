// The tokens table. Rows are keyed by the SHA-256 of the access token (and carry the refresh
// token's): which token to mint, and how long it lives, is decided in src/auth/tokens.ts.
import type { Insertable, Kysely } from 'kysely';
import type { Database, TokenRow, TokensTable } from './schema.ts';

export async function insertToken(db: Kysely<Database>, row: Insertable<TokensTable>): Promise<void> {
  await db.insertInto('tokens').values(row).execute();
}

/** The token row stored under an access token's hash, expired or not. */
export function tokenByHash(db: Kysely<Database>, hash: string): Promise<TokenRow | undefined> {
  return db.selectFrom('tokens').selectAll().where('hash', '=', hash).executeTakeFirst();
}

/**
 * Spends a user token's refresh token in one conditional update, so two requests racing with the
 * same refresh token cannot both win: the user and scopes it was issued for, or undefined when no
 * user token of `clientId` holds it (unknown, already spent, or another client's).
 */
export async function spendRefreshToken(
  db: Kysely<Database>,
  refreshHash: string,
  clientId: string,
): Promise<{ userId: number; scopes: string } | undefined> {
  const spent = await db
    .updateTable('tokens')
    .set({ refresh_hash: null })
    .where('refresh_hash', '=', refreshHash)
    .where('client_id', '=', clientId)
    .where('kind', '=', 'user')
    .returning(['user_id', 'scopes'])
    .executeTakeFirst();
  return spent && spent.user_id !== null ? { userId: spent.user_id, scopes: spent.scopes } : undefined;
}

/**
 * Deletes the token of `clientId` whose access token or refresh token has this hash: the user it
 * was issued for (null for an app token), or undefined when no such token existed.
 */
export async function deleteToken(
  db: Kysely<Database>,
  hash: string,
  clientId: string,
): Promise<{ userId: number | null } | undefined> {
  const row = await db
    .deleteFrom('tokens')
    .where('client_id', '=', clientId)
    .where((eb) => eb.or([eb('hash', '=', hash), eb('refresh_hash', '=', hash)]))
    .returning('user_id')
    .executeTakeFirst();
  return row && { userId: row.user_id === null ? null : Number(row.user_id) };
}

/**
 * Deletes the tokens that can never be used again at `now`: access token expired and no refresh
 * token left to spend (a user token whose access token expired stays while its refresh token can
 * still be spent).
 */
export async function deleteDeadTokens(db: Kysely<Database>, now: number): Promise<void> {
  await db.deleteFrom('tokens').where('expires_at', '<=', now).where('refresh_hash', 'is', null).execute();
}
