// GET /search/categories and GET /search/channels: a query is a prefix of the keys of migration
// 018 (search_game_keys, search_channel_keys), read as one range of their primary key (or, for live
// channels only, of the partial index search_channel_keys_live) in key order from the cursor: no
// scan of the games or the users, no sort. docs/api.md ("Search") says what matches and why.
import { type Kysely, SqliteAdapter, sql } from 'kysely';
import { KEY_CHARS } from './migrations/018_search.ts';
import {
  cursorSlots,
  keysetQuery,
  type Page,
  type PageQuery,
  type ShapeValues,
  shapedRows,
  withCursor,
} from './page.ts';
import type { Database } from './schema.ts';

/** ASCII letters lower-cased, nothing else changed: what the keys' SQL does on both stores. */
const lowerAscii = (text: string) => text.replace(/[A-Z]/g, (c) => c.toLowerCase());

/** The first KEY_CHARS characters (code points, as SQL's substr counts them). */
const cut = (text: string) => {
  const chars = [...text];
  return chars.length > KEY_CHARS ? chars.slice(0, KEY_CHARS).join('') : text;
};

/** A query of GET /search/channels as its keys are written: letters lower-cased, spaces and "_" removed. */
export function channelSearchKey(query: string): string {
  return cut(lowerAscii(query).replace(/[ _]/g, ''));
}

/** A query of GET /search/categories as its keys are written: letters lower-cased, end spaces dropped. */
export function categorySearchKey(query: string): string {
  return cut(lowerAscii(query).replace(/^ +| +$/g, ''));
}

/**
 * The least text after every text that starts with `prefix`, in code point order (the keys'
 * collation): `prefix` with its last character the next one; undefined when there is none (every
 * character is U+10FFFF). UTF-16 surrogates are no characters and are skipped.
 */
export function prefixEnd(prefix: string): string | undefined {
  const chars = [...prefix].map((c) => c.codePointAt(0) as number);
  while (chars.length > 0) {
    const last = chars.pop() as number;
    if (last < 0x10ffff) {
      const next = last + 1 === 0xd800 ? 0xe000 : last + 1;
      return String.fromCodePoint(...chars, next);
    }
  }
  return undefined;
}

const isSqlite = (db: Kysely<Database>) => db.getExecutor().adapter instanceof SqliteAdapter;

/**
 * The keys in `table` that start with `prefix` (`k` the table's alias), each item listed at its
 * least matching key only: a second key of the same item in the range is skipped with one probe of
 * the (id, key) index. On PostgreSQL written as `(select 1 where not exists (...)) is not null`, as
 * moves.ts's unmovedSince is, for its planner: it runs that as the probe per row, and takes an IS
 * NOT NULL it cannot estimate to keep nearly every row, as is the truth (few users have two
 * matching names), so a page stays a walk of the range in its order that stops after `first` + 1
 * rows. Taking the rows to be few (an IS NULL, estimated at 0.5%), it fetched the whole range
 * with a bitmap and sorted it; a bare NOT EXISTS it may plan as an anti-join over the range.
 *
 * After a cursor the range starts at the cursor's key (keysetQuery's row comparison, which lies in
 * the range: the cursor is bound to the query), and `key >= prefix` is left out: SQLite would
 * otherwise start the range there and filter by the cursor, reading every row before it.
 *
 * `v`: the shaped values of a search (searchValues), put in as they are (they may be slots:
 * src/store/page.ts shapedRows).
 */
function inRange(
  db: Kysely<Database>,
  table: 'search_game_keys' | 'search_channel_keys',
  v: ShapeValues,
  afterCursor: boolean,
) {
  const id = table === 'search_game_keys' ? 'game_id' : 'user_id';
  const { prefix, end } = v;
  const bounds = [
    ...(afterCursor ? [] : [sql`k.key >= ${prefix}`]),
    ...(end === undefined ? [] : [sql`k.key < ${end}`]),
  ];
  const earlier = sql`select 1 from ${sql.table(table)} o
    where o.${sql.ref(id)} = k.${sql.ref(id)} and o.key >= ${prefix} and o.key < k.key`;
  const first = isSqlite(db)
    ? sql`not exists (${earlier})`
    : sql`(select 1 where not exists (${earlier})) is not null`;
  return sql<boolean>`(${sql.join([...bounds, first], sql` and `)})`;
}

/** A search's values as its statement binds them: the prefix, the end of its range, the cursor's key. */
const searchValues = (prefix: string, page: PageQuery): ShapeValues =>
  withCursor({ prefix, end: prefixEnd(prefix) }, page.after);

/** The order of both searches: the key, then the id (a key equal to the query comes first). */
const CATEGORIES_ORDER = ['k.key', 'k.game_id'] as const;
const CHANNELS_ORDER = ['k.key', 'k.user_id'] as const;

// A page is one statement in two parts: a subquery that is the page's keys (one range of one index
// of one table, in its order, LIMIT first + 1), and around it what the answer shows of each item,
// by its keys. The LIMIT keeps the subquery whole: neither store merges it into the joins (SQLite
// runs it as a co-routine, PostgreSQL as a subquery scan), so no planner can start from the games
// or the users, or read the range in another order and sort it, whatever it guesses a prefix
// matches (PostgreSQL can only guess, and takes a rare one, or live channels only, to be a
// handful). The joins then walk the page's rows in that order: the outer ORDER BY, the same
// columns, needs no sort on either store.

/** The rows of a page read around its keys (`p`), forward; its ends and whether more follow. */
function pageOfRows<R extends { key: string }>(rows: R[], id: (r: R) => number, first: number): Page<R> {
  const hasMore = rows.length > first;
  if (hasMore) rows.pop();
  const head = rows[0];
  const last = rows[rows.length - 1];
  if (head === undefined || last === undefined) return { rows, hasMore };
  return { rows, hasMore, ends: { first: [head.key, id(head)], last: [last.key, id(last)] } };
}

/** The searches page forward only: the routes refuse `before` (docs/api.md). */
function forward(page: PageQuery): PageQuery {
  if (page.before !== undefined) throw new Error('the searches page forward only');
  return page;
}

export interface CategoryMatch {
  key: string;
  game_id: number;
  name: string;
}

/**
 * One page of the games with a key that starts with `prefix` (categorySearchKey), by key then id,
 * with their names (the games primary key).
 */
export async function searchCategories(
  db: Kysely<Database>,
  prefix: string,
  page: PageQuery,
): Promise<Page<CategoryMatch>> {
  if (prefix === '') return { rows: [], hasMore: false };
  const { first, after } = forward(page);
  // Built once per shape (src/store/page.ts shapedRows).
  const rows = await shapedRows(db, `search categories|${first}`, searchValues(prefix, page), (v) => {
    const keys = keysetQuery(
      db
        .selectFrom('search_game_keys as k')
        .select(['k.key', 'k.game_id'])
        .where(inRange(db, 'search_game_keys', v, after !== undefined)),
      CATEGORIES_ORDER,
      'asc',
      { first, after: cursorSlots(v, after) },
    );
    return db
      .selectFrom(keys.as('p'))
      .innerJoin('games as g', 'g.id', 'p.game_id')
      .select(['p.key', 'p.game_id', 'g.name'])
      .orderBy('p.key')
      .orderBy('p.game_id');
  });
  return pageOfRows(rows, (r) => r.game_id, first);
}

/** A channel found, with its live stream's fields (null when it is offline) and their game's name. */
export interface ChannelMatch {
  key: string;
  user_id: number;
  login: string;
  display_name: string;
  stream_id: number | null;
  game_id: number | null;
  game_name: string | null;
  title: string | null;
  language: string | null;
  started_at: number | null;
  tags: string | null;
}

/**
 * One page of the channels with a key that starts with `prefix` (channelSearchKey), by key then
 * user id; `liveOnly`: those with a live stream, a range of the partial index
 * search_channel_keys_live. Each with its user (primary key), its stream (the streams' unique
 * user_id), its channel and the channel's game (primary keys); a user with no channel row has
 * nulls there, a new account's channel.
 */
export async function searchChannels(
  db: Kysely<Database>,
  prefix: string,
  liveOnly: boolean,
  page: PageQuery,
): Promise<Page<ChannelMatch>> {
  if (prefix === '') return { rows: [], hasMore: false };
  const { first, after } = forward(page);
  const name = `search channels${liveOnly ? ', live only' : ''}|${first}`;
  // Built once per shape (src/store/page.ts shapedRows).
  const rows = await shapedRows(db, name, searchValues(prefix, page), (v) => {
    const inKeys = db
      .selectFrom('search_channel_keys as k')
      .select(['k.key', 'k.user_id'])
      .where(inRange(db, 'search_channel_keys', v, after !== undefined));
    // The literal 1 of the partial index's predicate (migration 018), never a bound value.
    const keys = keysetQuery(
      liveOnly ? inKeys.where('k.live', '=', sql.lit(1)) : inKeys,
      CHANNELS_ORDER,
      'asc',
      { first, after: cursorSlots(v, after) },
    );
    return (
      db
        .selectFrom(keys.as('p'))
        .innerJoin('users as u', 'u.id', 'p.user_id')
        .leftJoin('streams as s', 's.user_id', 'p.user_id')
        // The channel's title, game, language and tags: a live stream's are its channel's
        // (src/records/channels.ts), and an offline channel keeps them.
        .leftJoin('channels as c', 'c.broadcaster_id', 'p.user_id')
        .leftJoin('games as g', 'g.id', 'c.game_id')
        .select([
          'p.key',
          'p.user_id',
          'u.login',
          'u.display_name',
          's.id as stream_id',
          'c.game_id',
          'g.name as game_name',
          'c.title',
          'c.language',
          's.started_at',
          'c.tags',
        ])
        .orderBy('p.key')
        .orderBy('p.user_id')
    );
  });
  return pageOfRows(rows, (r) => r.user_id, first);
}
