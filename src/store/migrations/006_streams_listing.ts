import type { Kysely } from 'kysely';

// GET /streams: the columns Helix's Stream has that the table lacked, and the indexes of its
// page shapes. The order is always viewer_count DESC, id DESC with the keyset
// `(viewer_count, id) < (?, ?)`. Each index is (selector, viewer_count, id, then the columns of the
// other filters), so that
// - a page of one user, one game or one language is a range of that selector's index, in page
//   order, starting at the cursor: no sort, the same cost at any depth;
// - every other page (no filter, or several games, users or languages and nothing filtered on one
//   value) walks streams_viewers, the whole list in page order, from the cursor; the filters are
//   checked as it goes (SQLite on the index entries, before a row is read; PostgreSQL on the rows
//   it reaches), and the walk stops at the first `first` + 1 that match. Such a walk reads at most
//   every row of this table, and the table holds the streams that are live now (one per live
//   channel: user_id is unique), never ended ones: the bound is the number of channels live at
//   once, not the number of users, videos or clips, and the page is never sorted.
//   The same holds for the other filters of a one-value page, within its selector's range.
// streams_game (001, on game_id alone) is a prefix of streams_game_viewers and is replaced by it.
export async function up(db: Kysely<unknown>): Promise<void> {
  // Free-form tags as Helix has them since 2023 (a JSON array of text) and the mature flag;
  // the defaults only fill rows written before this migration.
  await db.schema
    .alterTable('streams')
    .addColumn('tags', 'text', (c) => c.notNull().defaultTo('[]'))
    .execute();
  await db.schema
    .alterTable('streams')
    .addColumn('is_mature', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();

  await db.schema.dropIndex('streams_game').execute();
  await db.schema
    .createIndex('streams_viewers')
    .on('streams')
    .columns(['viewer_count', 'id', 'game_id', 'language', 'user_id'])
    .execute();
  await db.schema
    .createIndex('streams_game_viewers')
    .on('streams')
    .columns(['game_id', 'viewer_count', 'id', 'language', 'user_id'])
    .execute();
  await db.schema
    .createIndex('streams_language_viewers')
    .on('streams')
    .columns(['language', 'viewer_count', 'id', 'game_id', 'user_id'])
    .execute();
  await db.schema
    .createIndex('streams_user_viewers')
    .on('streams')
    .columns(['user_id', 'viewer_count', 'id', 'game_id', 'language'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const name of [
    'streams_viewers',
    'streams_game_viewers',
    'streams_language_viewers',
    'streams_user_viewers',
  ])
    await db.schema.dropIndex(name).execute();
  await db.schema.createIndex('streams_game').on('streams').columns(['game_id']).execute();
  await db.schema.alterTable('streams').dropColumn('is_mature').execute();
  await db.schema.alterTable('streams').dropColumn('tags').execute();
}
