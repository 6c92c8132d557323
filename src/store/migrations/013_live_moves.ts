import { type Kysely, PostgresAdapter, sql } from 'kysely';

// The moves of the two listings whose order a write can change under a walk (docs/live.md):
// GET /streams, ordered by a stream's viewer_count (and filtered by its game, language and user),
// and GET /games/top, ordered by a game's summed viewers among the games with a live stream. Every
// change of those columns is logged with the row's values BEFORE it, by triggers, whoever writes
// (the admin API, an import, the live world, the games' counters of migration 008). A walk that
// started at log position E sees each row at its values as of E: the values logged by the row's
// first move after E, or its current ones when it has not moved since (src/store/moves.ts).
//
// `seq` orders the moves as they committed: SQLite has one writer at a time; on PostgreSQL every
// transaction that writes streams takes one advisory lock first (src/records/write.ts), so a move
// never becomes visible after a later-numbered one. AUTOINCREMENT on SQLite: a number is never given
// twice, even after every move was forgotten. `at` (seconds, the database's clock) is when the move
// was logged: moves older than a walk may live are forgotten (forgetMoves).
//
// Columns added: stream_moves (seq, stream_id, viewer_count, game_id, language, user_id, at),
// game_moves (seq, game_id, viewer_count, stream_count, at); no column of streams or games changes.

function isPostgres(db: Kysely<unknown>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

const STREAM_COLUMNS = ['viewer_count', 'game_id', 'language', 'user_id'] as const;
const GAME_COLUMNS = ['viewer_count', 'stream_count'] as const;

const changed = (columns: readonly string[], distinct: string) =>
  columns.map((c) => `old.${c} ${distinct} new.${c}`).join(' or ');

export async function up(db: Kysely<unknown>): Promise<void> {
  const pg = isPostgres(db);
  const seq = pg ? 'seq bigserial primary key' : 'seq integer primary key autoincrement';
  const now = pg ? 'floor(extract(epoch from now()))::bigint' : "cast(strftime('%s', 'now') as integer)";
  await sql
    .raw(`create table stream_moves (${seq}, stream_id bigint not null, viewer_count integer not null,
      game_id bigint not null, language text not null, user_id bigint not null, at bigint not null)`)
    .execute(db);
  await sql
    .raw(`create table game_moves (${seq}, game_id bigint not null, viewer_count bigint not null,
      stream_count integer not null, at bigint not null)`)
    .execute(db);
  // A row's moves in order: "has it moved since E" and "its first move after E" are one probe each.
  await sql.raw('create index stream_moves_row on stream_moves (stream_id, seq)').execute(db);
  await sql.raw('create index game_moves_row on game_moves (game_id, seq)').execute(db);
  await sql.raw('create index stream_moves_at on stream_moves (at)').execute(db);
  await sql.raw('create index game_moves_at on game_moves (at)').execute(db);

  const tables = [
    ['streams', 'stream_moves', 'stream_id', STREAM_COLUMNS],
    ['games', 'game_moves', 'game_id', GAME_COLUMNS],
  ] as const;
  for (const [table, log, idColumn, columns] of tables) {
    const insert = `insert into ${log} (${idColumn}, ${columns.join(', ')}, at)
      values (old.id, ${columns.map((c) => `old.${c}`).join(', ')}, ${now});`;
    if (pg) {
      await sql
        .raw(`create function ${log}_log() returns trigger language plpgsql as $$
          begin ${insert} return null; end $$`)
        .execute(db);
      await sql
        .raw(`create trigger ${log}_log after update on ${table} for each row
          when (${changed(columns, 'is distinct from')}) execute function ${log}_log()`)
        .execute(db);
    } else
      await sql
        .raw(`create trigger ${log}_log after update of ${columns.join(', ')} on ${table}
          when ${changed(columns, 'is not')} begin ${insert} end`)
        .execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  const pg = isPostgres(db);
  for (const [table, log] of [
    ['streams', 'stream_moves'],
    ['games', 'game_moves'],
  ] as const) {
    await sql.raw(pg ? `drop trigger ${log}_log on ${table}` : `drop trigger ${log}_log`).execute(db);
    if (pg) await sql.raw(`drop function ${log}_log()`).execute(db);
    await sql.raw(`drop table ${log}`).execute(db);
  }
}
