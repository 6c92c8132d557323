import { type Kysely, PostgresAdapter } from 'kysely';

// GET /clips by broadcaster and by game (docs/listing-layout.md, candidate b): on SQLite
// the four listing indexes of 003 become covering, so that a page is one range of one index
// (`SEARCH clips USING COVERING INDEX ...`) instead of ~21 row look-ups scattered over the table.
// Each keeps its name and its key of 003, which stays a prefix (the page order, the keyset range,
// the period and is_featured checked on the entry), followed by every other column of the row, the
// title last (the one long value). What it saves a page and costs in size: docs/listing-layout.md
// and docs/perf/2026-11-22-clips-covering-sqlite.md.
//
// All four, not the unfiltered ones only: with only `clips_*_views` covering, SQLite's planner read
// featured pages from it too, entry by entry, instead of from `clips_*_featured_views`
// (docs/perf/2026-11-22-third-session.md, "Tried and not kept").
//
// On PostgreSQL this migration changes nothing: 011 builds the twin there, `INCLUDE` indexes, once
// a clip's title has a length limit that lets its entry fit a B-tree page.

/** Every column of a clip row, the title last: 011's INCLUDE indexes hold the same. */
const COLUMNS = [
  'broadcaster_id',
  'game_id',
  'is_featured',
  'view_count',
  'id',
  'created_at',
  'creator_id',
  'video_id',
  'language',
  'duration_ds',
  'vod_offset',
  'title',
] as const;

/**
 * The four /clips listing indexes: each one's name, its key of 003 (selector, [is_featured,]
 * view_count, id, created_at) and the other columns of the row, in COLUMNS' order.
 */
export function listingIndexes(): { index: string; key: string[]; rest: string[] }[] {
  return (['broadcaster_id', 'game_id'] as const).flatMap((selector) =>
    [false, true].map((featured) => {
      const key = [selector, ...(featured ? ['is_featured'] : []), 'view_count', 'id', 'created_at'];
      const name = selector.replace('_id', '');
      return {
        index: `clips_${name}${featured ? '_featured' : ''}_views`,
        key,
        rest: COLUMNS.filter((c) => !key.includes(c)),
      };
    }),
  );
}

export function isPostgres(db: Kysely<unknown>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

async function rebuild(db: Kysely<unknown>, covering: boolean): Promise<void> {
  for (const { index, key, rest } of listingIndexes()) {
    await db.schema.dropIndex(index).execute();
    await db.schema
      .createIndex(index)
      .on('clips')
      .columns(covering ? [...key, ...rest] : key)
      .execute();
  }
}

export async function up(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) await rebuild(db, true);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) await rebuild(db, false);
}
