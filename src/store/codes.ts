// The auth_codes table: one-time authorization codes, keyed by the SHA-256 of the code. Their
// lifetime and the checks on redemption are decided in src/auth/codes.ts.
import type { Insertable, Kysely, Selectable } from 'kysely';
import type { AuthCodesTable, Database } from './schema.ts';

export async function insertCode(db: Kysely<Database>, row: Insertable<AuthCodesTable>): Promise<void> {
  await db.insertInto('auth_codes').values(row).execute();
}

/**
 * Takes the code stored under `hash` out of the store: it is deleted in the same statement that
 * reads it, so it can be taken once only, even when two requests race.
 */
export function takeCode(
  db: Kysely<Database>,
  hash: string,
): Promise<Selectable<AuthCodesTable> | undefined> {
  return db.deleteFrom('auth_codes').where('hash', '=', hash).returningAll().executeTakeFirst();
}

/** Deletes the codes expired at `now`: they can never be redeemed. */
export async function deleteExpiredCodes(db: Kysely<Database>, now: number): Promise<void> {
  await db.deleteFrom('auth_codes').where('expires_at', '<=', now).execute();
}
