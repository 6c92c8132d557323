import { type Kysely, sql } from 'kysely';
import { MAX_MARKER_DESCRIPTION, MAX_STREAM_TITLE, MAX_TAG, MAX_TAGS } from '../../records/kinds.ts';
import { MAX_INDEXED_TEXT } from '../text.ts';
import { isPostgres } from './010_clips_covering.ts';
import { LISTING_INDEXES, listingIndexSql } from './012_listings_covering.ts';
import { refuseLongText, type TextLimit, tooLong } from './text-limits.ts';

// GET /streams (its four orders), /streams/markers and /subscriptions on PostgreSQL
// (docs/listing-layout.md): the twin of 012 for the listings it left out there. Each index keeps
// its name and its key of 012 and INCLUDEs the page's other columns, so that a page is an Index
// Only Scan of one range. An index-only scan reads the table for entries on pages the visibility
// map does not mark all-visible; autovacuum marks them, a `VACUUM` of the table does at once.
//
// A B-tree entry holds at most 2,704 bytes, INCLUDE columns counted, so since this migration the
// text of those rows is limited by the records (src/records/kinds.ts; a 400 from the admin API and
// the import): a stream's title at most 140 characters and its tags at most 10 of at most 25
// characters (the platform's own limits for a channel), a marker's description at most 140
// characters (the platform's limit for a stream marker), a plan name at most MAX_INDEXED_TEXT
// (256). At 4 bytes a character, a stream's longest title, tags (as JSON) and language
// (MAX_INDEXED_TEXT) with its ids and numbers fit one entry. /videos stays as 012 left it on
// PostgreSQL: a video's description has no short limit on the platform.
//
// A store written before the limits may hold longer text, and building an index over it would fail.
// As 011 does, `up` first looks for such rows on both stores and, if there are any, refuses before
// it changes anything, naming the rows, the rule and how to shorten them (`helixd migrate` and
// `serve` print it as their one line): both stores then hold only rows the write path accepts.

const TABLES = new Set(['streams', 'markers', 'subscriptions']);

const LIMITS: readonly TextLimit[] = [
  {
    table: 'streams',
    what: 'stream title',
    rule: `must be at most ${MAX_STREAM_TITLE} characters`,
    key: 'id',
    breaks: tooLong('title', MAX_STREAM_TITLE),
    fix: `update streams set title = substr(title, 1, ${MAX_STREAM_TITLE}) where length(title) > ${MAX_STREAM_TITLE};`,
  },
  {
    table: 'streams',
    what: 'stream tags',
    rule: `must hold at most ${MAX_TAGS} tags of at most ${MAX_TAG} characters`,
    key: 'id',
    // `length` counts characters on both stores, as the write path does (code points).
    breaks: (postgres) =>
      postgres
        ? `json_array_length(tags::json) > ${MAX_TAGS} or exists (select 1 from json_array_elements_text(tags::json) t where length(t) > ${MAX_TAG})`
        : `json_array_length(tags) > ${MAX_TAGS} or exists (select 1 from json_each(streams.tags) t where length(t.value) > ${MAX_TAG})`,
    fix: `update streams set tags = '[]' where <the condition above>; (or give each its tags again: PATCH /admin/streams/<id>)`,
  },
  {
    table: 'markers',
    what: 'marker description',
    rule: `must be at most ${MAX_MARKER_DESCRIPTION} characters`,
    key: 'id',
    breaks: tooLong('description', MAX_MARKER_DESCRIPTION),
    fix: `update markers set description = substr(description, 1, ${MAX_MARKER_DESCRIPTION}) where length(description) > ${MAX_MARKER_DESCRIPTION};`,
  },
  {
    table: 'subscriptions',
    what: 'subscription plan_name',
    rule: `must be at most ${MAX_INDEXED_TEXT} characters`,
    key: `broadcaster_id || '/' || user_id`,
    breaks: tooLong('plan_name', MAX_INDEXED_TEXT),
    fix: `update subscriptions set plan_name = substr(plan_name, 1, ${MAX_INDEXED_TEXT}) where length(plan_name) > ${MAX_INDEXED_TEXT};`,
  },
];

async function rebuild(db: Kysely<unknown>, include: boolean): Promise<void> {
  for (const l of LISTING_INDEXES) {
    if (!TABLES.has(l.table)) continue;
    await db.schema.dropIndex(l.index).execute();
    await sql.raw(listingIndexSql(l, include ? 'postgres' : 'key')).execute(db);
  }
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await refuseLongText(db, LIMITS);
  if (isPostgres(db)) await rebuild(db, true);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) await rebuild(db, false);
}
