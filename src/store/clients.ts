import type { Insertable, Kysely } from 'kysely';
import type { ClientRow, ClientsTable, Database } from './schema.ts';

export function findClient(db: Kysely<Database>, id: string): Promise<ClientRow | undefined> {
  return db.selectFrom('clients').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function insertClient(db: Kysely<Database>, row: Insertable<ClientsTable>): Promise<void> {
  await db.insertInto('clients').values(row).execute();
}

/** Clients, oldest first (ties by id). */
const byAge = (db: Kysely<Database>) =>
  db.selectFrom('clients').selectAll().orderBy('created_at').orderBy('id');

/** Every registered client, oldest first. */
export function allClients(db: Kysely<Database>): Promise<ClientRow[]> {
  return byAge(db).execute();
}

/** The seeded demo clients, whose secrets are kept in clear (schema.ts, ClientsTable.demo_secret). */
export function demoClients(db: Kysely<Database>): Promise<ClientRow[]> {
  return byAge(db).where('demo_secret', 'is not', null).execute();
}

/** The redirect URIs registered for a client (a JSON array in the store). */
export function redirectUrisOf(c: ClientRow): string[] {
  try {
    const v: unknown = JSON.parse(c.redirect_uris);
    return Array.isArray(v) ? v.filter((u): u is string => typeof u === 'string') : [];
  } catch {
    return [];
  }
}
