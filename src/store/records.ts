// The SQL of the record write and read path (src/records/): generic over the data tables, which a
// record kind names with its columns. Batches of keys are looked up in chunks, so that an import of
// thousands of records costs a few statements per chunk, and a single admin write a few probes.
import type { Kysely } from 'kysely';

import { hasRow, type Key, keysetPage, type Page } from './page.ts';
import type { Database } from './schema.ts';

// biome-ignore lint/suspicious/noExplicitAny: the table and column names come from a record kind
type AnyDb = Kysely<any>;
export type KeyValue = string | number;
// biome-ignore lint/suspicious/noExplicitAny: a row of whichever table
export type AnyRow = Record<string, any>;

/** Values per statement: far below both stores' limits on bound parameters. */
const CHUNK = 500;

function* chunks<T>(items: readonly T[], size: number): Generator<T[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}

/** A key's text, for sets of keys (values keep their type: 1 and "1" differ). */
export const keyText = (key: readonly KeyValue[]): string => JSON.stringify(key);

/** Which of `keys` (values of `columns`) the table holds, as keyText strings. */
export async function existingKeys(
  db: Kysely<Database>,
  table: keyof Database,
  columns: readonly string[],
  keys: readonly (readonly KeyValue[])[],
): Promise<Set<string>> {
  const found = new Set<string>();
  const d = db as AnyDb;
  for (const part of chunks(keys, CHUNK)) {
    let q = d.selectFrom(table).select(columns as string[]);
    if (columns.length === 1)
      q = q.where(
        columns[0] as string,
        'in',
        part.map((k) => k[0]),
      );
    // A row-value IN list would leave PostgreSQL to guess the parameters' types; one equality per
    // column compares each with its column's own type.
    else
      q = q.where((eb) =>
        eb.or(part.map((k) => eb.and(columns.map((c, i) => eb(c, '=', k[i] as KeyValue))))),
      );
    for (const row of (await q.execute()) as AnyRow[]) found.add(keyText(columns.map((c) => row[c])));
  }
  return found;
}

/** The rows whose `column` holds one of `values`, with the columns asked for. */
export async function rowsWhereIn(
  db: Kysely<Database>,
  table: keyof Database,
  column: string,
  values: readonly KeyValue[],
  select: readonly string[],
): Promise<AnyRow[]> {
  const rows: AnyRow[] = [];
  for (const part of chunks(values, CHUNK))
    rows.push(
      ...((await (db as AnyDb)
        .selectFrom(table)
        .select([...new Set([column, ...select])])
        .where(column, 'in', part)
        .execute()) as AnyRow[]),
    );
  return rows;
}

/** The row with this key, or undefined. */
export function rowByKey(
  db: Kysely<Database>,
  table: keyof Database,
  columns: readonly string[],
  key: readonly KeyValue[],
): Promise<AnyRow | undefined> {
  let q = (db as AnyDb).selectFrom(table).selectAll();
  columns.forEach((c, i) => {
    q = q.where(c, '=', key[i]);
  });
  return q.executeTakeFirst();
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
  return keysetPage((db as AnyDb).selectFrom(table).selectAll(), columns, 'asc', page);
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
