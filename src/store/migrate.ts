import { type Migration, type MigrationResultSet, Migrator, sql } from 'kysely';
import type { Store } from './db.ts';
import * as m001 from './migrations/001_initial.ts';
import * as m003 from './migrations/003_clips_videos_paging.ts';
import * as m004 from './migrations/004_subscription_totals.ts';

// Listed here rather than read from the folder, so that migrations work the same under tsx, a
// bundle, or compiled output. Names sort in the order they must run.
const migrations: Record<string, Migration> = {
  '001_initial': m001,
  '003_clips_videos_paging': m003,
  '004_subscription_totals': m004,
};

export async function migrateToLatest(store: Store): Promise<MigrationResultSet> {
  // On PostgreSQL, name the schema the store works in: without it Kysely takes a migration table of
  // any other schema in the database for its own and fails ("kysely_migration_lock does not exist").
  const migrationTableSchema =
    store.dialect === 'postgres'
      ? (await sql<{ s: string }>`select current_schema() as s`.execute(store.db)).rows[0]?.s
      : undefined;
  const migrator = new Migrator({
    // biome-ignore lint/suspicious/noExplicitAny: the migrator works on any schema
    db: store.db as any,
    provider: { getMigrations: async () => migrations },
    ...(migrationTableSchema ? { migrationTableSchema } : {}),
  });
  return migrator.migrateToLatest();
}

/** Applies pending migrations, throwing a readable error when one fails. */
export async function migrateOrThrow(store: Store): Promise<string[]> {
  const { error, results } = await migrateToLatest(store);
  if (error) {
    const failed = results?.find((r) => r.status === 'Error');
    throw new Error(
      `migration ${failed?.migrationName ?? '?'} failed: ${(error as Error).message ?? error}`,
      {
        cause: error,
      },
    );
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
