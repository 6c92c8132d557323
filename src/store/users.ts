import type { Kysely } from 'kysely';
import { keysetPage, type Page, type PageQuery } from './page.ts';
import type { Database, UserRow } from './schema.ts';

/** What a listing shows of the users behind its rows. */
export type UserName = Pick<UserRow, 'id' | 'login' | 'display_name'>;

/**
 * The names of the users behind a page's rows, in one query (never one per row); missing ids are
 * left out. Only the name columns are read: a page of 100 clips names up to 200 users.
 */
export async function usersByIds(
  db: Kysely<Database>,
  ids: Iterable<number>,
): Promise<Map<number, UserName>> {
  const unique = [...new Set(ids)];
  const byId = new Map<number, UserName>();
  if (unique.length === 0) return byId;
  const rows = await db
    .selectFrom('users')
    .select(['id', 'login', 'display_name'])
    .where('id', 'in', unique)
    .execute();
  for (const r of rows) byId.set(r.id, r);
  return byId;
}

export function findUserById(db: Kysely<Database>, id: number): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Logins are stored in lower case; the lookup ignores case. */
export function findUserByLogin(db: Kysely<Database>, login: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('login', '=', login.toLowerCase()).executeTakeFirst();
}

/** All users by id, ascending (the primary key's order): the consent page and /units/users. */
export function usersById(db: Kysely<Database>, page: PageQuery): Promise<Page<UserRow>> {
  return keysetPage(db.selectFrom('users').selectAll(), ['id'], 'asc', page);
}

export async function countUsers(db: Kysely<Database>): Promise<number> {
  const row = await db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirstOrThrow();
  // PostgreSQL's count is an int8, which its driver may hand back as text.
  return Number(row.n);
}
