import { type Kysely, sql } from 'kysely';
import { MAX_INDEXED_TEXT } from '../text.ts';
import { isPostgres, listingIndexes } from './010_clips_covering.ts';
import { refuseLongText, type TextLimit, tooLong } from './text-limits.ts';

// GET /clips by broadcaster and by game on PostgreSQL (docs/listing-layout.md,
// candidate b): the twin of 010. The four listing indexes keep their names and their key of 003 and INCLUDE
// every other column of the row, so that a page is an Index Only Scan of one range (about 5 buffers
// per page instead of 24: the ~21 rows of a page lie scattered over the table). An index-only scan
// reads the table for entries on pages the visibility map does not mark all-visible; autovacuum
// marks them (after the seed's inserts too), a `VACUUM clips` does at once.
//
// A B-tree entry holds at most 2,704 bytes, INCLUDE columns counted, so a title of any length could
// not be held: since this migration a clip's title is indexed text, at most MAX_INDEXED_TEXT (256)
// characters like its language (src/records/kinds.ts; a 400 from the admin API and the import). At
// 4 bytes a character both fit an entry with the clip's other columns (its id at most 100 bytes).
//
// A store written before the limit may hold longer titles, and one written before languages were
// limited longer languages. Building the index would then fail on PostgreSQL; cutting them here
// would change the data unasked. So `up` first looks for them and, if there are any, refuses
// before it changes anything: the error names how many clips, the first ids, the rule, and how to
// shorten them; `helixd migrate` and `serve` print it as their one line. The same check runs on
// SQLite, although its covering indexes (010) hold long entries: both stores then hold only clips
// the write path accepts, and a SQLite store can be copied to PostgreSQL by export and import.
// Migrations on SQLite are not run in a transaction (on PostgreSQL they are): checking first
// keeps a refusal from leaving anything half done on either.

/** The clip columns the INCLUDE indexes hold that the write path limits to MAX_INDEXED_TEXT characters. */
const LIMITS: readonly TextLimit[] = (['title', 'language'] as const).map((column) => ({
  table: 'clips',
  what: `clip ${column}`,
  rule: `must be at most ${MAX_INDEXED_TEXT} characters`,
  key: 'id',
  breaks: tooLong(column, MAX_INDEXED_TEXT),
  fix: `update clips set ${column} = substr(${column}, 1, ${MAX_INDEXED_TEXT}) where length(${column}) > ${MAX_INDEXED_TEXT};`,
}));

async function rebuild(db: Kysely<unknown>, include: boolean): Promise<void> {
  const list = (columns: string[]) => sql.join(columns.map((c) => sql.ref(c)));
  for (const { index, key, rest } of listingIndexes()) {
    await db.schema.dropIndex(index).execute();
    await sql`create index ${sql.ref(index)} on clips (${list(key)})${
      include ? sql` include (${list(rest)})` : sql``
    }`.execute(db);
  }
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await refuseLongText(db, LIMITS);
  if (isPostgres(db)) await rebuild(db, true);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) await rebuild(db, false);
}
