import { type Kysely, PostgresAdapter, sql } from 'kysely';

// games.viewer_count and games.stream_count (the order and membership of /games/top) are the sum of
// viewer_count and the number of rows of the game's live streams. Until now the seeder computed
// them; with an admin API and an import writing streams, triggers keep them true whatever writes
// the streams table (insert = go live, delete = go offline, update = new viewer count or game), as
// migration 004 does for subscription totals: statement-level triggers with transition tables on
// PostgreSQL (one update per game per statement), row triggers on SQLite.
// TRUNCATE bypasses triggers: empty the table with DELETE.

function isPostgres(db: Kysely<unknown>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/** Sets every game's counters from the streams table (a store that holds streams already). */
export const RECOUNT = `
  update games set
    viewer_count = coalesce((select sum(s.viewer_count) from streams s where s.game_id = games.id), 0),
    stream_count = (select count(*) from streams s where s.game_id = games.id)`;

export async function up(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) {
    await sql
      .raw(`
      create function games_live_apply() returns trigger language plpgsql as $$
      begin
        if tg_op in ('DELETE', 'UPDATE') then
          update games g set viewer_count = g.viewer_count - d.v, stream_count = g.stream_count - d.n
          from (select game_id, sum(viewer_count) as v, count(*) as n from old_rows group by game_id) d
          where g.id = d.game_id;
        end if;
        if tg_op in ('INSERT', 'UPDATE') then
          update games g set viewer_count = g.viewer_count + d.v, stream_count = g.stream_count + d.n
          from (select game_id, sum(viewer_count) as v, count(*) as n from new_rows group by game_id) d
          where g.id = d.game_id;
        end if;
        return null;
      end $$`)
      .execute(db);
    await sql
      .raw(`create trigger streams_games_insert after insert on streams
      referencing new table as new_rows for each statement execute function games_live_apply()`)
      .execute(db);
    await sql
      .raw(`create trigger streams_games_delete after delete on streams
      referencing old table as old_rows for each statement execute function games_live_apply()`)
      .execute(db);
    await sql
      .raw(`create trigger streams_games_update after update on streams
      referencing old table as old_rows new table as new_rows
      for each statement execute function games_live_apply()`)
      .execute(db);
  } else {
    const add = (row: string) => `
      update games set viewer_count = viewer_count + ${row}.viewer_count, stream_count = stream_count + 1
      where id = ${row}.game_id;`;
    const remove = (row: string) => `
      update games set viewer_count = viewer_count - ${row}.viewer_count, stream_count = stream_count - 1
      where id = ${row}.game_id;`;
    await sql
      .raw(`create trigger streams_games_insert after insert on streams begin ${add('new')} end`)
      .execute(db);
    await sql
      .raw(`create trigger streams_games_delete after delete on streams begin ${remove('old')} end`)
      .execute(db);
    await sql
      .raw(
        `create trigger streams_games_update after update of game_id, viewer_count on streams
        begin ${remove('old')} ${add('new')} end`,
      )
      .execute(db);
  }
  await sql.raw(RECOUNT).execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of ['insert', 'delete', 'update']) {
    await sql
      .raw(isPostgres(db) ? `drop trigger streams_games_${t} on streams` : `drop trigger streams_games_${t}`)
      .execute(db);
  }
  if (isPostgres(db)) await sql.raw('drop function games_live_apply()').execute(db);
}
