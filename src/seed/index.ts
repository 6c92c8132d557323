import { CompiledQuery, type Kysely, sql, type Transaction } from 'kysely';
import type { Dialect, Store } from '../store/db.ts';
import type { Database } from '../store/schema.ts';
import { getSetting, setSetting } from '../store/settings.ts';
import type { SeedOptions, SeedSummary } from './generate.ts';
import { type EncodedChunk, generateChunks } from './worker.ts';

/** Tables that hold platform data, in the order they are emptied by --force. */
export const DATA_TABLES = [
  'extension_days',
  'game_days',
  'extensions',
  'tags',
  'moderators',
  'follows',
  'subscriptions',
  'markers',
  'videos',
  'clips',
  'streams',
  'games',
  'auth_codes',
  'tokens',
  'clients',
  'users',
] as const satisfies readonly (keyof Database)[];

export class StoreNotEmptyError extends Error {}

/** What the store records about the demo data it was seeded with. */
export interface SeedInfo extends SeedOptions {
  demoUserId: number;
  demoLogin: string;
  demoClientId: string;
}

export async function isEmpty(store: Store): Promise<boolean> {
  const row = await store.db.selectFrom('users').select('id').limit(1).executeTakeFirst();
  const client = await store.db.selectFrom('clients').select('id').limit(1).executeTakeFirst();
  return !row && !client;
}

export async function readSeedInfo(store: Store): Promise<SeedInfo | undefined> {
  const v = await getSetting(store.db, 'seed');
  return v ? (JSON.parse(v) as SeedInfo) : undefined;
}

export interface SeedRun {
  force?: boolean;
  onProgress?: (table: keyof Database, rows: number) => void;
  /** 2: rows are generated in a worker thread while this one writes (src/seed/worker.ts); default 2 from 10,000 users */
  threads?: 1 | 2;
}

/**
 * Writes the demo data set into `store` in one transaction: all or nothing. A store that already
 * holds users or clients is refused unless `force`, which first empties every data table.
 *
 * Speed: the secondary indexes of the data tables are dropped inside the transaction and built
 * again, from their own definitions, once the rows are in. Building an index from loaded rows is a
 * sort; keeping it up to date row by row is a random B-tree insert per row, which for a million
 * clips in random key order is most of the time.
 */
export async function seedStore(store: Store, o: SeedOptions, run: SeedRun = {}): Promise<SeedSummary> {
  if (!(await isEmpty(store))) {
    if (!run.force) throw new StoreNotEmptyError('the store already holds data; use --force to replace it');
  }
  return store.db.transaction().execute(async (trx) => {
    if (run.force) for (const t of DATA_TABLES) await trx.deleteFrom(t).execute();
    const deferred = await dropSecondaryIndexes(trx, store.dialect);
    const insert = inserter(trx, store.dialect);
    const threads = run.threads ?? (o.users >= 10_000 ? 2 : 1);
    const summary = await generateChunks(o, threads, async (chunk) => {
      await insert(chunk);
      run.onProgress?.(chunk.table, chunk.rows);
    });
    for (const ddl of deferred) await trx.executeQuery(CompiledQuery.raw(ddl));
    const info: SeedInfo = {
      ...o,
      demoUserId: summary.demoUserId,
      demoLogin: summary.demoLogin,
      demoClientId: summary.demoClientId,
    };
    await setSetting(trx, 'seed', JSON.stringify(info));
    // Only this store's tables: a bare ANALYZE covers every schema of the database and deadlocks
    // with another session seeding its own schema at the same time (parallel test files).
    if (store.dialect === 'postgres')
      await sql`analyze ${sql.join(DATA_TABLES.map((t) => sql.table(t)))}`.execute(trx);
    return summary;
  });
}

/**
 * A writer of generated rows. Each chunk goes in as ONE statement with ONE parameter, the chunk as
 * a JSON array of row arrays, which the database unpacks itself (SQLite json_each, PostgreSQL
 * json_array_elements): a short SQL text prepared once per table instead of thousands of bound
 * values. Every value is an integer below 2^53, a string or null, so the JSON round trip is exact.
 */
function inserter(trx: Transaction<Database>, dialect: Dialect) {
  const texts = new Map<string, string>();
  const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;
  const textFor = async (table: string, columns: string[]): Promise<string> => {
    let text = texts.get(table);
    if (text === undefined) {
      const list = columns.map(quote).join(',');
      if (dialect === 'sqlite') {
        const values = columns.map((_, i) => `value ->> ${i}`).join(',');
        text = `insert into ${quote(table)} (${list}) select ${values} from json_each(?)`;
      } else {
        // Each element is cast to its column's type, read from the catalog once per table.
        const r = await sql<{ name: string; type: string }>`
          select attname as name, format_type(atttypid, atttypmod) as type from pg_attribute
          where attrelid = ${sql.lit(table)}::regclass and attnum > 0 and not attisdropped`.execute(trx);
        const typeOf = new Map(r.rows.map((c) => [c.name, c.type]));
        const values = columns.map((c, i) => `(e ->> ${i})::${typeOf.get(c) ?? 'text'}`).join(',');
        text = `insert into ${quote(table)} (${list}) select ${values} from json_array_elements($1::json) e`;
      }
      texts.set(table, text);
    }
    return text;
  };
  return async (chunk: EncodedChunk): Promise<void> => {
    const text = await textFor(chunk.table, chunk.columns);
    await trx.executeQuery(CompiledQuery.raw(text, [chunk.json]));
  };
}

/**
 * Drops the indexes of the data tables that no constraint needs (primary keys and unique
 * constraints stay, so the load is still checked) and returns the statements that recreate them
 * exactly as the migrations made them.
 */
async function dropSecondaryIndexes(db: Kysely<Database>, dialect: Dialect): Promise<string[]> {
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
