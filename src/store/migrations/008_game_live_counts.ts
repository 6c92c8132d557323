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

// A game's counters move by the streams of a set of rows: `sign` '+' for rows that went live (or
// changed to this game or count), '-' for rows that went offline (or changed away).
const pgApply = (sign: '+' | '-', rows: string) => `
  update games g set viewer_count = g.viewer_count ${sign} d.v, stream_count = g.stream_count ${sign} d.n
  from (select game_id, sum(viewer_count) as v, count(*) as n from ${rows} group by game_id) d
  where g.id = d.game_id;`;
const sqliteApply = (sign: '+' | '-', row: 'new' | 'old') => `
  update games set viewer_count = viewer_count ${sign} ${row}.viewer_count, stream_count = stream_count ${sign} 1
  where id = ${row}.game_id;`;

// One trigger per event on PostgreSQL (a trigger with transition tables serves one event only):
// the event, then its transition tables.
const PG_TRIGGERS = [
  ['insert', 'referencing new table as new_rows'],
  ['delete', 'referencing old table as old_rows'],
  ['update', 'referencing old table as old_rows new table as new_rows'],
] as const;
// On SQLite: the trigger's name, its event, and what it does per row.
const SQLITE_TRIGGERS = [
  ['insert', 'insert', sqliteApply('+', 'new')],
  ['delete', 'delete', sqliteApply('-', 'old')],
  ['update', 'update of game_id, viewer_count', sqliteApply('-', 'old') + sqliteApply('+', 'new')],
] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) {
    await sql
      .raw(`
      create function games_live_apply() returns trigger language plpgsql as $$
      begin
        if tg_op in ('DELETE', 'UPDATE') then ${pgApply('-', 'old_rows')} end if;
        if tg_op in ('INSERT', 'UPDATE') then ${pgApply('+', 'new_rows')} end if;
        return null;
      end $$`)
      .execute(db);
    for (const [event, transition] of PG_TRIGGERS)
      await sql
        .raw(
          `create trigger streams_games_${event} after ${event} on streams ${transition}
          for each statement execute function games_live_apply()`,
        )
        .execute(db);
  } else {
    for (const [name, event, body] of SQLITE_TRIGGERS)
      await sql
        .raw(`create trigger streams_games_${name} after ${event} on streams begin ${body} end`)
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
