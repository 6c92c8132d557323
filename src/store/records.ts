// The SQL of the record write and read path (src/records/): generic over the data tables, which a
// record kind names with its columns. A batch of keys is looked up in one statement, so that an
// import of thousands of records costs a few statements per chunk, and a single admin write a few
// probes.
import { CompiledQuery, type Kysely } from 'kysely';
import { jsonElementsAs } from './bulk.ts';
import type { Dialect } from './db.ts';
import { hasRow, type Key, type Page, shapedPage } from './page.ts';
import type { Database } from './schema.ts';

// biome-ignore lint/suspicious/noExplicitAny: the table and column names come from a record kind
type AnyDb = Kysely<any>;
export type KeyValue = string | number;
// biome-ignore lint/suspicious/noExplicitAny: a row of whichever table
export type AnyRow = Record<string, any>;

/** A key's text, for sets of keys (values keep their type: 1 and "1" differ). */
export const keyText = (key: readonly KeyValue[]): string => JSON.stringify(key);

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;
const texts = new Map<string, string>();

/**
 * The rows of `table` whose `columns` hold one of `keys`, with the columns asked for. However many
 * keys, ONE statement with ONE parameter, the keys as a JSON array of value arrays that the
 * database unpacks itself (as src/store/bulk.ts `inserter` writes rows on PostgreSQL): a chunk of an import
 * costs a statement per check, not one per few hundred values, nor a query built value by value.
 */
export async function rowsWithKeys(
  db: Kysely<Database>,
  dialect: Dialect,
  table: keyof Database,
  columns: readonly string[],
  keys: readonly (readonly KeyValue[])[],
  select: readonly string[],
): Promise<AnyRow[]> {
  if (keys.length === 0) return [];
  const cacheKey = `${dialect}\n${table}\n${columns.join(',')}\n${select.join(',')}`;
  let text = texts.get(cacheKey);
  if (text === undefined) {
    const list = [...new Set([...columns, ...select])].map(quote).join(',');
    const tuple = `(${columns.map(quote).join(',')})`;
    // Keys come as arrays even for one column: one form of parameter for every lookup.
    text =
      dialect === 'sqlite'
        ? `select ${list} from ${quote(table)} where ${tuple} in (select ${columns.map((_, i) => `value ->> ${i}`).join(',')} from json_each(?))`
        : `select ${list} from ${quote(table)} where ${tuple} in (select ${(await jsonElementsAs(db, table, columns, 'e')).join(',')} from json_array_elements($1::json) e)`;
    // Only the PostgreSQL text depends on the catalog, which the migrations make the same everywhere.
    texts.set(cacheKey, text);
  }
  const r = await db.executeQuery<AnyRow>(CompiledQuery.raw(text, [JSON.stringify(keys)]));
  return r.rows as AnyRow[];
}

/** Which of `keys` (values of `columns`) the table holds, as keyText strings. */
export async function existingKeys(
  db: Kysely<Database>,
  dialect: Dialect,
  table: keyof Database,
  columns: readonly string[],
  keys: readonly (readonly KeyValue[])[],
): Promise<Set<string>> {
  const rows = await rowsWithKeys(db, dialect, table, columns, keys, columns);
  return new Set(rows.map((row) => keyText(columns.map((c) => row[c]))));
}

/** The rows whose `column` holds one of `values`, with the columns asked for. */
export function rowsWhereIn(
  db: Kysely<Database>,
  dialect: Dialect,
  table: keyof Database,
  column: string,
  values: readonly KeyValue[],
  select: readonly string[],
): Promise<AnyRow[]> {
  return rowsWithKeys(
    db,
    dialect,
    table,
    [column],
    values.map((v) => [v]),
    select,
  );
}

/**
 * The row with this key, or undefined. `lock` (PostgreSQL only: SQLite has one writer at a time
 * already) locks it until the end of the transaction `db` is, for a read that the same transaction
 * writes back.
 */
export function rowByKey(
  db: Kysely<Database>,
  table: keyof Database,
  columns: readonly string[],
  key: readonly KeyValue[],
  lock = false,
): Promise<AnyRow | undefined> {
  let q = (db as AnyDb).selectFrom(table).selectAll();
  columns.forEach((c, i) => {
    q = q.where(c, '=', key[i]);
  });
  return (lock ? q.forUpdate() : q).executeTakeFirst();
}

/** Deletes the row with this key; whether there was one. */
export async function deleteByKey(
  db: Kysely<Database>,
  table: keyof Database,
  columns: readonly string[],
  key: readonly KeyValue[],
): Promise<boolean> {
  let q = (db as AnyDb).deleteFrom(table);
  columns.forEach((c, i) => {
    q = q.where(c, '=', key[i]);
  });
  const r = await q.executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/** Whether any row's `column` holds `value` (a record that still names another). */
export function anyRowNames(
  db: Kysely<Database>,
  table: keyof Database,
  column: string,
  value: KeyValue,
): Promise<boolean> {
  return hasRow((db as AnyDb).selectFrom(table).select(column).where(column, '=', value));
}

/** One page of a table in the order of `columns` (its primary key), after `after`. */
export function rowsInKeyOrder(
  db: Kysely<Database>,
  table: keyof Database,
  columns: readonly string[],
  page: { first: number; after?: Key },
): Promise<Page<AnyRow>> {
  return shapedPage(
    db,
    `records of ${table}`,
    {},
    () => (db as AnyDb).selectFrom(table).selectAll(),
    columns,
    'asc',
    page,
  );
}

/**
 * Forgets a deleted user's tokens and authorization codes: nothing may act for a user that is gone.
 * (A deleted client's go with it through their foreign key.)
 */
export async function deleteUserGrants(db: Kysely<Database>, userId: number): Promise<void> {
  await db.deleteFrom('tokens').where('user_id', '=', userId).execute();
  await db.deleteFrom('auth_codes').where('user_id', '=', userId).execute();
}

/** Whether an error is a store's refusal of a duplicate primary key or unique value. */
export function isUniqueViolation(err: unknown): boolean {
  const code = String((err as { code?: unknown })?.code ?? '');
  return code === '23505' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'SQLITE_CONSTRAINT_UNIQUE';
}

/** Runs `fn` in a transaction of its own, or in `trx` when one is given. */
export function inTransaction<T>(
  db: Kysely<Database>,
  trx: Kysely<Database> | undefined,
  fn: (trx: Kysely<Database>) => Promise<T>,
): Promise<T> {
  return trx ? fn(trx) : db.transaction().execute(fn);
}
