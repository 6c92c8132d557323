import { type Migration, type MigrationResultSet, Migrator, sql } from 'kysely';
import type { Store } from './db.ts';
import * as m001 from './migrations/001_initial.ts';
import * as m003 from './migrations/003_clips_videos_paging.ts';
import * as m004 from './migrations/004_subscription_totals.ts';
import * as m004b from './migrations/004b_games_top_live.ts';
import * as m005 from './migrations/005_users_games_lookup.ts';
import * as m006 from './migrations/006_streams_listing.ts';
import * as m007 from './migrations/007_moderators.ts';
import * as m008 from './migrations/008_game_live_counts.ts';
import * as m009 from './migrations/009_clips_per_game_day.ts';
import * as m010 from './migrations/010_clips_covering.ts';
import * as m011 from './migrations/011_clips_covering_pg.ts';
import * as m012 from './migrations/012_listings_covering.ts';
import * as m013 from './migrations/013_live_moves.ts';
import * as m014 from './migrations/014_listings_covering_pg.ts';
import * as m015 from './migrations/015_eventsub.ts';
import * as m016 from './migrations/016_eventsub_limits.ts';
import * as m017 from './migrations/017_video_links.ts';
import * as m018 from './migrations/018_search.ts';
import * as m019 from './migrations/019_channels.ts';
import * as m020 from './migrations/020_clip_jobs.ts';

// Listed here rather than read from the folder, so that migrations work the same under tsx, a
// bundle, or compiled output. Names sort in the order they must run.
const migrations: Record<string, Migration> = {
  '001_initial': m001,
  '003_clips_videos_paging': m003,
  '004_subscription_totals': m004,
  '004b_games_top_live': m004b,
  '005_users_games_lookup': m005,
  '006_streams_listing': m006,
  '007_moderators': m007,
  '008_game_live_counts': m008,
  '009_clips_per_game_day': m009,
  '010_clips_covering': m010,
  '011_clips_covering_pg': m011,
  '012_listings_covering': m012,
  '013_live_moves': m013,
  '014_listings_covering_pg': m014,
  '015_eventsub': m015,
  '016_eventsub_limits': m016,
  '017_video_links': m017,
  '018_search': m018,
  '019_channels': m019,
  '020_clip_jobs': m020,
};

/**
 * Migrates `store` to `target`, a migration's name (down when the store is past it), or to the
 * latest by default.
 */
export async function migrateToLatest(store: Store, target?: string): Promise<MigrationResultSet> {
  // On PostgreSQL, name the schema the store works in: without it Kysely takes a migration table of
  // any other schema in the database for its own and fails ("kysely_migration_lock does not exist").
  const migrationTableSchema =
    store.dialect === 'postgres'
      ? (await sql<{ s: string }>`select current_schema() as s`.execute(store.db)).rows[0]?.s
      : undefined;
  if (target === undefined && (await appliedAll(store, migrationTableSchema))) return { results: [] };
  const migrator = new Migrator({
    // biome-ignore lint/suspicious/noExplicitAny: the migrator works on any schema
    db: store.db as any,
    provider: { getMigrations: async () => migrations },
    ...(migrationTableSchema ? { migrationTableSchema } : {}),
  });
  // Kysely's migrator introspects every table of every schema in the database. On PostgreSQL a
  // schema dropped meanwhile by another session (parallel test files), a column dropped meanwhile
  // by another session's migration (009 drops one, and the look-up asks pg_get_serial_sequence of
  // every column: 42703), or a deadlock with another session's DDL fails that look-up; migrations
  // run in a transaction, so trying again is safe.
  for (let attempt = 1; ; attempt++) {
    const result = target === undefined ? await migrator.migrateToLatest() : await migrator.migrateTo(target);
    const code = (result.error as { code?: unknown } | undefined)?.code;
    if (!result.error || store.dialect !== 'postgres' || attempt === 3) return result;
    if (!['40P01', '3F000', '42P01', '42703'].includes(String(code))) return result;
    await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
  }
}

/**
 * Whether the store has run exactly the migrations listed here: one query, where Kysely's migrator
 * looks up every table of the database and takes its lock before it finds nothing to do (most of
 * the store's part of a start). Any doubt (no migration table yet, a name it does not know, a
 * failed query) leaves the answer to the migrator.
 */
async function appliedAll(store: Store, schema: string | undefined): Promise<boolean> {
  const table = sql.table(schema ? `${schema}.kysely_migration` : 'kysely_migration');
  try {
    const { rows } = await sql<{ name: string }>`select name from ${table}`.execute(store.db);
    // Sorted here, not in SQL: PostgreSQL's collation may order `004_` and `004b_` the other way.
    const names = rows.map((r) => r.name).sort();
    const known = Object.keys(migrations).sort();
    return names.length === known.length && names.every((n, i) => n === known[i]);
  } catch {
    return false;
  }
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
