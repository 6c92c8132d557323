import type { Kysely } from 'kysely';
import type { ClientRow, Database } from './schema.ts';

export function findClient(db: Kysely<Database>, id: string): Promise<ClientRow | undefined> {
  return db.selectFrom('clients').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The seeded demo clients, whose secrets are kept in clear (schema.ts, ClientsTable.demo_secret). */
export function demoClients(db: Kysely<Database>): Promise<ClientRow[]> {
  return db
    .selectFrom('clients')
    .selectAll()
    .where('demo_secret', 'is not', null)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
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
