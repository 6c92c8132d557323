import type { Kysely } from 'kysely';
import { StoreCache } from './cache.ts';
import type { Store } from './db.ts';
import { type Page, type PageQuery, shapedPage } from './page.ts';
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

/**
 * The user with this login (case ignored) or, when `id` is given, this id: one query. Used where
 * one text may name a user either way (the command line's `--user`).
 */
export function findUserByLoginOrId(
  db: Kysely<Database>,
  login: string,
  id: number | undefined,
): Promise<UserRow | undefined> {
  return db
    .selectFrom('users')
    .selectAll()
    .where((eb) =>
      id === undefined
        ? eb('login', '=', login.toLowerCase())
        : eb.or([eb('login', '=', login.toLowerCase()), eb('id', '=', id)]),
    )
    .executeTakeFirst();
}

/** The ids of the users with these logins (case ignored), in one query; unknown logins are left out. */
export async function userIdsByLogins(db: Kysely<Database>, logins: readonly string[]): Promise<number[]> {
  const unique = [...new Set(logins.map((l) => l.toLowerCase()))];
  if (unique.length === 0) return [];
  const rows = await db.selectFrom('users').select('id').where('login', 'in', unique).execute();
  return rows.map((r) => r.id);
}

/**
 * GET /users: the users with any of `ids` or `logins`, in one query, in the order asked: ids first,
 * then logins, each user once, at its first mention. Logins are stored in lower case and compared
 * ignoring case. Unknown ones are left out.
 *
 * One SELECT per kind of key, joined by UNION ALL: each is a probe of its index (the primary key; the
 * logins' unique index). `id IN (...) OR login IN (...)` would let PostgreSQL read a small table
 * whole instead; a user that both lists name comes back twice and is kept once.
 */
export async function usersByIdsOrLogins(
  db: Kysely<Database>,
  ids: readonly number[],
  logins: readonly string[],
): Promise<UserRow[]> {
  const wantedIds = [...new Set(ids)];
  const wantedLogins = [...new Set(logins.map((l) => l.toLowerCase()))];
  const selects = [
    ...(wantedIds.length > 0 ? [db.selectFrom('users').selectAll().where('id', 'in', wantedIds)] : []),
    ...(wantedLogins.length > 0
      ? [db.selectFrom('users').selectAll().where('login', 'in', wantedLogins)]
      : []),
  ];
  const [first, ...rest] = selects;
  if (first === undefined) return [];
  const rows = await rest.reduce((q, next) => q.unionAll(next), first).execute();
  const byId = new Map(rows.map((r) => [r.id, r]));
  const byLogin = new Map(rows.map((r) => [r.login, r]));
  const ordered = new Set<UserRow>();
  for (const r of [...wantedIds.map((id) => byId.get(id)), ...wantedLogins.map((l) => byLogin.get(l))])
    if (r) ordered.add(r);
  return [...ordered];
}

/** All users by id, ascending (the primary key's order): the consent page and /units/users. */
export function usersById(db: Kysely<Database>, page: PageQuery): Promise<Page<UserRow>> {
  return shapedPage(db, 'users by id', {}, () => db.selectFrom('users').selectAll(), ['id'], 'asc', page);
}

export async function countUsers(db: Kysely<Database>): Promise<number> {
  const row = await db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirstOrThrow();
  // PostgreSQL's count is an int8, which its driver may hand back as text.
  return Number(row.n);
}

/**
 * The names of users, kept in memory (src/store/cache.ts): a page of 20 clips names up to 40
 * users, which SQLite finds one B-tree descent at a time, and names change rarely. A change to the
 * store, through this process or another, empties the copy before the next read.
 */
export class UserNames {
  readonly #store: Store;
  /** null: no user has this id (as of the store's current epoch) */
  readonly #cache: StoreCache<number, UserName | null>;

  constructor(store: Store) {
    this.#store = store;
    this.#cache = new StoreCache(store, 200_000);
  }

  /** Whether names are kept in memory on this store (SQLite); if not, every byIds is a query. */
  get inMemory(): boolean {
    return this.#cache.enabled;
  }

  /** Like usersByIds: the users among `ids` that exist, by id. */
  async byIds(ids: Iterable<number>): Promise<Map<number, UserName>> {
    const epoch = this.#cache.begin();
    const byId = new Map<number, UserName>();
    const missing = new Set<number>();
    for (const id of ids) {
      const kept = this.#cache.get(id);
      if (kept === undefined) missing.add(id);
      else if (kept !== null) byId.set(id, kept);
    }
    if (missing.size > 0) {
      const read = await usersByIds(this.#store.db, missing);
      for (const [id, user] of read) byId.set(id, user);
      // An id with no user is kept too, as null: nothing ties a clip's creator or a video's owner
      // to a user row, and a page naming one would otherwise look it up on every request.
      this.#cache.keep(
        epoch,
        [...missing].map((id) => [id, read.get(id) ?? null] as const),
      );
    }
    return byId;
  }
}
