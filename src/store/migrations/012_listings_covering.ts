import { type Kysely, PostgresAdapter, sql } from 'kysely';

// Every paged listing but /clips (010) reads one index range that holds the whole page
// (docs/listing-layout.md): /videos by user and by game in its three orders, /subscriptions by
// broadcaster, /streams/markers, /games/top and the four /streams orders. Each index keeps its name
// and its key (001, 003, 004b, 006), which stays a prefix: the page order, the keyset range and the
// filters checked on the entry are what they were. After the key come the other columns the page
// reads (`select *`), so that SQLite answers from the index alone (`USING COVERING INDEX`) instead
// of looking each row up in the table. The follows listings need nothing: their indexes hold
// every column of the table already.
//
// PostgreSQL takes the same extra columns as `INCLUDE (...)` only where every one of them has a
// bounded length: a B-tree entry is limited to 2704 bytes, INCLUDE columns counted, and a row with
// a longer entry could neither be written nor migrated. Of these listings that is /games/top alone
// (a game name is indexed text, at most MAX_INDEXED_TEXT characters: src/store/text.ts). Video
// titles and descriptions, stream titles and tags, marker descriptions and subscription plan names
// had no length limit in the records, so those listings keep their indexes of before on PostgreSQL
// here (what a cap would buy there is measured in docs/listing-layout.md). Migration 014 limits
// that text for streams, markers and subscriptions and makes their indexes INCLUDE the page;
// /videos stays as it is (a video's description has no short limit).

/** One listing index: its table, name and key of before, and the columns its page reads besides. */
export interface ListingIndex {
  table: string;
  index: string;
  key: readonly string[];
  /** a partial index's predicate */
  where?: string;
  /** what the page reads that the key lacks */
  rest: readonly string[];
  /** covering on PostgreSQL too (every column of `rest` has a bounded length) */
  postgres: boolean;
}

const VIDEO_COLUMNS = [
  'id',
  'stream_id',
  'user_id',
  'game_id',
  'title',
  'description',
  'created_at',
  'published_at',
  'language',
  'type',
  'view_count',
  'duration_s',
  'muted_segments',
  // the generated sort key of 003: `select *` reads it, so the index must hold it
  'trending',
];
const STREAM_COLUMNS = [
  'id',
  'user_id',
  'game_id',
  'title',
  'viewer_count',
  'language',
  'started_at',
  'tags',
  'is_mature',
];

const listing = (
  table: string,
  index: string,
  key: readonly string[],
  columns: readonly string[],
  postgres: boolean,
  where?: string,
): ListingIndex => ({
  table,
  index,
  key,
  rest: columns.filter((c) => !key.includes(c)),
  postgres,
  ...(where ? { where } : {}),
});

export const LISTING_INDEXES: readonly ListingIndex[] = [
  ...(['user_id', 'game_id'] as const).flatMap((selector) => {
    const name = selector === 'user_id' ? 'user' : 'game';
    return [
      listing(
        'videos',
        `videos_${name}_time`,
        [selector, 'created_at', 'id', 'type', 'language'],
        VIDEO_COLUMNS,
        false,
      ),
      ...(['views', 'trending'] as const).map((sort) =>
        listing(
          'videos',
          `videos_${name}_${sort}`,
          [selector, sort === 'views' ? 'view_count' : 'trending', 'id', 'type', 'language', 'created_at'],
          VIDEO_COLUMNS,
          false,
        ),
      ),
    ];
  }),
  listing(
    'subscriptions',
    'subscriptions_broadcaster_time',
    ['broadcaster_id', 'created_at', 'user_id'],
    ['broadcaster_id', 'user_id', 'tier', 'plan_name', 'is_gift', 'gifter_id', 'created_at'],
    false,
  ),
  listing(
    'markers',
    'markers_video_creator_time',
    ['video_id', 'creator_id', 'created_at', 'id'],
    ['id', 'video_id', 'creator_id', 'created_at', 'description', 'position_seconds'],
    false,
  ),
  listing(
    'games',
    'games_top_live',
    ['viewer_count', 'id'],
    ['id', 'name', 'igdb_id', 'owner_id', 'viewer_count', 'stream_count'],
    true,
    'stream_count > 0',
  ),
  listing(
    'streams',
    'streams_viewers',
    ['viewer_count', 'id', 'game_id', 'language', 'user_id'],
    STREAM_COLUMNS,
    false,
  ),
  listing(
    'streams',
    'streams_game_viewers',
    ['game_id', 'viewer_count', 'id', 'language', 'user_id'],
    STREAM_COLUMNS,
    false,
  ),
  listing(
    'streams',
    'streams_language_viewers',
    ['language', 'viewer_count', 'id', 'game_id', 'user_id'],
    STREAM_COLUMNS,
    false,
  ),
  listing(
    'streams',
    'streams_user_viewers',
    ['user_id', 'viewer_count', 'id', 'game_id', 'language'],
    STREAM_COLUMNS,
    false,
  ),
];

export type Layout = 'key' | 'sqlite' | 'postgres';

/**
 * The index's definition: `key` (before this migration), `sqlite` (the key then the rest) or
 * `postgres` (the key, INCLUDE the rest).
 */
export function listingIndexSql(l: ListingIndex, layout: Layout): string {
  const columns = layout === 'sqlite' ? [...l.key, ...l.rest] : l.key;
  const include = layout === 'postgres' ? ` include (${l.rest.join(', ')})` : '';
  const where = l.where ? ` where ${l.where}` : '';
  return `create index ${l.index} on ${l.table} (${columns.join(', ')})${include}${where}`;
}

function isPostgres(db: Kysely<unknown>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

async function rebuild(db: Kysely<unknown>, covering: boolean): Promise<void> {
  const postgres = isPostgres(db);
  for (const l of LISTING_INDEXES) {
    if (postgres && !l.postgres) continue;
    const layout: Layout = !covering ? 'key' : postgres ? 'postgres' : 'sqlite';
    await db.schema.dropIndex(l.index).execute();
    await sql.raw(listingIndexSql(l, layout)).execute(db);
  }
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await rebuild(db, true);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await rebuild(db, false);
}
