// Rows for the migration tests of the listing indexes (012, 014) and what they compare: every page
// of every listing, and an index's definition as the store reports it.
import assert from 'node:assert/strict';
import { type Kysely, sql } from 'kysely';
import { MAX_MARKER_DESCRIPTION, MAX_STREAM_TITLE, MAX_TAG, MAX_TAGS } from '../../src/records/kinds.ts';
import { topGames } from '../../src/store/games.ts';
import { markersPage } from '../../src/store/markers.ts';
import type { Page, PageQuery } from '../../src/store/page.ts';
import { type Database, TIERS, type Tier, VIDEO_TYPES, type VideoType } from '../../src/store/schema.ts';
import { streamsPage } from '../../src/store/streams.ts';
import { subscriptionsOfUsers, subscriptionsPage } from '../../src/store/subscriptions.ts';
import { MAX_INDEXED_TEXT } from '../../src/store/text.ts';
import { videosPage } from '../../src/store/videos.ts';
import type { StoreKind } from '../support/stores.ts';

/** `n` 4-byte characters, each unlike its neighbours (so that PostgreSQL cannot compress them). */
export const wide = (n: number, seed = 0) =>
  Array.from({ length: n }, (_, i) => String.fromCodePoint(0x20000 + (((i + seed) * 7919) % 0xa000))).join(
    '',
  );
const LONGEST_NAME = wide(MAX_INDEXED_TEXT, 1);

/**
 * Row `n` of each listing's table (and its game). Row 1 holds the longest text a record may give
 * there, in 4-byte characters; `text` makes the other rows' text (`max`: the field's limit).
 */
export async function writeRows(
  db: Kysely<Database>,
  n: number,
  text: (s: string, max: number) => string = (s) => s,
): Promise<void> {
  await db
    .insertInto('games')
    .values({
      id: 500 + n,
      name: n === 1 ? LONGEST_NAME : `Game ${n}`,
      igdb_id: `${n}`,
      owner_id: null,
      viewer_count: 0,
      stream_count: 0,
    })
    .execute();
  await db
    .insertInto('streams')
    .values({
      id: 9000 + n,
      user_id: 100 + n,
      game_id: 500 + (n % 4),
      title: n === 1 ? wide(MAX_STREAM_TITLE, 2) : text(`Stream ${n}`, MAX_STREAM_TITLE),
      viewer_count: (n * 37) % 11,
      language: n === 1 ? wide(MAX_INDEXED_TEXT, 3) : n % 3 === 0 ? 'de' : 'en',
      started_at: 1_700_000_000 + n,
      tags: JSON.stringify(
        n === 1 ? Array.from({ length: MAX_TAGS }, (_, i) => wide(MAX_TAG, 10 + i)) : [`tag${n % 5}`],
      ),
      is_mature: n % 2,
    })
    .execute();
  await db
    .insertInto('videos')
    .values({
      id: 7000 + n,
      stream_id: n % 3 === 0 ? null : 9000 + n,
      user_id: 100 + (n % 2),
      game_id: 500 + (n % 3),
      title: `Video ${n}`,
      description: text(`About video ${n}`, 1000),
      created_at: 1_600_000_000 + ((n * 86_400 * 7) % 4_000_000),
      published_at: 1_600_000_000 + n,
      language: n % 4 === 0 ? 'de' : 'en',
      type: VIDEO_TYPES[n % 3] as VideoType,
      view_count: (n * 53) % 17,
      duration_s: 60 + n,
      muted_segments: n % 5 === 0 ? JSON.stringify([{ duration: 30, offset: n }]) : null,
    })
    .execute();
  await db
    .insertInto('subscriptions')
    .values({
      broadcaster_id: 100 + (n % 2),
      user_id: 200 + n,
      tier: TIERS[n % 3] as Tier,
      plan_name: n === 1 ? wide(MAX_INDEXED_TEXT, 4) : text(`Plan ${n}`, MAX_INDEXED_TEXT),
      is_gift: n % 4 === 0 ? 1 : 0,
      gifter_id: n % 4 === 0 ? 300 + n : null,
      created_at: 1_650_000_000 + ((n * 7) % 13) * 1000,
    })
    .execute();
  await db
    .insertInto('markers')
    .values({
      id: `m${n}`,
      video_id: 7000 + (n % 2),
      creator_id: 100 + (n % 2),
      created_at: 1_610_000_000 + ((n * 11) % 7) * 60,
      description: n === 1 ? wide(MAX_MARKER_DESCRIPTION, 5) : text(`Marker ${n}`, MAX_MARKER_DESCRIPTION),
      position_seconds: n * 10,
    })
    .execute();
}

/** Every page of a listing, 3 rows at a time, walked forward, then the last one backward. */
async function walk(pageOf: (page: PageQuery) => Promise<Page<unknown>>): Promise<unknown[]> {
  let page = await pageOf({ first: 3 });
  const out: unknown[] = [page];
  while (page.hasMore && page.ends) {
    page = await pageOf({ first: 3, after: page.ends.last, epoch: page.epoch });
    out.push(page);
  }
  if (page.ends) out.push(await pageOf({ first: 3, before: page.ends.first, epoch: page.epoch }));
  return out;
}

export async function allPages(db: Kysely<Database>): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const [selector, value] of [
    ['user_id', 100],
    ['game_id', 501],
  ] as const)
    for (const sort of ['time', 'views', 'trending'] as const) {
      out.push(await walk((p) => videosPage(db, { selector, value, sort }, p)));
      out.push(
        await walk((p) => videosPage(db, { selector, value, sort, type: 'archive', language: 'en' }, p)),
      );
    }
  for (const names of [false, true]) {
    out.push(await walk((p) => subscriptionsPage(db, 101, p, names)));
    out.push(await subscriptionsOfUsers(db, 101, [201, 203, 205, 299], names));
  }
  out.push(await walk((p) => markersPage(db, 7000, 100, p)));
  out.push(await walk((p) => topGames(db, p)));
  for (const f of [{}, { gameIds: [501] }, { languages: ['en'] }, { userIds: [103] }, { gameIds: [1, 502] }])
    out.push(await walk((p) => streamsPage(db, f, p)));
  // The walks' epochs count the log of moves (migration 013), which starts again when it is made
  // again: they are not the pages' content.
  return JSON.parse(JSON.stringify(out, (k, v) => (k === 'epoch' || k === 'walk_epoch' ? undefined : v)));
}

/** The index's definition as the store reports it. */
export async function definition(kind: StoreKind, db: Kysely<Database>, index: string): Promise<string> {
  const q =
    kind === 'sqlite'
      ? sql<{ d: string }>`select sql as d from sqlite_master where type = 'index' and name = ${index}`
      : sql<{
          d: string;
        }>`select indexdef as d from pg_indexes where schemaname = current_schema() and indexname = ${index}`;
  const row = (await q.execute(db)).rows[0];
  assert.ok(row, `no index ${index}`);
  return row.d;
}

/**
 * For each index, whether its definition holds the columns (all of them or none: anything else
 * fails).
 */
export async function covering(
  kind: StoreKind,
  db: Kysely<Database>,
  indexes: readonly (readonly [string, readonly string[]])[],
): Promise<boolean[]> {
  const out: boolean[] = [];
  for (const [index, columns] of indexes) {
    const d = await definition(kind, db, index);
    const has = columns.map((c) => new RegExp(`\\b${c}\\b`).test(d));
    assert.ok(
      has.every((h) => h === has[0]),
      `${index} holds some of ${columns}: ${d}`,
    );
    out.push(has[0] as boolean);
  }
  return out;
}
