import { type Kysely, PostgresAdapter } from 'kysely';

// GET /clips by broadcaster and by game (issue 16, docs/listing-layout.md, candidate b): on SQLite
// the four listing indexes of 003 become covering, so that a page is one range of one index
// (`SEARCH clips USING COVERING INDEX ...`) instead of ~21 row look-ups scattered over the table.
// Each keeps its name and its key of 003, which stays a prefix (the page order, the keyset range,
// the period and is_featured checked on the entry), followed by every other column of the row, the
// title last (the one long value). Measured on a 20,000-user store (200,000 clips): the store read
// of a page by game 102 -> 57 us, the whole in-process page 269 -> 216 us; each index ~1.7 times
// today's size.
//
// All four, not the unfiltered ones only: with only `clips_*_views` covering, SQLite's planner read
// featured pages from it too, entry by entry, instead of from `clips_*_featured_views`
// (docs/perf-history.md, "Tried and not kept").
//
// PostgreSQL keeps the indexes of 003. Its twin, `(selector, view_count, id) INCLUDE (...)`, needs
// the title in the index entry, and a B-tree entry is limited to 2704 bytes, INCLUDE columns
// counted: a clip whose title does not fit (titles are not length-limited, unlike indexed text;
// src/store/text.ts) could not be written, nor could an existing store holding one be migrated.
// SQLite has no such limit (a long entry overflows to other pages).

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

const LISTINGS = [
  ['broadcaster', 'broadcaster_id'],
  ['game', 'game_id'],
] as const;

/** The key of an index of 003 (`featured`: the is_featured variant). */
function key003(selector: string, featured: boolean): string[] {
  return [selector, ...(featured ? ['is_featured'] : []), 'view_count', 'id', 'created_at'];
}

function isPostgres(db: Kysely<unknown>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

async function rebuild(db: Kysely<unknown>, covering: boolean): Promise<void> {
  for (const [name, selector] of LISTINGS) {
    for (const featured of [false, true]) {
      const index = `clips_${name}${featured ? '_featured' : ''}_views`;
      const key = key003(selector, featured);
      const columns = covering ? [...key, ...COLUMNS.filter((c) => !key.includes(c))] : key;
      await db.schema.dropIndex(index).execute();
      await db.schema.createIndex(index).on('clips').columns(columns).execute();
    }
  }
}

export async function up(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) await rebuild(db, true);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) await rebuild(db, false);
}
