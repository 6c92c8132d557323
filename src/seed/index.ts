import { sql } from 'kysely';
import type { Store } from '../store/db.ts';
import type { Database } from '../store/schema.ts';
import { getSetting, setSetting } from '../store/settings.ts';
import { generate, type SeedOptions, type SeedSummary } from './generate.ts';

/** Tables that hold platform data, in the order they are emptied by --force. */
export const DATA_TABLES = [
  'extension_days',
  'game_days',
  'extensions',
  'tags',
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
}

// SQLite allows 32,766 bound values per statement and PostgreSQL 65,535: batches stay below both.
const MAX_PARAMS = 30_000;

/**
 * Writes the demo data set into `store` in one transaction: all or nothing. A store that already
 * holds users or clients is refused unless `force`, which first empties every data table.
 */
export async function seedStore(store: Store, o: SeedOptions, run: SeedRun = {}): Promise<SeedSummary> {
  if (!(await isEmpty(store))) {
    if (!run.force) throw new StoreNotEmptyError('the store already holds data; use --force to replace it');
  }
  return store.db.transaction().execute(async (trx) => {
    if (run.force) for (const t of DATA_TABLES) await trx.deleteFrom(t).execute();
    const summary = await generate(o, async (table, rows) => {
      if (rows.length === 0) return;
      const perRow = Object.keys(rows[0] as object).length;
      const batch = Math.max(1, Math.floor(MAX_PARAMS / perRow));
      for (let i = 0; i < rows.length; i += batch) {
        // biome-ignore lint/suspicious/noExplicitAny: rows are typed by the generator per table
        const values = rows.slice(i, i + batch) as any;
        await trx.insertInto(table).values(values).execute();
      }
      run.onProgress?.(table, rows.length);
    });
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
