import { type Kysely, PostgresAdapter, sql } from 'kysely';

// The game report's `Clips Created` is the number of clips of the game created that UTC day, counted
// from the clips table when the report is read, so that it equals what GET /clips lists whoever
// wrote the clips (seeding, import, the admin API). The stored `game_days.clips_created` could
// disagree with the clips and is dropped.
//
// Counted at read time over this index rather than kept by triggers (as subscription_totals is):
// - a report is one range scan per 500 days of the index, its cost the number of the game's clips in
//   those days, tens of milliseconds for the largest games (measured with bench/report.ts:
//   docs/perf/2026-11-22-game-report.md). The CSV is streamed 500 days at a time, so even a game
//   with millions of clips starts answering at once;
// - clips are written far more often than reports are read, and in bulk (seeding, import of
//   millions of clips). A row trigger upserting per-(game, day) counters would make inserting clips
//   much slower than an index does (docs/perf/2026-11-22-game-report.md), and would also have to
//   follow every change of a clip's game or time.
//
// The index is keyed by the day number (created_at / 86400, what the count groups by), so the
// count reads it in grouping order without a sort; created_at last makes it covering on PostgreSQL
// too (an index-only scan needs the column the expression reads). A plain (game_id, created_at)
// index would also offer GET /clips by game with a period a created_at range, and SQLite took it
// there and sorted the range by views (test/store/plans-clips-videos.test.ts) instead of walking
// clips_game_views in page order.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index clips_game_day on clips (game_id, (created_at / 86400), created_at)`.execute(db);
  await db.schema.alterTable('game_days').dropColumn('clips_created').execute();
}

function isPostgres(db: Kysely<unknown>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('game_days')
    .addColumn('clips_created', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  // The stored column gets the counts the report showed.
  const dayStart = isPostgres(db)
    ? sql`cast(extract(epoch from cast(game_days.day as date)) as bigint)`
    : sql`unixepoch(game_days.day)`;
  await sql`update game_days set clips_created = (
      select count(*) from clips
      where clips.game_id = game_days.game_id
        and clips.created_at >= ${dayStart} and clips.created_at < ${dayStart} + 86400)`.execute(db);
  await db.schema.dropIndex('clips_game_day').execute();
}
