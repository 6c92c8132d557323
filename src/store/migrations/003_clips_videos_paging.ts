import { type Kysely, PostgresAdapter, sql } from 'kysely';

// Indexes for GET /clips and GET /videos (docs/api.md), and the stored `trending` score.
//
// Every paged query is `selector = ? [AND filters] ORDER BY sort DESC, id DESC LIMIT n` with the
// keyset `(sort, id) < (?, ?)`. Each index is (selector, [equality filter,] sort, id, then the
// columns of the other filters), so that:
// - the ordering is the index order (no sort) and the page starts at the cursor (a range scan);
// - filters that cannot be part of the range (a period under a view-count ordering, a video type or
//   language) are checked on the index entry, before the row is read. Such a page reads index
//   entries until `first` rows match: its cost depends on how selective the filter is, never on
//   how deep the page lies.
// The 001 indexes of clips and videos are prefixes of these and are replaced by them.
//
// `trending` (docs/api.md): views decayed by age with an e-folding time of 10 days,
// (1 + view_count) * exp(-(now - created_at) / 864000). Its order at any `now` is the order of
// created_at + 864000 * ln(1 + view_count), which does not depend on `now`: it is computed once,
// when the row is written, as a generated column, and indexed like any other sort key.

function isPostgres(db: Kysely<unknown>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

const TRENDING = 'created_at + 864000 * ln(cast(view_count + 1 as double precision))';

export async function up(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) {
    // Clip ids are text and the last key of the clip orderings: compare them bytewise on every
    // PostgreSQL, as SQLite does, so both stores order ties the same whatever the database locale.
    await sql`alter table clips alter column id type text collate "C"`.execute(db);
    // PostgreSQL (before 18) has stored generated columns only.
    await sql
      .raw(`alter table videos add column trending double precision generated always as (${TRENDING}) stored`)
      .execute(db);
  } else {
    // SQLite adds only virtual generated columns to an existing table; an index stores the values.
    await sql
      .raw(`alter table videos add column trending real generated always as (${TRENDING}) virtual`)
      .execute(db);
  }

  await db.schema.dropIndex('clips_broadcaster_views').execute();
  await db.schema.dropIndex('clips_game_views').execute();
  for (const [name, selector] of [
    ['broadcaster', 'broadcaster_id'],
    ['game', 'game_id'],
  ] as const) {
    await db.schema
      .createIndex(`clips_${name}_views`)
      .on('clips')
      .columns([selector, 'view_count', 'id', 'created_at'])
      .execute();
    await db.schema
      .createIndex(`clips_${name}_featured_views`)
      .on('clips')
      .columns([selector, 'is_featured', 'view_count', 'id', 'created_at'])
      .execute();
  }

  for (const old of ['videos_user_time', 'videos_user_views', 'videos_game_time', 'videos_game_views'])
    await db.schema.dropIndex(old).execute();
  for (const [name, selector] of [
    ['user', 'user_id'],
    ['game', 'game_id'],
  ] as const) {
    await db.schema
      .createIndex(`videos_${name}_time`)
      .on('videos')
      .columns([selector, 'created_at', 'id', 'type', 'language'])
      .execute();
    for (const sort of ['views', 'trending'] as const) {
      await db.schema
        .createIndex(`videos_${name}_${sort}`)
        .on('videos')
        .columns([
          selector,
          sort === 'views' ? 'view_count' : 'trending',
          'id',
          'type',
          'language',
          'created_at',
        ])
        .execute();
    }
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const name of ['user', 'game'])
    for (const sort of ['time', 'views', 'trending'])
      await db.schema.dropIndex(`videos_${name}_${sort}`).execute();
  for (const name of ['broadcaster', 'game']) {
    await db.schema.dropIndex(`clips_${name}_views`).execute();
    await db.schema.dropIndex(`clips_${name}_featured_views`).execute();
  }
  await db.schema.alterTable('videos').dropColumn('trending').execute();
  for (const [name, selector] of [
    ['user', 'user_id'],
    ['game', 'game_id'],
  ] as const) {
    await db.schema
      .createIndex(`videos_${name}_time`)
      .on('videos')
      .columns([selector, 'created_at', 'id'])
      .execute();
    await db.schema
      .createIndex(`videos_${name}_views`)
      .on('videos')
      .columns([selector, 'view_count', 'id'])
      .execute();
  }
  await db.schema
    .createIndex('clips_broadcaster_views')
    .on('clips')
    .columns(['broadcaster_id', 'view_count', 'id'])
    .execute();
  await db.schema
    .createIndex('clips_game_views')
    .on('clips')
    .columns(['game_id', 'view_count', 'id'])
    .execute();
  if (isPostgres(db)) await sql`alter table clips alter column id type text collate "default"`.execute(db);
}
