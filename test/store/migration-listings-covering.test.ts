// Migration 012_listings_covering on a store made by the version before it (migrated down to the
// migration that precedes 012, rows in it): up and down keep every page of /videos, /subscriptions,
// /streams/markers, /games/top and /streams the same; after `up` the listing indexes hold the whole
// page (SQLite: every one of them; PostgreSQL: games_top_live, INCLUDE) and after `down` they are
// what they were; text far longer than a PostgreSQL index entry may hold (video descriptions,
// stream titles, marker descriptions, plan names: no length limit before 014) can still be written
// after `up`, and the longest game name a record may give fits games_top_live's entry. The store
// goes up to 013 only: 014 limits that text (test/store/migration-listings-pg.test.ts).
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { type Kysely, sql } from 'kysely';
import { topGames } from '../../src/store/games.ts';
import { markersPage } from '../../src/store/markers.ts';
import { migrateToLatest } from '../../src/store/migrate.ts';
import * as m013 from '../../src/store/migrations/013_live_moves.ts';
import type { Page, PageQuery } from '../../src/store/page.ts';
import { type Database, TIERS, type Tier, VIDEO_TYPES, type VideoType } from '../../src/store/schema.ts';
import { streamsPage } from '../../src/store/streams.ts';
import { subscriptionsOfUsers, subscriptionsPage } from '../../src/store/subscriptions.ts';
import { MAX_INDEXED_TEXT } from '../../src/store/text.ts';
import { videosPage } from '../../src/store/videos.ts';
import { forEachStore, type StoreKind, tempStore } from '../helpers.ts';

// Incompressible: 6,000 hex digits, twice what a PostgreSQL B-tree entry may hold.
const LONG = Array.from({ length: 6000 }, (_, i) => ((i * 7919) % 16).toString(16)).join('');
// The longest game name a record may give, in 4-byte characters.
const LONGEST_NAME = '\u{1F3AE}'.repeat(MAX_INDEXED_TEXT);

const INDEXES = [
  ['videos_user_time', ['description', 'muted_segments', 'trending']],
  ['videos_game_trending', ['description', 'title']],
  ['subscriptions_broadcaster_time', ['plan_name', 'gifter_id']],
  ['markers_video_creator_time', ['description', 'position_seconds']],
  ['games_top_live', ['name', 'igdb_id']],
  ['streams_viewers', ['title', 'tags']],
  ['streams_user_viewers', ['title', 'is_mature']],
] as const;
const ON_POSTGRES = new Set(['games_top_live']);

async function write(db: Kysely<Database>, n: number, long = false): Promise<void> {
  const text = (s: string) => (long ? `${s} ${LONG}` : s);
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
      title: text(`Stream ${n}`),
      viewer_count: (n * 37) % 11,
      language: n % 3 === 0 ? 'de' : 'en',
      started_at: 1_700_000_000 + n,
      tags: JSON.stringify([`tag${n % 5}`]),
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
      description: text(`About video ${n}`),
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
      plan_name: text(`Plan ${n}`),
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
      description: text(`Marker ${n}`),
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

async function allPages(db: Kysely<Database>): Promise<unknown[]> {
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
async function definition(kind: StoreKind, db: Kysely<Database>, index: string): Promise<string> {
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

async function covering(kind: StoreKind, db: Kysely<Database>): Promise<boolean[]> {
  const out: boolean[] = [];
  for (const [index, columns] of INDEXES) {
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

const LATER = [m013];
const laterUp = async (db: Kysely<Database>) => {
  for (const m of LATER) await m.up(db as unknown as Kysely<unknown>);
};
const laterDown = async (db: Kysely<Database>) => {
  for (const m of [...LATER].reverse()) await m.down(db as unknown as Kysely<unknown>);
};

forEachStore('migration 012_listings_covering', (kind: StoreKind) => {
  it('keeps every page the same up and down, covering after up only, long text writable', async () => {
    const temp = await tempStore(kind);
    try {
      const db = temp.store.db;
      // The migration before 012, by name: whatever the store lists before it.
      const applied = (await sql<{ name: string }>`select name from kysely_migration`.execute(db)).rows
        .map((r) => r.name)
        .sort();
      const previous = applied[applied.indexOf('012_listings_covering') - 1] as string;
      assert.ok(previous, `no migration before 012 in ${applied}`);
      const down = await migrateToLatest(temp.store, previous);
      assert.equal(down.error, undefined);
      // Today's code reads the tables of the migrations after 012 (013's log of moves, which
      // /streams and /games/top pages read): they are made beside the older indexes, as a store
      // that had them would hold them, and removed again before the migrator runs.
      await laterUp(db);
      assert.deepEqual(
        await covering(kind, db),
        INDEXES.map(() => false),
      );
      for (let n = 0; n < 24; n++) await write(db, n, n === 5);
      const before = await allPages(db);

      await laterDown(db);
      const up = await migrateToLatest(temp.store, '013_live_moves');
      assert.equal(up.error, undefined);
      assert.deepEqual(await allPages(db), before);
      assert.deepEqual(
        await covering(kind, db),
        INDEXES.map(([index]) => kind === 'sqlite' || ON_POSTGRES.has(index)),
      );
      await write(db, 30, true);
      // What write(30) wrote, each row by its key, the stream before its game.
      for (const [table, column, value] of [
        ['markers', 'id', 'm30'],
        ['subscriptions', 'user_id', 230],
        ['videos', 'id', 7030],
        ['streams', 'id', 9030],
        ['games', 'id', 530],
      ] as const)
        await sql`delete from ${sql.table(table)} where ${sql.ref(column)} = ${value}`.execute(db);
      assert.deepEqual(await allPages(db), before);

      const back = await migrateToLatest(temp.store, previous);
      assert.equal(back.error, undefined);
      await laterUp(db);
      assert.deepEqual(await allPages(db), before);
      assert.deepEqual(
        await covering(kind, db),
        INDEXES.map(() => false),
      );
    } finally {
      await temp.drop();
    }
  });
});
