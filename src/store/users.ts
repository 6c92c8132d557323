import type { Kysely } from 'kysely';
import type { Database, UserRow } from './schema.ts';

/** The users behind a page's rows, in one query (never one per row); missing ids are left out. */
export async function usersByIds(db: Kysely<Database>, ids: Iterable<number>): Promise<Map<number, UserRow>> {
  const unique = [...new Set(ids)];
  const byId = new Map<number, UserRow>();
  if (unique.length === 0) return byId;
  const rows = await db.selectFrom('users').selectAll().where('id', 'in', unique).execute();
  for (const r of rows) byId.set(r.id, r);
  return byId;
}
