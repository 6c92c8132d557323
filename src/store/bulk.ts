// Bulk loading of generated rows (the demo data set, src/seed/): the tables it fills, and the SQL
// that makes loading a million rows fast on each store. What the rows are is src/seed/'s business.
import { CompiledQuery, type Kysely, sql, type Transaction } from 'kysely';
import type { Dialect, Store } from './db.ts';
import type { Database } from './schema.ts';
import type { RowsConnection } from './sqlite-driver.ts';

/**
 * Tables that hold platform data, each after the tables its rows name (the order they are filled
 * in); --force empties them in the reverse order.
 */
export const DATA_TABLES = [
  'users',
  'clients',
  'tokens',
  'auth_codes',
  'games',
  'streams',
  'channels',
  'clips',
  'videos',
  'markers',
  'subscriptions',
  'follows',
  'moderators',
  'tags',
  'extensions',
  'game_days',
  'extension_days',
] as const satisfies readonly (keyof Database)[];

/** Whether the store holds no users and no clients (nothing a seed would overwrite). */
export async function isEmpty(store: Store): Promise<boolean> {
  const row = await store.db.selectFrom('users').select('id').limit(1).executeTakeFirst();
  const client = await store.db.selectFrom('clients').select('id').limit(1).executeTakeFirst();
  return !row && !client;
}

/** Whether any data table holds a row (a fixture starts from a store that holds none). */
export async function holdsData(db: Kysely<Database>): Promise<boolean> {
  for (const t of DATA_TABLES) {
    const row = await db.selectFrom(t).select(sql.lit(1).as('x')).limit(1).executeTakeFirst();
    if (row) return true;
  }
  return false;
}

/**
 * Deletes every row of every data table (a seed with --force), and the clips asked for of the data
 * that goes (migration 020): none is made into the new data.
 */
export async function emptyDataTables(trx: Transaction<Database>): Promise<void> {
  await trx.deleteFrom('clip_jobs').execute();
  for (const t of [...DATA_TABLES].reverse()) await trx.deleteFrom(t).execute();
}

/** SQLite's page cache during a large import, in KiB (its default is 2 MiB). */
export const IMPORT_CACHE_KIB = 256 * 1024;

/**
 * Runs `fn` with a large SQLite page cache, then the cache as it was. An import into a store that
 * holds millions of rows looks up every record's key and references at random places of the
 * tables' B-trees; with the default 2 MiB nearly every lookup reads its pages again. (PostgreSQL
 * sizes its buffers server-side: nothing to do.)
 */
export async function withLargeCache<T>(store: Store, fn: () => Promise<T>): Promise<T> {
  if (store.dialect !== 'sqlite') return fn();
  const before = (await sql<{ cache_size: number }>`pragma cache_size`.execute(store.db)).rows[0]?.cache_size;
  await sql.raw(`pragma cache_size = -${IMPORT_CACHE_KIB}`).execute(store.db);
  try {
    return await fn();
  } finally {
    if (before !== undefined) await sql.raw(`pragma cache_size = ${Number(before)}`).execute(store.db);
  }
}

/**
 * Runs `fn`, a load of many rows in one transaction (a seed), with SQLite set for it, then as it
 * was: the large page cache of `withLargeCache`, and a rollback journal instead of the WAL. In WAL
 * mode every page the load writes goes to the WAL first, and the checkpoint when the last
 * connection closes copies it into the file: the store written twice, and once the WAL outgrows
 * the cache, pages read back through the WAL's index. A rollback journal keeps a copy of the pages
 * the transaction changes as they were before it, and none of the pages it adds at the end of the
 * file, which into an empty store are nearly all: the rows are written once. A failed load still
 * rolls back, and a journal left by a crash is rolled back when the file is next opened.
 *
 * The journal mode cannot leave WAL while another connection has the file open (a server on it,
 * SQLITE_BUSY at once): the load then runs in WAL mode, as it always did. PostgreSQL: `fn` alone.
 */
export async function withBulkLoad<T>(store: Store, fn: () => Promise<T>): Promise<T> {
  if (store.dialect !== 'sqlite') return fn();
  return withLargeCache(store, async () => {
    const mode = async (to: string) =>
      (await sql<{ journal_mode: string }>`pragma journal_mode = ${sql.raw(to)}`.execute(store.db)).rows[0]
        ?.journal_mode;
    let before: string | undefined;
    try {
      before = (await sql<{ journal_mode: string }>`pragma journal_mode`.execute(store.db)).rows[0]
        ?.journal_mode;
      if (before === 'wal' && (await mode('delete')) !== 'delete') before = undefined;
    } catch (e) {
      if ((e as { code?: string }).code !== 'SQLITE_BUSY') throw e;
      before = undefined;
    }
    try {
      return await fn();
    } finally {
      if (before === 'wal') await mode('wal');
    }
  });
}

/** Runs statements that `dropSecondaryIndexes` returned, building the indexes again. */
export async function runDdl(trx: Transaction<Database>, ddl: readonly string[]): Promise<void> {
  for (const text of ddl) await trx.executeQuery(CompiledQuery.raw(text));
}

/**
 * The tables the load's triggers fill from the data tables whose statistics a page's plan reads:
 * the search keys (migration 018), each search a range of them.
 */
const DERIVED_TABLES = [
  'search_channel_keys',
  'search_game_keys',
] as const satisfies readonly (keyof Database)[];

/**
 * Refreshes the planner's statistics of the data tables (and of the search keys their triggers
 * wrote) after a load. Only this store's tables: a bare ANALYZE covers every schema of the database
 * and deadlocks with another session seeding its own schema at the same time (parallel test files).
 * SQLite plans without them.
 */
export async function analyzeDataTables(trx: Transaction<Database>, dialect: Dialect): Promise<void> {
  if (dialect === 'postgres')
    await sql`analyze ${sql.join([...DATA_TABLES, ...DERIVED_TABLES].map((t) => sql.table(t)))}`.execute(trx);
}

const columnTypes = new WeakMap<object, Map<string, Promise<Map<string, string>>>>();

/**
 * PostgreSQL: the expressions that read element `i` of the JSON array `e` as column `columns[i]`,
 * each cast to its column's type (read from the catalog once per table and connection), so that
 * it compares and inserts as the column's own values.
 */
export async function jsonElementsAs(
  db: Kysely<Database>,
  table: string,
  columns: readonly string[],
  e: string,
): Promise<string[]> {
  let tables = columnTypes.get(db);
  if (!tables) {
    tables = new Map();
    columnTypes.set(db, tables);
  }
  let types = tables.get(table);
  if (!types) {
    types = sql<{ name: string; type: string }>`
      select attname as name, format_type(atttypid, atttypmod) as type from pg_attribute
      where attrelid = ${sql.lit(table)}::regclass and attnum > 0 and not attisdropped`
      .execute(db)
      .then((r) => new Map(r.rows.map((c) => [c.name, c.type])));
    tables.set(table, types);
  }
  const typeOf = await types;
  return columns.map((c, i) => `(${e} ->> ${i})::${typeOf.get(c) ?? 'text'}`);
}

/** A chunk of one table's rows: the column names and the rows as a JSON array of value arrays. */
export interface JsonRows {
  table: keyof Database;
  columns: string[];
  json: string;
}

/** Rows that replace the rows of the same key, but for the columns in `keep` (see `inserter`). */
export interface Upsert {
  key: readonly string[];
  keep?: readonly string[];
}

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

/**
 * SQLite: the INSERT of one row into `table`, its values bound in the order of `columns`, then
 * `tail` (an ON CONFLICT clause): the statement every bulk writer of SQLite rows runs per row.
 */
export function sqliteRowInsert(table: string, columns: readonly string[], tail = ''): string {
  return `insert into ${quote(table)} (${columns.map(quote).join(',')}) values (${columns.map(() => '?').join(',')})${tail}`;
}

/**
 * A writer of rows. PostgreSQL: each chunk goes in as ONE statement with ONE parameter, the chunk
 * as a JSON array of row arrays, which the database unpacks itself (json_array_elements): a short
 * SQL text prepared once per table instead of thousands of bound values. SQLite: one prepared
 * single-row INSERT run for each row of the parsed chunk, in this thread with no round trip: less
 * time than SQLite's `json_each` unpacking, whose `value ->> i` reads each row's JSON text again
 * for every column (docs/perf/2026-11-22-seed-speed.md, change 1). Every value is an integer below
 * 2^53, a string or null, so the JSON round trip is exact.
 *
 * `upsert`: the chunk's rows replace the rows with the same `key` (the columns of a primary key)
 * instead of failing on them, except for the columns in `keep`, which only a new row takes. An
 * upsert is an UPDATE of the existing row, so the triggers that keep derived data (migrations 004,
 * 008) see an update, and rows that refer to it (a client's tokens) stay.
 */
export function inserter(trx: Transaction<Database>, dialect: Dialect) {
  const statements = new Map<string, Promise<{ text: string; asText: number[] }>>();
  const make = async (table: string, columns: string[], upsert?: Upsert) => {
    const list = columns.map(quote).join(',');
    const conflict =
      upsert === undefined
        ? ''
        : ` on conflict (${upsert.key.map(quote).join(',')}) do update set ${columns
            .filter((c) => !upsert.key.includes(c) && !upsert.keep?.includes(c))
            .map((c) => `${quote(c)} = excluded.${quote(c)}`)
            .join(',')}`;
    if (dialect === 'sqlite') {
      const text = sqliteRowInsert(table, columns, conflict);
      return { text, asText: await nonIntegerColumns(trx, table, columns) };
    }
    const values = (await jsonElementsAs(trx, table, columns, 'e')).join(',');
    const text = `insert into ${quote(table)} (${list}) select ${values} from json_array_elements($1::json) e${conflict}`;
    return { text, asText: [] };
  };
  return async (chunk: JsonRows, upsert?: Upsert): Promise<void> => {
    const cacheKey = `${chunk.table}\n${chunk.columns.join(',')}\n${upsert ? JSON.stringify(upsert) : ''}`;
    let statement = statements.get(cacheKey);
    if (statement === undefined) {
      statement = make(chunk.table, chunk.columns, upsert);
      statements.set(cacheKey, statement);
    }
    const { text, asText } = await statement;
    if (dialect !== 'sqlite') {
      await trx.executeQuery(CompiledQuery.raw(text, [chunk.json]));
      return;
    }
    const rows = JSON.parse(chunk.json) as unknown[][];
    if (asText.length > 0) for (const row of rows) bindWholeAsIntegers(row, asText);
    await trx.getExecutor().provideConnection((c) => (c as RowsConnection).runEach(text, rows));
  };
}

/**
 * SQLite: the indexes in `columns` of the columns of `table` that do not have SQLite's INTEGER
 * affinity, where a whole number must be bound as an integer (`bindWholeAsIntegers`).
 */
async function nonIntegerColumns(
  db: Kysely<Database>,
  table: string,
  columns: readonly string[],
): Promise<number[]> {
  const r = await sql<{ name: string; type: string }>`
    select name, type from pragma_table_info(${table})`.execute(db);
  return nonIntegerIndexes(r.rows, columns);
}

/**
 * The indexes in `columns` of the columns, among `declared` (a table's `pragma_table_info` rows),
 * whose declared type does not give SQLite's INTEGER affinity (a type without "INT").
 */
export function nonIntegerIndexes(
  declared: readonly { name: string; type: string }[],
  columns: readonly string[],
): number[] {
  const types = new Map(declared.map((c) => [c.name, c.type]));
  return columns.flatMap((c, i) => (/INT/i.test(types.get(c) ?? '') ? [] : [i]));
}

/**
 * Makes the whole numbers at the indexes `asText` of `row` (a row of values to bind) BigInts.
 * better-sqlite3 binds every JS number as a REAL: an INTEGER column stores a whole one as the
 * integer, but a TEXT column would store 5 as '5.0' where SQLite's own JSON gave '5'.
 */
export function bindWholeAsIntegers(row: unknown[], asText: readonly number[]): void {
  for (const i of asText) {
    const v = row[i];
    if (typeof v === 'number' && Number.isInteger(v)) row[i] = BigInt(v);
  }
}

/**
 * Drops the triggers on `table` and returns the statements that create them again as they were
 * (SQLite: `sqlite_master.sql`; PostgreSQL: `pg_get_triggerdef`, the functions they run stay). A
 * bulk load that recomputes what they keep, once, after the rows are in, drops them first.
 */
export async function dropTriggers(db: Kysely<Database>, dialect: Dialect, table: string): Promise<string[]> {
  const found =
    dialect === 'sqlite'
      ? await sql<{ name: string; ddl: string }>`
          select name, sql as ddl from sqlite_master where type = 'trigger' and tbl_name = ${table}
          order by name`.execute(db)
      : await sql<{ name: string; ddl: string }>`
          select tgname as name, pg_get_triggerdef(oid) as ddl from pg_trigger
          where tgrelid = ${sql.lit(table)}::regclass and not tgisinternal order by tgname`.execute(db);
  for (const { name } of found.rows)
    await sql
      .raw(dialect === 'sqlite' ? `drop trigger "${name}"` : `drop trigger "${name}" on "${table}"`)
      .execute(db);
  return found.rows.map((f) => f.ddl);
}

/**
 * Drops the indexes of the data tables that no constraint needs (primary keys and unique
 * constraints stay, so the load is still checked) and returns the statements that recreate them
 * exactly as the migrations made them.
 */
export async function dropSecondaryIndexes(db: Kysely<Database>, dialect: Dialect): Promise<string[]> {
  const tables = [...DATA_TABLES] as string[];
  let found: { name: string; ddl: string }[];
  if (dialect === 'sqlite') {
    // Indexes behind PRIMARY KEY / UNIQUE have no SQL text (sqlite_autoindex_*).
    const r = await sql<{ name: string; ddl: string }>`
      select name, sql as ddl from sqlite_master
      where type = 'index' and sql is not null and tbl_name in (${sql.join(tables)})
      order by name`.execute(db);
    found = r.rows;
  } else {
    const r = await sql<{ name: string; ddl: string }>`
      select i.indexname as name, i.indexdef as ddl from pg_indexes i
      where i.schemaname = current_schema() and i.tablename in (${sql.join(tables)})
        and not exists (
          select 1 from pg_constraint c
          where c.conindid = (quote_ident(i.schemaname) || '.' || quote_ident(i.indexname))::regclass)
      order by i.indexname`.execute(db);
    found = r.rows;
  }
  for (const { name } of found) await sql`drop index ${sql.ref(name)}`.execute(db);
  return found.map((f) => f.ddl);
}
