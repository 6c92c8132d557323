import { type Kysely, sql } from 'kysely';

// The channel as a record of its own (docs/api.md, "Channels"): what GET /channels shows and
// PATCH /channels changes, kept when the stream goes offline. A user's live stream holds its
// channel's title, game, language and tags (src/records/write.ts keeps the two alike in every
// write: a stream that goes live takes them from its channel, and a channel changed while live
// changes its stream). A user with no row has the channel of a new account (src/store/channels.ts,
// NEW_CHANNEL).
//
// Table added: channels (broadcaster_id, title, game_id, language, delay, tags, labels,
// is_branded_content), one row per user at most; `game_id` null for none, `tags` and `labels`
// JSON arrays of strings (the labels' ids, in the platform's order). Filled here from the live
// streams, whose fields were their channels' all along.
// Index added: channels_game (game_id), partial: the write path's check that no channel names a
// game being deleted reads it, never the whole table.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('channels')
    .addColumn('broadcaster_id', 'bigint', (c) => c.primaryKey())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('game_id', 'bigint')
    .addColumn('language', 'text', (c) => c.notNull())
    .addColumn('delay', 'integer', (c) => c.notNull())
    .addColumn('tags', 'text', (c) => c.notNull())
    .addColumn('labels', 'text', (c) => c.notNull())
    .addColumn('is_branded_content', 'integer', (c) => c.notNull())
    .execute();
  await sql.raw('create index channels_game on channels (game_id) where game_id is not null').execute(db);
  await sql
    .raw(
      `insert into channels (broadcaster_id, title, game_id, language, delay, tags, labels, is_branded_content)
       select user_id, title, game_id, language, 0, tags, '[]', 0 from streams`,
    )
    .execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('channels').execute();
}
