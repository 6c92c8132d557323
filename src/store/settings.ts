import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Store } from './db.ts';
import type { Database } from './schema.ts';

export async function getSetting(db: Kysely<Database>, key: string): Promise<string | undefined> {
  const row = await db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst();
  return row?.value;
}

export async function setSetting(db: Kysely<Database>, key: string, value: string): Promise<void> {
  await db
    .insertInto('settings')
    .values({ key, value })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value }))
    .execute();
}

/**
 * The secret that signs report URLs and cursors: the configured one, or one generated on first use
 * and kept in the store, so it survives restarts and every instance on the same store shares it.
 */
export async function resolveSecret(store: Store, configured: string | undefined): Promise<string> {
  if (configured) return configured;
  const kept = await getSetting(store.db, 'secret');
  if (kept) return kept;
  const fresh = randomBytes(32).toString('base64url');
  // Two instances starting at once: the first insert wins and both read it back.
  await store.db
    .insertInto('settings')
    .values({ key: 'secret', value: fresh })
    .onConflict((oc) => oc.column('key').doNothing())
    .execute();
  return (await getSetting(store.db, 'secret')) ?? fresh;
}
